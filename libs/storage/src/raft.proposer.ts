/**
 * The mvcc Proposer port on a RaftNode (docs/cluster.md "Writes" and "Reads"): a write is an
 * encoded TxnCommand proposed to Raft; the promise resolves once the entry is committed by a
 * quorum AND applied to the local store (RaftNode resolves after its local apply), so a client
 * that wrote through this node reads its write here. Followers' proposals are forwarded to the
 * leader by the Raft library. Concurrent proposals are batched by the node driver into one
 * Ready: one fsync of the Raft log for all of them (etcd's batching).
 *
 * Errors become StorageError('Unavailable') (mapped to 504 + Retry-After by the registry),
 * except a malformed command, which is MvccError('InvalidCommand') and never proposed. While no
 * leader is known (an election is running) the proposal is retried for `leaderWaitMs`: nothing
 * was appended then, so a retry cannot duplicate the write.
 */
import { storageDisk } from '@app/level';
import { MvccError, encodeCommand, validateCommand, type Proposer, type TxnCommand, type TxnResult } from '@app/mvcc';
import { RaftError, type RaftNode } from '@app/raft';
import { ETCD_PUTS_LOG_FORMAT, ETCD_PUT_LOG_FORMAT, encodeEtcdCommand, encodeEtcdPuts, lonePut, type EtcdCommand, type EtcdResult } from './etcd.command.js';
import { isDeferredResult, type EtcdPackedResult, type EtcdTxnResult } from './mvcc.state-machine.js';
import type { SpaceQuota } from './space.quota.js';
import { StorageError } from './storage.interface.js';

/** Options of RaftProposer. */
export interface RaftProposerOptions {
  /** How long to retry while no leader is known (default 5000 ms). */
  leaderWaitMs?: number;
  /** Bound of a ReadIndex barrier (default 5000 ms); after it the read fails as Unavailable. */
  readTimeoutMs?: number;
  /**
   * Resolves once everything the node handed to the state machine is visible in the store
   * (MvccStateMachine.waitApplied: the state machine writes entries in groups, after RaftNode
   * counts them applied). Awaited after the read index is reached.
   */
  applied?: () => Promise<void>;
  /**
   * Bound of the bytes of proposals made on this node and not yet answered (default
   * DEFAULT_MAX_PENDING_PROPOSAL_BYTES). Each counts its encoded command plus
   * PENDING_PROPOSAL_OVERHEAD_BYTES. A proposal that would pass it fails at once with
   * StorageError('TooManyRequests'), before anything is appended; one proposal alone is always
   * taken, however large.
   */
  maxPendingBytes?: number;
}

/** The default bound of pending proposal bytes per node: 128 MiB. */
export const DEFAULT_MAX_PENDING_PROPOSAL_BYTES = 128 << 20;
/**
 * What a pending proposal is charged beyond its command's bytes: its promises, closures and
 * the Raft node's pending entry. Bounds the count of small proposals as well as their bytes.
 */
export const PENDING_PROPOSAL_OVERHEAD_BYTES = 1024;

/** At most this many Puts are packed into one entry (see RaftProposer.proposeEtcd). */
export const MAX_PACKED_PUTS = 256;
/** A pack is closed once its Puts' encoded bytes reach this (a Put larger than it goes alone). */
export const MAX_PACKED_BYTES = 256 << 10;

/** Lone Puts waiting to be proposed as one entry, with their callers. */
interface PutPack {
  cmds: EtcdCommand[];
  callers: { resolve(r: EtcdResult): void; reject(e: unknown): void }[];
  bytes: number;
}

/** Counters for /metrics (etcd_server_proposals_committed_total / _failed_total). */
export interface ProposerStats {
  committed: number;
  failed: number;
  pending: number;
  /** Bytes of the pending proposals, as the bound counts them (RaftProposerOptions.maxPendingBytes). */
  pendingBytes: number;
  /** Proposals refused because the pending bytes would have passed the bound. */
  refused: number;
  readIndexFailed: number;
  /** Entries proposed with several etcd Puts packed into them. */
  putPacks: number;
  /** The etcd Puts those entries carried. */
  packedPuts: number;
}

const RETRYABLE = new Set(['ErrNotLeader', 'ErrProposalDropped']);

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** True when `e` is a RaftError whose proposal was certainly not appended (safe to retry). */
function retryable(e: unknown): boolean {
  return e instanceof RaftError && RETRYABLE.has(e.code);
}

