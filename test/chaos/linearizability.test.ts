/**
 * The linearizability checker on hand-made histories (each violation class the chaos suite looks
 * for: stale read, lost write, duplicate apply, RV going backwards) and on large generated
 * histories (performance: a few thousand ops per key in seconds).
 * Pure computation; it lives in the e2e project only because test/ holds no unit project.
 */
import * as fc from 'fast-check';
import { candidatesOf, checkHistory, checkKey, formatFailure, withoutUnseenWrites, type KeyOp, type OpInput, type OpOutput } from './linearizability.js';

let nextId = 0;
function op(client: number, call: number, ret: number, input: OpInput, output: OpOutput, key = 'k'): KeyOp {
  return { id: nextId++, key, client, call, ret, input, output };
}
const ok = (rv?: number, value?: string): OpOutput => ({ kind: 'ok', ...(rv !== undefined ? { rv } : {}), ...(value !== undefined ? { value } : {}) });
const create = (value: string): OpInput => ({ kind: 'create', value });
const get: OpInput = { kind: 'get' };
const update = (value: string, precondition: number): OpInput => ({ kind: 'update', value, precondition });
const del = (precondition: number): OpInput => ({ kind: 'delete', precondition });
const unknown: OpOutput = { kind: 'unknown' };
const notFound: OpOutput = { kind: 'notFound' };
const conflict: OpOutput = { kind: 'conflict' };

describe('linearizable histories pass', () => {
  it('accepts a sequential create, read, update, delete, read', () => {
    const h = [
      op(1, 0, 1, create('a'), ok(5)),
      op(1, 2, 3, get, ok(5, 'a')),
      op(1, 4, 5, update('b', 5), ok(7)),
      op(2, 6, 7, update('c', 5), conflict),
      op(1, 8, 9, del(7), ok()),
      op(2, 10, 11, get, notFound),
      op(2, 12, 13, del(7), notFound),
    ];
    expect(checkKey('k', h).ok).toBe(true);
  });

  it('accepts reads concurrent with a create seeing either state, in a consistent order', () => {
    const h = [
      op(1, 0, 10, create('a'), ok(3)),
      op(2, 1, 9, get, ok(3, 'a')),
      op(3, 2, 8, get, notFound), // may be ordered before the create
    ];
    expect(checkKey('k', h).ok).toBe(true);
  });

  it('accepts an unknown create that took effect, and one that never did', () => {
    const tookEffect = [op(1, 0, 1, create('a'), unknown), op(2, 5, 6, get, ok(9, 'a')), op(2, 7, 8, update('b', 9), ok(10))];
    expect(checkKey('k', tookEffect).ok).toBe(true);
    const never = [op(1, 0, 1, create('a'), unknown), op(2, 5, 6, get, notFound), op(2, 7, 8, create('b'), ok(4))];
    expect(checkKey('k', never).ok).toBe(true);
  });

  it('accepts an unknown update whose new rv was never read, followed by a conflicting update', () => {
    const h = [
      op(1, 0, 1, create('a'), ok(2)),
      op(1, 2, 3, update('b', 2), unknown),
      op(2, 10, 11, update('c', 2), conflict), // only explained if the unknown update happened
    ];
    expect(checkKey('k', h).ok).toBe(true);
  });

  it('accepts keys independently when a history is partitioned', () => {
    const h = [op(1, 0, 1, create('a'), ok(2), 'x'), op(2, 0, 1, create('a'), ok(3), 'y'), op(1, 2, 3, get, ok(3, 'a'), 'y')];
    const r = checkHistory(h);
    expect(r.ok).toBe(true);
    expect(r.keys.map((k) => k.key).sort()).toEqual(['x', 'y']);
  });
});

