/**
 * The apps API group (`/apis/apps/v1`): ControllerRevision and Deployment, stored only. No
 * workload controller runs, so a Deployment never gets ReplicaSets or Pods; the other workload
 * kinds are not served.
 */
import { Inject, Injectable, Module } from '@nestjs/common';
import { KindRegistry, type KindDeclaration } from '@app/registry';
import { STORES, type StoreFactory } from '../../tokens.js';
import { apiKinds } from '../api-group.js';
import { controllerRevisionKind } from './controllerrevision/controllerrevision.kind.js';
import { deploymentKind, scalePorts } from './deployment/deployment.kind.js';

/** The apps/v1 kinds. */
export const APPS_KINDS: readonly KindDeclaration[] = [controllerRevisionKind, deploymentKind];

/** Hands the deployments' scale subresource the Deployment store it reads and writes through. */
@Injectable()
export class ScaleWiring {
  constructor(registry: KindRegistry, @Inject(STORES) stores: StoreFactory) {
    const store = () => stores.storeFor(registry.lookup('apps', 'v1', 'deployments') ?? deploymentKind);
    scalePorts.deps = {
      get: (ns, name) => store().get(ns, name),
      update: async (ns, name, obj, ctx) => (await store().update(ns, name, obj, { ctx, fieldValidation: 'Ignore' })).object,
    };
  }
}

/** Provides the apps/v1 kinds. */
@Module({ providers: [apiKinds('apps', APPS_KINDS), ScaleWiring] })
export class AppsGroupModule {}
