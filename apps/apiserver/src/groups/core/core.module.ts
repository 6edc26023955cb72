/**
 * The core API group (`/api/v1`). A kind is one folder here (schema, strategy, declaration);
 * CORE_KINDS is the one list of the group's kinds.
 */
import { Inject, Injectable, Module } from '@nestjs/common';
import { KindRegistry, type KindDeclaration } from '@app/registry';
import { ServiceAccountTokens } from '../../pipeline/serviceaccount.config.js';
import { STORES, type StoreFactory } from '../../tokens.js';
import { apiKinds } from '../api-group.js';
import { configMapKind } from './configmap/configmap.kind.js';
import { endpointsKind } from './endpoints/endpoints.kind.js';
import { eventKind } from './event/event.kind.js';
import { limitRangeKind } from './limitrange/limitrange.kind.js';
import { namespaceKind } from './namespace/namespace.kind.js';
import { nodeKind } from './node/node.kind.js';
import { evictionPorts, podKind } from './pod/pod.kind.js';
import { persistentVolumeKind } from './persistentvolume/persistentvolume.kind.js';
import { persistentVolumeClaimKind } from './persistentvolumeclaim/persistentvolumeclaim.kind.js';
import { secretKind } from './secret/secret.kind.js';
import { serviceAccountKind, tokenRequestPorts } from './serviceaccount/serviceaccount.kind.js';
import { serviceKind } from './service/service.kind.js';

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
  podKind,
];

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

/** Hands the pods' eviction subresource the pod store it deletes through. */
@Injectable()
export class EvictionWiring {
  constructor(registry: KindRegistry, @Inject(STORES) stores: StoreFactory) {
    evictionPorts.deps = {
      deletePod: async (ns, name, options, ctx) => {
        await stores.storeFor(registry.lookup('', 'v1', 'pods') ?? podKind).delete(ns, name, options, ctx);
      },
    };
  }
}

/** Provides the core/v1 kinds. */
@Module({ providers: [apiKinds('', CORE_KINDS), TokenRequestWiring, EvictionWiring] })
export class CoreGroupModule {}
