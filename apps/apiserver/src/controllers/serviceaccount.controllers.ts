/**
 * The service-account controllers of kube-controller-manager, run while this node holds the
 * controller Lease:
 * - `serviceaccount`: a ServiceAccount `default` in every active namespace, created again when
 *   deleted;
 * - `root-ca-cert-publisher`: a ConfigMap `kube-root-ca.crt` in every active namespace whose data
 *   is exactly `ca.crt` = what verifies this server (the cluster CA, and with `--tls-cert-file` the
 *   certificates after the serving one in that file, as the admin kubeconfig trusts), restored
 *   when edited or deleted;
 * - `serviceaccount-token`: Secrets of type `kubernetes.io/service-account-token` naming a service
 *   account (annotation `kubernetes.io/service-account.name`) get `data.token` (a legacy token),
 *   `ca.crt` (the same bundle), `namespace` and the annotation `kubernetes.io/service-account.uid`; such a Secret is
 *   deleted when its service account is gone or was re-created with another uid.
 * Each reads watch-fed copies of the collections it needs (WatchedCollection) and runs a pass
 * over them after every change; its own writes come back as changes and end in a pass with
 * nothing to do. A pass that fails is retried after a second.
 */
import { Inject, Injectable } from '@nestjs/common';
import { StatusError, type KubeObject } from '@app/apimachinery';
import { KindRegistry, type KindDeclaration, type RequestContext } from '@app/registry';
import type { Storage } from '@app/storage';
import type { PkiMaterial } from '@app/pki';
import { ServiceAccountTokens } from '../pipeline/serviceaccount.config.js';
import { WatchedCollection } from '../pipeline/watched-collection.js';
import type { ServerConfig } from '../config/flags.js';
import { servingTrustPem } from '../serving.tls.js';
import { PKI, SERVER_CONFIG, STORAGE, STORES, type StoreFactory } from '../tokens.js';
import { ManagedController, type ControllerRunner } from './controller.runner.js';
import { PassScheduler } from './pass.scheduler.js';

/** The Secret type of legacy service-account tokens and its annotations. */
export const SA_TOKEN_SECRET_TYPE = 'kubernetes.io/service-account-token';
export const SA_NAME_ANNOTATION = 'kubernetes.io/service-account.name';
export const SA_UID_ANNOTATION = 'kubernetes.io/service-account.uid';
/** The ConfigMap the root-CA publisher keeps in every namespace. */
export const ROOT_CA_CONFIGMAP = 'kube-root-ca.crt';

/**
 * The CA bundle pods are given to verify this server (kube-controller-manager's root CA: the CA
 * data of its kubeconfig), read when the controller starts; the cluster CA alone if the
 * serving certificate file cannot be read then.
 */
function rootCaPem(cfg: ServerConfig, pki: PkiMaterial, controller: string): string {
  try {
    return servingTrustPem(cfg, pki);
  } catch (e) {
    process.stderr.write(`${controller}: ${(e as Error).message}; publishing the cluster CA alone\n`);
    return pki.caPem;
  }
}

/** The identity of the controllers' writes (in-process, as the aggregation controller's). */
const ctxOf = (controller: string) => (): RequestContext => ({
  user: { username: `system:serviceaccount:kube-system:${controller}`, groups: ['system:masters', 'system:authenticated'] },
  dryRun: false,
  warnings: [],
  now: () => new Date(),
});

/** Whether a namespace may get objects (not terminating). */
const activeNamespace = (o: KubeObject): true | undefined =>
  o.metadata?.deletionTimestamp || (o as { status?: { phase?: string } }).status?.phase === 'Terminating' ? undefined : true;

/** Whether `e` is a Status error with one of `codes` (the outcomes a pass tolerates). */
function statusIn(e: unknown, ...codes: number[]): boolean {
  return e instanceof StatusError && codes.includes(e.code);
}

/** Starts collections, schedules passes on their changes once all are synced, and stops them. */
function runOver(scheduler: PassScheduler, collections: Array<WatchedCollection<unknown>>): () => void {
  scheduler.start();
  const offs = collections.map((c) => c.onChange(() => scheduler.schedule()));
  for (const c of collections) c.start();
  void Promise.all(collections.map((c) => c.whenSynced())).then(() => scheduler.schedule());
  return () => {
    scheduler.stop();
    for (const off of offs) off();
    for (const c of collections) c.stop();
  };
}

