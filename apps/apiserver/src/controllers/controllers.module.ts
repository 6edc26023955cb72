/**
 * The controller manager: built-in controllers run on one node at a time, the holder of the
 * kube-controller-manager Lease in kube-system (docs/cluster.md "Controller election"), as
 * kube-controller-manager does. The election starts as a post-start hook (the Lease needs
 * kube-system to exist) and is given up in beforeApplicationShutdown, so a successor takes over
 * at once while this node's storage is still open.
 */
import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Module, type BeforeApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { DiscoveryModule, DiscoveryService } from '@nestjs/core';
import { LeaderElector } from '@app/controllers';
import { KindRegistry, type KindDeclaration } from '@app/registry';
import { leaseLockFor } from '../cluster/controller.election.js';
import type { ServerConfig } from '../config/flags.js';
import { envInt } from '../config/env.js';
import { PostStartHook, type PostStartHookProvider } from '../bootstrap/post-start-hook.js';
import { SERVER_CONFIG, STORES, type StoreFactory } from '../tokens.js';
import { BootstrapSignerRunner, TokenCleanerRunner } from './bootstrap-token.controllers.js';
import { GarbageCollectorRunner, NamespaceControllerRunner } from './builtin.controllers.js';
import { ClusterRoleAggregationRunner } from './clusterrole-aggregation.controller.js';
import { CronJobControllerRunner } from './cronjob.controller.js';
import { DaemonSetControllerRunner } from './daemonset.controller.js';
import { ManagedController, type ControllerRunner } from './controller.runner.js';
import { DeploymentControllerRunner } from './deployment.controller.js';
import { DisruptionControllerRunner } from './disruption.controller.js';
import { HorizontalPodAutoscalerRunner } from './hpa.controller.js';
import { JobControllerRunner } from './job.controller.js';
import { EndpointSliceControllerRunner, EndpointsControllerRunner } from './endpoints.controller.js';
import { EndpointSliceMirroringRunner } from './endpointslicemirroring.controller.js';
import { EventRecorder } from './event.recorder.js';
import { CsrApprovingRunner, CsrCleanerRunner, CsrSigningRunner } from './csr.controllers.js';
import { LegacyTokenControllerRunner, RootCaPublisherRunner, ServiceAccountControllerRunner } from './serviceaccount.controllers.js';
import { EphemeralVolumeControllerRunner } from './ephemeral-volume.controller.js';
import { PersistentVolumeControllerRunner } from './persistentvolume.controller.js';
import { NodeLifecycleRunner, TaintEvictionRunner } from './node-lifecycle.controller.js';
import { PodGarbageCollectorRunner } from './podgc.controller.js';
import { ReplicaSetControllerRunner, ReplicationControllerRunner } from './replicaset.controller.js';
import { StatefulSetControllerRunner } from './statefulset.controller.js';
import { ResourceQuotaControllerRunner } from './resource-quota.controller.js';
import { StorageProtectionRunner } from './storage-protection.controller.js';

/** Elects this node or not, and starts or stops every discovered controller accordingly. */
@PostStartHook({ name: 'start-controllers', order: 300 })
@Injectable()
export class ControllerManager implements OnModuleInit, PostStartHookProvider, BeforeApplicationShutdown {
  private controllers: Array<{ name: string; runner: ControllerRunner }> = [];
  private elector: LeaderElector | undefined;

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly registry: KindRegistry,
    @Inject(STORES) private readonly stores: StoreFactory,
    @Inject(SERVER_CONFIG) private readonly cfg: ServerConfig,
  ) {}

  onModuleInit(): void {
    this.controllers = this.discovery
      .getProviders({ metadataKey: ManagedController.KEY })
      .map((w) => ({ name: this.discovery.getMetadataByDecorator(ManagedController, w)!.name, runner: w.instance as ControllerRunner }));
  }

  /** Names of the managed controllers. */
  names(): string[] {
    return this.controllers.map((c) => c.name);
  }

  async runPostStartHook(): Promise<void> {
    const leaseDecl = this.registry.lookup('coordination.k8s.io', 'v1', 'leases') as KindDeclaration;
    const name = this.cfg.name;
    this.elector = new LeaderElector({
      lock: leaseLockFor(this.stores.storeFor(leaseDecl), 'kube-system', 'kube-controller-manager'),
      identity: `${name}_${randomBytes(8).toString('hex')}`,
      leaseDurationMs: envInt('KAPI_LEASE_DURATION_MS') ?? 15_000,
      renewDeadlineMs: envInt('KAPI_LEASE_RENEW_DEADLINE_MS') ?? 10_000,
      retryPeriodMs: envInt('KAPI_LEASE_RETRY_PERIOD_MS') ?? 2_000,
      onStartedLeading: () => {
        process.stderr.write(`${name}: acquired lease kube-system/kube-controller-manager, starting controllers\n`);
        for (const c of this.controllers) c.runner.start();
      },
      onStoppedLeading: () => {
        process.stderr.write(`${name}: lost lease kube-system/kube-controller-manager, stopping controllers\n`);
        for (const c of this.controllers) c.runner.stop();
      },
    });
    this.elector.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.elector?.stop();
  }
}

/** The controller manager and the built-in controllers. */
@Module({
  imports: [DiscoveryModule],
  providers: [
    ControllerManager,
    EventRecorder,
    NamespaceControllerRunner,
    GarbageCollectorRunner,
    ClusterRoleAggregationRunner,
    TokenCleanerRunner,
    BootstrapSignerRunner,
    CsrApprovingRunner,
    CsrSigningRunner,
    CsrCleanerRunner,
    ServiceAccountControllerRunner,
    RootCaPublisherRunner,
    LegacyTokenControllerRunner,
    StorageProtectionRunner,
    PersistentVolumeControllerRunner,
    EphemeralVolumeControllerRunner,
    PodGarbageCollectorRunner,
    NodeLifecycleRunner,
    TaintEvictionRunner,
    ResourceQuotaControllerRunner,
    DisruptionControllerRunner,
    EndpointsControllerRunner,
    EndpointSliceControllerRunner,
    EndpointSliceMirroringRunner,
    ReplicaSetControllerRunner,
    ReplicationControllerRunner,
    DeploymentControllerRunner,
    JobControllerRunner,
    CronJobControllerRunner,
    DaemonSetControllerRunner,
    StatefulSetControllerRunner,
    HorizontalPodAutoscalerRunner,
  ],
})
export class ControllersModule {}
