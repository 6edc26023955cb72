/**
 * The node's health checks as a provider (docs/health.md): each check reads state its owner
 * keeps current (the event-loop monitor here, the storage backend's checks, the post-start
 * hooks), and shutdown starts failing readiness in beforeApplicationShutdown, before
 * the HTTP server closes, so balancers stop sending clients first.
 */
import { storageDisk } from '@app/level';
import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { PostStartHooks } from '../bootstrap/post-start-hook.js';
import type { StorageBackend } from '../storage/storage.backend.js';
import { STORAGE_BACKEND } from '../tokens.js';
import { EventLoopMonitor } from './eventloop.monitor.js';
import { nodeHealthChecks, type HealthCheckSets } from './health.checks.js';

/** The livez, readyz and healthz check sets of this node. */
@Injectable()
export class NodeHealth implements OnModuleInit, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly eventLoop = new EventLoopMonitor();
  private stopping = false;
  private checks: HealthCheckSets | undefined;

  constructor(
    @Inject(STORAGE_BACKEND) private readonly backend: StorageBackend,
    private readonly hooks: PostStartHooks,
  ) {}

  onModuleInit(): void {
    this.eventLoop.start();
    const names = this.hooks.status().map((h) => h.name);
    this.checks = nodeHealthChecks({
      eventLoop: () => this.eventLoop.check(),
      storageLivez: this.backend.livez,
      storageReadyz: this.backend.readyz,
      postStartHooks: names,
      postStartHook: (name) => (this.hooks.status().find((h) => h.name === name)?.done ? undefined : `post-start hook ${name} has not completed`),
      shutdown: () => (this.stopping ? 'the server is shutting down' : undefined),
      storageDisk: () => (storageDisk.full ? `no space left on device: storage writes wait for space (${storageDisk.error ?? ''})` : undefined),
    });
  }

  /** The check sets (available from onModuleInit on). */
  get sets(): HealthCheckSets {
    return this.checks!;
  }

  beforeApplicationShutdown(): void {
    this.stopping = true;
  }

  onApplicationShutdown(): void {
    this.eventLoop.stop();
  }
}
