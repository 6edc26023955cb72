/**
 * Snapshot transfer between peers on its own gRPC stream (etcd's rafthttp snapshot channel):
 * chunked sending from a file or memory, and receiving into a file or memory.
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream } from 'node:fs';
import { type FileHandle, open, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import type { DuplexCall, Msg } from '@app/grpc';
import { type Message, type NodeId, type Snapshot, EMPTY_DATA } from './raft.types.js';
import { type WireChunk, type WireMessage, fromWire, num, toWire } from './raft.wire-codec.js';

/** Snapshot transfers with one peer in one direction (for metrics). */
export interface SnapshotTransferCounts {
  success: number;
  failures: number;
  /** Bytes of the successful transfers. */
  bytes: number;
  /** Time the successful transfers took. */
  seconds: number;
}

/** Counts one finished transfer with `peer` (bytes and time only when it succeeded). */
export function countTransfer(byPeer: Map<NodeId, SnapshotTransferCounts>, peer: NodeId, ok: boolean, bytes: number, startedMs: number): void {
  let c = byPeer.get(peer);
  if (!c) byPeer.set(peer, (c = { success: 0, failures: 0, bytes: 0, seconds: 0 }));
  if (!ok) {
    c.failures++;
    return;
  }
  c.success++;
  c.bytes += bytes;
  c.seconds += (performance.now() - startedMs) / 1000;
}

/** Deletes the file of a snapshot message that will not be sent or delivered (see Snapshot.file). */
export function dropSnapshotFile(m: { snapshot?: { file?: string } }): void {
  const file = m.snapshot?.file;
  if (file !== undefined) void unlink(file).catch(() => undefined);
}

/** A snapshot's data in pieces of at most `size` bytes: from its file, or slices of `data`. */
async function* snapshotChunks(snap: Snapshot, size: number): AsyncGenerator<Uint8Array> {
  if (snap.file !== undefined) {
    for await (const piece of createReadStream(snap.file, { highWaterMark: size })) yield piece as Buffer;
    return;
  }
  for (let off = 0; off < snap.data.length; off += size) yield snap.data.subarray(off, off + size);
}

/** Where a received snapshot's data goes while it arrives. */
interface SnapshotSink {
  /** Takes a piece; false when the caller should wait for drained() before the next. */
  write(data: Uint8Array): boolean;
  drained(): Promise<void>;
  /** All data received: the data in memory, or the durable file that holds it. */
  finish(): Promise<{ data: Uint8Array; file?: string }>;
  /** Forgets what was received (an incomplete or refused transfer). */
  discard(): Promise<void>;
}

class MemorySnapshotSink implements SnapshotSink {
  private readonly chunks: Uint8Array[] = [];

  write(data: Uint8Array): boolean {
    this.chunks.push(new Uint8Array(data));
    return true;
  }

  drained(): Promise<void> {
    return Promise.resolve();
  }

  finish(): Promise<{ data: Uint8Array }> {
    return Promise.resolve({ data: new Uint8Array(Buffer.concat(this.chunks)) });
  }

  discard(): Promise<void> {
    this.chunks.length = 0;
    return Promise.resolve();
  }
}

const ACK: Msg = {};

/** Up to this many pieces wait for the disk before the stream is paused. */
const SNAPSHOT_WRITES_AHEAD = 4;

/**
 * Writes a received snapshot to a new file in `dir` (mode 0600), in arrival order; finish()
 * fsyncs the file and the directory, so the file survives a crash once the log's storage
 * records it.
 */
class FileSnapshotSink implements SnapshotSink {
  readonly file: string;
  private handle: Promise<FileHandle>;
  private writing: Promise<unknown>;
  private pending = 0;
  private waiters: (() => void)[] = [];
  private failed: Error | undefined;
  /** Set once the file is complete and handed over: discard() no longer deletes it. */
  private finished = false;

  constructor(private readonly dir: string) {
    this.file = join(dir, `recv-${Date.now()}-${randomBytes(4).toString('hex')}.snap`);
    this.handle = open(this.file, 'wx', 0o600);
    // A failed open is reported by finish() (or ignored by discard()); until the first of them
    // awaits it, it must not count as an unhandled rejection, which would end the process.
    this.handle.catch(() => undefined);
    this.writing = this.handle;
  }

  write(data: Uint8Array): boolean {
    this.pending++;
    this.writing = this.writing
      .then(async () => {
        if (this.failed) return;
        await (await this.handle).write(data);
      })
      .catch((e: unknown) => {
        this.failed ??= e instanceof Error ? e : new Error(String(e));
      })
      .finally(() => {
        this.pending--;
        if (this.pending < SNAPSHOT_WRITES_AHEAD) for (const w of this.waiters.splice(0)) w();
      });
    return this.pending < SNAPSHOT_WRITES_AHEAD;
  }

  drained(): Promise<void> {
    return this.pending < SNAPSHOT_WRITES_AHEAD ? Promise.resolve() : new Promise((r) => this.waiters.push(r));
  }

  async finish(): Promise<{ data: Uint8Array; file: string }> {
    await this.writing;
    if (this.failed) throw this.failed;
    const fh = await this.handle;
    await fh.sync();
    await fh.close();
    const d = await open(this.dir, 'r');
    try {
      await d.sync();
    } finally {
      await d.close();
    }
    this.finished = true;
    return { data: EMPTY_DATA, file: this.file };
  }

  async discard(): Promise<void> {
    if (this.finished) return;
    await this.writing.catch(() => undefined);
    await this.handle.then((fh) => fh.close()).catch(() => undefined);
    await unlink(this.file).catch(() => undefined);
  }
}

