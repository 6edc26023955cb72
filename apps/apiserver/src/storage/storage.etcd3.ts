/**
 * The external etcd backend (docs/storage-backends.md): Etcd3Storage on the cluster of
 * `--etcd-servers`, with kube-apiserver's readiness check `etcd` (a linearizable read of the
 * key `health` answered within the check timeout) and its client figures on /metrics. There is
 * no Raft member here: no member records, no self-registration, nothing fatal (etcd keeps the
 * data; an unreachable etcd makes the server unready, not dead, as kube-apiserver's livez
 * leaves etcd out).
 */
import { Etcd3Client, Etcd3Storage, readEtcdTls } from '@app/storage';
import { Gauge, Histogram, type Registry } from 'prom-client';
import { envInt } from '../config/env.js';
import type { ServerConfig } from '../config/flags.js';
import type { StorageBackend } from './storage.backend.js';

/** How often the `etcd` readiness probe reads, and how long one read may take (kube's --etcd-healthcheck-timeout). */
const PROBE_INTERVAL_MS = 1000;
const PROBE_TIMEOUT_MS = 2000;

/** Keeps the outcome of the latest etcd probe for the synchronous readiness check. */
class EtcdProbe {
  private reason: string | undefined = 'etcd not probed yet';
  private lastOk = 0;
  private timer: NodeJS.Timeout | undefined;
  private running = false;

  constructor(private readonly client: Etcd3Client) {}

  async start(): Promise<void> {
    await this.probe();
    this.timer = setInterval(() => void this.probe(), PROBE_INTERVAL_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  private async probe(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      // kube-apiserver's etcd check: a linearizable Get of `health` (needs a quorum).
      await this.client.call('kv', 'Range', { key: Buffer.from('health'), count_only: true }, true, PROBE_TIMEOUT_MS);
      this.reason = undefined;
      this.lastOk = Date.now();
    } catch (e) {
      this.reason = `etcd: ${(e as Error).message}`;
    } finally {
      this.running = false;
    }
  }

  /** undefined while the last probe succeeded and is recent. */
  check(): string | undefined {
    if (this.reason) return this.reason;
    const age = Date.now() - this.lastOk;
    return age > PROBE_INTERVAL_MS + 2 * PROBE_TIMEOUT_MS ? `etcd: no answer for ${age} ms` : undefined;
  }
}

/** Opens the etcd backend from the flags (validated by parseFlags). */
export async function openEtcd3Backend(cfg: ServerConfig, registry: Registry): Promise<StorageBackend> {
  const duration = new Histogram({
    name: 'etcd_request_duration_seconds',
    help: 'Etcd request latency in seconds for each operation.',
    labelNames: ['operation'] as const,
    buckets: [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60],
    registers: [registry],
  });
  const client = new Etcd3Client({
    endpoints: (cfg.etcdServers ?? '').split(','),
    tls: readEtcdTls({ cafile: cfg.etcdCafile, certfile: cfg.etcdCertfile, keyfile: cfg.etcdKeyfile }),
    onCall: (method, seconds) => duration.observe({ operation: method }, seconds),
  });
  const storage = new Etcd3Storage(client, {
    prefix: cfg.etcdPrefix,
    compactionIntervalMs: cfg.etcdCompactionIntervalMs,
    freezeSharedEvents: envInt('KAPI_FREEZE_COPIES') === 1,
  });
  const probe = new EtcdProbe(client);
  try {
    await storage.open();
    await probe.start();
  } catch (e) {
    probe.stop();
    await storage.close();
    throw new Error(`--etcd-servers ${client.endpoints.join(',')}: ${(e as Error).message}`, { cause: e });
  }
  const gauge = (name: string, help: string, value: () => number): void => {
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(value());
      },
    });
  };
  gauge('etcd_debugging_mvcc_current_revision', 'The latest etcd revision this server has seen.', () => storage.currentRevision());
  gauge('etcd_debugging_mvcc_compact_revision', 'The etcd revision this server compacted to or saw compacted.', () => storage.compactedRevision());
  const open = { name: 'storage', check: () => (storage.isClosed ? 'storage closed' : undefined) };
  return {
    name: 'etcd3',
    storage,
    livez: [open],
    readyz: [open, { name: 'etcd', check: () => probe.check() }],
    onFatal: () => undefined,
    close: async () => {
      probe.stop();
      await storage.close();
    },
  };
}
