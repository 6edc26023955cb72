/**
 * The etcd v3 API of a node (docs/etcd-api.md), served when --listen-client-urls is given (and
 * its health and metrics alone with --listen-metrics-urls). It
 * starts once the application is bootstrapped (the storage is open) and stops before the
 * storage closes (beforeApplicationShutdown runs ahead of the storage's onApplicationShutdown).
 */
import path from 'node:path';
import { Inject, Injectable, Module, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import type { ClusterNode } from '../cluster/cluster.node.js';
import type { ServerConfig } from '../config/flags.js';
import type { PkiMaterial } from '@app/pki';
import { Gauge } from 'prom-client';
import { ApiMetrics } from '../observability/metrics.js';
import { CLUSTER_NODE, PKI, SERVER_CONFIG } from '../tokens.js';
import { EtcdServer } from './etcd.server.js';

/** Owns the etcd endpoint's lifetime. */
@Injectable()
export class EtcdEndpoint implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private server: EtcdServer | undefined;

  constructor(
    @Inject(SERVER_CONFIG) private readonly cfg: ServerConfig,
    @Inject(PKI) private readonly pki: PkiMaterial,
    @Inject(CLUSTER_NODE) private readonly node: ClusterNode,
    private readonly metrics: ApiMetrics,
  ) {
    if (!cfg.listenClientUrls && !cfg.listenMetricsUrls) return;
    // etcd's names (server/storage/mvcc/metrics.go): what the etcd endpoint's watches hold.
    const gauge = (name: string, help: string, value: () => number): void => {
      new Gauge({
        name,
        help,
        registers: [metrics.registry],
        collect() {
          this.set(value());
        },
      });
    };
    gauge('etcd_debugging_mvcc_watch_stream_total', 'Total number of watch streams.', () => this.server?.watchCounts.streams ?? 0);
    gauge('etcd_debugging_mvcc_watcher_total', 'Total number of watchers.', () => this.server?.watchCounts.watchers ?? 0);
    gauge('etcd_debugging_mvcc_slow_watcher_total', 'Total number of unsynced slow watchers.', () => this.server?.watchCounts.slow ?? 0);
  }

  /** The bound port, or 0 when not served. */
  get port(): number {
    return this.server?.port ?? 0;
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.cfg.listenClientUrls && !this.cfg.listenMetricsUrls) return;
    const server = new EtcdServer(this.cfg, this.pki, this.node, path.resolve(this.cfg.dataDir), this.metrics.registry);
    await server.start();
    this.server = server;
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.server?.stop();
  }
}

/** Module of the etcd endpoint. */
@Module({ providers: [EtcdEndpoint], exports: [EtcdEndpoint] })
export class EtcdModule {}
