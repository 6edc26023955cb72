import { LeaderStateSignal, leaderStateOf, type LeaderState } from './raft.leader-state.js';

describe('leaderStateOf', () => {
  const core = { lead: 2, term: 5, role: 'follower' as const, electionElapsed: 0, electionTimeout: 10 };

  it('a follower has leader contact while its last message from the leader is within the election timeout (section 3.4)', () => {
    expect(leaderStateOf({ ...core, electionElapsed: 9 }).leaderContact).toBe(true);
    expect(leaderStateOf({ ...core, electionElapsed: 10 }).leaderContact).toBe(false);
  });

  it('no known leader, or a (pre-)candidate, is never in contact', () => {
    expect(leaderStateOf({ ...core, lead: 0 }).leaderContact).toBe(false);
    expect(leaderStateOf({ ...core, lead: 0, role: 'preCandidate' }).leaderContact).toBe(false);
    expect(leaderStateOf({ ...core, lead: 0, role: 'candidate' }).leaderContact).toBe(false);
  });

  it('a leader is in contact while it leads (check-quorum steps it down otherwise, section 6.2)', () => {
    expect(leaderStateOf({ ...core, lead: 1, role: 'leader', electionElapsed: 15 })).toEqual({ lead: 1, term: 5, role: 'leader', leaderContact: true });
  });
});

describe('LeaderStateSignal', () => {
  const s = (leaderContact: boolean, term = 1): LeaderState => ({ lead: 1, term, role: 'follower', leaderContact });

  it('tells listeners of changes only, and a late subscriber of the current state at once', () => {
    const sig = new LeaderStateSignal();
    const seen: boolean[] = [];
    sig.subscribe((x) => seen.push(x.leaderContact));
    sig.publish(s(true));
    sig.publish(s(true));
    sig.publish(s(false));
    sig.publish(s(false));
    expect(seen).toEqual([true, false]);
    const late: LeaderState[] = [];
    sig.subscribe((x) => late.push(x));
    expect(late).toEqual([s(false)]);
    sig.publish(s(false, 2));
    expect(late).toEqual([s(false), s(false, 2)]);
    expect(sig.current()).toEqual(s(false, 2));
  });
});
