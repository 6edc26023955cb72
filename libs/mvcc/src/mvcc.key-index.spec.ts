import { KeyIndex, compareKeys } from './mvcc.key-index.js';

/** Deterministic pseudo-random numbers (a test needs no real randomness). */
function lcg(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
}

describe('KeyIndex', () => {
  it('orders keys as LevelDB does (UTF-8 bytes), also past U+FFFF', () => {
    const keys = ['a', 'ab', 'b', '\u{ffff}', '\u{10000}', '\u{e000}', '\u{d7ff}', 'a/b', 'a\u0001'];
    const byBytes = [...keys].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
    expect([...keys].sort(compareKeys)).toEqual(byBytes);
  });

  it('counts the keys of a range like a scan of the sorted keys, through adds and deletes', () => {
    const rnd = lcg(7);
    const index = new KeyIndex();
    const model = new Set<string>();
    const key = () => `/r/ns${Math.floor(rnd() * 5)}/k${Math.floor(rnd() * 3000)}`;
    for (let i = 0; i < 6000; i++) {
      const k = key();
      if (rnd() < 0.7) {
        index.add(k);
        model.add(k);
      } else {
        index.delete(k);
        model.delete(k);
      }
    }
    const sorted = [...model].sort(compareKeys);
    expect(index.size).toBe(model.size);
    for (let i = 0; i < 200; i++) {
      const after = rnd() < 0.2 ? undefined : key();
      const before = rnd() < 0.5 ? `/r/ns${Math.floor(rnd() * 6)}0` : key();
      const want = sorted.filter((k) => (after === undefined || compareKeys(k, after) > 0) && compareKeys(k, before) < 0).length;
      expect(index.countBetween(after, before)).toBe(want);
    }
    for (const k of sorted.slice(0, 50)) expect(index.has(k)).toBe(true);
  });

  it('deletes many keys at once, a few or most of the index, as one at a time would', () => {
    const rnd = lcg(11);
    const index = new KeyIndex();
    const model = new Set<string>();
    for (let i = 0; i < 5000; i++) {
      const k = `/m/k${Math.floor(rnd() * 4000)}`;
      index.add(k);
      model.add(k);
    }
    const check = () => {
      const sorted = [...model].sort(compareKeys);
      expect(index.size).toBe(model.size);
      expect(index.countBetween(undefined, '\u{10ffff}')).toBe(model.size);
      for (let i = 0; i < 100; i++) {
        const after = `/m/k${Math.floor(rnd() * 4000)}`;
        const before = `/m/k${Math.floor(rnd() * 4000)}`;
        expect(index.countBetween(after, before)).toBe(sorted.filter((k) => compareKeys(k, after) > 0 && compareKeys(k, before) < 0).length);
      }
    };
    // A few (one at a time inside), with keys that are not there.
    const few = [...model].slice(0, 20).concat(['/m/absent', '/zz']);
    index.deleteMany(few);
    for (const k of few) model.delete(k);
    check();
    // Most of them: a whole span of keys, as a DeleteRange removes them.
    const span = [...model].filter((k) => compareKeys(k, '/m/k1') >= 0 && compareKeys(k, '/m/k3') < 0);
    expect(span.length * 16).toBeGreaterThan(model.size);
    index.deleteMany(span);
    for (const k of span) model.delete(k);
    check();
    for (const k of ['/m/k2', '/m/k10', '/a']) {
      index.add(k);
      model.add(k);
    }
    check();
    index.deleteMany([...model]);
    model.clear();
    check();
    index.add('/m/again');
    expect(index.countBetween(undefined, '/n')).toBe(1);
  });

  it('builds from unsorted and sorted input alike', () => {
    const keys = Array.from({ length: 3000 }, (_, i) => `k${(i * 7919) % 3000}`);
    const a = KeyIndex.from(keys);
    const b = KeyIndex.from([...keys].sort(compareKeys));
    expect(a.size).toBe(3000);
    expect(a.countBetween('k1', 'k2')).toBe(b.countBetween('k1', 'k2'));
    expect(a.countBetween(undefined, '\u{10ffff}')).toBe(3000);
  });
});
