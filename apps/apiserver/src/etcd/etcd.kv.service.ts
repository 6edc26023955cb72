/**
 * etcd's KV service (docs/etcd-api.md "KV"). Reads are linearizable unless `serializable`: a
 * ReadIndex barrier (the same one as the API's "Most Recent" reads), then a local read; a
 * serializable read answers from this replica at once. Writes are etcd commands proposed
 * through Raft and evaluated where they land in the log (EtcdApplier); a compaction is the
 * store's replicated compaction command.
 */
import { status as GrpcStatus } from '@grpc/grpc-js';
import { SerializedMessage, type ServiceHandlers } from '@app/grpc';
import { compactCommand } from '@app/mvcc';
import { readRange, shapeRange, type EtcdCommand, type EtcdKv, type EtcdOpResponse, type EtcdResult, type EtcdTxnResponse } from '@app/storage';
import { EtcdApiError, commandError, deleteSpecIn, kvOut, opOut, putSpecIn, rangeOut, rangeSpecIn, txnOut, txnSpecIn, num, type Msg } from './etcd.convert.js';
import { unary, type EtcdContext } from './etcd.context.js';
import { SLICE_ITEMS, embedded, nextTurn, serializeInSlices } from './etcd.sliced.js';

/** The longest a Range waits for a revision that is staged but not yet in the store. */
const STAGED_WAIT_MS = 5000;

/**
 * etcd's --max-request-bytes default: a write whose request (with what etcd wraps around it for
 * its log) is larger is refused with "request is too large" (INVALID_ARGUMENT).
 */
const MAX_REQUEST_BYTES = 1.5 * 1024 * 1024;
/** What etcd's log entry adds around a client's write request (a header with the request's id). */
const ENTRY_WRAPPING_BYTES = 11;

/**
 * About the size of `m` in protobuf's encoding, from its decoded fields: bytes and strings with a
 * tag and length, true as two bytes, other numbers as the longest varint, messages with a tag and
 * length. Fields at their zero value count nothing, as proto3 leaves them out, and neither does
 * the name of the field a oneof holds (which the decoder adds beside it).
 */
export function encodedBytes(m: unknown): number {
  if (m === null || m === undefined || m === false || m === '' || m === 0 || m === '0') return 0;
  if (m instanceof Uint8Array) return m.length === 0 ? 0 : m.length + 4;
  if (typeof m === 'string') return m.length + 2;
  if (m === true) return 2;
  if (typeof m !== 'object') return 10;
  let n = 0;
  if (Array.isArray(m)) for (const x of m) n += encodedBytes(x);
  else for (const x of Object.values(m)) if (typeof x !== 'string' || !(x in m)) n += encodedBytes(x);
  return Array.isArray(m) ? n : n + 4;
}

/** Refuses a write whose request is larger than etcd takes. */
function checkRequestSize(bytes: number): void {
  if (bytes + ENTRY_WRAPPING_BYTES > MAX_REQUEST_BYTES) throw new EtcdApiError(GrpcStatus.INVALID_ARGUMENT, 'etcdserver: request is too large');
}

/** Proposes an etcd command; an etcd-level failure becomes its gRPC error. */
export async function proposeEtcd(ctx: EtcdContext, cmd: EtcdCommand): Promise<EtcdResult> {
  const r = await ctx.proposer.proposeEtcd(cmd);
  if (r.error) throw commandError(r.error);
  return r;
}

/**
 * A Range's answer; one of more than SLICE_ITEMS keys is serialized a slice at a time between
 * turns of the event loop (etcd.sliced.ts): as one message, the 100,000 values of 1 KiB of
 * `etcdctl get --prefix` held the node for about 0.7 s, its Raft heartbeats and other clients
 * with it.
 */