/** Where receiveSnapshot puts what arrives. */
export interface SnapshotReceiveOptions {
  /** Directory for the received file (see GrpcTransportOptions.snapshotDir); memory when undefined. */
  readonly snapshotDir: string | undefined;
  /** Transfer counts by sending peer, updated once per transfer. */
  readonly received: Map<NodeId, SnapshotTransferCounts>;
  /** Hands the complete snapshot message on; false when it is refused (its file is then deleted). */
  deliver(m: Message): boolean;
}

/**
 * Server side of the Snapshot call: stores the chunks as they arrive (pausing the stream while
 * the sink is behind), then delivers the message with its data or file once the last chunk came.
 * An incomplete or unstorable transfer is answered with an error and leaves nothing behind.
 */
export function receiveSnapshot(call: DuplexCall, opts: SnapshotReceiveOptions): void {
  // Headers at once for the same reason as Stream: a grpc-js sender then releases each chunk
  // once written, whatever the chunk size.
  call.sendHeaders();
  const ok = (): void => {
    call.write(ACK);
    call.end();
  };
  const sink = opts.snapshotDir !== undefined ? new FileSnapshotSink(opts.snapshotDir) : new MemorySnapshotSink();
  let header: WireMessage | undefined;
  let done = false;
  const started = performance.now();
  let bytes = 0;
  // Counted once per transfer, under the sender's id when its header arrived.
  let counted = false;
  const count = (ok: boolean): void => {
    const from = header ? num(header.from) : 0;
    if (counted || !(from > 0)) return;
    counted = true;
    countTransfer(opts.received, from, ok, bytes, started);
  };
  // The client half-closed: what follows runs to its end even if the client goes away meanwhile.
  let ended = false;
  call.on('data', (msg: Msg) => {
    const c = msg as WireChunk;
    if (c.header && !header) header = c.header;
    if (c.data && c.data.length > 0) {
      bytes += c.data.length;
      // Bounded memory: the stream pauses while the sink is behind (HTTP/2 flow control
      // then holds the sender back).
      if (!sink.write(c.data)) {
        call.pause();
        void sink.drained().then(() => call.resume());
      }
    }
    if (c.last) done = true;
  });
  call.on('end', () => {
    ended = true;
    void (async () => {
      if (!header || !done) {
        count(false);
        await sink.discard();
        call.fail({ code: grpc.status.INVALID_ARGUMENT, details: 'incomplete snapshot' });
        return;
      }
      let received: { data: Uint8Array; file?: string };
      try {
        received = await sink.finish();
      } catch (e) {
        count(false);
        await sink.discard();
        call.fail({ code: grpc.status.INTERNAL, details: `snapshot not stored: ${(e as Error).message}` });
        return;
      }
      count(true);
      const m = fromWire(header, received.data);
      if (m?.snapshot && received.file !== undefined) m.snapshot = { ...m.snapshot, file: received.file };
      if (!m || !opts.deliver(m)) dropSnapshotFile(m ?? { snapshot: received.file === undefined ? undefined : { file: received.file } });
      ok();
    })().catch((e: unknown) => call.fail({ code: grpc.status.INTERNAL, details: `snapshot not delivered: ${(e as Error).message}` }));
  });
  // The sender went away (or the stream broke) before it finished sending.
  call.on('cancelled', () => {
    if (ended) return;
    count(false);
    void sink.discard();
  });
}

/** What sendSnapshot needs of its peer sender. */
export interface SnapshotSendContext {
  readonly peer: NodeId;
  readonly chunkBytes: number;
  /** Transfer counts by receiving peer. */
  readonly sent: Map<NodeId, SnapshotTransferCounts>;
  /** Opens the Snapshot call. */
  open(cb: (err: grpc.ServiceError | null) => void): grpc.ClientWritableStream<WireChunk>;
  /** Told the outcome (RawNode.reportSnapshot). */
  onStatus?(failed: boolean): void;
}

/**
 * Chunked snapshot transfer on its own stream (etcd's rafthttp snapshot channel), read from
 * the snapshot's file piece by piece when it has one (the file is deleted afterwards, sent or
 * not: the next attempt exports anew; deleted before the status is reported, so whoever learns
 * the outcome finds the file gone).
 */
export async function sendSnapshot(m: Message, ctx: SnapshotSendContext): Promise<void> {
  const snap = m.snapshot!;
  const header = toWire(m);
  const started = performance.now();
  let bytes = 0;
  let failed = true;
  try {
    await new Promise<void>((resolve, reject) => {
      const call = ctx.open((err) => (err ? reject(err) : resolve()));
      call.on('error', reject);
      const pump = async (): Promise<void> => {
        let first = true;
        for await (const data of snapshotChunks(snap, ctx.chunkBytes)) {
          const ok = call.write({ header: first ? header : null, data, last: false });
          first = false;
          bytes += data.length;
          if (!ok) await once(call, 'drain');
        }
        call.write({ header: first ? header : null, data: EMPTY_DATA, last: true });
        call.end();
      };
      pump().catch((e: unknown) => {
        call.cancel();
        reject(e instanceof Error ? e : new Error(String(e)));
      });
    });
    countTransfer(ctx.sent, ctx.peer, true, bytes, started);
    failed = false;
  } catch {
    countTransfer(ctx.sent, ctx.peer, false, bytes, started);
  }
  const file = snap.file;
  if (file !== undefined) await unlink(file).catch(() => undefined);
  ctx.onStatus?.(failed);
}
