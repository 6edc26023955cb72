import fc from 'fast-check';
import { MvccStore } from './mvcc.store.js';
import { type HistoryChange, snapshotOfHistory } from './mvcc.snapshot-format.js';
import { TempDirs, enc, observe, put } from './mvcc.store.fixture.js';
import type { KeyValue, MvccEvent, TxnCommand } from './mvcc.types.js';

/** A drawn transaction: puts and deletes of distinct keys from a small set (deletes may miss). */
const txnArb = fc.uniqueArray(
  fc.record({ key: fc.constantFrom('/h/a', '/h/b', '/h/c', '/h/d', '/i/x'), del: fc.boolean(), value: fc.string({ maxLength: 12 }) }),
  {
    selector: (op) => op.key,
    minLength: 1,
    maxLength: 3,
  },
);

const command = (ops: { key: string; del: boolean; value: string }[]): TxnCommand => ({
  compares: [],
  success: ops.map((op) => (op.del ? { type: 'delete' as const, key: op.key } : { type: 'put' as const, key: op.key, value: enc(op.value) })),
  failure: [],
});

/** The history `events` as snapshotOfHistory takes it: a put is current when `now` still holds it. */
function changesOf(events: readonly MvccEvent[], now: (key: string) => KeyValue | undefined): HistoryChange[] {
  return events.map((e) =>
    e.type === 'put' ? { type: 'put', kv: e.value, current: now(e.key)?.modRevision === e.revision } : { type: 'delete', key: e.key, revision: e.revision },
  );
}

async function* once<T>(chunk: T[]): AsyncGenerator<T[]> {
  yield chunk;
}

