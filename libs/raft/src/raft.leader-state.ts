/**
 * The leader state a node's driver publishes after each turn of its loop (RaftNode.onLeaderState):
 * who leads, and whether this node has heard from that leader recently enough to serve a
 * linearizable request now. Health checks (an API server's /readyz) follow it as events instead
 * of reading the core on every probe.
 */
import type { Raft } from './raft.core.js';
import { NONE, type NodeId, type Role } from './raft.types.js';

/** One published leader state. */
export interface LeaderState {
  readonly lead: NodeId;
  readonly term: number;
  readonly role: Role;
  /**
   * A follower: a leader is known and its last append, heartbeat or snapshot arrived fewer than
   * electionTick ticks ago (the core resets electionElapsed on each, thesis section 3.4). A
   * leader: it still leads, which under check-quorum (thesis section 6.2) means a quorum answered
   * it within the previous election-timeout window; one that lost its majority steps down after
   * at most two election timeouts. Candidates and pre-candidates: never.
   */
  readonly leaderContact: boolean;
}

/** The core's current leader state. */
export function leaderStateOf(r: Pick<Raft, 'lead' | 'term' | 'role' | 'electionElapsed' | 'electionTimeout'>): LeaderState {
  const leaderContact = r.lead !== NONE && (r.role === 'leader' || (r.role === 'follower' && r.electionElapsed < r.electionTimeout));
  return { lead: r.lead, term: r.term, role: r.role, leaderContact };
}

/**
 * Holds the last published state and calls listeners when it changes (and not otherwise:
 * the driver publishes after every turn, most of which change nothing).
 */
export class LeaderStateSignal {
  private last: LeaderState | undefined;
  private readonly listeners: ((s: LeaderState) => void)[] = [];

  /** The last published state, if any. */
  current(): LeaderState | undefined {
    return this.last;
  }

  /** Calls `listener` on each change, and at once with the current state when there is one. */
  subscribe(listener: (s: LeaderState) => void): void {
    this.listeners.push(listener);
    if (this.last) listener(this.last);
  }

  /** Records `s`; listeners hear of it only when it differs from the previous state. */
  publish(s: LeaderState): void {
    const p = this.last;
    if (p && p.lead === s.lead && p.term === s.term && p.role === s.role && p.leaderContact === s.leaderContact) return;
    this.last = s;
    for (const l of this.listeners) l(s);
  }
}
