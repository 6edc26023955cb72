/**
 * The wire form of Raft messages (proto/raft.proto): conversion between core Messages and what
 * protobufjs encodes, and the RaftTransport gRPC service definition built on it.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import protobuf from 'protobufjs';
import { type Entry, type Message, type MessageType, type Snapshot, EMPTY_DATA, EMPTY_ENTRIES, RaftError } from './raft.types.js';

/** MessageType values of proto/raft.proto (kapi.raft.v1.MessageType). */
const TYPE_TO_WIRE: Partial<Record<MessageType, number>> = {
  prop: 1, // MSG_PROP
  app: 2, // MSG_APP
  appResp: 3, // MSG_APP_RESP
  vote: 4, // MSG_VOTE
  voteResp: 5, // MSG_VOTE_RESP
  preVote: 6, // MSG_PRE_VOTE
  preVoteResp: 7, // MSG_PRE_VOTE_RESP
  snap: 8, // MSG_SNAP
  heartbeat: 9, // MSG_HEARTBEAT
  heartbeatResp: 10, // MSG_HEARTBEAT_RESP
  transferLeader: 11, // MSG_TRANSFER_LEADER
  timeoutNow: 12, // MSG_TIMEOUT_NOW
  readIndex: 13, // MSG_READ_INDEX
  readIndexResp: 14, // MSG_READ_INDEX_RESP
  propDropped: 15, // MSG_PROP_DROPPED
};
const WIRE_TO_TYPE = new Map<number, MessageType>(Object.entries(TYPE_TO_WIRE).map(([k, v]) => [v, k as MessageType]));
/** EntryType values of proto/raft.proto. */
const ENTRY_NORMAL = 0;
const ENTRY_CONF = 1;

/**
 * A 64-bit field as protobufjs decodes it: a Long when the `long` package is installed (it is a
 * dependency of protobufjs), a number otherwise. Encoding accepts plain numbers.
 */
export type U64 = number | { toNumber(): number };
/** The number a U64 field holds (0 when absent). */
export const num = (v: U64 | null | undefined): number => (v === undefined || v === null ? 0 : typeof v === 'number' ? v : v.toNumber());

/**
 * The wire form of Entry and Message (proto/raft.proto field names in protobufjs' camelCase,
 * enums as numbers): what protobufjs encodes directly and decodes to, with no conversion of
 * enum names or 64-bit values in between (proto-loader's generic objects cost a third of the
 * codec's time on the append path).
 */
export interface WireEntry {
  term: U64;
  index: U64;
  type: number;
  data: Uint8Array;
}
export interface WireMessage {
  type: number;
  from: U64;
  to: U64;
  term: U64;
  logTerm: U64;
  index: U64;
  entries: WireEntry[];
  commit: U64;
  reject: boolean;
  rejectHint: U64;
  context: string;
  snapshot?: { index: U64; term: U64; confState?: { voters: U64[]; learners: U64[] } | null } | null;
}
/** One piece of a snapshot transfer (kapi.raft.v1.SnapshotChunk): the header message comes with the first. */
export interface WireChunk {
  header?: WireMessage | null;
  data: Uint8Array;
  last: boolean;
}

/**
 * Finds `proto/<file>` of the repository by walking up from this file (works from src and from
 * dist, and from the image, whose proto/ sits beside dist/), else under the working directory.
 */
export function findProtoFile(file: string): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 8; i++) {
    const p = join(dir, 'proto', file);
    if (existsSync(p)) return p;
    dir = dirname(dir);
  }
  const p = join(process.cwd(), 'proto', file);
  if (existsSync(p)) return p;
  throw new RaftError('ErrUnavailable', `proto/${file} not found`);
}

/** Finds proto/raft.proto (see findProtoFile). */
export function findRaftProto(): string {
  return findProtoFile('raft.proto');
}