/** The `serviceaccount` controller: `default` in every active namespace. */
@ManagedController({ name: 'serviceaccount' })
@Injectable()
export class ServiceAccountControllerRunner implements ControllerRunner {
  private stopFn: (() => void) | undefined;

  constructor(
    private readonly registry: KindRegistry,
    @Inject(STORAGE) private readonly storage: Storage,
    @Inject(STORES) private readonly stores: StoreFactory,
  ) {}

  start(): void {
    const namespaces = new WatchedCollection(this.storage, '/registry/core/namespaces/', activeNamespace, 'serviceaccount controller: namespaces');
    const defaults = new WatchedCollection(
      this.storage,
      '/registry/core/serviceaccounts/',
      (o) => (o.metadata?.name === 'default' ? true : undefined),
      'serviceaccount controller: service accounts',
    );
    const ctx = ctxOf('service-account-controller');
    const scheduler = new PassScheduler('serviceaccount controller', async () => {
      const store = this.stores.storeFor(this.registry.lookup('', 'v1', 'serviceaccounts') as KindDeclaration);
      for (const [ns] of namespaces.entries()) {
        if (defaults.get(ns, 'default')) continue;
        try {
          await store.create(
            ns,
            { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default', namespace: ns } },
            { ctx: ctx(), fieldValidation: 'Ignore', fieldManager: 'service-account-controller' },
          );
        } catch (e) {
          // Already there (the copy lags), or the namespace is going away: nothing to do.
          if (!statusIn(e, 409, 403, 404)) throw e;
        }
      }
    });
    this.stopFn = runOver(scheduler, [namespaces, defaults]);
  }

  stop(): void {
    this.stopFn?.();
    this.stopFn = undefined;
  }
}

/** The `root-ca-cert-publisher` controller: `kube-root-ca.crt` in every active namespace. */
@ManagedController({ name: 'root-ca-cert-publisher' })
@Injectable()
export class RootCaPublisherRunner implements ControllerRunner {
  private stopFn: (() => void) | undefined;

  constructor(
    private readonly registry: KindRegistry,
    @Inject(STORAGE) private readonly storage: Storage,
    @Inject(STORES) private readonly stores: StoreFactory,
    @Inject(PKI) private readonly pki: PkiMaterial,
    @Inject(SERVER_CONFIG) private readonly cfg: ServerConfig,
  ) {}

  start(): void {
    const caPem = rootCaPem(this.cfg, this.pki, 'root-ca-cert-publisher');
    const namespaces = new WatchedCollection(this.storage, '/registry/core/namespaces/', activeNamespace, 'root-ca-cert-publisher: namespaces');
    // Kept: whether the data is exactly { ca.crt: the CA }.
    const published = new WatchedCollection(
      this.storage,
      '/registry/core/configmaps/',
      (o) => {
        if (o.metadata?.name !== ROOT_CA_CONFIGMAP) return undefined;
        const data = (o as { data?: Record<string, string> }).data ?? {};
        return Object.keys(data).length === 1 && data['ca.crt'] === caPem && !(o as { binaryData?: unknown }).binaryData;
      },
      'root-ca-cert-publisher: configmaps',
    );
    const ctx = ctxOf('root-ca-cert-publisher');
    const scheduler = new PassScheduler('root-ca-cert-publisher', async () => {
      const store = this.stores.storeFor(this.registry.lookup('', 'v1', 'configmaps') as KindDeclaration);
      for (const [ns] of namespaces.entries()) {
        const state = published.get(ns, ROOT_CA_CONFIGMAP);
        if (state === true) continue;
        try {
          if (state === undefined) {
            await store.create(
              ns,
              { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: ROOT_CA_CONFIGMAP, namespace: ns }, data: { 'ca.crt': caPem } },
              { ctx: ctx(), fieldValidation: 'Ignore', fieldManager: 'root-ca-cert-publisher' },
            );
          } else {
            const cur = await store.get(ns, ROOT_CA_CONFIGMAP);
            const next = { ...cur, data: { 'ca.crt': caPem } } as KubeObject & { binaryData?: unknown };
            delete next.binaryData;
            await store.update(ns, ROOT_CA_CONFIGMAP, next, { ctx: ctx(), fieldValidation: 'Ignore', fieldManager: 'root-ca-cert-publisher' });
          }
        } catch (e) {
          // Created or changed meanwhile (the next change runs another pass), or the namespace is going away.
          if (!statusIn(e, 409, 403, 404)) throw e;
        }
      }
    });
    this.stopFn = runOver(scheduler, [namespaces, published]);
  }

