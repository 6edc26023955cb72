/**
 * The replicated command of the MVCC state machine and its result, shaped like etcd's Txn
 * (etcdserverpb.TxnRequest: compare[], success[], failure[]). A command is pure data and is
 * encoded to bytes with `encodeCommand` so it can travel as a Raft log entry; applying the same
 * command sequence to the same initial state gives the same state and results on every replica.
 */
import { BinReader, BinWriter, CodecError } from './mvcc.codec.js';

/** One stored key with its MVCC metadata (etcd mvccpb.KeyValue). Revisions start at 1. */
export interface KeyValue {
  key: string;
  value: Uint8Array;
  /** Revision of the write that created this incarnation of the key. */
  createRevision: number;
  /** Revision of the last write to the key. */
  modRevision: number;
  /** Number of writes since creation (1 after create; a delete resets the key). */
  version: number;
}

/**
 * A condition checked atomically before the operations run. An absent key has
 * modRevision 0 and version 0, as in etcd, so `modRevision == 0` also means "absent".
 */
export type Compare =
  | { key: string; target: 'modRevision'; value: number }
  | { key: string; target: 'version'; value: number }
  | { key: string; target: 'absent' }
  | { key: string; target: 'present' };

/** An operation of a transaction branch. `get` returns current state (etcd's failure-branch Range). */
export type Op = { type: 'put'; key: string; value: Uint8Array } | { type: 'delete'; key: string } | { type: 'get'; key: string };

/**
 * The replicated command: if every compare holds run `success`, else `failure`. A command with
 * `compact` set (and nothing else) is a history compaction instead (etcd's Compact request):
 * every replica applies it at the same log position, so all of them refuse the same revisions
 * afterwards. It compacts to `compact` when that is above the compacted revision and not above
 * the current one, and is a no-op otherwise (a stale or duplicate proposal); it takes no revision.
 */
export interface TxnCommand {
  compares: Compare[];
  success: Op[];
  failure: Op[];
  compact?: number;
}

/** A compaction command (see TxnCommand.compact). */
export function compactCommand(revision: number): TxnCommand {
  return { compares: [], success: [], failure: [], compact: revision };
}

/**
 * Result of one op. put: `prev` = state before (if any), `current` = state written.
 * delete: `prev` = the deleted state (undefined when the key was absent: no write happened).
 * get: `current` = state at that point of the transaction (undefined when absent).
 */
export interface OpResult {
  prev?: KeyValue;
  current?: KeyValue;
}

/** Outcome of applying a command. */
export interface TxnResult {
  succeeded: boolean;
  /** Revision of this transaction when it wrote; else the store revision it was evaluated at. */
  revision: number;
  /** One entry per op of the branch that ran. */
  results: OpResult[];
  /** Set when the command was rejected as malformed (no effect, deterministic on every replica). */
  error?: string;
}

/** One entry to apply (MvccStore.applyBatch): a command, or only an index advance (Raft no-op/config entries). */
export interface ApplyEntry {
  index: number;
  command?: TxnCommand;
  /**
   * Further commands of the same log entry (several etcd Puts packed into one Raft entry), each
   * applied after `command` as a transaction of its own, with a revision of its own. Only
   * `command`'s outcome is reported (applyBatch's result); their proposer evaluated them itself.
   */
  more?: TxnCommand[];
}

/** A change emitted by the store for every applied write, in revision order. */
export interface MvccEvent {
  type: 'put' | 'delete';
  key: string;
  /** put: the new state. delete: the tombstone (empty value, modRevision = deletion revision). */
  value: KeyValue;
  /** State before the write (always set for delete). */
  prevValue?: KeyValue;
  revision: number;
}

/** Error codes of the MVCC store. */
export type MvccErrorCode = 'Compacted' | 'FutureRevision' | 'InvalidKey' | 'InvalidCommand' | 'Closed' | 'Corrupt';

/** Typed failure of a store read or write. `revision` is the store's relevant revision. */
export class MvccError extends Error {
  constructor(
    readonly code: MvccErrorCode,
    message: string,
    readonly revision?: number,
  ) {
    super(message);
    this.name = 'MvccError';
  }
}

/**
 * Keys are non-empty UTF-8 strings without NUL: the store uses NUL to separate a key from its
 * revision in the history keyspace (docs/storage.md, "Key layout").
 */
export function validateKey(key: unknown): string | undefined {
  if (typeof key !== 'string' || key.length === 0) return 'key must be a non-empty string';
  if (key.includes('\u0000')) return 'key must not contain NUL';
  if (key.length > 8192) return 'key longer than 8192 characters';
  return undefined;
}