/** Proposer whose log is the Raft group `node` belongs to. */
export class RaftProposer implements Proposer {
  readonly stats: ProposerStats = { committed: 0, failed: 0, pending: 0, pendingBytes: 0, refused: 0, readIndexFailed: 0, putPacks: 0, packedPuts: 0 };
  private closed = false;
  private readonly inflight = new Set<Promise<unknown>>();
  private readonly leaderWaitMs: number;
  private readonly readTimeoutMs: number;
  private readonly applied: (() => Promise<void>) | undefined;
  private readonly maxPendingBytes: number;
  private formatGate: ((format: string) => boolean) | undefined;
  private quota: Pick<SpaceQuota, 'checkTxn' | 'checkEtcd' | 'alarmSettled'> | undefined;

  constructor(
    private readonly node: RaftNode,
    opts: RaftProposerOptions = {},
  ) {
    this.leaderWaitMs = opts.leaderWaitMs ?? 5000;
    this.readTimeoutMs = opts.readTimeoutMs ?? 5000;
    this.applied = opts.applied;
    this.maxPendingBytes = opts.maxPendingBytes ?? DEFAULT_MAX_PENDING_PROPOSAL_BYTES;
    node.setProposalSource(() => this.flushPack());
  }

  /**
   * Says whether every member of the group applies an optional log format (by its name, such as
   * ETCD_PUT_LOG_FORMAT). A format no gate approved is not proposed: a member whose build does
   * not know it would reject its entries while the others apply them. Without a gate (a
   * proposer outside a cluster node) every format of this build is used.
   */
  setFormatGate(gate: ((format: string) => boolean) | undefined): void {
    this.formatGate = gate;
  }

  /**
   * Checks every write against the store's space quota and alarms before it is proposed
   * (space.quota.ts): a write that adds data while the quota is exceeded fails with
   * StorageError('NoSpace'), any write while a CORRUPT alarm is raised with 'Corrupt'.
   */
  setQuota(quota: Pick<SpaceQuota, 'checkTxn' | 'checkEtcd' | 'alarmSettled'> | undefined): void {
    this.quota = quota;
  }

  /** True while this node is the Raft leader (it proposes the periodic compaction). */
  leads(): boolean {
    return this.node.status().role === 'leader';
  }

  propose(command: TxnCommand): Promise<TxnResult> {
    if (this.closed) return Promise.reject(new MvccError('Closed', 'proposer is closed'));
    const invalid = validateCommand(command);
    if (invalid) return Promise.reject(new MvccError('InvalidCommand', invalid));
    try {
      this.quota?.checkTxn(command);
    } catch (e) {
      return this.refused(e as Error);
    }
    const p = this.run(encodeCommand(command));
    this.inflight.add(p);
    void p.then(
      () => this.inflight.delete(p),
      () => this.inflight.delete(p),
    );
    return p;
  }

  /**
   * Proposes an etcd command (etcd.command.ts); resolves with its answer once applied locally.
   * Errors as propose().
   *
   * Lone Puts (etcd's KV.Put) that arrive while the Raft node handles a Ready are packed into
   * ONE entry, proposed when the node next takes proposals (RaftNode.setProposalSource): they
   * would have shared that Ready anyway, and as one entry they cost one log record, one
   * envelope and one step of the apply loop instead of one each. Each still takes a revision of
   * its own and gets its own answer. Only while every member applies the packed form.
   */
  async proposeEtcd(command: EtcdCommand): Promise<EtcdResult> {
    if (this.closed) throw new MvccError('Closed', 'proposer is closed');
    try {
      this.quota?.checkEtcd(command);
    } catch (e) {
      return this.refused(e as Error);
    }
    const binaryPut = this.formatGate?.(ETCD_PUT_LOG_FORMAT) ?? true;
    if (binaryPut && lonePut(command) && (this.formatGate?.(ETCD_PUTS_LOG_FORMAT) ?? true)) return this.packPut(command);
    return this.proposeEncoded(encodeEtcdCommand(command, { binaryPut }));
  }

  private async proposeEncoded(data: Uint8Array): Promise<EtcdResult> {
    const r = (await this.track(this.run(data))) as Partial<EtcdTxnResult>;
    if (!r.etcd) throw new StorageError('Internal', '', r.error ?? 'the etcd command was not applied as one');
    return r.etcd;
  }

  /** Keeps `p` among the in-flight proposals close() waits for, until it settles. */
  private track<T>(p: Promise<T>): Promise<T> {
    this.inflight.add(p);
    void p.then(
      () => this.inflight.delete(p),
      () => this.inflight.delete(p),
    );
    return p;
  }

  private pack: PutPack | undefined;