describe('snapshotOfHistory', () => {
  const dirs = new TempDirs();
  afterEach(() => dirs.removeAll());

  const open = async () => MvccStore.open(await dirs.make());
  const importInto = async (header: { revision: number; applied: number; compacted: number }, changes: HistoryChange[]) => {
    const store = await open();
    await store.importSnapshotFrom(() => snapshotOfHistory(header, once(changes)));
    await store.whenPurged();
    return store;
  };

  it('makes the records the store writes itself: the whole history, or what a compaction kept, read back the same', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(txnArb, { minLength: 1, maxLength: 25 }), fc.double({ min: 0, max: 1, noNaN: true }), async (txns, cut) => {
        const a = await open();
        const stores = [a];
        try {
          let index = 0;
          for (const t of txns) await a.apply(++index, command(t));
          const revision = a.currentRevision();
          if (revision === 0) return;
          const all = (await a.eventsAfter(0)).events;
          const compacted = Math.floor(cut * revision);
          if (compacted > 0) await a.compact(compacted);
          const live = new Map((await a.range('/')).kvs.map((kv) => [kv.key, kv]));
          const header = { revision, applied: a.appliedIndex(), compacted };

          // The whole history: the same records as the store that applied it, byte for byte.
          const whole = await importInto(
            header,
            changesOf(all, (k) => live.get(k)),
          );
          stores.push(whole);
          expect(Buffer.from(await whole.exportSnapshot()).equals(Buffer.from(await a.exportSnapshot()))).toBe(true);

          // What a compaction kept (each key's version at the compacted revision, in the order
          // it was written, as etcd's sub revisions keep it), then the history after it: every
          // read from the compacted revision on answers the same.
          const order = new Map(all.map((e, i) => [`${e.key}@${e.revision}`, i]));
          const at = (kv: KeyValue) => order.get(`${kv.key}@${kv.modRevision}`)!;
          const base = compacted > 0 ? (await a.range('/', { atRevision: compacted })).kvs.sort((x, y) => at(x) - at(y)) : [];
          const after = (await a.eventsAfter(compacted)).events;
          const kept = await importInto(header, [
            ...base.map((kv): HistoryChange => ({ type: 'put', kv, current: live.get(kv.key)?.modRevision === kv.modRevision })),
            ...changesOf(after, (k) => live.get(k)),
          ]);
          stores.push(kept);
          expect(await observe(kept)).toEqual(await observe(a));
          for (let r = Math.max(1, compacted); r <= revision; r++)
            expect((await kept.range('/', { atRevision: r })).kvs).toEqual((await a.range('/', { atRevision: r })).kvs);
          const from = Math.max(0, compacted - 1);
          expect((await kept.eventsAfter(from, {}, { fromCompacted: true })).events).toEqual((await a.eventsAfter(from, {}, { fromCompacted: true })).events);
          // Below the compacted revision nothing is readable.
          const below =
            compacted > 1
              ? await kept.get('/h/a', compacted - 1).then(
                  () => 'read',
                  (e: { code?: string }) => e.code,
                )
              : 'Compacted';
          expect(below).toBe('Compacted');
        } finally {
          for (const s of stores) await s.close();
        }
      }),
      { numRuns: 40 },
    );
  });

  it('reads events in windows with until', async () => {
    const a = await open();
    try {
      for (let i = 1; i <= 6; i++) await a.apply(i, put(`/w/${i % 2}`, String(i)));
      expect((await a.eventsAfter(1, {}, { until: 3 })).events.map((e) => e.revision)).toEqual([2, 3]);
      expect((await a.eventsAfter(3, {}, { until: 100 })).events.map((e) => e.revision)).toEqual([4, 5, 6]);
    } finally {
      await a.close();
    }
  });

  it('ends a window at the end of the revision whose values reach maxBytes; a revision larger than a read step is not split', async () => {
    const a = await open();
    try {
      let index = 0;
      const big = 'v'.repeat(1000);
      for (let i = 1; i <= 5; i++) await a.apply(++index, put('/w/a', `${i}${big}`));
      // One revision of 2,500 events: more than one read step of the event log.
      await a.apply(++index, {
        compares: [],
        success: Array.from({ length: 2500 }, (_, i) => ({ type: 'put' as const, key: `/w/t/${i}`, value: enc(`t${i}`) })),
        failure: [],
      });
      for (let i = 7; i <= 9; i++) await a.apply(++index, put('/w/a', `${i}${big}`));
      const all = (await a.eventsAfter(0, { prefix: '/w/' })).events;
      const read: MvccEvent[] = [];
      const windows: { after: number; through: number; revisions: number[] }[] = [];
      for (let after = 0; after < 9;) {
        const { events, revision, through } = await a.eventsAfter(after, { prefix: '/w/' }, { until: after + 1000, maxBytes: 2500 });
        expect(revision).toBe(9);
        expect(through).toBeGreaterThan(after);
        expect(events.every((e) => e.revision > after && e.revision <= through)).toBe(true);
        windows.push({ after, through, revisions: [...new Set(events.map((e) => e.revision))] });
        read.push(...events);
        after = through;
      }
      expect(read).toEqual(all);
      // Some window ended early, and revision 6 came whole in one window.
      expect(windows.length).toBeGreaterThan(1);
      const six = windows.find((w) => w.revisions.includes(6))!;
      expect(read.filter((e) => e.revision === 6 && six.after < e.revision && e.revision <= six.through)).toHaveLength(2500);
      // Without maxBytes the window is the whole range.
      expect((await a.eventsAfter(0, { prefix: '/w/' }, { until: 1000 })).through).toBe(9);
    } finally {
      await a.close();
    }
  });

  it('refuses a history the store could not have written', async () => {
    const kv = (key: string, mod: number, create = mod, version = 1): KeyValue => ({ key, value: enc('v'), createRevision: create, modRevision: mod, version });
    const header = { revision: 5, applied: 1, compacted: 0 };
    const cases: [HistoryChange[], RegExp][] = [
      [
        [
          { type: 'put', kv: kv('/a', 2), current: true },
          { type: 'put', kv: kv('/b', 1), current: true },
        ],
        /revision 1 after revision 2/,
      ],
      [[{ type: 'put', kv: kv('/a', 6), current: true }], /revision 6 after revision 0 \(store at 5\)/],
      [
        [
          { type: 'put', kv: kv('/a', 2), current: false },
          { type: 'delete', key: '/a', revision: 2 },
        ],
        /changes twice in revision 2/,
      ],
      [
        [
          { type: 'put', kv: kv('/a', 2), current: true },
          { type: 'put', kv: kv('/a', 3, 2, 2), current: true },
        ],
        /revision 2 is marked current, but it changes at 3/,
      ],
      [[{ type: 'put', kv: kv('/a', 2), current: false }], /last version \(revision 2\) is not marked current/],
      [[{ type: 'put', kv: kv('/a', 2, 3), current: true }], /revisions out of order/],
      [[{ type: 'put', kv: kv('', 2), current: true }], /""/],
    ];
    for (const [changes, message] of cases) {
      const store = await open();
      try {
        await expect(store.importSnapshotFrom(() => snapshotOfHistory(header, once(changes)))).rejects.toThrow(message);
      } finally {
        await store.close();
      }
    }
    expect(() => snapshotOfHistory({ revision: 3, applied: 1, compacted: 4 }, once([]))).toThrow(/compacted revision 4 is not between 0 and the revision 3/);
  });
});