/** Converts a core message to its wire form (snapshot data is sent separately, chunked). */
export function toWire(m: Message): WireMessage {
  const type = TYPE_TO_WIRE[m.type];
  if (!type) throw new RaftError('ErrInvariant', `message type ${m.type} is local and never sent`);
  return {
    type,
    from: m.from,
    to: m.to,
    term: m.term,
    logTerm: m.logTerm,
    index: m.index,
    entries: m.entries.map((e) => ({ term: e.term, index: e.index, type: e.type === 'conf' ? ENTRY_CONF : ENTRY_NORMAL, data: e.data })),
    commit: m.commit,
    reject: m.reject,
    rejectHint: m.rejectHint,
    context: m.context,
    snapshot: m.snapshot
      ? {
          index: m.snapshot.metadata.index,
          term: m.snapshot.metadata.term,
          confState: { voters: [...m.snapshot.metadata.confState.voters], learners: [...m.snapshot.metadata.confState.learners] },
        }
      : null,
  };
}

/** Converts a wire message back; returns undefined for an unknown type (bad input is dropped). */
export function fromWire(w: WireMessage, snapshotData?: Uint8Array): Message | undefined {
  const type = WIRE_TO_TYPE.get(w.type);
  const from = num(w.from);
  if (!type || !(from > 0)) return undefined;
  // Entry data stays a view into the received message (no copy): nothing writes to it.
  const entries: Entry[] = (w.entries ?? []).map((e) => ({
    term: num(e.term),
    index: num(e.index),
    type: e.type === ENTRY_CONF ? 'conf' : 'normal',
    data: e.data && e.data.length > 0 ? e.data : EMPTY_DATA,
  }));
  let snapshot: Snapshot | undefined;
  if (type === 'snap') {
    if (!w.snapshot) return undefined;
    snapshot = {
      metadata: {
        index: num(w.snapshot.index),
        term: num(w.snapshot.term),
        confState: { voters: (w.snapshot.confState?.voters ?? []).map(num), learners: (w.snapshot.confState?.learners ?? []).map(num) },
      },
      data: snapshotData ?? EMPTY_DATA,
    };
  }
  return {
    type,
    from,
    to: num(w.to),
    term: num(w.term),
    logTerm: num(w.logTerm),
    index: num(w.index),
    entries: entries.length > 0 ? entries : EMPTY_ENTRIES,
    commit: num(w.commit),
    reject: Boolean(w.reject),
    rejectHint: num(w.rejectHint),
    context: w.context ?? '',
    snapshot,
  };
}

/**
 * The RaftTransport service of proto/raft.proto: methods as @grpc/proto-loader reads them from
 * the file, requests encoded by protobufjs directly instead of through proto-loader's generic
 * objects. A Stream write takes core Messages and the server receives core Messages (bad ones,
 * and those `accept` refuses, already dropped), so each message is converted once per direction.
 */
export function raftService(protoPath: string, accept: (m: Message) => boolean = () => true): grpc.ServiceDefinition {
  const methods = protoLoader.loadSync(protoPath, { keepCase: false, longs: Number, enums: String, defaults: true })[
    'kapi.raft.v1.RaftTransport'
  ] as grpc.ServiceDefinition;
  const root = protobuf.loadSync(protoPath);
  const batchType = root.lookupType('kapi.raft.v1.MessageBatch');
  const chunkType = root.lookupType('kapi.raft.v1.SnapshotChunk');
  const buf = (u: Uint8Array): Buffer => (Buffer.isBuffer(u) ? u : Buffer.from(u.buffer, u.byteOffset, u.byteLength));
  return {
    Stream: {
      ...methods.Stream!,
      requestSerialize: (msgs: readonly Message[]) => buf(batchType.encode({ messages: msgs.map(toWire) }).finish()),
      requestDeserialize: (b: Buffer): Message[] => {
        const out: Message[] = [];
        for (const w of (batchType.decode(b) as unknown as { messages?: WireMessage[] }).messages ?? []) {
          const m = fromWire(w);
          if (m && accept(m)) out.push(m);
        }
        return out;
      },
    },
    Snapshot: {
      ...methods.Snapshot!,
      requestSerialize: (c: WireChunk) => buf(chunkType.encode(c).finish()),
      requestDeserialize: (b: Buffer): WireChunk => chunkType.decode(b) as unknown as WireChunk,
    },
  };
}

/** A client of the RaftTransport service as makeGenericClientConstructor builds it from raftService. */
export type ServiceClient = grpc.Client & {
  Stream(cb: (err: grpc.ServiceError | null) => void): grpc.ClientWritableStream<readonly Message[]>;
  Snapshot(cb: (err: grpc.ServiceError | null) => void): grpc.ClientWritableStream<WireChunk>;
};