export async function rangeAnswer(shaped: { kvs: EtcdKv[]; count: number; more: boolean }, header: Msg, serialize: (m: Msg) => Buffer): Promise<Msg> {
  if (shaped.kvs.length <= SLICE_ITEMS) return rangeOut(shaped, header);
  return (await serializeInSlices({ header, more: shaped.more, count: shaped.count }, 'kvs', shaped.kvs, (kv) => kvOut(kv), serialize))!;
}

/**
 * A DeleteRange's answer: with `prev_kv` it carries every deleted key's previous version, and
 * one of more than SLICE_ITEMS keys is serialized a slice at a time, as a Range's answer is.
 */
export async function deleteAnswer(d: { deleted: number; prevKvs: EtcdKv[] }, header: Msg, serialize: (m: Msg) => Buffer): Promise<Msg> {
  if (d.prevKvs.length <= SLICE_ITEMS) return { header, deleted: d.deleted, prev_kvs: d.prevKvs.map((kv) => kvOut(kv)) };
  return (await serializeInSlices({ header, deleted: d.deleted }, 'prev_kvs', d.prevKvs, (kv) => kvOut(kv), serialize))!;
}

/** How the KV service encodes the answers it may serialize in slices. */
export interface KvSerializers {
  /** Encodes a RangeResponse. */
  range(m: Msg): Buffer;
  /** Encodes a DeleteRangeResponse. */
  deleteRange(m: Msg): Buffer;
  /** Encodes a TxnResponse. */
  txn(m: Msg): Buffer;
}

/** Keys one response of a Txn carries: a Range's, a DeleteRange's previous versions, a nested Txn's. */
function opItems(r: EtcdOpResponse): number {
  if ('range' in r) return r.range.kvs.length;
  if ('del' in r) return r.del.prevKvs.length;
  return 'txn' in r ? txnItems(r.txn) : 0;
}

/** Keys a Txn's answer carries (opItems of each response). */
function txnItems(t: EtcdTxnResponse): number {
  let n = 0;
  for (const r of t.responses) n += opItems(r);
  return n;
}

/** ResponseOp's fields: response_range, response_delete_range, response_txn. */
const OP_RANGE = 1;
const OP_DELETE_RANGE = 3;
const OP_TXN = 4;
/** TxnResponse's field `responses`. */
const TXN_RESPONSES = 3;

/**
 * A TxnResponse as pieces: its head, then one piece per response. A response holding more than
 * SLICE_ITEMS keys is its own message serialized in slices, embedded by a tag and a length
 * (a response must be one contiguous field); the others are serialized as a TxnResponse with
 * that one response, which protobuf merges into the whole (repeated fields append).
 */
async function txnPieces(t: EtcdTxnResponse, header: Msg, serialize: KvSerializers): Promise<Uint8Array[]> {
  const pieces: Uint8Array[] = [serialize.txn({ header, succeeded: t.succeeded })];
  // Keys serialized since the last turn of the event loop (many responses of fewer keys each).
  let since = 0;
  for (const r of t.responses) {
    const op = await largeOp(r, header, serialize);
    if (op) {
      pieces.push(...embedded(TXN_RESPONSES, embedded(op.field, op.pieces)));
      since = 0;
      continue;
    }
    const items = opItems(r);
    if (since + items > SLICE_ITEMS) {
      await nextTurn();
      since = 0;
    }
    since += items;
    pieces.push(serialize.txn({ responses: [opOut(r, header)] }));
  }
  return pieces;
}

/** The pieces of one response of a Txn that holds more than SLICE_ITEMS keys, or undefined. */
async function largeOp(r: EtcdOpResponse, header: Msg, serialize: KvSerializers): Promise<{ field: number; pieces: readonly Uint8Array[] } | undefined> {
  if ('range' in r && r.range.kvs.length > SLICE_ITEMS) {
    const m = await rangeAnswer(r.range, header, (x) => serialize.range(x));
    return { field: OP_RANGE, pieces: (m as SerializedMessage).pieces };
  }
  if ('del' in r && r.del.prevKvs.length > SLICE_ITEMS) {
    const m = await deleteAnswer(r.del, header, (x) => serialize.deleteRange(x));
    return { field: OP_DELETE_RANGE, pieces: (m as SerializedMessage).pieces };
  }
  if ('txn' in r && txnItems(r.txn) > SLICE_ITEMS) return { field: OP_TXN, pieces: await txnPieces(r.txn, header, serialize) };
  return undefined;
}

