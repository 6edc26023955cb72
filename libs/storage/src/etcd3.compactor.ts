/**
 * Periodic compaction of etcd, coordinated between API servers as kube-apiserver does
 * (k8s.io/apiserver/pkg/storage/etcd3/compact.go): the key `compact_rev_key` (outside any
 * prefix, shared with kube-apiservers on the same etcd) holds the revision recorded at the last
 * step, and its version counts the steps. Each period a server runs
 *   Txn(version(compact_rev_key) == the version it saw) Then(Put(compact_rev_key, rev it saw))
 * and only the winner compacts, to the revision recorded one period earlier, so the last full
 * period of history stays readable and N servers compact once per period, not N times.
 */
import { rev, type Etcd3Client, type Etcd3TxnResponse } from './etcd3.client.js';

/** The key kube-apiserver's compactor uses. */
export const COMPACT_REV_KEY = 'compact_rev_key';

/** The compaction timer of one server. */
export class Etcd3Compactor {
  /** Version of compact_rev_key this server last saw (0: absent). */
  private version = 0;
  /** The revision this server recorded at its last winning step (compacted to at the next). */
  private recorded = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly client: Etcd3Client,
    private readonly intervalMs: number,
    private readonly onCompacted: (revision: number) => void,
  ) {}

  start(): void {
    if (this.timer || this.intervalMs <= 0) return;
    this.timer = setInterval(() => void this.tick().catch(() => undefined), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /**
   * One step. Errors are left to the next period, as kube's compactor does. Resolves with the
   * revision compacted to, or 0 when this server did not compact.
   */
  async tick(): Promise<number> {
    const key = Buffer.from(COMPACT_REV_KEY);
    const r = await this.client.call<Etcd3TxnResponse>(
      'kv',
      'Txn',
      {
        compare: [{ key, target: 'VERSION', result: 'EQUAL', version: this.version }],
        success: [{ request_put: { key, value: Buffer.from(String(this.recorded)) } }],
        failure: [{ request_range: { key } }],
      },
      false,
    );
    if (!r.succeeded) {
      // Another server stepped since: follow its count and wait a full period from now.
      this.version = rev(r.responses[0]?.response_range?.kvs[0]?.version);
      return 0;
    }
    const target = this.recorded;
    this.version++;
    this.recorded = rev(r.header.revision);
    if (target <= 0) return 0;
    try {
      await this.client.call('kv', 'Compact', { revision: target, physical: false }, false);
    } catch (e) {
      // Someone compacted past it already: the history is gone either way.
      if (!/required revision has been compacted/.test((e as Error).message)) throw e;
    }
    this.onCompacted(target);
    return target;
  }
}
