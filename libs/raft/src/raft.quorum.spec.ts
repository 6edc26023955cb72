import { committedIndex, hasQuorum, voteResult } from './raft.quorum.js';

describe('quorum (Raft paper sections 5.2 and 5.3: majorities)', () => {
  it('commits the highest index held by a majority', () => {
    const m = new Map([
      [1, 10],
      [2, 7],
      [3, 3],
    ]);
    expect(committedIndex(new Set([1, 2, 3]), (id) => m.get(id)!)).toBe(7);
    m.set(4, 2);
    m.set(5, 9);
    expect(committedIndex(new Set([1, 2, 3, 4, 5]), (id) => m.get(id)!)).toBe(7);
    expect(committedIndex(new Set([1, 2, 3, 4]), (id) => m.get(id)!)).toBe(3);
  });

  it('decides elections as won, lost or pending', () => {
    const v = new Set([1, 2, 3, 4, 5]);
    expect(
      voteResult(
        v,
        new Map([
          [1, true],
          [2, true],
        ]),
      ),
    ).toBe('pending');
    expect(
      voteResult(
        v,
        new Map([
          [1, true],
          [2, true],
          [3, true],
        ]),
      ),
    ).toBe('won');
    expect(
      voteResult(
        v,
        new Map([
          [1, true],
          [2, false],
          [3, false],
          [4, false],
        ]),
      ),
    ).toBe('lost');
    expect(hasQuorum(v, (id) => id <= 3)).toBe(true);
    expect(hasQuorum(v, (id) => id <= 2)).toBe(false);
  });
});