describe('violations are found and reported minimally', () => {
  it('finds a stale read (an acknowledged update not seen by a later read)', () => {
    const h = [
      op(1, 0, 1, create('a'), ok(2)),
      op(3, 0.5, 0.7, get, notFound), // noise
      op(1, 2, 3, update('b', 2), ok(3)),
      op(2, 4, 5, get, ok(2, 'a')),
    ];
    const r = checkKey('k', h);
    expect(r.ok).toBe(false);
    expect(r.timedOut).toBe(false);
    // the noise read is not needed to show the violation
    expect(r.counterexample!.map((o) => o.client).sort()).toEqual([1, 1, 2]);
    const text = formatFailure(r, 1);
    expect(text).toContain('NOT linearizable');
    expect(text).toContain('update("b", if rv=2) -> ok rv=3');
    expect(text).toContain('get() -> ok "a" rv=2');
  });

  it('finds a lost write (an acknowledged create gone afterwards)', () => {
    const h = [op(1, 0, 1, create('a'), ok(2)), op(2, 2, 3, get, notFound)];
    expect(checkKey('k', h).ok).toBe(false);
  });

  it('finds a duplicate apply (a conditional update succeeding twice on the same precondition)', () => {
    const h = [op(1, 0, 1, create('a'), ok(2)), op(1, 2, 3, update('b', 2), ok(3)), op(2, 4, 5, update('c', 2), ok(4))];
    expect(checkKey('k', h).ok).toBe(false);
    const twoCreates = [op(1, 0, 1, create('a'), ok(2)), op(2, 2, 3, create('b'), ok(3))];
    expect(checkKey('k', twoCreates).ok).toBe(false);
  });

  it('finds a resourceVersion going backwards, also across delete and re-create', () => {
    const h = [op(1, 0, 1, create('a'), ok(5)), op(1, 2, 3, update('b', 5), ok(4))];
    expect(checkKey('k', h).ok).toBe(false);
    const recreate = [op(1, 0, 1, create('a'), ok(5)), op(1, 2, 3, del(5), ok()), op(1, 4, 5, create('b'), ok(5))];
    expect(checkKey('k', recreate).ok).toBe(false);
  });

  it('finds a wrong Conflict (precondition matched, yet the update was refused)', () => {
    const h = [op(1, 0, 1, create('a'), ok(2)), op(1, 2, 3, update('b', 2), conflict)];
    expect(checkKey('k', h).ok).toBe(false);
  });

  it('does not let an unknown op explain a read of a value nobody wrote', () => {
    const h = [op(1, 0, 1, create('a'), unknown), op(2, 5, 6, get, ok(3, 'zzz'))];
    expect(checkKey('k', h).ok).toBe(false);
  });

  it('does not let an unknown op take effect after its window, when one is given', () => {
    // the create must have happened after the NotFound read at 12..13
    const h = [op(1, 0, 1, create('a'), unknown), op(2, 12, 13, get, notFound), op(2, 50, 51, get, ok(3, 'a'))];
    expect(checkKey('k', h).ok).toBe(true);
    expect(checkKey('k', h, { unknownWindow: 100 }).ok).toBe(true);
    expect(checkKey('k', h, { unknownWindow: 10 }).ok).toBe(false);
  });

  it('does not match a precondition against an RV nobody observed', () => {
    // -1 is no RV a server gives; the model's mark for "written, RV not yet read" must not match it
    const h = [op(1, 0, 1, create('a'), unknown), op(2, 5, 6, del(-1), ok()), op(2, 7, 8, get, notFound)];
    expect(checkKey('k', h).ok).toBe(false);
  });

  it('does not let an unknown op take effect before its call', () => {
    const h = [op(2, 0, 1, get, ok(3, 'a')), op(1, 2, 3, create('a'), unknown)];
    expect(checkKey('k', h).ok).toBe(false);
  });
});

/** A deterministic PRNG (mulberry32) so generated histories replay exactly. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A linearizable history of `n` ops by `clients` concurrent clients on one key: each op gets a
 * call time, a linearization point inside its interval and a return; outputs are computed by
 * applying ops to a true register in linearization-point order.
 */
