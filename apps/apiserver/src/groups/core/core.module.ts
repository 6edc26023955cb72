/**
 * The core API group (`/api/v1`). A kind is one folder here (schema, strategy, declaration);
 * CORE_KINDS is the one list of the group's kinds.
 */
import { readFileSync } from 'node:fs';
import { Inject, Injectable, Module } from '@nestjs/common';
import { Errors, StatusError } from '@app/apimachinery';
import { collectionPrefix, KindRegistry, type KindDeclaration, type RequestContext } from '@app/registry';
import type { Storage } from '@app/storage';
import { ServiceAccountTokens } from '../../pipeline/serviceaccount.config.js';
import type { ServerConfig } from '../../config/flags.js';
import { SERVER_CONFIG, STORAGE, STORES, type StoreFactory } from '../../tokens.js';
import { rfc3339 } from '../policy/poddisruptionbudget/pdb.status.js';
import { apiKinds } from '../api-group.js';
import { bindingKind } from './binding/binding.kind.js';
import { configMapKind } from './configmap/configmap.kind.js';
import { endpointsKind } from './endpoints/endpoints.kind.js';
import { eventKind } from './event/event.kind.js';
import { limitRangeKind } from './limitrange/limitrange.kind.js';
import { namespaceKind } from './namespace/namespace.kind.js';
import { nodeKind } from './node/node.kind.js';
import { assignedPod, BindingRefused } from './pod/pod.binding.js';
import { kubeletAgents, proxyAgents } from './pod/pod.kubelet.js';
import { bindingPorts, evictionPorts, podKind, podKubeletPorts } from './pod/pod.kind.js';
import { persistentVolumeKind } from './persistentvolume/persistentvolume.kind.js';
import { persistentVolumeClaimKind } from './persistentvolumeclaim/persistentvolumeclaim.kind.js';
import { podTemplateKind } from './podtemplate/podtemplate.kind.js';
import { replicationControllerKind, replicationControllerScalePorts } from './replicationcontroller/replicationcontroller.kind.js';
import { resourceQuotaKind } from './resourcequota/resourcequota.kind.js';
import { secretKind } from './secret/secret.kind.js';
import { serviceAccountKind, tokenRequestPorts } from './serviceaccount/serviceaccount.kind.js';
import { serviceKind, serviceProxyPorts } from './service/service.kind.js';
import { KubernetesServiceController } from './service/service.bootstrap.js';
import { ServiceRangeRepairRunner, ServiceRanges } from './service/service.wiring.js';

/** The core/v1 kinds. */
export const CORE_KINDS: readonly KindDeclaration[] = [
  namespaceKind,
  configMapKind,
  secretKind,
  serviceAccountKind,
  eventKind,
  nodeKind,
  serviceKind,
  endpointsKind,
  persistentVolumeKind,
  persistentVolumeClaimKind,
  limitRangeKind,
  resourceQuotaKind,
  podKind,
  bindingKind,
  podTemplateKind,
  replicationControllerKind,
];

/** Hands the ReplicationController's scale subresource the store it reads and writes through. */
@Injectable()
export class ReplicationControllerScaleWiring {
  constructor(registry: KindRegistry, @Inject(STORES) stores: StoreFactory) {
    const store = () => stores.storeFor(registry.lookup('', 'v1', 'replicationcontrollers') ?? replicationControllerKind);
    replicationControllerScalePorts.deps = {
      get: (ns, name) => store().get(ns, name),
      update: async (ns, name, obj, ctx) => (await store().update(ns, name, obj, { ctx, fieldValidation: 'Ignore' })).object,
    };
  }
}

/**
 * Hands TokenRequest its ports at start: the stores of the core kinds (read at the request's
 * own consistency, as kube's TokenREST reads them), whether Pods are served, and the signer.
 */