  private packPut(command: EtcdCommand): Promise<EtcdResult> {
    const put = lonePut(command)!;
    return this.track(
      new Promise<EtcdResult>((resolve, reject) => {
        const pack = (this.pack ??= { cmds: [], callers: [], bytes: 0 });
        pack.cmds.push(command);
        pack.callers.push({ resolve, reject });
        pack.bytes += put.key.length + put.value.length + 32;
        if (pack.cmds.length >= MAX_PACKED_PUTS || pack.bytes >= MAX_PACKED_BYTES) this.flushPack();
        else if (pack.cmds.length === 1) this.node.wake();
      }),
    );
  }

  /** Proposes the pack gathered so far: one Put alone in its own form, several as one entry. */
  private flushPack(): void {
    const pack = this.pack;
    if (!pack) return;
    this.pack = undefined;
    const { cmds, callers } = pack;
    if (cmds.length === 1) {
      this.proposeEncoded(encodeEtcdCommand(cmds[0]!)).then(callers[0]!.resolve, callers[0]!.reject);
      return;
    }
    this.stats.putPacks++;
    this.stats.packedPuts += cmds.length;
    this.run(encodeEtcdPuts(cmds)).then(
      (r) => {
        const answers = (r as Partial<EtcdPackedResult>).etcdPuts;
        if (answers?.length !== callers.length) {
          const e = new StorageError('Internal', '', r.error ?? 'the packed Puts were not applied as such');
          for (const c of callers) c.reject(e);
          return;
        }
        callers.forEach((c, i) => c.resolve(answers[i]!));
      },
      (e: unknown) => {
        for (const c of callers) c.reject(e);
      },
    );
  }

  /** A write the quota refused: answered once the alarm it raised is settled (SpaceQuota.alarmSettled). */
  private async refused(e: Error): Promise<never> {
    await this.quota?.alarmSettled();
    throw e;
  }

  private async run(data: Uint8Array): Promise<TxnResult> {
    const charge = data.byteLength + PENDING_PROPOSAL_OVERHEAD_BYTES;
    // Backpressure (etcd's "too many requests"): while the log cannot keep up (a slow disk, no
    // quorum, more clients than the cores serve), proposals would otherwise pile up in memory
    // without end. Refused before anything is appended, so the client may simply retry.
    if (this.stats.pending > 0 && this.stats.pendingBytes + charge > this.maxPendingBytes) {
      this.stats.refused++;
      throw new StorageError(
        'TooManyRequests',
        '',
        `too many requests: proposals of ${this.stats.pendingBytes} bytes are pending on this node (at most ${this.maxPendingBytes})`,
      );
    }
    const deadline = Date.now() + this.leaderWaitMs;
    this.stats.pending++;
    this.stats.pendingBytes += charge;
    try {
      for (let wait = 20; ; wait = Math.min(wait * 2, 250)) {
        try {
          // A node that resends its proposals (RaftNode.setResendGate) carries them across a
          // leader change itself; otherwise the change ends them as outcome unknown at once.
          const proposed = this.node.propose(data);
          const r = await (this.node.resendsProposals() ? proposed : this.watchLeader(proposed));
          const result = isDeferredResult(r.result) ? await r.result.deferred : (r.result as TxnResult | undefined);
          if (!result) throw new StorageError('Internal', '', `entry ${r.index} was applied without a result`);
          this.stats.committed++;
          return result;
        } catch (e) {
          if (retryable(e) && Date.now() + wait < deadline && !this.closed) {
            await sleep(wait);
            continue;
          }
          this.stats.failed++;
          throw toStorageError(e);
        }
      }
    } finally {
      this.stats.pending--;
      this.stats.pendingBytes -= charge;
    }
  }

  private readInFlight: Promise<void> | undefined;
  private readNext: Promise<void> | undefined;

  /**
   * Coalesces concurrent barriers (etcd's linearizableReadLoop): every caller waits for a
   * ReadIndex round that STARTED after it arrived. One round in flight serves only callers who
   * came before it; those arriving meanwhile share the next round.
   */
  private sharedReadIndex(): Promise<void> {
    if (!this.readInFlight) {
      // A round forwarded to a leader that died would hold every later reader until the node's
      // request timeout: bound it, and drop it as soon as the leader changes.
      this.readInFlight = this.watchLeader(withTimeout(this.node.readIndex(), this.readTimeoutMs)).then(
        () => {
          this.readInFlight = undefined;
        },
        (e: unknown) => {
          this.readInFlight = undefined;
          throw e;
        },
      );
      return this.readInFlight;
    }
    this.readNext ??= this.readInFlight
      .catch(() => undefined)
      .then(() => {
        this.readNext = undefined;
        return this.sharedReadIndex();
      });
    return this.readNext;
  }

