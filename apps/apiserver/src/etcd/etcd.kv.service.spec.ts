import { dirname } from 'node:path';
import * as protoLoader from '@grpc/proto-loader';
import { SerializedMessage } from '@app/grpc';
import { findProtoFile } from '@app/raft';
import type { EtcdKv, EtcdTxnResponse } from '@app/storage';
import { kvOut, rangeOut, txnOut, type Msg } from './etcd.convert.js';
import { deleteAnswer, encodedBytes, rangeAnswer, txnAnswer, type KvSerializers } from './etcd.kv.service.js';
import { SLICE_ITEMS, mapInSlices, serializeInSlices } from './etcd.sliced.js';

const rpc = findProtoFile('etcd/rpc.proto');
const def = protoLoader.loadSync(rpc, { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true, includeDirs: [dirname(rpc)] });
const range = (def['etcdserverpb.KV'] as Record<string, protoLoader.MethodDefinition<Msg, Msg>>).Range!;
const deleteRange = (def['etcdserverpb.KV'] as Record<string, protoLoader.MethodDefinition<Msg, Msg>>).DeleteRange!;
const txn = (def['etcdserverpb.KV'] as Record<string, protoLoader.MethodDefinition<Msg, Msg>>).Txn!;
const serializers: KvSerializers = {
  range: (m) => range.responseSerialize(m),
  deleteRange: (m) => deleteRange.responseSerialize(m),
  txn: (m) => txn.responseSerialize(m),
};

const kvs = (n: number): EtcdKv[] =>
  Array.from({ length: n }, (_, i) => ({
    key: `/k/${String(i).padStart(5, '0')}`,
    value: Buffer.from(`value ${i}`),
    createRevision: i + 1,
    modRevision: i + 1,
    version: 1,
    lease: i % 3 === 0 ? '7' : '0',
  }));
const header = { cluster_id: '1', member_id: '2', revision: '4000', raft_term: '3' };

/** Counts turns of the event loop (a chain of setImmediate callbacks) until stop(). */
function countTurns(): { count: number; stop(): void } {
  const turns = { count: 0, running: true, stop: () => (turns.running = false) };
  const tick = (): void => {
    if (!turns.running) return;
    turns.count++;
    setImmediate(tick);
  };
  setImmediate(tick);
  return turns;
}

describe('the Range answer of the etcd KV service', () => {
  it('serializes a large answer a slice at a time, with turns of the event loop between slices, into the message it stands for', async () => {
    const shaped = { kvs: kvs(2 * SLICE_ITEMS + 500), count: 5000, more: true };
    const turns = countTurns();
    const answer = await rangeAnswer(shaped, header, (m) => range.responseSerialize(m));
    turns.stop();
    expect(answer).toBeInstanceOf(SerializedMessage);
    const pieces = (answer as SerializedMessage).pieces;
    // The header with count and more, then one piece per slice, each after a turn.
    expect(pieces.length).toBe(4);
    expect(turns.count).toBeGreaterThanOrEqual(3);
    const framed = (answer as SerializedMessage).frame();
    expect(framed.readUInt32BE(1)).toBe(framed.length - 5);
    const decoded = range.responseDeserialize(framed.subarray(5));
    expect(decoded).toEqual(range.responseDeserialize(range.responseSerialize(rangeOut(shaped, header))));
    expect(decoded.kvs.length).toBe(shaped.kvs.length);
    expect(decoded).toMatchObject({ header, count: '5000', more: true });
  });

  it('answers a Range of up to one slice as a plain message', async () => {
    const shaped = { kvs: kvs(SLICE_ITEMS), count: SLICE_ITEMS, more: false };
    const answer = await rangeAnswer(shaped, header, (m) => range.responseSerialize(m));
    expect(answer).not.toBeInstanceOf(SerializedMessage);
    expect(answer).toEqual(rangeOut(shaped, header));
  });

  it('stops serializing when the answer is no longer wanted', async () => {
    let slices = 0;
    const serialize = (m: Msg): Buffer => {
      if (m.kvs) slices++;
      return range.responseSerialize(m);
    };
    let wanted = true;
    setImmediate(() => setImmediate(() => (wanted = false)));
    const answer = await serializeInSlices(
      { header },
      'kvs',
      kvs(10 * SLICE_ITEMS),
      (kv) => kvOut(kv),
      serialize,
      () => !wanted,
    );
    expect(answer).toBeUndefined();
    expect(slices).toBeGreaterThan(0);
    expect(slices).toBeLessThan(10);
  });
});