@Injectable()
export class TokenRequestWiring {
  constructor(registry: KindRegistry, @Inject(STORES) stores: StoreFactory, tokens: ServiceAccountTokens) {
    tokenRequestPorts.deps = {
      audiences: tokens.settings.audiences,
      maxExpirationSeconds: tokens.settings.maxExpirationSeconds,
      get: (plural, ns, name) => {
        const decl = registry.lookup('', 'v1', plural);
        if (!decl) throw new Error(`core/v1 ${plural} is not served`);
        return stores.storeFor(decl).get(ns, name);
      },
      podsServed: () => registry.lookup('', 'v1', 'pods') !== undefined,
      sign: (req) => tokens.signBound(req),
    };
  }
}

/** The identity of the server's own writes (kube's loopback client). */
const APISERVER_CTX = (): RequestContext => ({
  user: { username: 'system:apiserver', groups: ['system:masters', 'system:authenticated'] },
  dryRun: false,
  warnings: [],
  now: () => new Date(),
});

/**
 * Hands the pods' eviction subresource the pod store it deletes through and the
 * PodDisruptionBudgets it spends (read at MostRecent; their status written as the server).
 */
@Injectable()
export class EvictionWiring {
  constructor(registry: KindRegistry, @Inject(STORES) stores: StoreFactory, @Inject(STORAGE) storage: Storage) {
    const pods = () => stores.storeFor(registry.lookup('', 'v1', 'pods') ?? podKind);
    const budgets = () => registry.lookup('policy', 'v1', 'poddisruptionbudgets') as KindDeclaration | undefined;
    evictionPorts.deps = {
      getPod: (ns, name) => pods().get(ns, name),
      listBudgets: async (ns) => {
        const d = budgets();
        if (!d) return [];
        return (await storage.list(collectionPrefix(d, ns), { consistency: { mode: 'MostRecent' } })).items;
      },
      getBudget: (ns, name) => {
        const d = budgets();
        if (!d) throw Errors.notFound({ group: 'policy', resource: 'poddisruptionbudgets' }, name);
        return stores.storeFor(d).get(ns, name);
      },
      updateBudgetStatus: async (pdb) => {
        const d = budgets();
        if (!d) throw Errors.notFound({ group: 'policy', resource: 'poddisruptionbudgets' }, pdb.metadata.name ?? '');
        await stores.storeFor(d).update(pdb.metadata.namespace ?? '', pdb.metadata.name ?? '', pdb, {
          ctx: APISERVER_CTX(),
          fieldValidation: 'Ignore',
          subresource: 'status',
          fieldManager: 'kube-apiserver',
        });
      },
      markDisruptionTarget: async (ns, name, pre, ctx) => {
        for (let attempt = 0; ; attempt++) {
          const pod = await pods().get(ns, name);
          const gr = { group: '', resource: 'Pod' };
          if (pre?.uid && pre.uid !== pod.metadata.uid) {
            throw Errors.conflict(
              gr,
              name,
              `the UID in the precondition (${pre.uid}) does not match the UID in record (${pod.metadata.uid}). The object might have been deleted and then recreated`,
            );
          }
          if (pre?.resourceVersion && pre.resourceVersion !== pod.metadata.resourceVersion) {
            throw Errors.conflict(
              gr,
              name,
              `the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${pod.metadata.resourceVersion}). The object might have been modified`,
            );
          }
          const status = (pod.status ?? {}) as Record<string, unknown>;
          const conditions = Array.isArray(status.conditions) ? (status.conditions as Record<string, unknown>[]) : [];
          const old = conditions.find((c) => c.type === 'DisruptionTarget');
          const now = rfc3339(ctx.now());
          const cond = {
            type: 'DisruptionTarget',
            status: 'True',
            lastTransitionTime: old?.status === 'True' ? old.lastTransitionTime : now,
            reason: 'EvictionByEvictionAPI',
            message: 'Eviction API: evicting',
          };
          const next = { ...pod, status: { ...status, conditions: old ? conditions.map((c) => (c === old ? cond : c)) : [...conditions, cond] } };
          try {
            const res = await pods().update(ns, name, next, { ctx, fieldValidation: 'Ignore', subresource: 'status', fieldManager: 'kube-apiserver' });
            return res.object.metadata.resourceVersion ?? '';
          } catch (e) {
            if (!(e instanceof StatusError && e.code === 409 && attempt < 5)) throw e;
          }
        }
      },
      deletePod: async (ns, name, options, ctx) => {
        await pods().delete(ns, name, options, ctx);
      },
      now: () => new Date(),
    };
  }
}