  private readonly forwarded = new Set<{ lead: number; reject(e: Error): void }>();
  private leaderTimer: NodeJS.Timeout | undefined;

  /**
   * A proposal forwarded to a leader that then disappears is dropped with it and would only
   * fail at the node's request timeout. Like etcd's "request timed out, possibly due to
   * previous leader failure", fail it as soon as this node sees a different leader (or none):
   * the outcome is unknown (the old leader may have replicated it), so it is NOT retried here.
   */
  private watchLeader<T>(p: Promise<T>): Promise<T> {
    const st = this.node.status();
    if (st.role === 'leader' || st.lead === 0) return p;
    return new Promise<T>((resolve, reject) => {
      const entry = { lead: st.lead, reject };
      this.forwarded.add(entry);
      this.leaderTimer ??= setInterval(() => this.checkLeader(), 50);
      p.then(resolve, reject).finally(() => {
        this.forwarded.delete(entry);
        if (this.forwarded.size === 0 && this.leaderTimer) {
          clearInterval(this.leaderTimer);
          this.leaderTimer = undefined;
        }
      });
    });
  }

  private checkLeader(): void {
    const lead = this.node.status().lead;
    for (const f of this.forwarded) {
      if (f.lead !== lead) {
        this.forwarded.delete(f);
        f.reject(new RaftError('ErrLeadershipLost', 'the leader changed while the proposal was forwarded to it; outcome unknown'));
      }
    }
  }

  /**
   * ReadIndex (Raft thesis 6.4): resolves once this node applied everything committed before
   * the call, as confirmed by a quorum heartbeat round; a node cut off from the majority never
   * resolves and fails after readTimeoutMs with StorageError('Unavailable') instead of serving
   * stale data.
   */
  async readBarrier(): Promise<void> {
    if (this.closed) throw new StorageError('Unavailable', '', 'storage is closed');
    const deadline = Date.now() + this.readTimeoutMs;
    for (let wait = 20; ; wait = Math.min(wait * 2, 250)) {
      const left = deadline - Date.now();
      try {
        await withTimeout(this.sharedReadIndex(), left);
        await this.applied?.();
        return;
      } catch (e) {
        // Reads have no side effect: a round lost with its leader is simply asked again.
        const again = retryable(e) || (e instanceof RaftError && e.code === 'ErrLeadershipLost');
        if (again && Date.now() + wait < deadline && !this.closed) {
          await sleep(wait);
          continue;
        }
        this.stats.readIndexFailed++;
        throw toStorageError(e);
      }
    }
  }

  /** Resolves once everything this node handed to its state machine is written to the store (Proposer.settled). */
  settled(): Promise<void> {
    return this.applied?.() ?? Promise.resolve();
  }

  /** Refuses new proposals and waits for in-flight ones to settle (the node is stopped by its owner). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.inflight]);
  }
}

class ReadTimeout extends Error {}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  if (ms <= 0) {
    // The read still settles later; observe it so its rejection is never unhandled (that
    // would end the process).
    p.catch(() => undefined);
    return Promise.reject(new ReadTimeout('read index not confirmed in time'));
  }
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new ReadTimeout(`read index not confirmed within ${ms} ms`)), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(t);
        reject(e);
      },
    );
  });
}

/** Maps Raft failures to the storage error the registry turns into a Status. */
export function toStorageError(e: unknown): Error {
  if (e instanceof StorageError || e instanceof MvccError) return e;
  if (e instanceof ReadTimeout) return new StorageError('Unavailable', '', `no quorum confirmed the read: ${e.message}`);
  if (e instanceof RaftError) {
    switch (e.code) {
      case 'ErrNotLeader':
      case 'ErrProposalDropped':
        return new StorageError('Unavailable', '', `no Raft leader available: ${e.message}`);
      case 'ErrTimeout':
      case 'ErrLeadershipLost':
        // A write waiting for disk space times out here: say so (docs/disk-faults.md).
        return new StorageError(
          'Unavailable',
          '',
          `outcome unknown: ${e.message}${storageDisk.full ? `; this node's disk is full: ${storageDisk.error}` : ''}`,
        );
      case 'ErrStopped':
        return new StorageError('Unavailable', '', 'the node is shutting down');
      default:
        return new StorageError('Internal', '', `raft: ${e.message}`);
    }
  }
  return e instanceof Error ? e : new Error(String(e));
}
