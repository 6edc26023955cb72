/**
 * First start with `--enable-bootstrap-token-auth` (in the `initial-objects` post-start hook,
 * after the system namespaces): publishes kube-public/cluster-info, the ConfigMap a joining
 * client reads without credentials and checks with a bootstrap token (conventions.md
 * "ConfigMap signing"), as kubeadm's clusterinfo phase does: its `kubeconfig`
 * key holds a kubeconfig with this server's URL and the CA bundle that verifies it (the cluster
 * CA, and with `--tls-cert-file` the chain after the serving certificate) and no credentials
 * (@app/pki clusterInfoKubeconfig), and the Role and RoleBinding that let system:anonymous get
 * it (rbac.bootstrap-policy.ts). Each is created only when absent (an edited cluster-info is
 * kept; the bootstrap signer signs what it holds), through the kinds' stores, retried while a
 * cluster has no quorum; in a cluster the first node to start writes them.
 */
import { Inject, Injectable } from '@nestjs/common';
import type { KubeObject } from '@app/apimachinery';
import { CLUSTER_INFO_KUBECONFIG_KEY } from '@app/auth';
import { CLUSTER_INFO } from '@app/controllers';
import { clusterInfoKubeconfig } from '@app/pki';
import { KindRegistry, type KindDeclaration } from '@app/registry';
import type { Storage } from '@app/storage';
import type { ServerConfig } from '../config/flags.js';
import { CLUSTER_INFO_ROLE, CLUSTER_INFO_ROLE_BINDING } from '../groups/rbac/rbac.bootstrap-policy.js';
import { bootstrapTokensEnabled } from '../pipeline/bootstrap-token.watcher.js';
import { PKI, SERVER_CONFIG, SERVER_ENDPOINT, STORAGE, STORES, type PkiMaterial, type ServerEndpoint, type StoreFactory } from '../tokens.js';
import { servingTrustPem } from '../serving.tls.js';
import { createInitialObjects } from './initial-objects.js';

/** The URL clients should use: `--advertise-address` when given, else where this node serves. */
export function clusterInfoServer(cfg: Pick<ServerConfig, 'advertiseAddress' | 'securePort'>, endpoint: ServerEndpoint): string {
  const a = cfg.advertiseAddress;
  if (!a) return endpoint.url;
  return `https://${a.includes(':') ? `[${a}]` : a}:${cfg.securePort}`;
}

/** Creates cluster-info and its RBAC when bootstrap tokens are enabled (after the system namespaces). */
@Injectable()
export class ClusterInfoPublisher {
  constructor(
    @Inject(SERVER_CONFIG) private readonly cfg: ServerConfig,
    @Inject(PKI) private readonly pki: PkiMaterial,
    @Inject(SERVER_ENDPOINT) private readonly endpoint: ServerEndpoint,
    private readonly registry: KindRegistry,
    @Inject(STORAGE) private readonly storage: Storage,
    @Inject(STORES) private readonly stores: StoreFactory,
  ) {}

  /** Creates what is absent; resolves at once when bootstrap tokens are not enabled. */
  async publish(): Promise<void> {
    if (!bootstrapTokensEnabled(this.cfg)) return;
    const kind = (group: string, plural: string, obj: Readonly<KubeObject>): KindDeclaration => ({
      ...(this.registry.lookup(group, 'v1', plural) as KindDeclaration),
      initialObjects: [structuredClone(obj) as KubeObject],
    });
    const configMap: KubeObject = {
      metadata: { name: CLUSTER_INFO.name, namespace: CLUSTER_INFO.namespace },
      data: { [CLUSTER_INFO_KUBECONFIG_KEY]: clusterInfoKubeconfig(clusterInfoServer(this.cfg, this.endpoint), servingTrustPem(this.cfg, this.pki)) },
    };
    await createInitialObjects({
      kinds: [
        kind('rbac.authorization.k8s.io', 'roles', CLUSTER_INFO_ROLE),
        kind('rbac.authorization.k8s.io', 'rolebindings', CLUSTER_INFO_ROLE_BINDING),
        kind('', 'configmaps', configMap),
      ],
      storage: this.storage,
      // The store of the registered declaration (stores are per declaration object, not per copy).
      create: (decl, ns, obj, opts) => this.stores.storeFor(this.registry.lookup(decl.group, decl.version, decl.plural)!).create(ns, obj, opts),
    });
  }
}
