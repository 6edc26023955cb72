/**
 * Conversions between etcd's wire messages (proto/etcd, loaded with keepCase, longs as strings,
 * enums as strings, bytes as Buffers) and the storage's etcd commands, and the mapping of
 * failures to etcd's gRPC errors (docs/etcd-api.md "Errors").
 */
import { status as GrpcStatus, type ServiceError } from '@grpc/grpc-js';
import { MvccError, type KeyValue } from '@app/mvcc';
import {
  CORRUPT_MESSAGE,
  NO_SPACE_MESSAGE,
  StorageError,
  inRange,
  isReservedKey,
  type EtcdCompare,
  type EtcdDeleteSpec,
  type EtcdKeyRange,
  type EtcdKv,
  type EtcdOp,
  type EtcdOpResponse,
  type EtcdPutSpec,
  type EtcdRangeSpec,
  type EtcdTxnResponse,
  type EtcdTxnSpec,
  type EtcdErrorCode,
} from '@app/storage';

/** A message as @grpc/proto-loader hands it over. */
export type Msg = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** An etcd API failure with its gRPC status code and etcd's message. */
export class EtcdApiError extends Error {
  constructor(
    readonly code: GrpcStatus,
    message: string,
  ) {
    super(message);
  }
}

/** Most operations in one Txn (etcd's --max-txn-ops default). */
export const MAX_TXN_OPS = 128;

const CODES: Record<EtcdErrorCode, GrpcStatus> = {
  NOT_FOUND: GrpcStatus.NOT_FOUND,
  INVALID_ARGUMENT: GrpcStatus.INVALID_ARGUMENT,
  FAILED_PRECONDITION: GrpcStatus.FAILED_PRECONDITION,
  OUT_OF_RANGE: GrpcStatus.OUT_OF_RANGE,
};

/** The gRPC error for an etcd command's failure. */
export function commandError(e: { code: EtcdErrorCode; message: string }): EtcdApiError {
  return new EtcdApiError(CODES[e.code], e.message);
}

/** Any failure as the gRPC error etcd would send. */
export function toServiceError(e: unknown): Partial<ServiceError> {
  if (e instanceof EtcdApiError) return { code: e.code, details: e.message, message: e.message };
  if (e instanceof MvccError) {
    if (e.code === 'Compacted') return { code: GrpcStatus.OUT_OF_RANGE, details: 'etcdserver: mvcc: required revision has been compacted' };
    if (e.code === 'FutureRevision') return { code: GrpcStatus.OUT_OF_RANGE, details: 'etcdserver: mvcc: required revision is a future revision' };
    if (e.code === 'InvalidKey' || e.code === 'InvalidCommand') return { code: GrpcStatus.INVALID_ARGUMENT, details: `etcdserver: ${e.message}` };
    return { code: GrpcStatus.UNAVAILABLE, details: `etcdserver: ${e.message}` };
  }
  if (e instanceof StorageError) {
    // etcd's ErrGRPCTooManyRequests, word for word: clients match on it.
    if (e.code === 'TooManyRequests') return { code: GrpcStatus.RESOURCE_EXHAUSTED, details: 'etcdserver: too many requests' };
    // etcd's ErrGRPCNoSpace, word for word.
    if (e.code === 'NoSpace') return { code: GrpcStatus.RESOURCE_EXHAUSTED, details: NO_SPACE_MESSAGE };
    if (e.code === 'Corrupt') return { code: GrpcStatus.DATA_LOSS, details: CORRUPT_MESSAGE };
    // etcd's "etcdserver: request timed out" / "no leader" are Unavailable: clients retry them.
    return { code: GrpcStatus.UNAVAILABLE, details: `etcdserver: ${e.message}` };
  }
  return { code: GrpcStatus.INTERNAL, details: e instanceof Error ? e.message : String(e) };
}

/** First code point of the escapes of bytes that are not UTF-8 (or NUL) in a key: U+10FF00 + byte. */
const ESCAPE_BASE = 0x10ff00;
/** The high surrogate of every escape (U+10FF00..U+10FFFF share it). */
const ESCAPE_HIGH = 0xdbff;
/** The low surrogate of the escape of byte 0 (the escape of byte b is ESCAPE_LOW + b). */
const ESCAPE_LOW = 0xdf00;

/**
 * The code point of the well-formed UTF-8 sequence of `n` bytes at `i`, or -1: continuation
 * bytes in 80..BF, no overlong form, no surrogate, nothing past U+10FFFF (what a strict decoder
 * accepts).
 */