  stop(): void {
    this.stopFn?.();
    this.stopFn = undefined;
  }
}

/** What the token controller keeps of a service-account token Secret. */
interface TokenSecret {
  saName: string;
  saUid?: string;
  complete: boolean;
}

/** The `serviceaccount-token` controller: legacy token Secrets. */
@ManagedController({ name: 'serviceaccount-token' })
@Injectable()
export class LegacyTokenControllerRunner implements ControllerRunner {
  private stopFn: (() => void) | undefined;

  constructor(
    private readonly registry: KindRegistry,
    @Inject(STORAGE) private readonly storage: Storage,
    @Inject(STORES) private readonly stores: StoreFactory,
    @Inject(PKI) private readonly pki: PkiMaterial,
    private readonly tokens: ServiceAccountTokens,
    @Inject(SERVER_CONFIG) private readonly cfg: ServerConfig,
  ) {}

  start(): void {
    const caPem = rootCaPem(this.cfg, this.pki, 'serviceaccount-token controller');
    const accounts = new WatchedCollection(this.storage, '/registry/core/serviceaccounts/', (o) => o.metadata?.uid, 'serviceaccount-token: service accounts');
    const secrets = new WatchedCollection<TokenSecret>(
      this.storage,
      '/registry/core/secrets/',
      (o) => {
        const s = o as { type?: string; data?: Record<string, string> };
        const annotations = (o.metadata?.annotations ?? {}) as Record<string, string>;
        const saName = annotations[SA_NAME_ANNOTATION];
        if (s.type !== SA_TOKEN_SECRET_TYPE || !saName || o.metadata?.deletionTimestamp) return undefined;
        const saUid = annotations[SA_UID_ANNOTATION];
        return { saName, saUid, complete: !!saUid && !!s.data?.token && !!s.data['ca.crt'] && !!s.data.namespace };
      },
      'serviceaccount-token: secrets',
    );
    const ctx = ctxOf('tokens-controller');
    const scheduler = new PassScheduler('serviceaccount-token controller', async () => {
      const saStore = this.stores.storeFor(this.registry.lookup('', 'v1', 'serviceaccounts') as KindDeclaration);
      const secretStore = this.stores.storeFor(this.registry.lookup('', 'v1', 'secrets') as KindDeclaration);
      for (const [key, s] of [...secrets.entries()]) {
        const [ns, name] = key.split('/');
        const cachedUid = accounts.get(ns, s.saName);
        if (s.complete && cachedUid === s.saUid) continue;
        // The copies may lag each other: decide on what is stored.
        const sa = await saStore.get(ns, s.saName).catch((e) => {
          if (statusIn(e, 404)) return undefined;
          throw e;
        });
        const uid = sa?.metadata?.deletionTimestamp ? undefined : sa?.metadata?.uid;
        try {
          if (!uid || (s.saUid !== undefined && s.saUid !== uid)) {
            await secretStore.delete(ns, name, {}, ctx());
            continue;
          }
          if (s.complete) continue;
          const cur = await secretStore.get(ns, name);
          const data = { ...((cur as { data?: Record<string, string> }).data ?? {}) };
          const b64 = (v: string) => Buffer.from(v, 'utf8').toString('base64');
          if (!data.token) data.token = b64(await this.tokens.signLegacy({ namespace: ns, serviceAccount: { name: s.saName, uid }, secretName: name }));
          data['ca.crt'] = b64(caPem);
          data.namespace = b64(ns);
          const annotations = { ...(cur.metadata?.annotations ?? {}), [SA_UID_ANNOTATION]: uid };
          await secretStore.update(ns, name, { ...cur, metadata: { ...cur.metadata, annotations }, data } as KubeObject, {
            ctx: ctx(),
            fieldValidation: 'Ignore',
            fieldManager: 'tokens-controller',
          });
        } catch (e) {
          if (!statusIn(e, 409, 404)) throw e;
        }
      }
    });
    this.stopFn = runOver(scheduler, [accounts, secrets] as Array<WatchedCollection<unknown>>);
  }

  stop(): void {
    this.stopFn?.();
    this.stopFn = undefined;
  }
}
