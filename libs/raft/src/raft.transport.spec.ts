import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import * as http2 from 'node:http2';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { encodeMessage, tlsChannelCredentials } from '@app/grpc';
import { createPki, loadPki } from '@app/pki';
import { GrpcTransport } from './raft.transport.js';
import { type PeerTls, TransportConfigError } from './raft.peer-tls.js';
import { findRaftProto, fromWire, raftService, toWire } from './raft.wire-codec.js';
import { type Message, msg } from './raft.types.js';

let pkiRoot: string;
/** Peer TLS material of two unrelated CAs (the cluster PKI, cluster/pki.ts). */
let tlsA: PeerTls;
let tlsB: PeerTls;
/** The admin client certificate of CA a: signed by the peers' CA, but not a peer certificate. */
let adminA: { cert: string; key: string };
beforeAll(async () => {
  pkiRoot = await mkdtemp(join(tmpdir(), 'transport-pki-'));
  const load = async (name: string): Promise<PeerTls> => {
    await createPki({ outDir: join(pkiRoot, name), hosts: ['127.0.0.1'] });
    const m = await loadPki(join(pkiRoot, name));
    return { ca: m.caPem, cert: m.peerCertPem, key: m.peerKeyPem };
  };
  [tlsA, tlsB] = [await load('a'), await load('b')];
  const a = await loadPki(join(pkiRoot, 'a'));
  adminA = { cert: a.adminCertPem, key: a.adminKeyPem };
});
afterAll(async () => {
  await rm(pkiRoot, { recursive: true, force: true });
});

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
  it('round-trips every field through the protobuf wire form, 64-bit values included', () => {
    const m = msg({
      type: 'app',
      from: 1,
      to: 2,
      term: 7,
      logTerm: 6,
      index: 2 ** 40 + 1,
      commit: 2 ** 40,
      entries: [
        { term: 7, index: 2 ** 40 + 2, type: 'conf', data: new Uint8Array([1, 2]) },
        { term: 7, index: 2 ** 40 + 3, type: 'normal', data: new Uint8Array(0) },
      ],
      reject: true,
      rejectHint: 3,
      context: 'ctx',
    });
    const stream = raftService(findRaftProto()).Stream!;
    const bytes = stream.requestSerialize([m, msg({ type: 'heartbeat', from: 1, to: 3, term: 7 })]);
    expect(Buffer.isBuffer(bytes)).toBe(true);
    const back = stream.requestDeserialize(bytes) as Message[];
    expect(back).toHaveLength(2);
    expect({ ...back[0], entries: back[0]!.entries.map((e) => ({ ...e, data: [...e.data] })) }).toEqual({
      ...m,
      snapshot: undefined,
      entries: [
        { term: 7, index: 2 ** 40 + 2, type: 'conf', data: [1, 2] },
        { term: 7, index: 2 ** 40 + 3, type: 'normal', data: [] },
      ],
    });
    expect(back[1]).toMatchObject({ type: 'heartbeat', from: 1, to: 3, term: 7, entries: [] });
    // Messages for another node are dropped while decoding; unknown types and senders too.
    expect(raftService(findRaftProto(), (x) => x.to === 2).Stream!.requestDeserialize(bytes)).toHaveLength(1);
    expect(fromWire({ ...toWire(m), type: 99 })).toBeUndefined();
    expect(fromWire({ ...toWire(m), from: 0 })).toBeUndefined();
  });

  it('delivers batched messages and a chunked snapshot, and reconnects to a late peer', async () => {
    const [p1, p2] = [await freePort(), await freePort()];
    const peers = new Map([
      [1, `127.0.0.1:${p1}`],
      [2, `127.0.0.1:${p2}`],
    ]);
    const got: Message[] = [];
    const snapStatus: boolean[] = [];
    const t1 = new GrpcTransport(
      { id: 1, listen: `127.0.0.1:${p1}`, peers, snapshotChunkBytes: 1000, minBackoffMs: 20, tls: tlsA },
      {
        onMessage: () => undefined,
        onSnapshotStatus: (_id, failed) => snapStatus.push(failed),
      },
    );
    await t1.start();
    // Peer 2 is not up yet: the first messages wait in the bounded queue / get retried.
    t1.send([msg({ type: 'heartbeat', from: 1, to: 2, term: 1 })]);
    await new Promise((r) => setTimeout(r, 100));
    const t2 = new GrpcTransport({ id: 2, listen: `127.0.0.1:${p2}`, peers, tls: tlsA }, { onMessage: (m) => got.push(m) });
    expect(t1.secure && t2.secure).toBe(true);
    await t2.start();
    const batch: Message[] = [];
    for (let i = 0; i < 100; i++)
      batch.push(
        msg({ type: 'app', from: 1, to: 2, term: 1, index: i, entries: [{ term: 1, index: i + 1, type: 'normal', data: new Uint8Array(10).fill(i) }] }),
      );
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

  it('streams a snapshot from its file into a file on the receiver, deletes the sent file, and leaves nothing of a cut-off transfer', async () => {
    const [p1, p2] = [await freePort(), await freePort()];
    const peers = new Map([
      [1, `127.0.0.1:${p1}`],
      [2, `127.0.0.1:${p2}`],
    ]);
    const [sendDir, recvDir] = [await mkdtemp(join(tmpdir(), 'snap-send-')), await mkdtemp(join(tmpdir(), 'snap-recv-'))];
    const got: Message[] = [];
    const snapStatus: boolean[] = [];
    const t1 = new GrpcTransport(
      { id: 1, listen: `127.0.0.1:${p1}`, peers, snapshotChunkBytes: 4096, tls: tlsA },
      { onMessage: () => undefined, onSnapshotStatus: (_id, failed) => snapStatus.push(failed) },
    );
    const t2 = new GrpcTransport({ id: 2, listen: `127.0.0.1:${p2}`, peers, tls: tlsA, snapshotDir: recvDir }, { onMessage: (m) => got.push(m) });
    try {
      await t1.start();
      await t2.start();
      const data = randomBytes(300_000);
      const sent = join(sendDir, 'export.snap');
      await writeFile(sent, data);
      const metadata = { index: 42, term: 3, confState: { voters: [1, 2], learners: [] } };
      t1.send([msg({ type: 'snap', from: 1, to: 2, term: 3, snapshot: { metadata, data: new Uint8Array(0), file: sent } })]);
      await waitFor(() => got.length === 1 && snapStatus.length === 1);
      expect(snapStatus).toEqual([false]);
      const snap = got[0]!.snapshot!;
      expect(snap.metadata).toEqual(metadata);
      expect(snap.data.length).toBe(0);
      expect(snap.file && dirname(snap.file)).toBe(recvDir);
      expect((await readFile(snap.file!)).equals(data)).toBe(true);
      expect((await stat(snap.file!)).mode & 0o777).toBe(0o600);
      // The sender's export is gone once sent.
      expect(await readdir(sendDir)).toEqual([]);

      // A transfer that stops before its last chunk is refused, and its partial file removed.
      const Client = grpc.makeGenericClientConstructor(raftService(findRaftProto()), 'RaftTransport');
      const client = new Client(`127.0.0.1:${p2}`, tlsChannelCredentials({ ca: tlsA.ca, key: tlsA.key, cert: tlsA.cert }), { 'grpc.enable_retries': 0 });
      const status = await new Promise<grpc.ServiceError | null>((resolve) => {
        const call = (client as unknown as { Snapshot(cb: (e: grpc.ServiceError | null) => void): grpc.ClientWritableStream<unknown> }).Snapshot(resolve);
        call.write({
          header: toWire(msg({ type: 'snap', from: 1, to: 2, term: 3, snapshot: { metadata, data: new Uint8Array(0) } })),
          data: new Uint8Array(5000),
          last: false,
        });
        call.end();
      });
      client.close();
      expect(status?.code).toBe(grpc.status.INVALID_ARGUMENT);
      await waitFor(() => got.length === 1);
      expect((await readdir(recvDir)).sort()).toEqual([basename(snap.file!)]);
      // A receiver that cannot store the snapshot refuses it; the sender learns it failed.
      await rm(recvDir, { recursive: true, force: true });
      const again = join(sendDir, 'again.snap');
      await writeFile(again, data);
      t1.send([msg({ type: 'snap', from: 1, to: 2, term: 3, snapshot: { metadata, data: new Uint8Array(0), file: again } })]);
      await waitFor(() => snapStatus.length === 2);
      expect(snapStatus).toEqual([false, true]);
      expect(got).toHaveLength(1);
      expect(await readdir(sendDir)).toEqual([]);
      // Counted per peer on both sides: one sent in full, one refused; one received, two not.
      expect(t1.snapshotTransfers.sent.get(2)).toMatchObject({ success: 1, failures: 1, bytes: data.length });
      expect(t2.snapshotTransfers.received.get(1)).toMatchObject({ success: 1, failures: 2, bytes: data.length });
      // A send to an unknown peer (or after stop) deletes the file it would have sent.
      const orphan = join(sendDir, 'orphan.snap');
      await writeFile(orphan, data.subarray(0, 10));
      t1.send([msg({ type: 'snap', from: 1, to: 9, term: 3, snapshot: { metadata, data: new Uint8Array(0), file: orphan } })]);
      await new Promise((r) => setTimeout(r, 100));
      expect(await readdir(sendDir)).toEqual([]);
    } finally {
      await t1.stop();
      await t2.stop();
      await rm(sendDir, { recursive: true, force: true });
      await rm(recvDir, { recursive: true, force: true });
    }
  }, 20000);

  it("refuses a removed member's messages and tells it so; a member's still arrive", async () => {
    const [p1, p2, p3] = [await freePort(), await freePort(), await freePort()];
    const peers = new Map([
      [1, `127.0.0.1:${p1}`],
      [2, `127.0.0.1:${p2}`],
      [3, `127.0.0.1:${p3}`],
    ]);
    const removedBy: number[] = [];
    const got: Message[] = [];
    const t1 = new GrpcTransport(
      { id: 1, listen: `127.0.0.1:${p1}`, peers, minBackoffMs: 20, tls: tlsA },
      { onMessage: () => undefined, onRemoved: (by) => removedBy.push(by) },
    );
    const t2 = new GrpcTransport({ id: 2, listen: `127.0.0.1:${p2}`, peers, tls: tlsA }, { onMessage: (m) => got.push(m) });
    const t3 = new GrpcTransport(
      { id: 3, listen: `127.0.0.1:${p3}`, peers, minBackoffMs: 20, tls: tlsA },
      { onMessage: () => undefined, onRemoved: (by) => removedBy.push(by) },
    );
    t2.setRemovedCheck((id) => id === 1);
    try {
      await Promise.all([t1.start(), t2.start(), t3.start()]);
      t1.send([msg({ type: 'preVote', from: 1, to: 2, term: 5 })]);
      t3.send([msg({ type: 'heartbeat', from: 3, to: 2, term: 5 })]);
      await waitFor(() => removedBy.length > 0 && got.length > 0);
      expect(removedBy[0]).toBe(2);
      expect(got.map((m) => m.from)).toEqual([3]);
    } finally {
      await Promise.all([t1.stop(), t2.stop(), t3.stop()]);
    }
  });

  it('reports a lost connection when a peer goes away, and none while it is up', async () => {
    const [p1, p2] = [await freePort(), await freePort()];
    const peers = new Map([
      [1, `127.0.0.1:${p1}`],
      [2, `127.0.0.1:${p2}`],
    ]);
    const lost: number[] = [];
    const got: Message[] = [];
    const t1 = new GrpcTransport({ id: 1, listen: `127.0.0.1:${p1}`, peers, minBackoffMs: 20, tls: tlsA }, { onMessage: () => undefined });
    const t2 = new GrpcTransport(
      { id: 2, listen: `127.0.0.1:${p2}`, peers, minBackoffMs: 20, tls: tlsA },
      { onMessage: (m) => got.push(m), onConnectionLost: (id) => lost.push(id) },
    );
    await t1.start();
    await t2.start();
    // Traffic both ways, as between a leader (1) and its follower (2).
    t1.send([msg({ type: 'heartbeat', from: 1, to: 2, term: 1 })]);
    await waitFor(() => got.length === 1);
    t2.send([msg({ type: 'heartbeatResp', from: 2, to: 1, term: 1 })]);
    await new Promise((r) => setTimeout(r, 200));
    expect(lost).toEqual([]);
    await t1.stop();
    // The follower's stream to 1 breaks, and reconnecting is refused.
    t2.send([msg({ type: 'heartbeatResp', from: 2, to: 1, term: 1 })]);
    await waitFor(() => lost.includes(1));
    expect(new Set(lost)).toEqual(new Set([1]));
    await t2.stop();
  }, 20000);

  it('hands back forwarded proposals and reads it cannot send, and sends them once the peer is connected', async () => {
    const [p1, p2] = [await freePort(), await freePort()];
    const peers = new Map([
      [1, `127.0.0.1:${p1}`],
      [2, `127.0.0.1:${p2}`],
    ]);
    const undelivered: Message[] = [];
    const got: Message[] = [];
    const t1 = new GrpcTransport(
      { id: 1, listen: `127.0.0.1:${p1}`, peers, minBackoffMs: 20, insecure: true },
      { onMessage: () => undefined, onUndelivered: (id, msgs) => undelivered.push(...msgs.map((m) => ({ ...m, to: id }))) },
    );
    await t1.start();
    const prop = msg({ type: 'prop', from: 1, to: 2, entries: [{ term: 0, index: 0, type: 'normal', data: new Uint8Array([1, 2, 3]) }] });
    const read = msg({ type: 'readIndex', from: 1, to: 2, context: 'r1' });
    // Nobody listens on 2: a heartbeat waits in the queue, the requests come back at once.
    t1.send([msg({ type: 'heartbeat', from: 1, to: 2, term: 1 }), prop, read]);
    expect(undelivered.map((m) => m.type)).toEqual(['prop', 'readIndex']);
    const t2 = new GrpcTransport({ id: 2, listen: `127.0.0.1:${p2}`, peers, insecure: true }, { onMessage: (m) => got.push(m) });
    await t2.start();
    try {
      // Once connected (the queued heartbeat arrives), requests are sent, not handed back.
      await waitFor(() => got.length === 1, 10_000);
      undelivered.length = 0;
      t1.send([prop, read]);
      await waitFor(() => got.length === 3);
      expect(got.map((m) => m.type)).toEqual(['heartbeat', 'prop', 'readIndex']);
      expect(undelivered).toEqual([]);
    } finally {
      await t1.stop();
      await t2.stop();
    }
  }, 20000);

  it('ends a connection whose peer stops answering PINGs, and reconnects', async () => {
    const [p1, p2] = [await freePort(), await freePort()];
    // A TCP relay in front of peer 2 whose current connections can be frozen: open, but silent.
    const frozen = new Set<Socket>();
    const live = new Set<Socket>();
    const relay: Server = createServer((c) => {
      const u = connect(p2, '127.0.0.1');
      live.add(c);
      c.on('data', (d) => void (frozen.has(c) || u.write(d)));
      u.on('data', (d) => void (frozen.has(c) || c.write(d)));
      const end = (): void => {
        live.delete(c);
        c.destroy();
        u.destroy();
      };
      c.on('close', end).on('error', end);
      u.on('close', end).on('error', end);
    });
    await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
    const relayPort = (relay.address() as { port: number }).port;
    const lost: number[] = [];
    const got: Message[] = [];
    const t1 = new GrpcTransport(
      { id: 1, listen: `127.0.0.1:${p1}`, peers: new Map([[2, `127.0.0.1:${relayPort}`]]), minBackoffMs: 20, keepaliveMs: 200, insecure: true },
      { onMessage: () => undefined, onConnectionLost: (id) => lost.push(id) },
    );
    const t2 = new GrpcTransport({ id: 2, listen: `127.0.0.1:${p2}`, peers: new Map(), insecure: true }, { onMessage: (m) => got.push(m) });
    await t1.start();
    await t2.start();
    try {
      t1.send([msg({ type: 'heartbeat', from: 1, to: 2, term: 1 })]);
      await waitFor(() => got.length === 1);
      // Several PING rounds pass while the peer answers: the connection stays.
      await new Promise((r) => setTimeout(r, 700));
      expect(lost).toEqual([]);
      for (const c of live) frozen.add(c);
      await waitFor(() => lost.includes(2));
      // New connections go through: the next message arrives on one.
      t1.send([msg({ type: 'heartbeat', from: 1, to: 2, term: 2 })]);
      await waitFor(() => got.length === 2);
      expect(got[1]!.term).toBe(2);
    } finally {
      await t1.stop();
      await t2.stop();
      for (const c of live) c.destroy();
      await new Promise<void>((r) => relay.close(() => r()));
    }
  }, 20000);

  it('reports a peer that does not finish connecting as unreachable, then gives the attempt up and tries again', async () => {
    const p1 = await freePort();
    // Takes TCP connections and never answers the TLS handshake.
    const accepted: Socket[] = [];
    let closed = 0;
    const silent = createServer((c) => {
      accepted.push(c);
      c.on('error', () => undefined).on('close', () => closed++);
      c.resume();
    });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as { port: number }).port;
    const unreachable: number[] = [];
    const t1 = new GrpcTransport(
      { id: 1, listen: `127.0.0.1:${p1}`, peers: new Map([[2, `127.0.0.1:${port}`]]), minBackoffMs: 100, connectTimeoutMs: 300, tls: tlsA },
      { onMessage: () => undefined, onUnreachable: (id) => unreachable.push(id) },
    );
    await t1.start();
    try {
      t1.send([msg({ type: 'heartbeat', from: 1, to: 2, term: 1 })]);
      await waitFor(() => accepted.length === 1);
      await waitFor(() => unreachable.includes(2));
      // The first attempt is given up and a second connection made.
      await waitFor(() => accepted.length >= 2 && closed >= 1);
      expect(unreachable.every((id) => id === 2)).toBe(true);
    } finally {
      await t1.stop();
      for (const c of accepted) c.destroy();
      await new Promise<void>((r) => silent.close(() => r()));
    }
  }, 20000);

  it('drops and reports unreachable when a peer queue is full (bounded memory)', async () => {
    const [p1, dead] = [await freePort(), await freePort()];
    const unreachable: number[] = [];
    const t1 = new GrpcTransport(
      { id: 1, listen: `127.0.0.1:${p1}`, peers: new Map([[2, `127.0.0.1:${dead}`]]), maxQueue: 10, minBackoffMs: 1000, insecure: true },
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

  it('answers peer and snapshot streams with response headers at once, so the sender does not keep what it wrote', async () => {
    // grpc-js holds every message written to a client stream until the server's first response
    // (headers or a message) commits the call; a peer stream's only message is the final Ack.
    const port = await freePort();
    const t = new GrpcTransport({ id: 2, listen: `127.0.0.1:${port}`, peers: new Map(), insecure: true }, { onMessage: () => undefined });
    await t.start();
    const Client = grpc.makeGenericClientConstructor(raftService(findRaftProto()), 'RaftTransport');
    const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), { 'grpc.enable_retries': 0 });
    const stream = (client as unknown as { Stream(cb: (e: Error | null) => void): grpc.ClientWritableStream<Message[]> }).Stream(() => undefined);
    stream.on('error', () => undefined);
    // Nothing written, stream still open: the headers must arrive anyway.
    const headers = await new Promise<grpc.Metadata>((resolve) => stream.once('metadata', resolve));
    expect(headers).toBeInstanceOf(grpc.Metadata);
    stream.write([msg({ type: 'heartbeat', from: 1, to: 2, term: 1 })]);
    stream.end();
    // The same for a snapshot stream: with chunks under 1 MiB, every chunk of a snapshot of
    // hundreds of MiB would otherwise stay in the sender's memory until the transfer ends.
    const snap = (client as unknown as { Snapshot(cb: (e: Error | null) => void): grpc.ClientWritableStream<unknown> }).Snapshot(() => undefined);
    snap.on('error', () => undefined);
    expect(await new Promise<grpc.Metadata>((resolve) => snap.once('metadata', resolve))).toBeInstanceOf(grpc.Metadata);
    snap.end();
    client.close();
    await t.stop();
  }, 20000);

  it('refuses to pick plaintext silently and rejects unusable TLS material', () => {
    const base = { id: 1, listen: '127.0.0.1:0', peers: new Map<number, string>() };
    expect(() => new GrpcTransport(base, { onMessage: () => undefined })).toThrow(TransportConfigError);
    expect(() => new GrpcTransport({ ...base, tls: { ...tlsA, key: 'not a key' } }, { onMessage: () => undefined })).toThrow(TransportConfigError);
  });

  /** Two transports on fresh ports; `got[i]` collects what transport i received. */
  async function pair(tls1: PeerTls | undefined, tls2: PeerTls | undefined, host2 = '127.0.0.1') {
    const [p1, p2] = [await freePort(), await freePort()];
    const peers = new Map([
      [1, `127.0.0.1:${p1}`],
      [2, `${host2}:${p2}`],
    ]);
    const got: Message[][] = [[], []];
    const unreachable: number[][] = [[], []];
    const mk = (id: number, port: number, host: string, tls: PeerTls | undefined) =>
      new GrpcTransport(
        { id, listen: `${host}:${port}`, peers, minBackoffMs: 20, maxBackoffMs: 100, ...(tls ? { tls } : { insecure: true }) },
        {
          onMessage: (m) => got[id - 1]!.push(m),
          onUnreachable: (p) => unreachable[id - 1]!.push(p),
        },
      );
    const t1 = mk(1, p1, '127.0.0.1', tls1);
    const t2 = mk(2, p2, host2, tls2);
    await t1.start();
    await t2.start();
    return { t1, t2, got, unreachable };
  }

  it('refuses a peer whose certificate comes from another CA, in both directions', async () => {
    const { t1, t2, got, unreachable } = await pair(tlsA, tlsB);
    for (let i = 0; i < 5; i++) {
      t1.send([msg({ type: 'heartbeat', from: 1, to: 2, term: 1 })]);
      t2.send([msg({ type: 'heartbeat', from: 2, to: 1, term: 1 })]);
      await new Promise((r) => setTimeout(r, 150));
    }
    // Each side rejects the other's certificate: nothing is delivered, both report the peer.
    expect(got).toEqual([[], []]);
    expect(unreachable[0]).toContain(2);
    expect(unreachable[1]).toContain(1);
    await t1.stop();
    await t2.stop();
  }, 20000);

  it('refuses a plaintext client, and a server whose certificate does not name the dialled host', async () => {
    // Plaintext sender -> TLS receiver.
    const a = await pair(undefined, tlsA);
    // TLS both sides, same CA, but node 2 is dialled as 127.0.0.2: not a SAN of the certificate.
    const b = await pair(tlsA, tlsA, '127.0.0.2');
    for (let i = 0; i < 5; i++) {
      a.t1.send([msg({ type: 'heartbeat', from: 1, to: 2, term: 1 })]);
      b.t1.send([msg({ type: 'heartbeat', from: 1, to: 2, term: 1 })]);
      b.t2.send([msg({ type: 'heartbeat', from: 2, to: 1, term: 1 })]);
      await new Promise((r) => setTimeout(r, 150));
    }
    expect(a.got[1]).toEqual([]);
    expect(b.got[1]).toEqual([]);
    // The other direction of b dials 127.0.0.1, which the certificate names: delivered.
    await waitFor(() => b.got[0]!.length > 0);
    expect(b.got[0]![0]!.type).toBe('heartbeat');
    for (const t of [a.t1, a.t2, b.t1, b.t2]) await t.stop();
  }, 20000);

  it('refuses a client certificate of the same CA on every call of the peer port', async () => {
    const { t1, t2, got } = await pair(tlsA, tlsA);
    const Client = grpc.makeGenericClientConstructor(raftService(findRaftProto()), 'RaftTransport');
    const addr = (t2 as unknown as { opts: { listen: string } }).opts.listen;
    const client = new Client(addr, tlsChannelCredentials({ ca: tlsA.ca, key: adminA.key, cert: adminA.cert }), {
      'grpc.enable_retries': 0,
    });
    try {
      type Writable = grpc.ClientWritableStream<unknown>;
      const calls = client as unknown as {
        Stream(cb: (e: grpc.ServiceError | null) => void): Writable;
        Snapshot(cb: (e: grpc.ServiceError | null) => void): Writable;
      };
      const outcome = (open: (cb: (e: grpc.ServiceError | null) => void) => Writable, write: unknown) =>
        new Promise<grpc.ServiceError | null>((resolve) => {
          const s = open(resolve);
          s.on('error', () => undefined);
          s.write(write);
          s.end();
        });
      // An append from a forged leader, and a snapshot that would replace the state.
      const forged = msg({ type: 'app', from: 1, to: 2, term: 99, index: 0, logTerm: 0, commit: 0 });
      const streamErr = await outcome((cb) => calls.Stream(cb), [forged]);
      expect(streamErr?.code).toBe(grpc.status.PERMISSION_DENIED);
      const snapErr = await outcome((cb) => calls.Snapshot(cb), { header: toWire(msg({ type: 'snap', from: 1, to: 2, term: 99 })), last: true });
      expect(snapErr?.code).toBe(grpc.status.PERMISSION_DENIED);
      expect(got[1]).toEqual([]);
      // The real peer still gets through.
      t1.send([msg({ type: 'heartbeat', from: 1, to: 2, term: 1 })]);
      await waitFor(() => got[1]!.length > 0);
    } finally {
      client.close();
      await t1.stop();
      await t2.stop();
    }
  }, 20000);

  it('takes only the allowed common names, as client and as server', async () => {
    // Same CA, but node 2 accepts only peers named "other-peer": 1 -> 2 is refused by 2's
    // server, 2 -> 1 by 2's check of 1's server certificate.
    const { t1, t2, got, unreachable } = await pair(tlsA, { ...tlsA, allowedCN: ['other-peer'] });
    for (let i = 0; i < 5; i++) {
      t1.send([msg({ type: 'heartbeat', from: 1, to: 2, term: 1 })]);
      t2.send([msg({ type: 'heartbeat', from: 2, to: 1, term: 1 })]);
      await new Promise((r) => setTimeout(r, 150));
    }
    expect(got).toEqual([[], []]);
    expect(unreachable[1]).toContain(1);
    await t1.stop();
    await t2.stop();
    expect(
      () => new GrpcTransport({ id: 1, listen: '127.0.0.1:0', peers: new Map(), tls: { ...tlsA, allowedCN: [] } }, { onMessage: () => undefined }),
    ).toThrow(TransportConfigError);
  }, 20000);
  /** A grpc-js client of RaftTransport with the peer pair of `tls` (the sender of a grpc-js build). */
  function grpcJsClient(addr: string, tls: PeerTls) {
    const Client = grpc.makeGenericClientConstructor(raftService(findRaftProto()), 'RaftTransport');
    const creds = tlsChannelCredentials({ ca: tls.ca, key: tls.key, cert: tls.cert });
    return new Client(addr, creds, { 'grpc.enable_retries': 0 }) as unknown as grpc.Client & {
      Stream(cb: (e: grpc.ServiceError | null) => void): grpc.ClientWritableStream<Message[]>;
    };
  }

  it('takes the peer stream of a grpc-js sender (a node of the previous build)', async () => {
    const port = await freePort();
    const got: Message[] = [];
    const lost: number[] = [];
    const t = new GrpcTransport(
      { id: 2, listen: `127.0.0.1:${port}`, peers: new Map(), tls: tlsA },
      { onMessage: (m) => got.push(m), onConnectionLost: (id) => lost.push(id) },
    );
    await t.start();
    const client = grpcJsClient(`127.0.0.1:${port}`, tlsA);
    try {
      const done = new Promise<grpc.ServiceError | null>((resolve) => {
        const s = client.Stream(resolve);
        for (let i = 0; i < 50; i++) {
          const entries = [{ term: 1, index: i + 1, type: 'normal' as const, data: new Uint8Array(100).fill(i) }];
          s.write([msg({ type: 'app', from: 1, to: 2, term: 1, index: i, entries }), msg({ type: 'heartbeat', from: 1, to: 2, term: 1 })]);
        }
        s.end();
      });
      // The stream ends with the server's Ack (status OK), every message delivered in order.
      expect(await done).toBeNull();
      const apps = got.filter((m) => m.type === 'app');
      expect(apps.map((m) => m.index)).toEqual([...Array(50).keys()]);
      expect([...apps[7]!.entries[0]!.data]).toEqual(new Array(100).fill(7));
      expect(got).toHaveLength(100);
      // A stream that ends normally is no lost connection.
      expect(lost).toEqual([]);
      // One whose connection is lost (the sending node died) is.
      const session = http2.connect(`https://127.0.0.1:${port}`, { ca: tlsA.ca, cert: tlsA.cert, key: tlsA.key });
      session.on('error', () => undefined);
      const cut = session.request({ ':method': 'POST', ':path': '/kapi.raft.v1.RaftTransport/Stream', 'content-type': 'application/grpc', te: 'trailers' });
      cut.on('error', () => undefined);
      const batch = raftService(findRaftProto()).Stream!.requestSerialize([msg({ type: 'heartbeat', from: 1, to: 2, term: 2 })]);
      cut.write(encodeMessage(batch));
      await waitFor(() => got.length === 101);
      session.destroy();
      await waitFor(() => lost.length === 1);
      expect(lost).toEqual([1]);
    } finally {
      client.close();
      await t.stop();
    }
  }, 20000);

  it('delivers to the grpc-js server of a node of the previous build, large batches and backpressure included', async () => {
    const [p1, p2] = [await freePort(), await freePort()];
    const server = new grpc.Server({ 'grpc.max_receive_message_length': 64 << 20 });
    const got: Message[] = [];
    let streams = 0;
    server.addService(raftService(findRaftProto()), {
      Stream: (call: grpc.ServerReadableStream<Message[], object>, cb: grpc.sendUnaryData<object>) => {
        streams++;
        call.sendMetadata(new grpc.Metadata());
        call.on('data', (batch: Message[]) => got.push(...batch));
        call.on('end', () => cb(null, {}));
        call.on('error', () => undefined);
      },
    });
    const serverCreds = grpc.ServerCredentials.createSsl(
      Buffer.from(tlsA.ca),
      [{ private_key: Buffer.from(tlsA.key), cert_chain: Buffer.from(tlsA.cert) }],
      true,
    );
    await new Promise<number>((resolve, reject) => server.bindAsync(`127.0.0.1:${p2}`, serverCreds, (e, port) => (e ? reject(e) : resolve(port))));
    const unreachable: number[] = [];
    const t1 = new GrpcTransport(
      {
        id: 1,
        listen: `127.0.0.1:${p1}`,
        peers: new Map([
          [1, `127.0.0.1:${p1}`],
          [2, `127.0.0.1:${p2}`],
        ]),
        tls: tlsA,
      },
      { onMessage: () => undefined, onUnreachable: (id) => unreachable.push(id) },
    );
    await t1.start();
    try {
      t1.send([msg({ type: 'heartbeat', from: 1, to: 2, term: 1 })]);
      await waitFor(() => got.length === 1);
      // 3000 appends of 1 KiB in one call: batches of maxBatch (512), each over the stream's
      // buffer, so the sender waits for 'drain' between them.
      const many: Message[] = [];
      for (let i = 0; i < 3000; i++)
        many.push(msg({ type: 'app', from: 1, to: 2, term: 1, index: i, entries: [{ term: 1, index: i + 1, type: 'normal', data: randomBytes(1024) }] }));
      t1.send(many);
      await waitFor(() => got.length === 3001, 10_000);
      expect(got.slice(1).map((m) => m.index)).toEqual(many.map((m) => m.index));
      expect(Buffer.from(got[2999]!.entries[0]!.data).equals(Buffer.from(many[2998]!.entries[0]!.data))).toBe(true);
      expect(streams).toBe(1);
      expect(unreachable).toEqual([]);
    } finally {
      await t1.stop();
      server.forceShutdown();
    }
  }, 20000);
});