function utf8At(b: Uint8Array, i: number, n: number): number {
  if (i + n > b.length) return -1;
  const c = b[i]!;
  let cp = n === 2 ? c & 0x1f : n === 3 ? c & 0x0f : c & 0x07;
  for (let j = 1; j < n; j++) {
    const x = b[i + j]!;
    if ((x & 0xc0) !== 0x80) return -1;
    cp = (cp << 6) | (x & 0x3f);
  }
  if (n === 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) return -1;
  if (n === 4 && (cp < 0x10000 || cp > 0x10ffff)) return -1;
  return cp;
}

/**
 * etcd keys are bytes, the store's are strings (docs/etcd-api.md "Keys"): valid UTF-8 maps to
 * the same string (so keys the API server writes and reads are the same on both sides); a NUL,
 * a byte that is not part of valid UTF-8, and the bytes of a code point in U+10FF00..U+10FFFF
 * become the code point U+10FF00 + byte. Reversible by keyBytes.
 *
 * Keys that need escapes are built as UTF-16 code units in one buffer and decoded once, so the
 * result is a flat string (etcdctl's `check perf` writes keys of mostly NUL bytes: built by
 * concatenation, each was a rope of hundreds of pieces that every later comparison and hash
 * had to flatten).
 */
export function bytesToKey(b: Buffer): string {
  const fast = b.toString('utf8');
  if (!fast.includes('\u0000') && !fast.includes('\uFFFD') && !fast.includes('\uDBFF')) return fast;
  // At most two code units per byte, two bytes per unit, little-endian.
  const out = Buffer.allocUnsafe(b.length * 4);
  let o = 0;
  const unit = (u: number): void => {
    out[o++] = u & 0xff;
    out[o++] = u >>> 8;
  };
  let i = 0;
  while (i < b.length) {
    const c = b[i]!;
    if (c > 0 && c < 0x80) {
      unit(c);
      i++;
      continue;
    }
    const n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    const cp = n === 0 ? -1 : utf8At(b, i, n);
    if (cp >= 0 && cp < ESCAPE_BASE) {
      if (cp < 0x10000) unit(cp);
      else {
        unit(0xd800 + ((cp - 0x10000) >>> 10));
        unit(0xdc00 + ((cp - 0x10000) & 0x3ff));
      }
      i += n;
      continue;
    }
    unit(ESCAPE_HIGH);
    unit(ESCAPE_LOW + c);
    i++;
  }
  return out.toString('utf16le', 0, o);
}

/** The bytes of a store key (inverse of bytesToKey). */
export function keyBytes(key: string): Buffer {
  if (!key.includes('\uDBFF')) return Buffer.from(key, 'utf8');
  // At most three bytes per code unit (a surrogate pair is four bytes for two units).
  const out = Buffer.allocUnsafe(key.length * 3);
  let o = 0;
  for (let i = 0; i < key.length; i++) {
    const u = key.charCodeAt(i);
    const next = i + 1 < key.length ? key.charCodeAt(i + 1) : 0;
    if (u === ESCAPE_HIGH && next >= ESCAPE_LOW && next <= 0xdfff) {
      out[o++] = next - ESCAPE_LOW;
      i++;
    } else if (u < 0x80) out[o++] = u;
    else if (u < 0x800) {
      out[o++] = 0xc0 | (u >>> 6);
      out[o++] = 0x80 | (u & 0x3f);
    } else if (u >= 0xd800 && u <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      const cp = 0x10000 + ((u - 0xd800) << 10) + (next - 0xdc00);
      out[o++] = 0xf0 | (cp >>> 18);
      out[o++] = 0x80 | ((cp >>> 12) & 0x3f);
      out[o++] = 0x80 | ((cp >>> 6) & 0x3f);
      out[o++] = 0x80 | (cp & 0x3f);
      i++;
    } else {
      // A lone surrogate is written as Buffer.from would: U+FFFD.
      const v = u >= 0xd800 && u <= 0xdfff ? 0xfffd : u;
      out[o++] = 0xe0 | (v >>> 12);
      out[o++] = 0x80 | ((v >>> 6) & 0x3f);
      out[o++] = 0x80 | (v & 0x3f);
    }
  }
  return Buffer.from(out.subarray(0, o));
}

/** A key from the wire (non-empty; see bytesToKey). */
export function keyIn(b: Buffer | undefined): string {
  if (!b || b.length === 0) throw new EtcdApiError(GrpcStatus.INVALID_ARGUMENT, 'etcdserver: key is not provided');
  return bytesToKey(b);
}

