/**
 * The etcd v3 requests that change state, as one replicated command of the state machine
 * (docs/etcd-api.md "Replicated commands"). A command is proposed through Raft and evaluated by
 * every replica at the same log position (EtcdApplier), so a Txn's compares, a DeleteRange's
 * key set and a lease's keys are read from the same state everywhere.
 *
 * Encodings (the first byte says which; both differ from the MVCC command formats, 1:
 * transaction and 2: compaction, so every older log entry still decodes as before):
 * - ETCD_PUT_FORMAT ('P'), for the common case of a lone Put (etcd's KV.Put: a Txn with no
 *   compares and one Put): [flags:u8][keyLen:u32 BE][key UTF-8][leaseLen:u8][lease ASCII
 *   decimal][value bytes to the end]. Flags: 1 prevKv, 2 ignoreValue, 4 ignoreLease.
 * - ETCD_COMMAND_FORMAT ('E'): the command as JSON, a Put's value in base64.
 * - ETCD_PUTS_FORMAT ('M'), several lone Puts proposed together as one entry:
 *   [count:u32 BE] then, for each, [length:u32 BE][the Put in the 'P' form]. Each is applied
 *   as a transaction of its own, in order, with a revision of its own.
 */
import type { KeyValue } from '@app/mvcc';
import { PROPOSAL_DEDUP_FORMAT } from '@app/raft';

/** First byte of an etcd command encoded as JSON ('E'). */
export const ETCD_COMMAND_FORMAT = 0x45;
/** First byte of a lone Put encoded in binary ('P'). */
export const ETCD_PUT_FORMAT = 0x50;
/** First byte of several lone Puts packed into one entry ('M'). */
export const ETCD_PUTS_FORMAT = 0x4d;

/**
 * Name of the binary Put format among the optional log formats a member's build applies (its
 * member record lists them): the format is proposed only once every member lists it.
 */
export const ETCD_PUT_LOG_FORMAT = 'etcd-put';
/** Name of the packed Puts format ('M') among the optional log formats (see ETCD_PUT_LOG_FORMAT). */
export const ETCD_PUTS_LOG_FORMAT = 'etcd-puts';
/** The optional log formats this build applies (and the leader behaviour others rely on). */
export const LOG_FORMATS_APPLIED: readonly string[] = [ETCD_PUT_LOG_FORMAT, ETCD_PUTS_LOG_FORMAT, PROPOSAL_DEDUP_FORMAT];

/** What a compare looks at (etcd's Compare.CompareTarget). */
export type EtcdCompareTarget = 'VERSION' | 'CREATE' | 'MOD' | 'VALUE' | 'LEASE';
/** How it compares (etcd's Compare.CompareResult). */
export type EtcdCompareResult = 'EQUAL' | 'GREATER' | 'LESS' | 'NOT_EQUAL';

/**
 * A key range: `end` undefined is the single key; `end` = '\u0000' means every key >= `key`
 * (etcd's range_end "\0"); otherwise [key, end).
 */
export interface EtcdKeyRange {
  key: string;
  end?: string;
}

/** One compare of a Txn; `value` is a number for revisions and versions, base64 for VALUE, a decimal lease id for LEASE. */
export interface EtcdCompare extends EtcdKeyRange {
  target: EtcdCompareTarget;
  result: EtcdCompareResult;
  value: string | number;
}

/** A Range inside a Txn (also the shape the KV service reads with). */
export interface EtcdRangeSpec extends EtcdKeyRange {
  limit?: number;
  revision?: number;
  keysOnly?: boolean;
  countOnly?: boolean;
  sortOrder?: 'NONE' | 'ASCEND' | 'DESCEND';
  sortTarget?: 'KEY' | 'VERSION' | 'CREATE' | 'MOD' | 'VALUE';
  minModRevision?: number;
  maxModRevision?: number;
  minCreateRevision?: number;
  maxCreateRevision?: number;
}

/** A Put; `lease` a decimal lease id ('0': none). */
export interface EtcdPutSpec {
  key: string;
  value: Uint8Array;
  lease: string;
  prevKv?: boolean;
  ignoreValue?: boolean;
  ignoreLease?: boolean;
}

/** A DeleteRange. */
export interface EtcdDeleteSpec extends EtcdKeyRange {
  prevKv?: boolean;
}

/** One operation of a Txn branch (etcd's RequestOp). */
export type EtcdOp = { range: EtcdRangeSpec } | { put: EtcdPutSpec } | { del: EtcdDeleteSpec } | { txn: EtcdTxnSpec };

/** A Txn (Put and DeleteRange travel as a Txn with one success op and no compares). */
export interface EtcdTxnSpec {
  compare: EtcdCompare[];
  success: EtcdOp[];
  failure: EtcdOp[];
  /**
   * The command is a KV.Put request, not a Txn: etcd checks a Put request's lease before its
   * key (ignore_value/ignore_lease), a Put inside a Txn the other way round. Builds that do not
   * know the mark check as for a Txn; either way such a command fails without writing.
   */
  kvPut?: true;
}

