/**
 * Bounded window of in-flight append messages to one peer, limited by count and by bytes
 * (etcd's Inflights). Each slot records the last index a message carried; slots are freed when
 * the peer acknowledges that index. A ring buffer avoids allocation on the hot path.
 */
export class Inflights {
  private readonly idx: Float64Array;
  private readonly bytes: Float64Array;
  private start = 0;
  count = 0;
  totalBytes = 0;

  constructor(
    readonly maxCount: number,
    readonly maxBytes: number,
  ) {
    this.idx = new Float64Array(maxCount);
    this.bytes = new Float64Array(maxCount);
  }

  /** Records a message ending at `index` of `size` bytes; the caller checks full() first. */
  add(index: number, size: number): void {
    if (this.count >= this.maxCount) throw new Error('inflights: add while full');
    const slot = (this.start + this.count) % this.maxCount;
    this.idx[slot] = index;
    this.bytes[slot] = size;
    this.count++;
    this.totalBytes += size;
  }

  /** Frees every message that ended at or before `to` (acknowledged). */
  freeLE(to: number): void {
    while (this.count > 0 && this.idx[this.start]! <= to) {
      this.totalBytes -= this.bytes[this.start]!;
      this.start = (this.start + 1) % this.maxCount;
      this.count--;
    }
    if (this.count === 0) {
      this.start = 0;
      this.totalBytes = 0;
    }
  }

  /** Frees the oldest message (a heartbeat response proves the peer is alive). */
  freeFirstOne(): void {
    if (this.count > 0) this.freeLE(this.idx[this.start]!);
  }

  full(): boolean {
    return this.count >= this.maxCount || (this.maxBytes > 0 && this.totalBytes >= this.maxBytes);
  }

  reset(): void {
    this.start = 0;
    this.count = 0;
    this.totalBytes = 0;
  }
}

/**
 * Replication state of a peer (etcd's tracker.StateType):
 *  - probe: one append at a time until the leader finds where logs match (paper section 5.3);
 *  - replicate: optimistic pipelining, next advances as soon as entries are sent;
 *  - snapshot: waiting for an InstallSnapshot to finish; nothing else is sent.
 */
export type ProgressState = 'probe' | 'replicate' | 'snapshot';

/**
 * Leader's view of one peer: matchIndex and nextIndex of the paper (figure 2, "volatile state
 * on leaders") plus flow control. Mutated only by the core on the leader.
 */
export class Progress {
  match = 0;
  next: number;
  state: ProgressState = 'probe';
  /** Index of the snapshot being sent, in state snapshot. */
  pendingSnapshot = 0;
  /** Heard from since the last check-quorum round (paper section 6.2 / thesis 6.2). */
  recentActive = false;
  /** In probe state: an append is outstanding, wait for its answer or a heartbeat response. */
  probeSent = false;
  /**
   * The highest commit index this peer has been told of and can act on: the commit an append
   * carried, capped at the append's last entry, or a heartbeat's.
   */
  sentCommit = 0;
  /**
   * The highest index this peer waits to learn is committed: the last entry it proposed
   * through this leader, or the index of a ReadIndex answered to it (0: none).
   */
  awaited = 0;
  readonly inflights: Inflights;

  constructor(
    next: number,
    maxInflight: number,
    maxInflightBytes: number,
    public isLearner: boolean,
  ) {
    this.next = next;
    this.inflights = new Inflights(maxInflight, maxInflightBytes);
  }

  private resetState(state: ProgressState): void {
    this.probeSent = false;
    this.pendingSnapshot = 0;
    this.state = state;
    this.inflights.reset();
  }

  becomeProbe(): void {
    if (this.state === 'snapshot') {
      const pending = this.pendingSnapshot;
      this.resetState('probe');
      this.next = Math.max(this.match + 1, pending + 1);
    } else {
      this.resetState('probe');
      this.next = this.match + 1;
    }
  }

  becomeReplicate(): void {
    this.resetState('replicate');
    this.next = this.match + 1;
  }

  becomeSnapshot(snapshotIndex: number): void {
    this.resetState('snapshot');
    this.pendingSnapshot = snapshotIndex;
  }

  /** An acknowledgement of index n arrived; returns whether match advanced. */
  maybeUpdate(n: number): boolean {
    let updated = false;
    if (this.match < n) {
      this.match = n;
      updated = true;
      this.probeSent = false;
    }
    this.next = Math.max(this.next, n + 1);
    return updated;
  }

  /**
   * A rejection of the append at `rejected` arrived with the follower's hint; moves next back.
   * Returns false for a stale rejection (already superseded).
   */
  maybeDecrTo(rejected: number, matchHint: number): boolean {
    if (this.state === 'replicate') {
      if (rejected <= this.match) return false;
      this.next = this.match + 1;
      return true;
    }
    if (this.next - 1 !== rejected) return false;
    this.next = Math.max(Math.min(rejected, matchHint + 1), this.match + 1, 1);
    this.probeSent = false;
    return true;
  }

  /** Records that an append with `n` entries of `bytes` ending at `lastIndex` was sent. */
  sentEntries(n: number, bytes: number, lastIndex: number): void {
    if (this.state === 'replicate') {
      if (n > 0) {
        this.next = lastIndex + 1;
        this.inflights.add(lastIndex, bytes);
      }
    } else if (this.state === 'probe') {
      this.probeSent = true;
    }
  }

  /** Whether sending to this peer must wait (flow control). */
  isPaused(): boolean {
    switch (this.state) {
      case 'probe':
        return this.probeSent;
      case 'replicate':
        return this.inflights.full();
      case 'snapshot':
        return true;
    }
  }
}