/** A range from key/range_end: single key, "\0" (everything from key), or [key, end). */
export function rangeIn(key: Buffer | undefined, end: Buffer | undefined): EtcdKeyRange {
  if (!end || end.length === 0) return { key: keyIn(key) };
  // A range from "\0" starts below every key (etcdctl's --prefix "" and --from-key "").
  const k = key && key.length === 1 && key[0] === 0 ? '\u0000' : keyIn(key);
  if (end.length === 1 && end[0] === 0) return { key: k, end: '\u0000' };
  return { key: k, end: bytesToKey(end) };
}

function checkWritable(key: string): void {
  if (isReservedKey(key)) throw new EtcdApiError(GrpcStatus.INVALID_ARGUMENT, "etcdserver: key is reserved for the server's lease records");
}

/** An int64 (string or number on the wire) as a safe number; etcd's negative values are invalid here. */
export function num(v: unknown): number {
  const n = Number(v ?? 0);
  return Number.isFinite(n) ? n : 0;
}

/** A lease id (int64) as its canonical decimal string. */
export function leaseIn(v: unknown): string {
  try {
    return BigInt(String(v ?? '0')).toString();
  } catch {
    throw new EtcdApiError(GrpcStatus.INVALID_ARGUMENT, 'etcdserver: invalid lease id');
  }
}

/** A RangeRequest as a range spec. */
export function rangeSpecIn(r: Msg): EtcdRangeSpec {
  return {
    ...rangeIn(r.key, r.range_end),
    limit: num(r.limit),
    revision: num(r.revision),
    keysOnly: !!r.keys_only,
    countOnly: !!r.count_only,
    sortOrder: r.sort_order ?? 'NONE',
    sortTarget: r.sort_target ?? 'KEY',
    minModRevision: num(r.min_mod_revision),
    maxModRevision: num(r.max_mod_revision),
    minCreateRevision: num(r.min_create_revision),
    maxCreateRevision: num(r.max_create_revision),
  };
}

/** A PutRequest as a put spec (etcd's argument checks of ignore_value/ignore_lease). */
export function putSpecIn(p: Msg): EtcdPutSpec {
  const key = keyIn(p.key);
  checkWritable(key);
  const value: Buffer = p.value ?? Buffer.alloc(0);
  const lease = leaseIn(p.lease);
  if (p.ignore_value && value.length !== 0) throw new EtcdApiError(GrpcStatus.INVALID_ARGUMENT, 'etcdserver: value is provided');
  if (p.ignore_lease && lease !== '0') throw new EtcdApiError(GrpcStatus.INVALID_ARGUMENT, 'etcdserver: lease is provided');
  return { key, value, lease, prevKv: !!p.prev_kv, ignoreValue: !!p.ignore_value, ignoreLease: !!p.ignore_lease };
}

/** A DeleteRangeRequest as a delete spec. */
export function deleteSpecIn(d: Msg): EtcdDeleteSpec {
  return { ...rangeIn(d.key, d.range_end), prevKv: !!d.prev_kv };
}

function compareIn(c: Msg): EtcdCompare {
  const target = (c.target ?? 'VERSION') as EtcdCompare['target'];
  let value: string | number;
  switch (target) {
    case 'VALUE':
      value = ((c.value as Buffer | undefined) ?? Buffer.alloc(0)).toString('base64');
      break;
    case 'LEASE':
      value = leaseIn(c.lease);
      break;
    case 'CREATE':
      value = num(c.create_revision);
      break;
    case 'MOD':
      value = num(c.mod_revision);
      break;
    default:
      value = num(c.version);
  }
  return { ...rangeIn(c.key, c.range_end), target, result: (c.result ?? 'EQUAL') as EtcdCompare['result'], value };
}

function opIn(op: Msg): EtcdOp {
  if (op.request_range) return { range: rangeSpecIn(op.request_range) };
  if (op.request_put) return { put: putSpecIn(op.request_put) };
  if (op.request_delete_range) return { del: deleteSpecIn(op.request_delete_range) };
  if (op.request_txn) return { txn: txnSpecIn(op.request_txn) };
  throw new EtcdApiError(GrpcStatus.INVALID_ARGUMENT, 'etcdserver: a txn operation names no request');
}