/** Returns why a command is malformed, or undefined when it may be applied. */
export function validateCommand(cmd: TxnCommand): string | undefined {
  if (cmd.compact !== undefined) {
    if (!Number.isSafeInteger(cmd.compact) || cmd.compact < 0) return 'compact: revision must be a non-negative integer';
    if (cmd.compares.length + cmd.success.length + cmd.failure.length > 0) return 'compact: a compaction carries no compares or operations';
    return undefined;
  }
  for (const c of cmd.compares) {
    const bad = validateKey(c.key);
    if (bad) return `compare: ${bad}`;
    if ((c.target === 'modRevision' || c.target === 'version') && !Number.isSafeInteger(c.value)) {
      return `compare: ${c.target} value must be an integer`;
    }
  }
  for (const op of [...cmd.success, ...cmd.failure]) {
    const bad = validateKey(op.key);
    if (bad) return `op: ${bad}`;
    if (op.type === 'put' && !(op.value instanceof Uint8Array)) return 'op: put value must be bytes';
  }
  return undefined;
}

const FORMAT_VERSION = 1;
/** First byte of a compaction command (format 2: the byte, then the revision). */
const FORMAT_COMPACT = 2;
const COMPARE_TAGS = { modRevision: 1, version: 2, absent: 3, present: 4 } as const;
const OP_TAGS = { put: 1, delete: 2, get: 3 } as const;

function writeOps(w: BinWriter, ops: Op[]): void {
  w.u32(ops.length);
  for (const op of ops) {
    w.u8(OP_TAGS[op.type]).str(op.key);
    if (op.type === 'put') w.bytes(op.value);
  }
}

function readOps(r: BinReader): Op[] {
  const n = r.u32();
  const ops: Op[] = [];
  for (let i = 0; i < n; i++) {
    const tag = r.u8();
    const key = r.str();
    if (tag === OP_TAGS.put) ops.push({ type: 'put', key, value: r.bytes() });
    else if (tag === OP_TAGS.delete) ops.push({ type: 'delete', key });
    else if (tag === OP_TAGS.get) ops.push({ type: 'get', key });
    else throw new CodecError(`unknown op tag ${tag}`);
  }
  return ops;
}

/** Encodes a command to bytes (binary; format byte 1: a transaction, 2: a compaction; see docs/storage.md). */
export function encodeCommand(cmd: TxnCommand): Uint8Array {
  if (cmd.compact !== undefined) return new BinWriter(16).u8(FORMAT_COMPACT).num(cmd.compact).finish();
  const w = new BinWriter(64);
  w.u8(FORMAT_VERSION).u32(cmd.compares.length);
  for (const c of cmd.compares) {
    w.u8(COMPARE_TAGS[c.target]).str(c.key);
    if (c.target === 'modRevision' || c.target === 'version') w.num(c.value);
  }
  writeOps(w, cmd.success);
  writeOps(w, cmd.failure);
  return w.finish();
}

/** Decodes `encodeCommand` output. Throws `MvccError('InvalidCommand')` on malformed bytes. */
export function decodeCommand(bytes: Uint8Array): TxnCommand {
  try {
    const r = new BinReader(bytes);
    const version = r.u8();
    if (version === FORMAT_COMPACT) {
      const revision = r.num();
      if (!r.done()) throw new CodecError('trailing bytes');
      return compactCommand(revision);
    }
    if (version !== FORMAT_VERSION) throw new CodecError(`unknown command format ${version}`);
    const n = r.u32();
    const compares: Compare[] = [];
    for (let i = 0; i < n; i++) {
      const tag = r.u8();
      const key = r.str();
      if (tag === COMPARE_TAGS.modRevision) compares.push({ key, target: 'modRevision', value: r.num() });
      else if (tag === COMPARE_TAGS.version) compares.push({ key, target: 'version', value: r.num() });
      else if (tag === COMPARE_TAGS.absent) compares.push({ key, target: 'absent' });
      else if (tag === COMPARE_TAGS.present) compares.push({ key, target: 'present' });
      else throw new CodecError(`unknown compare tag ${tag}`);
    }
    const success = readOps(r);
    const failure = readOps(r);
    if (!r.done()) throw new CodecError('trailing bytes');
    return { compares, success, failure };
  } catch (e) {
    if (e instanceof CodecError) throw new MvccError('InvalidCommand', `cannot decode command: ${e.message}`);
    throw e;
  }
}