/** The replicated etcd command. Lease ids are decimal strings of etcd's int64 ids. */
export type EtcdCommand = { txn: EtcdTxnSpec } | { grant: { id: string; ttl: number } } | { revoke: { id: string } } | { keepalive: { id: string } };

/** A stored key as the etcd API shows it: the MVCC record plus the lease it is attached to ('0': none). */
export interface EtcdKv extends KeyValue {
  lease: string;
}

/** The answer to one op (etcd's ResponseOp). */
export type EtcdOpResponse =
  | { range: { kvs: EtcdKv[]; count: number; more: boolean } }
  | { put: { prevKv?: EtcdKv } }
  | { del: { deleted: number; prevKvs: EtcdKv[] } }
  | { txn: EtcdTxnResponse };

/** The answer to a Txn. */
export interface EtcdTxnResponse {
  succeeded: boolean;
  responses: EtcdOpResponse[];
}

/** Error classes of etcd commands, named after the gRPC status codes they map to. */
export type EtcdErrorCode = 'NOT_FOUND' | 'INVALID_ARGUMENT' | 'FAILED_PRECONDITION' | 'OUT_OF_RANGE';

/** Outcome of applying an etcd command: the store revision after it, and the answer or an etcd error. */
export interface EtcdResult {
  revision: number;
  txn?: EtcdTxnResponse;
  grant?: { id: string; ttl: number };
  keepalive?: { id: string; ttl: number };
  error?: { code: EtcdErrorCode; message: string };
}

const PUT_PREV_KV = 1;
const PUT_IGNORE_VALUE = 2;
const PUT_IGNORE_LEASE = 4;
/** EtcdTxnSpec.kvPut: the Put came as a KV.Put request. */
const PUT_KV_REQUEST = 8;

/** The Put of a command that is nothing but one Put, or undefined. */
export function lonePut(cmd: EtcdCommand): EtcdPutSpec | undefined {
  if (!('txn' in cmd)) return undefined;
  const t = cmd.txn;
  if (t.compare.length !== 0 || t.failure.length !== 0 || t.success.length !== 1) return undefined;
  const op = t.success[0]!;
  return 'put' in op ? op.put : undefined;
}

/** A Txn with its Put values (nested ones too) as base64 strings, for the JSON form. */
function txnForJson(t: EtcdTxnSpec): unknown {
  const ops = (list: EtcdOp[]): unknown[] =>
    list.map((op) => {
      if ('put' in op)
        return { put: { ...op.put, value: Buffer.from(op.put.value.buffer, op.put.value.byteOffset, op.put.value.byteLength).toString('base64') } };
      if ('txn' in op) return { txn: txnForJson(op.txn) };
      return op;
    });
  return { compare: t.compare, success: ops(t.success), failure: ops(t.failure), ...(t.kvPut ? { kvPut: true } : {}) };
}

/** The JSON form: Put values as base64 strings. */
function toJson(cmd: EtcdCommand): string {
  return JSON.stringify('txn' in cmd ? { txn: txnForJson(cmd.txn) } : cmd);
}

/** Turns the base64 Put values of a decoded JSON command back into bytes, in place. */
function putValuesToBytes(t: EtcdTxnSpec): void {
  for (const op of [...t.success, ...t.failure]) {
    if ('put' in op) {
      const v = op.put.value as unknown;
      if (typeof v !== 'string') throw new Error('etcd command: a put value is not base64');
      op.put.value = new Uint8Array(Buffer.from(v, 'base64'));
    } else if ('txn' in op) putValuesToBytes(op.txn);
  }
}

/**
 * Encodes a command for the Raft log. `binaryPut` false keeps a lone Put in the JSON form too:
 * for a group whose members do not all apply the binary form (RaftProposer's format gate).
 */
export function encodeEtcdCommand(cmd: EtcdCommand, opts: { binaryPut?: boolean } = {}): Uint8Array {
  const put = opts.binaryPut === false ? undefined : lonePut(cmd);
  if (put) {
    const keyLen = Buffer.byteLength(put.key, 'utf8');
    const out = Buffer.allocUnsafe(1 + 1 + 4 + keyLen + 1 + put.lease.length + put.value.length);
    let o = 0;
    out[o++] = ETCD_PUT_FORMAT;
    out[o++] =
      (put.prevKv ? PUT_PREV_KV : 0) |
      (put.ignoreValue ? PUT_IGNORE_VALUE : 0) |
      (put.ignoreLease ? PUT_IGNORE_LEASE : 0) |
      ('txn' in cmd && cmd.txn.kvPut ? PUT_KV_REQUEST : 0);
    out.writeUInt32BE(keyLen, o);
    o += 4;
    o += out.write(put.key, o, 'utf8');
    out[o++] = put.lease.length;
    o += out.write(put.lease, o, 'latin1');
    out.set(put.value, o);
    return out;
  }
  const json = Buffer.from(toJson(cmd), 'utf8');
  const out = new Uint8Array(json.length + 1);
  out[0] = ETCD_COMMAND_FORMAT;
  out.set(json, 1);
  return out;
}

