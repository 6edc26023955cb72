import type { Message, NodeId } from './raft.types.js';

/** A ReadIndex request waiting for a quorum of heartbeat acknowledgements. */
export interface ReadIndexStatus {
  readonly req: Message;
  readonly index: number;
  readonly acks: Set<NodeId>;
}

/**
 * Pending ReadIndex requests on the leader (Raft thesis section 6.4): each records the commit
 * index when it arrived; once a quorum acknowledges a heartbeat carrying its context, the leader
 * knows it was still leader at that time, so the read index is safe to serve. Requests are
 * served in arrival order: acknowledging a later request also confirms all earlier ones.
 */
export class ReadOnly {
  private readonly pending = new Map<string, ReadIndexStatus>();
  private queue: string[] = [];

  /** Registers a request that arrived when the commit index was `index`. Duplicates are ignored. */
  addRequest(index: number, m: Message): void {
    if (this.pending.has(m.context)) return;
    this.pending.set(m.context, { req: m, index, acks: new Set() });
    this.queue.push(m.context);
  }

  /** Records an acknowledgement of `context` by `from`; returns the acks so far (undefined if unknown). */
  recvAck(from: NodeId, context: string): Set<NodeId> | undefined {
    const rs = this.pending.get(context);
    if (!rs) return undefined;
    rs.acks.add(from);
    return rs.acks;
  }

  /** Removes and returns every request up to and including `context`, in order. */
  advance(context: string): ReadIndexStatus[] {
    const pos = this.queue.indexOf(context);
    if (pos < 0) return [];
    const done = this.queue.slice(0, pos + 1);
    this.queue = this.queue.slice(pos + 1);
    const out: ReadIndexStatus[] = [];
    for (const c of done) {
      const rs = this.pending.get(c);
      this.pending.delete(c);
      if (rs) out.push(rs);
    }
    return out;
  }

  /** Context of the newest pending request, if any. */
  lastPendingContext(): string | undefined {
    return this.queue.length > 0 ? this.queue[this.queue.length - 1] : undefined;
  }

  /** Drops all pending requests (leadership change). */
  reset(): void {
    this.pending.clear();
    this.queue = [];
  }

  get size(): number {
    return this.queue.length;
  }
}
