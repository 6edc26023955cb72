import type { AppliedEntry, StateMachine, StateMachineSnapshot } from '../raft.node.types.js';

const enc = new TextEncoder();
const dec = new TextDecoder();

/** What the simulator checks when a state machine applies or restores (see NodeSim). */
export interface SimKvObserver {
  onApply(kv: SimKv, e: AppliedEntry, key: string): void;
  onRestore(kv: SimKv, s: { index: number; hash: number }): void;
}

/**
 * The simulator's state machine: a volatile key-value store (each write sets one key) that
 * keeps, as its whole state, the index and term of the last entry applied, the number of keys
 * and a running hash over every applied entry, so two nodes' states at one index compare by
 * the hash. It has no sync(): every Raft snapshot stores its export, and a restarted node
 * rebuilds it from the stored snapshot plus the log (RaftNode.create).
 */
export class SimKv implements StateMachine {
  index = 0;
  term = 0;
  hash = 0;
  private readonly keys = new Set<string>();

  constructor(
    readonly node: number,
    private readonly observer: SimKvObserver,
  ) {}

  async apply(e: AppliedEntry): Promise<unknown> {
    const key = dec.decode(e.data);
    this.observer.onApply(this, e, key);
    this.index = e.index;
    this.term = e.term;
    this.hash = fnv(this.hash, e.data, e.index);
    this.keys.add(key);
    return key;
  }

  appliedIndex(): number {
    return this.index;
  }

  async snapshot(): Promise<StateMachineSnapshot> {
    return { index: this.index, term: this.term, data: enc.encode(JSON.stringify({ index: this.index, hash: this.hash, keys: [...this.keys] })) };
  }

  async restore(s: StateMachineSnapshot): Promise<void> {
    // Empty data is the founding snapshot: the initial, empty state.
    const o = s.data.length === 0 ? { hash: 0, keys: [] as string[] } : (JSON.parse(dec.decode(s.data)) as { hash: number; keys: string[] });
    this.observer.onRestore(this, { index: s.index, hash: o.hash });
    this.index = s.index;
    this.term = s.term;
    this.hash = o.hash;
    this.keys.clear();
    for (const k of o.keys) this.keys.add(k);
  }
}

/** FNV-1a over the entry's index and data, chained. */
export function fnv(h: number, data: Uint8Array, index: number): number {
  let x = (h ^ index) >>> 0;
  for (let i = 0; i < data.length; i++) x = Math.imul(x ^ data[i]!, 16777619) >>> 0;
  return Math.imul(x ^ 0xff, 16777619) >>> 0;
}