/**
 * Packs lone Puts (each a command lonePut accepts) into one entry of the 'M' form, each Put in
 * the binary form. Throws when a command is not a lone Put.
 */
export function encodeEtcdPuts(cmds: readonly EtcdCommand[]): Uint8Array {
  const parts = cmds.map((c) => {
    if (!lonePut(c)) throw new Error('etcd puts: only lone Puts are packed');
    return encodeEtcdCommand(c);
  });
  let size = 5;
  for (const p of parts) size += 4 + p.length;
  const out = Buffer.allocUnsafe(size);
  out[0] = ETCD_PUTS_FORMAT;
  out.writeUInt32BE(parts.length, 1);
  let o = 5;
  for (const p of parts) {
    out.writeUInt32BE(p.length, o);
    out.set(p, o + 4);
    o += 4 + p.length;
  }
  return out;
}

/** True when `data` is an encoded etcd command (or several packed ones). */
export function isEtcdCommand(data: Uint8Array): boolean {
  return data.length > 0 && (data[0] === ETCD_COMMAND_FORMAT || data[0] === ETCD_PUT_FORMAT || data[0] === ETCD_PUTS_FORMAT);
}

/** True when `data` is several Puts packed into one entry (decode it with decodeEtcdCommands). */
export function isPackedEtcdPuts(data: Uint8Array): boolean {
  return data.length > 0 && data[0] === ETCD_PUTS_FORMAT;
}

/**
 * Decodes an entry of etcd commands: one for the 'E' and 'P' forms, the packed Puts of the 'M'
 * form in order. Throws Error on malformed bytes (every replica alike).
 */
export function decodeEtcdCommands(data: Uint8Array): EtcdCommand[] {
  if (!isPackedEtcdPuts(data)) return [decodeEtcdCommand(data)];
  const b = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (b.length < 5) throw new Error('etcd puts: truncated');
  const count = b.readUInt32BE(1);
  if (count === 0) throw new Error('etcd puts: no Put');
  const cmds: EtcdCommand[] = [];
  let o = 5;
  for (let i = 0; i < count; i++) {
    if (o + 4 > b.length) throw new Error('etcd puts: truncated');
    const len = b.readUInt32BE(o);
    const end = o + 4 + len;
    if (end > b.length) throw new Error('etcd puts: truncated Put');
    if (len === 0 || b[o + 4] !== ETCD_PUT_FORMAT) throw new Error('etcd puts: a part is not a Put');
    cmds.push(decodePut(data.subarray(o + 4, end)));
    o = end;
  }
  if (o !== b.length) throw new Error('etcd puts: bytes after the last Put');
  return cmds;
}

function decodePut(data: Uint8Array): EtcdCommand {
  const b = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (b.length < 7) throw new Error('etcd put command: truncated');
  const flags = b[1]!;
  const keyLen = b.readUInt32BE(2);
  const keyEnd = 6 + keyLen;
  if (keyEnd + 1 > b.length) throw new Error('etcd put command: truncated key');
  const key = b.toString('utf8', 6, keyEnd);
  const leaseEnd = keyEnd + 1 + b[keyEnd]!;
  if (leaseEnd > b.length) throw new Error('etcd put command: truncated lease');
  const lease = b.toString('latin1', keyEnd + 1, leaseEnd);
  if (!/^-?\d+$/.test(lease)) throw new Error('etcd put command: the lease is not a decimal id');
  // A copy: the entry's bytes may be a view of a larger buffer (a batch of entries as received)
  // that the stored value would otherwise keep alive.
  const put: EtcdPutSpec = { key, value: new Uint8Array(data.subarray(leaseEnd)), lease };
  if (flags & PUT_PREV_KV) put.prevKv = true;
  if (flags & PUT_IGNORE_VALUE) put.ignoreValue = true;
  if (flags & PUT_IGNORE_LEASE) put.ignoreLease = true;
  return { txn: { compare: [], success: [{ put }], failure: [], ...(flags & PUT_KV_REQUEST ? { kvPut: true as const } : {}) } };
}

/** Decodes encodeEtcdCommand output; throws Error on malformed bytes (every replica alike). */
export function decodeEtcdCommand(data: Uint8Array): EtcdCommand {
  if (!isEtcdCommand(data) || isPackedEtcdPuts(data)) throw new Error('not an etcd command');
  if (data[0] === ETCD_PUT_FORMAT) return decodePut(data);
  const v = JSON.parse(Buffer.from(data.buffer, data.byteOffset + 1, data.length - 1).toString('utf8')) as unknown;
  if (typeof v !== 'object' || v === null) throw new Error('etcd command is not an object');
  const o = v as Record<string, unknown>;
  if (!('txn' in o) && !('grant' in o) && !('revoke' in o) && !('keepalive' in o)) throw new Error('unknown etcd command');
  if ('txn' in o) putValuesToBytes(o.txn as EtcdTxnSpec);
  return v as EtcdCommand;
}