describe('the DeleteRange answer of the etcd KV service', () => {
  it('serializes the previous versions of a large delete a slice at a time, into the message it stands for', async () => {
    const prevKvs = kvs(SLICE_ITEMS + 1);
    const turns = countTurns();
    const answer = await deleteAnswer({ deleted: prevKvs.length, prevKvs }, header, (m) => deleteRange.responseSerialize(m));
    turns.stop();
    expect(answer).toBeInstanceOf(SerializedMessage);
    expect((answer as SerializedMessage).pieces.length).toBe(3);
    expect(turns.count).toBeGreaterThanOrEqual(2);
    const decoded = deleteRange.responseDeserialize((answer as SerializedMessage).frame().subarray(5));
    const whole = { header, deleted: prevKvs.length, prev_kvs: prevKvs.map((kv) => kvOut(kv)) };
    expect(decoded).toEqual(deleteRange.responseDeserialize(deleteRange.responseSerialize(whole)));
    expect(decoded).toMatchObject({ header, deleted: String(SLICE_ITEMS + 1) });
    expect(decoded.prev_kvs.length).toBe(SLICE_ITEMS + 1);
  });

  it('answers a delete without previous versions, or with up to one slice of them, as a plain message', async () => {
    const plain = await deleteAnswer({ deleted: 5000, prevKvs: [] }, header, (m) => deleteRange.responseSerialize(m));
    expect(plain).toEqual({ header, deleted: 5000, prev_kvs: [] });
    const prevKvs = kvs(SLICE_ITEMS);
    const small = await deleteAnswer({ deleted: SLICE_ITEMS, prevKvs }, header, (m) => deleteRange.responseSerialize(m));
    expect(small).not.toBeInstanceOf(SerializedMessage);
    expect((small as Msg).prev_kvs).toHaveLength(SLICE_ITEMS);
  });
});

describe('the Txn answer of the etcd KV service', () => {
  /**
   * `t`'s answer: pieces built over at least `minTurns` turns of the event loop, which decode to
   * exactly what the one-message encoding decodes to. Returns the decoded answer.
   */
  async function slicedTxn(t: EtcdTxnResponse, minTurns: number): Promise<Msg> {
    const turns = countTurns();
    const answer = await txnAnswer(t, header, serializers);
    turns.stop();
    expect(answer).toBeInstanceOf(SerializedMessage);
    expect(turns.count).toBeGreaterThanOrEqual(minTurns);
    const decoded = txn.responseDeserialize((answer as SerializedMessage).frame().subarray(5));
    expect(decoded).toEqual(txn.responseDeserialize(txn.responseSerialize(txnOut(t, header))));
    return decoded;
  }

  it('serializes a Txn whose Ranges and DeleteRanges carry many keys a slice at a time, nested Txns included, into the message it stands for', async () => {
    const t: EtcdTxnResponse = {
      succeeded: true,
      responses: [
        { put: { prevKv: kvs(1)[0]! } },
        { range: { kvs: kvs(2 * SLICE_ITEMS + 500), count: 2500, more: false } },
        { range: { kvs: kvs(3), count: 7, more: true } },
        { del: { deleted: SLICE_ITEMS + 200, prevKvs: kvs(SLICE_ITEMS + 200) } },
        {
          txn: {
            succeeded: false,
            responses: [{ del: { deleted: 2, prevKvs: kvs(2) } }, { range: { kvs: kvs(SLICE_ITEMS + 1), count: SLICE_ITEMS + 1, more: false } }, { put: {} }],
          },
        },
        { txn: { succeeded: true, responses: [{ range: { kvs: kvs(5), count: 5, more: false } }] } },
      ],
    };
    const decoded = await slicedTxn(t, 6);
    expect(decoded.responses.map((r: Msg) => r.response)).toEqual([
      'response_put',
      'response_range',
      'response_range',
      'response_delete_range',
      'response_txn',
      'response_txn',
    ]);
    expect(decoded.responses[1].response_range.kvs).toHaveLength(2 * SLICE_ITEMS + 500);
    expect(decoded.responses[4].response_txn.responses[1].response_range.kvs).toHaveLength(SLICE_ITEMS + 1);
  });

  it('gives the event loop a turn between responses of fewer keys each once they add up to a slice', async () => {
    const t: EtcdTxnResponse = { succeeded: true, responses: Array.from({ length: 5 }, () => ({ range: { kvs: kvs(900), count: 900, more: false } })) };
    const decoded = await slicedTxn(t, 4);
    expect(decoded.responses.map((r: Msg) => r.response_range.kvs.length)).toEqual([900, 900, 900, 900, 900]);
  });

  it('answers a Txn of up to one slice of keys as a plain message', async () => {
    const t: EtcdTxnResponse = {
      succeeded: true,
      responses: [{ range: { kvs: kvs(SLICE_ITEMS - 1), count: SLICE_ITEMS - 1, more: false } }, { del: { deleted: 1, prevKvs: kvs(1) } }],
    };
    const answer = await txnAnswer(t, header, serializers);
    expect(answer).not.toBeInstanceOf(SerializedMessage);
    expect(answer).toEqual(txnOut(t, header));
  });
});

