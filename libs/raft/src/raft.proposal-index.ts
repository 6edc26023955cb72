import type { Entry } from './raft.types.js';

/**
 * The envelope RaftNode puts before the data of every proposal: the proposer's node id (uint32)
 * and a sequence number unique to that proposer (float64), both big-endian. Together they name
 * the proposal across resends: every copy of one proposal carries the same envelope.
 */
export const ENVELOPE_BYTES = 12;

/**
 * Name, among the optional log formats a member's build lists (docs/cluster.md "Membership"),
 * of this build's leader behaviour: it appends a proposal at most once however many copies of
 * it arrive. Proposals are resent (RaftNode.setResendGate) only once every member lists it.
 */
export const PROPOSAL_DEDUP_FORMAT = 'proposal-dedup';

/** True when `e` is a normal entry long enough to carry an envelope (not a leader's no-op). */
export function hasEnvelope(e: Entry): boolean {
  return e.type === 'normal' && e.data.length >= ENVELOPE_BYTES;
}

/** The proposer id of an envelope. */
export function envelopeProposer(data: Uint8Array): number {
  return ((data[0]! << 24) | (data[1]! << 16) | (data[2]! << 8) | data[3]!) >>> 0;
}

const seqBytes = new Uint8Array(8);
const seqView = new DataView(seqBytes.buffer);

/** The sequence number of an envelope (read through a scratch buffer: no allocation per call). */
export function envelopeSeq(data: Uint8Array): number {
  for (let i = 0; i < 8; i++) seqBytes[i] = data[4 + i]!;
  return seqView.getFloat64(0);
}

/**
 * The proposals a leader's log holds after `floor`, by envelope: what lets the leader append a
 * proposal at most once however many copies of it reach it (docs/raft.md "Resent proposals").
 * Built when the node becomes leader from the entries its log holds, extended as it appends,
 * and bounded: past `cap` entries the oldest are forgotten and `floor` rises to their index.
 */
export class ProposalIndex {
  /** Entries at or below this index are not indexed. */
  floor: number;
  private readonly byProposer = new Map<number, Map<number, number>>();
  /** Indexed entries in append order, for forgetting the oldest: index, proposer, seq. */
  private readonly order: number[] = [];
  private head = 0;
  private count = 0;

  constructor(
    floor: number,
    private readonly cap: number,
  ) {
    this.floor = floor;
  }

  /** Whether the proposal (proposer, seq) is in the log after `floor`. */
  has(proposer: number, seq: number): boolean {
    return this.byProposer.get(proposer)?.has(seq) ?? false;
  }

  /** Records the proposal (proposer, seq) at `index` (appended in index order). */
  add(proposer: number, seq: number, index: number): void {
    let seqs = this.byProposer.get(proposer);
    if (seqs === undefined) this.byProposer.set(proposer, (seqs = new Map()));
    seqs.set(seq, index);
    this.order.push(index, proposer, seq);
    if (++this.count > this.cap) this.forgetOldest();
  }

  /** Records the enveloped entries among `entries` (already at their indexes). */
  addEntries(entries: readonly Entry[]): void {
    for (const e of entries) if (hasEnvelope(e)) this.add(envelopeProposer(e.data), envelopeSeq(e.data), e.index);
  }

  get size(): number {
    return this.count;
  }

  private forgetOldest(): void {
    const [index, proposer, seq] = [this.order[this.head]!, this.order[this.head + 1]!, this.order[this.head + 2]!];
    this.head += 3;
    this.count--;
    const seqs = this.byProposer.get(proposer);
    if (seqs?.get(seq) === index) {
      seqs.delete(seq);
      if (seqs.size === 0) this.byProposer.delete(proposer);
    }
    if (index > this.floor) this.floor = index;
    // Drop the consumed prefix now and then (amortized O(1)).
    if (this.head >= 3 * this.cap) {
      this.order.splice(0, this.head);
      this.head = 0;
    }
  }
}