/**
 * A Txn's answer; one whose Ranges and DeleteRanges carry more than SLICE_ITEMS keys in all is
 * serialized a slice at a time (see txnPieces), as a Range's answer is.
 */
export async function txnAnswer(t: EtcdTxnResponse, header: Msg, serialize: KvSerializers): Promise<Msg> {
  if (txnItems(t) <= SLICE_ITEMS) return txnOut(t, header);
  return new SerializedMessage(await txnPieces(t, header, serialize));
}

/** The KV service's handlers. */
export function kvService(ctx: EtcdContext, serialize: KvSerializers): ServiceHandlers {
  return {
    Range: unary(async (req: Msg) => {
      const spec = rangeSpecIn(req);
      if (!req.serializable) await ctx.proposer.readBarrier();
      const at = spec.revision && spec.revision > 0 ? spec.revision : undefined;
      // A write is answered once evaluated, a moment before its batch lands in the store: a
      // revision this node already answered with is waited for, not refused as in the future.
      if (at !== undefined && at > ctx.store.currentRevision() && at <= ctx.leases.pendingRevision()) await ctx.store.waitForRevision(at, STAGED_WAIT_MS);
      const current = ctx.store.currentRevision();
      const { kvs } = await readRange(ctx.store, spec, at);
      const leases = ctx.leases;
      const shaped = shapeRange(kvs, spec, (k) => leases.leaseOf(k));
      // A past revision shows the leases the keys had then.
      if (at !== undefined) shaped.kvs = await leases.withLeases(shaped.kvs, at);
      return rangeAnswer(shaped, ctx.header(Math.max(current, ctx.store.currentRevision())), (m) => serialize.range(m));
    }),
    Put: unary(async (req: Msg) => {
      checkRequestSize(encodedBytes(req));
      const put = putSpecIn(req);
      const r = await proposeEtcd(ctx, { txn: { compare: [], success: [{ put }], failure: [], kvPut: true } });
      const res = r.txn!.responses[0]!;
      const prev = 'put' in res ? res.put.prevKv : undefined;
      return { header: ctx.header(r.revision), ...(prev ? { prev_kv: kvOut(prev) } : {}) };
    }),
    DeleteRange: unary(async (req: Msg) => {
      checkRequestSize(encodedBytes(req));
      const del = deleteSpecIn(req);
      const r = await proposeEtcd(ctx, { txn: { compare: [], success: [{ del }], failure: [] } });
      const res = r.txn!.responses[0]!;
      const d = 'del' in res ? res.del : { deleted: 0, prevKvs: [] };
      return deleteAnswer(d, ctx.header(r.revision), (m) => serialize.deleteRange(m));
    }),
    Txn: unary(async (req: Msg) => {
      checkRequestSize(encodedBytes(req));
      const txn = txnSpecIn(req);
      const r = await proposeEtcd(ctx, { txn });
      return txnAnswer(r.txn!, ctx.header(r.revision), serialize);
    }),
    Compact: unary(async (req: Msg) => {
      const rev = num(req.revision);
      const current = ctx.store.currentRevision();
      if (rev > current) throw new EtcdApiError(GrpcStatus.OUT_OF_RANGE, 'etcdserver: mvcc: required revision is a future revision');
      if (rev <= ctx.store.compactedRevision()) throw new EtcdApiError(GrpcStatus.OUT_OF_RANGE, 'etcdserver: mvcc: required revision has been compacted');
      const r = await ctx.proposer.propose(compactCommand(rev));
      return { header: ctx.header(r.revision) };
    }),
  };
}