describe('mapInSlices', () => {
  it('maps many items a slice per turn of the event loop, in order, sync and async results alike', async () => {
    const items = Array.from({ length: 3 * SLICE_ITEMS + 7 }, (_, i) => i);
    const turns = countTurns();
    let started = 0;
    const startedAtTurn: number[] = [];
    const out = await mapInSlices(items, (i) => {
      started++;
      if (i % SLICE_ITEMS === 0) startedAtTurn.push(turns.count);
      return i % 2 === 0 ? i * 2 : Promise.resolve(i * 2);
    });
    turns.stop();
    expect(started).toBe(items.length);
    expect(out).toEqual(items.map((i) => i * 2));
    // Each slice starts on a later turn than the one before it.
    expect(startedAtTurn.length).toBe(4);
    for (let k = 1; k < startedAtTurn.length; k++) expect(startedAtTurn[k]!).toBeGreaterThan(startedAtTurn[k - 1]!);
  });
});

describe('encodedBytes: the size of a write request, as etcd measures it against its 1.5 MiB limit', () => {
  const kv = def['etcdserverpb.KV'] as Record<string, protoLoader.MethodDefinition<Msg, Msg>>;
  /** The request as the server's decoder hands it over, and its real size on the wire. */
  const decoded = (method: string, req: Msg): { msg: Msg; bytes: number } => {
    const wire = kv[method]!.requestSerialize(req);
    return { msg: kv[method]!.requestDeserialize(wire), bytes: wire.length };
  };
  const put = (key: string, value: Buffer, extra: Msg = {}): Msg => ({ key: Buffer.from(key), value, ...extra });
  const cases: [string, string, Msg][] = [
    ['a Put', 'Put', put('/k', Buffer.alloc(1000, 1))],
    ['a Put with lease and prev_kv', 'Put', put('/k', Buffer.alloc(300_000, 1), { lease: '7587899245147721997', prev_kv: true })],
    ['a Put of an empty value', 'Put', put('/key', Buffer.alloc(0))],
    ['a DeleteRange', 'DeleteRange', { key: Buffer.from('/a'), range_end: Buffer.from('/b'), prev_kv: true }],
    [
      'a Txn with compares, nested ops and a Txn inside',
      'Txn',
      {
        compare: [
          { key: Buffer.from('/a'), target: 'VALUE', result: 'EQUAL', value: Buffer.alloc(5000, 2) },
          { key: Buffer.from('/b'), target: 'MOD', result: 'LESS', mod_revision: '123456' },
        ],
        success: [{ request_put: put('/a', Buffer.alloc(800_000, 1)) }, { request_range: { key: Buffer.from('/c'), limit: '10' } }],
        failure: [{ request_txn: { success: [{ request_delete_range: { key: Buffer.from('/d') } }, { request_put: put('/e', Buffer.alloc(70_000, 3)) }] } }],
      },
    ],
  ];
  it.each(cases)('%s: never less than its encoding, at most a few bytes per field more', (_name, method, req) => {
    const { msg, bytes } = decoded(method, req);
    const estimate = encodedBytes(msg);
    expect(estimate).toBeGreaterThanOrEqual(bytes);
    expect(estimate - bytes).toBeLessThanOrEqual(64);
  });
  it('values and keys count in full; fields at their zero value and the oneof names the decoder adds count nothing', () => {
    expect(encodedBytes(decoded('Put', put('/k', Buffer.alloc(0))).msg)).toBeLessThan(16);
    const one = encodedBytes(decoded('Txn', { success: [{ request_put: put('/k', Buffer.alloc(1000)) }] }).msg);
    const two = encodedBytes(decoded('Txn', { success: [{ request_put: put('/k', Buffer.alloc(1000)) }, { request_put: put('/k', Buffer.alloc(1000)) }] }).msg);
    expect(two - one).toBeGreaterThanOrEqual(1000);
    expect(two - one).toBeLessThanOrEqual(1020);
  });
});
