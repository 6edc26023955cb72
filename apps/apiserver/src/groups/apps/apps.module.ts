/**
 * The apps API group (`/apis/apps/v1`): ControllerRevision, Deployment, ReplicaSet, StatefulSet
 * and DaemonSet, stored only. No workload controller runs, so a Deployment never gets
 * ReplicaSets, nor a ReplicaSet, StatefulSet or DaemonSet Pods.
 */
import { Inject, Injectable, Module } from '@nestjs/common';
import { KindRegistry, type KindDeclaration } from '@app/registry';
import { STORES, type StoreFactory } from '../../tokens.js';
import { apiKinds } from '../api-group.js';
import { controllerRevisionKind } from './controllerrevision/controllerrevision.kind.js';
import { daemonSetKind } from './daemonset/daemonset.kind.js';
import { deploymentKind, scalePorts } from './deployment/deployment.kind.js';
import type { ScalePorts } from './deployment/deployment.scale.js';
import { replicaSetKind, replicaSetScalePorts } from './replicaset/replicaset.kind.js';
import { statefulSetKind, statefulSetScalePorts } from './statefulset/statefulset.kind.js';

/** The apps/v1 kinds. */
export const APPS_KINDS: readonly KindDeclaration[] = [controllerRevisionKind, deploymentKind, replicaSetKind, statefulSetKind, daemonSetKind];

/** Hands each scale subresource the store of its kind, which it reads and writes through. */
@Injectable()
export class ScaleWiring {
  constructor(registry: KindRegistry, @Inject(STORES) stores: StoreFactory) {
    const wire = (ports: ScalePorts, decl: KindDeclaration): void => {
      const store = () => stores.storeFor(registry.lookup('apps', 'v1', decl.plural) ?? decl);
      ports.deps = {
        get: (ns, name) => store().get(ns, name),
        update: async (ns, name, obj, ctx) => (await store().update(ns, name, obj, { ctx, fieldValidation: 'Ignore' })).object,
      };
    };
    wire(scalePorts, deploymentKind);
    wire(replicaSetScalePorts, replicaSetKind);
    wire(statefulSetScalePorts, statefulSetKind);
  }
}

/** Provides the apps/v1 kinds. */
@Module({ providers: [apiKinds('apps', APPS_KINDS), ScaleWiring] })
export class AppsGroupModule {}
