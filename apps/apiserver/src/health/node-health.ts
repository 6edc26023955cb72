/**
 * The node's health checks as a provider (docs/health.md): each check reads state its owner
 * keeps current (the event-loop monitor here, storage and Raft in the cluster node, the
 * post-start hooks), and shutdown starts failing readiness in beforeApplicationShutdown, before
 * the HTTP server closes, so balancers stop sending clients first.
 */
import { Inject, Injectable, type BeforeApplicationShutdown, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { PostStartHooks } from '../bootstrap/post-start-hook.js';
import type { ClusterNode } from '../cluster/cluster.node.js';
import { CLUSTER_NODE } from '../tokens.js';
import { EventLoopMonitor } from './eventloop.monitor.js';
import { nodeHealthChecks, type HealthCheckSets } from './health.checks.js';

/** The livez, readyz and healthz check sets of this node. */
@Injectable()
export class NodeHealth implements OnModuleInit, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly eventLoop = new EventLoopMonitor();
  private stopping = false;
  private checks: HealthCheckSets | undefined;

  constructor(
    @Inject(CLUSTER_NODE) private readonly node: ClusterNode,
    private readonly hooks: PostStartHooks,
  ) {}

  onModuleInit(): void {
    this.eventLoop.start();
    const names = this.hooks.status().map((h) => h.name);
    this.checks = nodeHealthChecks({
      eventLoop: () => this.eventLoop.check(),
      storage: () => this.node.storageCheck(),
      raft: () => this.node.raftCheck(),
      postStartHooks: names,
      postStartHook: (name) => (this.hooks.status().find((h) => h.name === name)?.done ? undefined : `post-start hook ${name} has not completed`),
      shutdown: () => (this.stopping ? 'the server is shutting down' : undefined),
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