/**
 * Hands the pods' binding subresource and the bindings resource the pod store's storage: the
 * binding is one read-modify-write of the stored pod (kube's GuaranteedUpdate), so neither the
 * pod's strategy nor admission runs on it; a refusal is 409 on pods/binding.
 */
@Injectable()
export class BindingWiring {
  constructor(registry: KindRegistry, @Inject(STORES) stores: StoreFactory) {
    bindingPorts.deps = {
      bind: async (ns, name, req, ctx) => {
        const store = stores.storeFor(registry.lookup('', 'v1', 'pods') ?? podKind);
        try {
          await store.storage.guaranteedUpdate(
            store.key(ns, name),
            (pod) => {
              const next = assignedPod(pod, req, ctx.now());
              delete next.metadata.resourceVersion;
              return next;
            },
            { preconditions: req.preconditions, dryRun: ctx.dryRun },
          );
        } catch (e) {
          if (e instanceof BindingRefused) throw Errors.conflict({ group: '', resource: 'pods/binding' }, name, e.message);
          store.mapError(e, name);
        }
      },
    };
  }
}

/**
 * Hands the pods' log subresource the pod and node stores (reads at Most Recent, so a pod just
 * bound to a node has its log read from that node) and the connections to kubelets, with the
 * --kubelet-* TLS files read at start (a file that cannot be read stops the start).
 */
@Injectable()
export class PodKubeletWiring {
  constructor(registry: KindRegistry, @Inject(STORES) stores: StoreFactory, @Inject(SERVER_CONFIG) cfg: ServerConfig) {
    const read = (f: string | undefined): Buffer | undefined => (f === undefined ? undefined : readFileSync(f));
    podKubeletPorts.deps = {
      kubelets: kubeletAgents({ cert: read(cfg.kubeletClientCertificate), key: read(cfg.kubeletClientKey), ca: read(cfg.kubeletCertificateAuthority) }),
      addressTypes: cfg.kubeletPreferredAddressTypes,
      proxies: proxyAgents(),
      getPod: (ns, name) => stores.storeFor(registry.lookup('', 'v1', 'pods') ?? podKind).get(ns, name),
      getNode: (name) => stores.storeFor(registry.lookup('', 'v1', 'nodes') ?? nodeKind).get('', name),
    };
  }
}

/** Wires the service proxy to the stores it reads (services, endpoints, pods). */
@Injectable()
export class ServiceProxyWiring {
  constructor(registry: KindRegistry, @Inject(STORES) stores: StoreFactory) {
    serviceProxyPorts.deps = {
      getService: (ns, name) => stores.storeFor(registry.lookup('', 'v1', 'services') ?? serviceKind).get(ns, name),
      getEndpoints: (ns, name) => stores.storeFor(registry.lookup('', 'v1', 'endpoints') ?? endpointsKind).get(ns, name),
      getPod: (ns, name) => stores.storeFor(registry.lookup('', 'v1', 'pods') ?? podKind).get(ns, name),
      proxies: proxyAgents(),
    };
  }
}

/** Provides the core/v1 kinds. */
@Module({
  providers: [
    apiKinds('', CORE_KINDS),
    TokenRequestWiring,
    ReplicationControllerScaleWiring,
    EvictionWiring,
    BindingWiring,
    PodKubeletWiring,
    ServiceProxyWiring,
    ServiceRanges,
    ServiceRangeRepairRunner,
    KubernetesServiceController,
  ],
})
export class CoreGroupModule {}
