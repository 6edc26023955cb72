/**
 * The built-in controllers as providers: namespace lifecycle and garbage collector, on the
 * node's storage and the kinds' stores.
 */
import { Inject, Injectable } from '@nestjs/common';
import { GarbageCollector, NamespaceController } from '@app/controllers';
import { KindRegistry } from '@app/registry';
import type { Storage } from '@app/storage';
import { ApiMetrics } from '../observability/metrics.js';
import { STORAGE, STORES, type StoreFactory } from '../tokens.js';
import { ManagedController, type ControllerRunner } from './controller.runner.js';
import { EventRecorder, type ComponentRecorder } from './event.recorder.js';

/** The namespace controller (empties a terminating namespace, then removes its finalizer). */
@ManagedController({ name: 'namespace' })
@Injectable()
export class NamespaceControllerRunner implements ControllerRunner {
  private controller: NamespaceController | undefined;

  constructor(
    private readonly registry: KindRegistry,
    @Inject(STORAGE) private readonly storage: Storage,
    @Inject(STORES) private readonly stores: StoreFactory,
  ) {}

  start(): void {
    this.controller = new NamespaceController({ registry: this.registry, storage: this.storage, storeFor: (d) => this.stores.storeFor(d) });
    this.controller.start();
  }

  stop(): void {
    this.controller?.stop();
    this.controller = undefined;
  }
}

/**
 * The garbage collector (owner references, cascading deletion). Its progress is on /metrics
 * (kapi_garbage_collector_processed_revision, ..._items_processed_total) while it runs here.
 */
@ManagedController({ name: 'garbage-collector' })
@Injectable()
export class GarbageCollectorRunner implements ControllerRunner {
  private controller: GarbageCollector | undefined;
  /** Events, as kube-controller-manager's garbage collector records them. */
  private readonly events: ComponentRecorder;

  constructor(
    private readonly registry: KindRegistry,
    @Inject(STORAGE) private readonly storage: Storage,
    @Inject(STORES) private readonly stores: StoreFactory,
    metrics: ApiMetrics,
    recorder: EventRecorder,
  ) {
    metrics.garbageCollectorSource = () => this.controller;
    this.events = recorder.for('garbage-collector-controller');
  }

  start(): void {
    this.controller = new GarbageCollector({
      registry: this.registry,
      storage: this.storage,
      storeFor: (d) => this.stores.storeFor(d),
      recordEvent: (ref, type, reason, message) => this.events.record(ref, type, reason, message),
    });
    this.controller.start().catch((e) => process.stderr.write(`garbage collector failed to start: ${(e as Error).message}\n`));
  }

  stop(): void {
    this.controller?.stop();
    this.controller = undefined;
  }
}
