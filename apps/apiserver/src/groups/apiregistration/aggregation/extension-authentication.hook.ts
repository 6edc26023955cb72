/**
 * The ConfigMap kube-system/extension-apiserver-authentication, as kube-apiserver publishes it
 * (its `start-cluster-authentication-info-controller` hook): what the servers behind remote
 * APIServices (metrics-server and the like) read to authenticate their callers. `client-ca-file`
 * is the CA client certificates chain to here (the PKI's ca.crt); with
 * --requestheader-client-ca-file, the request-header keys say how to trust this server as their
 * front proxy: its CA bundle, the allowed names and the header names, each list a JSON array.
 * The hook writes it at start, replacing what differs.
 */
import { clientCaBundles } from '../../../serving.tls.js';
import { readFileSync } from 'node:fs';
import { Inject, Injectable } from '@nestjs/common';
import { StatusError, type KubeObject } from '@app/apimachinery';
import { PRIVILEGED_GROUP } from '@app/auth';
import type { PkiMaterial } from '@app/pki';
import { KindRegistry, type RequestContext } from '@app/registry';
import { PostStartHook, type PostStartHookProvider } from '../../../bootstrap/post-start-hook.js';
import type { ServerConfig } from '../../../config/flags.js';
import { listFlag } from '../../../pipeline/authentication-method.js';
import { PKI, SERVER_CONFIG, STORES, type StoreFactory } from '../../../tokens.js';

export const EXTENSION_AUTHENTICATION_CONFIGMAP = 'extension-apiserver-authentication';

/** The ConfigMap's data for this server's flags. */
export function extensionAuthenticationData(
  cfg: ServerConfig,
  clientCaPem: string,
  read: (file: string) => string = (f) => readFileSync(f, 'utf8'),
): Record<string, string> {
  const data: Record<string, string> = { 'client-ca-file': clientCaPem };
  const rhCa = cfg.raw['requestheader-client-ca-file'];
  if (rhCa !== undefined) {
    data['requestheader-client-ca-file'] = read(rhCa);
    data['requestheader-allowed-names'] = JSON.stringify(listFlag(cfg, 'requestheader-allowed-names'));
    data['requestheader-username-headers'] = JSON.stringify(listFlag(cfg, 'requestheader-username-headers'));
    data['requestheader-uid-headers'] = JSON.stringify(listFlag(cfg, 'requestheader-uid-headers'));
    data['requestheader-group-headers'] = JSON.stringify(listFlag(cfg, 'requestheader-group-headers'));
    data['requestheader-extra-headers-prefix'] = JSON.stringify(listFlag(cfg, 'requestheader-extra-headers-prefix'));
  }
  return data;
}

@PostStartHook({ name: 'start-cluster-authentication-info-controller', order: 155 })
@Injectable()
export class ExtensionAuthenticationPublisher implements PostStartHookProvider {
  constructor(
    private readonly registry: KindRegistry,
    @Inject(STORES) private readonly stores: StoreFactory,
    @Inject(SERVER_CONFIG) private readonly cfg: ServerConfig,
    @Inject(PKI) private readonly pki: PkiMaterial,
  ) {}

  async runPostStartHook(): Promise<void> {
    const decl = this.registry.lookup('', 'v1', 'configmaps');
    if (!decl) return;
    const store = this.stores.storeFor(decl);
    // The CAs whose client certificates authenticate users here: the cluster CA and --client-ca-file's.
    const data = extensionAuthenticationData(this.cfg, [this.pki.caPem, ...clientCaBundles(this.cfg)].map((p) => p.trim() + '\n').join(''));
    const ctx = (): RequestContext => ({
      user: { username: 'system:apiserver', groups: [PRIVILEGED_GROUP] },
      dryRun: false,
      warnings: [],
      now: () => new Date(),
    });
    const opts = () => ({ ctx: ctx(), fieldValidation: 'Strict' as const });
    // Two nodes of a cluster starting together may race: a conflict means another wrote it, so read again.
    for (let attempt = 0; attempt < 5; attempt++) {
      let cm: KubeObject | undefined;
      try {
        cm = await store.get('kube-system', EXTENSION_AUTHENTICATION_CONFIGMAP, {});
      } catch (e) {
        if (!(e instanceof StatusError && e.code === 404)) throw e;
      }
      try {
        if (!cm) {
          await store.create(
            'kube-system',
            { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: EXTENSION_AUTHENTICATION_CONFIGMAP, namespace: 'kube-system' }, data },
            opts(),
          );
        } else if (JSON.stringify(cm.data ?? {}) !== JSON.stringify(data)) {
          await store.update('kube-system', EXTENSION_AUTHENTICATION_CONFIGMAP, { ...cm, data }, opts());
        }
        return;
      } catch (e) {
        if (!(e instanceof StatusError && e.code === 409)) throw e;
      }
    }
  }
}
