import type { NodeId } from './raft.types.js';

/** Outcome of counting votes. */
export type VoteResult = 'won' | 'lost' | 'pending';

/**
 * Largest index replicated on a majority of `voters` (paper section 5.3: "a log entry is
 * committed once the leader ... has replicated it on a majority"). `match(id)` gives each
 * voter's acknowledged index. An empty voter set commits nothing.
 */
export function committedIndex(voters: ReadonlySet<NodeId>, match: (id: NodeId) => number): number {
  const n = voters.size;
  if (n === 0) return 0;
  const arr = new Array<number>(n);
  let i = 0;
  for (const id of voters) arr[i++] = match(id);
  arr.sort((a, b) => b - a);
  // With n voters a majority is floor(n/2)+1; the (floor(n/2)+1)-th highest value is on a majority.
  return arr[n >> 1]!;
}

/** Counts granted/rejected votes among `voters` (paper section 5.2: a majority wins). */
export function voteResult(voters: ReadonlySet<NodeId>, votes: ReadonlyMap<NodeId, boolean>): VoteResult {
  const n = voters.size;
  if (n === 0) return 'won';
  const q = (n >> 1) + 1;
  let granted = 0;
  let rejected = 0;
  for (const id of voters) {
    const v = votes.get(id);
    if (v === true) granted++;
    else if (v === false) rejected++;
  }
  if (granted >= q) return 'won';
  if (granted + (n - granted - rejected) >= q) return 'pending';
  return 'lost';
}

/** True when the members for which `active(id)` holds form a majority of `voters`. */
export function hasQuorum(voters: ReadonlySet<NodeId>, active: (id: NodeId) => boolean): boolean {
  let c = 0;
  for (const id of voters) if (active(id)) c++;
  return c >= (voters.size >> 1) + 1;
}