/** A TxnRequest as a txn spec, with etcd's checks (operation count, duplicate keys). */
export function txnSpecIn(t: Msg, top = true): EtcdTxnSpec {
  const spec: EtcdTxnSpec = {
    compare: ((t.compare as Msg[] | undefined) ?? []).map(compareIn),
    success: ((t.success as Msg[] | undefined) ?? []).map(opIn),
    failure: ((t.failure as Msg[] | undefined) ?? []).map(opIn),
  };
  if (top) {
    if (Math.max(spec.success.length, spec.failure.length) > MAX_TXN_OPS)
      throw new EtcdApiError(GrpcStatus.INVALID_ARGUMENT, 'etcdserver: too many operations in txn request');
    checkDuplicates(spec.success);
    checkDuplicates(spec.failure);
  }
  return spec;
}

/**
 * etcd's rule (its checkIntervals), applied to each branch of the top-level Txn: a key may be put
 * once, and not both put and deleted; deletes may overlap each other. A nested Txn's branches
 * are checked on their own, and the same key may be put in both of them (only one runs); their
 * puts then count against the puts and deletes of the level they are on. One stricter than
 * etcd: a key put in one nested Txn and deleted by a later one at the same level is refused too
 * (etcd lets that pass, and writes two versions of the key in one revision; this store keeps one
 * version of a key per revision).
 */
function checkDuplicates(ops: EtcdOp[]): { puts: Set<string>; dels: EtcdKeyRange[] } {
  const duplicate = (): EtcdApiError => new EtcdApiError(GrpcStatus.INVALID_ARGUMENT, 'etcdserver: duplicate key given in txn request');
  const dels: EtcdKeyRange[] = [];
  for (const op of ops) if ('del' in op) dels.push(op.del);
  const deleted = (k: string, among: readonly EtcdKeyRange[] = dels): boolean => among.some((d) => inRange(k, d));
  const puts = new Set<string>();
  const nested: { puts: Set<string>; dels: EtcdKeyRange[] }[] = [];
  for (const op of ops) {
    if (!('txn' in op)) continue;
    const then = checkDuplicates(op.txn.success);
    const otherwise = checkDuplicates(op.txn.failure);
    for (const k of then.puts) {
      if (puts.has(k) || deleted(k)) throw duplicate();
      puts.add(k);
    }
    for (const k of otherwise.puts) {
      if ((puts.has(k) && !then.puts.has(k)) || deleted(k)) throw duplicate();
      puts.add(k);
    }
    nested.push({ puts: new Set([...then.puts, ...otherwise.puts]), dels: [...then.dels, ...otherwise.dels] });
    dels.push(...then.dels, ...otherwise.dels);
  }
  for (let j = 0; j < nested.length; j++) {
    const later = nested.slice(j + 1).flatMap((n) => n.dels);
    for (const k of nested[j]!.puts) if (deleted(k, later)) throw duplicate();
  }
  for (const op of ops) {
    if (!('put' in op)) continue;
    if (puts.has(op.put.key) || deleted(op.put.key)) throw duplicate();
    puts.add(op.put.key);
  }
  return { puts, dels };
}

/** A stored key as mvccpb.KeyValue. */
export function kvOut(kv: KeyValue | EtcdKv, lease?: string): Msg {
  return {
    key: keyBytes(kv.key),
    create_revision: kv.createRevision,
    mod_revision: kv.modRevision,
    version: kv.version,
    value: Buffer.from(kv.value.buffer, kv.value.byteOffset, kv.value.byteLength),
    lease: lease ?? ('lease' in kv ? kv.lease : '0'),
  };
}

/** A range answer as RangeResponse fields. */
export function rangeOut(r: { kvs: EtcdKv[]; count: number; more: boolean }, header: Msg): Msg {
  return { header, kvs: r.kvs.map((kv) => kvOut(kv)), more: r.more, count: r.count };
}

/** One response of a Txn as ResponseOp. */
export function opOut(r: EtcdOpResponse, header: Msg): Msg {
  if ('range' in r) return { response_range: rangeOut(r.range, header) };
  if ('put' in r) return { response_put: { header, ...(r.put.prevKv ? { prev_kv: kvOut(r.put.prevKv) } : {}) } };
  if ('del' in r) return { response_delete_range: { header, deleted: r.del.deleted, prev_kvs: r.del.prevKvs.map((kv) => kvOut(kv)) } };
  return { response_txn: txnOut(r.txn, header) };
}

/** A txn answer as TxnResponse. */
export function txnOut(t: EtcdTxnResponse, header: Msg): Msg {
  return { header, succeeded: t.succeeded, responses: t.responses.map((r) => opOut(r, header)) };
}
