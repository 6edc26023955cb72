import { createServer } from 'node:net';
import { GrpcTransport, fromWire, toWire } from './raft.transport.js';
import { type Message, msg } from './raft.types.js';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => (typeof a === 'object' && a ? resolve(a.port) : reject(new Error('no port'))));
    });
  });
}

async function waitFor(cond: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timeout');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('GrpcTransport', () => {
  it('round-trips every field through the wire form', () => {
    const m = msg({
      type: 'app',
      from: 1,
      to: 2,
      term: 7,
      logTerm: 6,
      index: 41,
      commit: 40,
      entries: [{ term: 7, index: 42, type: 'conf', data: new Uint8Array([1, 2]) }],
      reject: true,
      rejectHint: 3,
      context: 'ctx',
    });
    const back = fromWire(JSON.parse(JSON.stringify(toWire(m), (_k, v) => (v instanceof Uint8Array ? [...v] : v))) as ReturnType<typeof toWire>);
    expect({ ...back, entries: back!.entries.map((e) => ({ ...e, data: [...e.data] })) }).toEqual({
      ...m,
      snapshot: undefined,
      entries: [{ term: 7, index: 42, type: 'conf', data: [1, 2] }],
    });
    expect(fromWire({ ...toWire(m), type: 'MSG_BOGUS' })).toBeUndefined();
  });

  it('delivers batched messages and a chunked snapshot, and reconnects to a late peer', async () => {
    const [p1, p2] = [await freePort(), await freePort()];
    const peers = new Map([
      [1, `127.0.0.1:${p1}`],
      [2, `127.0.0.1:${p2}`],
    ]);
    const got: Message[] = [];
    const snapStatus: boolean[] = [];
    const t1 = new GrpcTransport({ id: 1, listen: `127.0.0.1:${p1}`, peers, snapshotChunkBytes: 1000, minBackoffMs: 20 }, {
      onMessage: () => undefined,
      onSnapshotStatus: (_id, failed) => snapStatus.push(failed),
    });
    await t1.start();
    // Peer 2 is not up yet: the first messages wait in the bounded queue / get retried.
    t1.send([msg({ type: 'heartbeat', from: 1, to: 2, term: 1 })]);
    await new Promise((r) => setTimeout(r, 100));
    const t2 = new GrpcTransport({ id: 2, listen: `127.0.0.1:${p2}`, peers }, { onMessage: (m) => got.push(m) });
    await t2.start();
    const batch: Message[] = [];
    for (let i = 0; i < 100; i++) batch.push(msg({ type: 'app', from: 1, to: 2, term: 1, index: i, entries: [{ term: 1, index: i + 1, type: 'normal', data: new Uint8Array(10).fill(i) }] }));
    t1.send(batch);
    await waitFor(() => got.filter((m) => m.type === 'app').length === 100);
    expect(got.filter((m) => m.type === 'app').map((m) => m.index)).toEqual(batch.map((m) => m.index));
    const data = new Uint8Array(25_000).map((_, i) => i % 251);
    t1.send([msg({ type: 'snap', from: 1, to: 2, term: 1, snapshot: { metadata: { index: 9, term: 1, confState: { voters: [1, 2], learners: [] } }, data } })]);
    await waitFor(() => got.some((m) => m.type === 'snap'));
    const snap = got.find((m) => m.type === 'snap')!.snapshot!;
    expect(snap.metadata).toEqual({ index: 9, term: 1, confState: { voters: [1, 2], learners: [] } });
    expect(Buffer.from(snap.data).equals(Buffer.from(data))).toBe(true);
    await waitFor(() => snapStatus.length === 1);
    expect(snapStatus).toEqual([false]);
    await t1.stop();
    await t2.stop();
  }, 20000);

  it('drops and reports unreachable when a peer queue is full (bounded memory)', async () => {
    const [p1, dead] = [await freePort(), await freePort()];
    const unreachable: number[] = [];
    const t1 = new GrpcTransport(
      { id: 1, listen: `127.0.0.1:${p1}`, peers: new Map([[2, `127.0.0.1:${dead}`]]), maxQueue: 10, minBackoffMs: 1000 },
      { onMessage: () => undefined, onUnreachable: (id) => unreachable.push(id) },
    );
    await t1.start();
    t1.send([msg({ type: 'heartbeat', from: 1, to: 2, term: 1 })]);
    await waitFor(() => unreachable.length > 0);
    unreachable.length = 0;
    const many: Message[] = [];
    for (let i = 0; i < 50; i++) many.push(msg({ type: 'heartbeat', from: 1, to: 2, term: 1 }));
    t1.send(many);
    // The queue holds at most 10; the other 40 were dropped and reported.
    expect(unreachable.length).toBeGreaterThanOrEqual(40);
    await t1.stop();
  }, 20000);
});
