/**
 * The etcd v3 requests that change state, as one replicated command of the state machine
 * (docs/etcd-api.md "Replicated commands"). A command is proposed through Raft and evaluated by
 * every replica at the same log position (EtcdApplier), so a Txn's compares, a DeleteRange's
 * key set and a lease's keys are read from the same state everywhere.
 *
 * Encoding: the byte ETCD_COMMAND_FORMAT, then the command as JSON (values base64). The byte
 * differs from the MVCC command formats (1: transaction, 2: compaction), so every older log
 * entry still decodes as before.
 */
import type { KeyValue } from '@app/mvcc';

/** First byte of an encoded etcd command ('E'). */
export const ETCD_COMMAND_FORMAT = 0x45;

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

/** A Put; `value` base64; `lease` a decimal lease id ('0': none). */
export interface EtcdPutSpec {
  key: string;
  value: string;
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

/** Encodes a command for the Raft log. */
export function encodeEtcdCommand(cmd: EtcdCommand): Uint8Array {
  const json = Buffer.from(JSON.stringify(cmd), 'utf8');
  const out = new Uint8Array(json.length + 1);
  out[0] = ETCD_COMMAND_FORMAT;
  out.set(json, 1);
  return out;
}

/** True when `data` is an encoded etcd command. */
export function isEtcdCommand(data: Uint8Array): boolean {
  return data.length > 0 && data[0] === ETCD_COMMAND_FORMAT;
}

/** Decodes encodeEtcdCommand output; throws Error on malformed bytes (every replica alike). */
export function decodeEtcdCommand(data: Uint8Array): EtcdCommand {
  if (!isEtcdCommand(data)) throw new Error('not an etcd command');
  const v = JSON.parse(Buffer.from(data.buffer, data.byteOffset + 1, data.length - 1).toString('utf8')) as unknown;
  if (typeof v !== 'object' || v === null) throw new Error('etcd command is not an object');
  const o = v as Record<string, unknown>;
  if (!('txn' in o) && !('grant' in o) && !('revoke' in o) && !('keepalive' in o)) throw new Error('unknown etcd command');
  return v as EtcdCommand;
}