function generate(n: number, clients: number, seed: number, unknownRate = 0.01, finalRead = false): KeyOp[] {
  const r = rng(seed);
  const plan: Array<{ client: number; call: number; lin: number; ret: number }> = [];
  const clock = new Array<number>(clients).fill(0);
  for (let i = 0; i < n; i++) {
    const c = i % clients;
    const call = clock[c]! + r() * 3;
    const lin = call + r() * 5;
    const ret = lin + r() * 5;
    clock[c] = ret;
    plan.push({ client: c, call, lin, ret });
  }
  plan.sort((a, b) => a.lin - b.lin);
  let exists = false;
  let value = '';
  let rv = 0;
  let rev = 1;
  // the newest RV any client has learned (from a read or an acknowledged write): a real client
  // cannot use the RV of an unknown write as a precondition before reading it
  let learned = 0;
  const out: KeyOp[] = [];
  plan.forEach((p, i) => {
    const roll = r();
    const isUnknown = r() < unknownRate;
    const applied = !isUnknown || r() < 0.5;
    let input: OpInput;
    let output: OpOutput;
    if (roll < 0.2) {
      input = create(`v${i}`);
      if (exists) output = { kind: 'alreadyExists' };
      else {
        output = ok(++rev);
        if (applied) [exists, value, rv] = [true, `v${i}`, rev];
        if (!isUnknown) learned = rev;
      }
    } else if (roll < 0.45) {
      input = get;
      output = exists ? ok(rv, value) : notFound;
      if (exists) learned = rv;
    } else if (roll < 0.8) {
      const pre = r() < 0.7 ? learned : learned - 1;
      input = update(`v${i}`, pre);
      if (!exists) output = notFound;
      else if (pre !== rv) output = conflict;
      else {
        output = ok(++rev);
        if (applied) [value, rv] = [`v${i}`, rev];
        if (!isUnknown) learned = rev;
      }
    } else {
      const pre = r() < 0.7 ? learned : learned - 1;
      input = del(pre);
      if (!exists) output = notFound;
      else if (pre !== rv) output = conflict;
      else {
        output = ok();
        if (applied) exists = false;
      }
    }
    if (isUnknown && input.kind !== 'get') {
      if (!applied) {
        // never happened: no effect, result unknown to the client
      }
      output = unknown;
    }
    out.push({ id: i, key: 'k', client: p.client, call: p.call, ret: p.ret, input, output });
  });
  if (finalRead) {
    // a read after everything, as the chaos suite's final reads on every node
    const end = Math.max(...plan.map((p) => p.ret)) + 1000;
    out.push({ id: n, key: 'k', client: 0, call: end, ret: end + 1, input: get, output: exists ? ok(rv, value) : notFound });
  }
  return out.sort((a, b) => a.call - b.call);
}

describe('unknown writes nobody saw', () => {
  it('leaves out an unknown write whose value no read saw, once a known op follows its window', () => {
    const h = [
      op(1, 0, 1, create('a'), ok(2)),
      op(2, 2, 3, update('b', 2), unknown), // never read: left out once the read at 20 follows
      op(3, 4, 5, update('c', 2), unknown), // read at 20: kept
      op(1, 20, 21, get, ok(6, 'c')),
    ];
    const kept = withoutUnseenWrites(h, 10, candidatesOf(h)).map((o) => o.input);
    expect(kept).toEqual([create('a'), update('c', 2), get]);
    // With no window nothing follows it for certain, and with only a Conflict after it, it stays.
    expect(withoutUnseenWrites(h, Number.POSITIVE_INFINITY, candidatesOf(h))).toHaveLength(4);
    const onlyConflict = [op(1, 0, 1, create('a'), ok(2)), op(2, 2, 3, update('b', 2), unknown), op(3, 20, 21, update('c', 2), conflict)];
    expect(withoutUnseenWrites(onlyConflict, 10, candidatesOf(onlyConflict))).toHaveLength(3);
    expect(checkKey('k', onlyConflict, { unknownWindow: 10 }).ok).toBe(true);
  });

  it('gives the same verdict with and without leaving them out (generated histories, some corrupted)', () => {
    let pruned = 0;
    let failing = 0;
    const outputs: OpOutput[] = [notFound, conflict, { kind: 'alreadyExists' }, unknown, ok(3), ok(4, 'v1'), ok(5, 'v2')];
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.integer({ min: 6, max: 16 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: 70 }).map((p) => p / 100),
        fc.constantFrom(5, 10, 30),
        fc.tuple(fc.nat({ max: 9 }), fc.nat(), fc.nat({ max: outputs.length - 1 })),
        fc.boolean(),
        (seed, n, clients, unknownRate, window, corrupt, finalRead) => {
          const h = generate(n, clients, seed, unknownRate, finalRead);
          // Three in ten histories get one op's output replaced.
          const [roll, at, replacement] = corrupt;
          if (roll < 3) {
            const i = at % h.length;
            h[i] = { ...h[i]!, output: outputs[replacement]! };
          }
          if (withoutUnseenWrites(h, window, candidatesOf(h)).length < h.length) pruned++;
          const a = checkKey('k', h, { unknownWindow: window, minimize: false });
          const b = checkKey('k', h, { unknownWindow: window, minimize: false, pruneUnseenWrites: false });
          expect(a.timedOut || b.timedOut).toBe(false);
          if (!a.ok) failing++;
          expect(a.ok).toBe(b.ok);
        },
      ),
      { numRuns: 3000, seed: 20261207 },
    );
    // The property was exercised: about half the histories had writes left out, and about a
    // quarter failed (the corrupted ones mostly).
    expect(pruned).toBeGreaterThan(1000);
    expect(failing).toBeGreaterThan(300);
    expect(failing).toBeLessThan(2000);
  });
});

describe('scale', () => {
  it('checks 4000 concurrent ops (8 clients, some unknown outcomes) in a near-linear number of search steps', () => {
    const h = generate(4000, 8, 42, 0.05);
    const r = checkKey('k', h, { unknownWindow: 30 });
    expect(r.timedOut).toBe(false);
    expect(r.ok).toBe(true);
    // Search steps, not wall time: the same on any machine (this seeded history takes ~10.5 per
    // op); an exponential blow-up of the search shows here as a multiple.
    expect(r.steps).toBeLessThan(25 * h.length);
  });

  it('checks a fault-heavy history (a third of the writes unknown, half of those never applied) by leaving out the ones nobody saw', () => {
    const h = generate(4000, 6, 11, 0.3, true);
    const r = checkKey('k', h, { unknownWindow: 30 });
    expect(r.timedOut).toBe(false);
    expect(r.ok).toBe(true);
    // Steps, not time (see above): about 4 per op here, and over six times as many without.
    expect(r.steps).toBeLessThan(8 * h.length);
    const all = checkKey('k', h, { unknownWindow: 30, pruneUnseenWrites: false });
    expect(all.ok).toBe(true);
    expect(all.steps).toBeGreaterThan(4 * r.steps);
  });

  it('finds one corrupted read among 3000 ops and shrinks it to a handful', () => {
    const h = generate(3000, 6, 7, 0.02);
    // corrupt a read well inside the history that observed an existing value
    const idx = h.findIndex((o, i) => i > 1500 && o.input.kind === 'get' && o.output.kind === 'ok');
    expect(idx).toBeGreaterThan(0);
    const bad = h[idx]!;
    h[idx] = { ...bad, output: ok((bad.output as { rv: number }).rv, 'never-written') };
    // No time budget: the shrink runs to its end, so the result does not depend on the machine.
    const r = checkKey('k', h, { minimizeBudgetMs: Number.POSITIVE_INFINITY, unknownWindow: 30 });
    expect(r.ok).toBe(false);
    expect(r.counterexample!.some((o) => o.id === bad.id)).toBe(true);
    expect(r.counterexample!.length).toBeLessThanOrEqual(10);
  });
});
