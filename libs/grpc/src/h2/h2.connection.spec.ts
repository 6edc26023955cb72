/**
 * H2ServerConnection against real clients over real sockets: node:http2's client for what it
 * sends well-formed, raw frames for what it would not send (a URL as :authority, floods,
 * protocol errors).
 */
import * as http2 from 'node:http2';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import { CLIENT_PREFACE, H2_ERROR, H2ClientConnection, type H2Stream } from './h2.connection.js';
import { encodeHeaders } from './hpack.js';
import {
  CONTINUATION,
  DATA,
  EchoServer,
  GOAWAY,
  HEADERS,
  PING,
  RST_STREAM,
  RawClient,
  REQUEST,
  SETTINGS,
  WINDOW_UPDATE,
  frame,
  h2request,
} from './h2.connection.fixture.js';

describe('H2ServerConnection', () => {
  let echo: EchoServer;

  beforeEach(async () => {
    echo = new EchoServer();
    await echo.start();
  });

  afterEach(async () => {
    await echo.stop();
  });

  it('serves node:http2 requests, concurrent ones on one connection, with headers, DATA and trailers', async () => {
    const session = http2.connect(`http://127.0.0.1:${echo.port}`);
    try {
      const bodies = Array.from({ length: 50 }, (_, i) => Buffer.alloc(i * 37, i));
      const answers = await Promise.all(bodies.map((b) => h2request(session, b)));
      answers.forEach((a, i) => {
        expect(a.status).toBe(200);
        expect(a.body.equals(bodies[i]!)).toBe(true);
        expect(a.trailers['grpc-status']).toBe('0');
      });
      expect(session.remoteSettings.maxConcurrentStreams).toBe(100);
      expect(session.remoteSettings.initialWindowSize).toBe(1 << 20);
      expect(echo.requests[0]).toMatchObject({ ':method': 'POST', ':path': '/svc/Echo', ':scheme': 'http', 'content-type': 'application/grpc' });
    } finally {
      session.close();
    }
  });

  it('serves a request whose :authority is a whole URL, as etcdctl sends on cleartext connections, and keeps every header name', async () => {
    const c = new RawClient(echo.port);
    try {
      const block = Buffer.concat([
        REQUEST('http://127.0.0.1:2379'),
        encodeHeaders([
          ['constructor', 'c'],
          ['__proto__', 'p'],
        ]),
      ]);
      c.write(frame(HEADERS, 0x4, 1, block), frame(DATA, 0x1, 1, Buffer.from('hi')));
      const h = await c.next((f) => f.type === HEADERS && f.stream === 1);
      expect(c.headersOf(h)[':status']).toBe('200');
      expect((await c.next((f) => f.type === DATA && f.stream === 1)).payload.toString()).toBe('hi');
      expect(echo.requests[0]![':authority']).toBe('http://127.0.0.1:2379');
      // Any header name is a plain key of the headers, also those an object's prototype has.
      expect(echo.requests[0]!['constructor']).toBe('c');
      expect(Object.getOwnPropertyDescriptor(echo.requests[0], '__proto__')?.value).toBe('p');
    } finally {
      c.close();
    }
  });

  it('moves large bodies both ways within the flow-control windows of a client that grants little', async () => {
    // The client's stream window is 1,000 bytes and its connection window HTTP/2's 65,535:
    // a 300 KiB answer needs hundreds of WINDOW_UPDATEs.
    const session = http2.connect(`http://127.0.0.1:${echo.port}`, { settings: { initialWindowSize: 1000 } });
    try {
      const body = Buffer.alloc(300 * 1024);
      for (let i = 0; i < body.length; i++) body[i] = (i * 7) & 0xff;
      const a = await h2request(session, body);
      expect(a.body.equals(body)).toBe(true);
      expect(a.trailers['grpc-status']).toBe('0');
    } finally {
      session.close();
    }
  });

  it('holds back a streaming answer the client does not read, reports the full buffer, and drains when it reads', async () => {
    let stream!: H2Stream;
    const drained: number[] = [];
    const written: boolean[] = [];
    echo.serve = (s) => {
      stream = s;
      s.listener = { onData: () => undefined, onEnd: () => undefined, onClose: () => undefined, onDrain: () => drained.push(s.writableLength) };
      s.respond(encodeHeaders([[':status', '200']]), false);
      for (let i = 0; i < 10; i++) written.push(s.write(Buffer.alloc(10_000, i)));
    };
    // Stream window 30,000: three writes leave, the rest waits for the client's WINDOW_UPDATEs.
    const c = new RawClient(echo.port, Buffer.from([0, 4, 0, 0, 0x75, 0x30]));
    try {
      c.write(frame(HEADERS, 0x4, 1, REQUEST()));
      await c.next((f) => f.type === HEADERS && f.stream === 1);
      await new Promise((r) => setTimeout(r, 100));
      const received = (): number => c.frames.filter((f) => f.type === DATA && f.stream === 1).reduce((n, f) => n + f.payload.length, 0);
      expect(received()).toBe(30_000);
      expect(stream.writableLength).toBe(70_000);
      expect(written).toEqual([true, true, true, true, false, false, false, false, false, false]);
      expect(drained).toEqual([]);
      const inc = Buffer.alloc(4);
      inc.writeUInt32BE(70_000);
      // The connection's window (65,535 by default) must open too.
      c.write(frame(WINDOW_UPDATE, 0, 1, inc), frame(WINDOW_UPDATE, 0, 0, inc));
      await c.next(() => received() >= 100_000);
      expect(drained).toEqual([0]);
      stream.end(undefined, encodeHeaders([['grpc-status', '0']]));
      const t = await c.next((f) => f.type === HEADERS && f.stream === 1 && (f.flags & 1) === 1);
      expect(c.headersOf(t)['grpc-status']).toBe('0');
    } finally {
      c.close();
    }
  });

  it('answers PING, reads a header block split over CONTINUATION frames, and refuses streams over its limit', async () => {
    await echo.stop();
    echo = new EchoServer();
    const held: H2Stream[] = [];
    echo.serve = (s) => {
      held.push(s);
      s.listener = { onData: () => undefined, onEnd: () => undefined, onClose: () => undefined, onDrain: () => undefined };
    };
    await echo.start(2);
    const c = new RawClient(echo.port);
    try {
      c.write(frame(PING, 0, 0, Buffer.from('12345678')));
      const pong = await c.next((f) => f.type === PING);
      expect(pong.flags & 1).toBe(1);
      expect(pong.payload.toString()).toBe('12345678');
      const block = REQUEST();
      c.write(frame(HEADERS, 0, 1, block.subarray(0, 5)), frame(CONTINUATION, 0, 1, block.subarray(5, 9)), frame(CONTINUATION, 0x4, 1, block.subarray(9)));
      c.write(frame(HEADERS, 0x4, 3, REQUEST()), frame(HEADERS, 0x4, 5, REQUEST()));
      const refused = await c.next((f) => f.type === RST_STREAM);
      expect(refused.stream).toBe(5);
      expect(refused.payload.readUInt32BE(0)).toBe(H2_ERROR.REFUSED_STREAM);
      expect(held.map((s) => s.id)).toEqual([1, 3]);
      expect(echo.requests[0]![':path']).toBe('/svc/Echo');
      // A stream that ends frees its place.
      held[0]!.respond(encodeHeaders([[':status', '200']]), true);
      c.write(frame(HEADERS, 0x4, 7, REQUEST()));
      await new Promise((r) => setTimeout(r, 50));
      expect(held.map((s) => s.id)).toEqual([1, 3, 7]);
    } finally {
      c.close();
    }
  });

  it('tells the stream it is closed when the client resets it, and drops DATA that arrives after', async () => {
    echo.serve = (s) => {
      s.listener = { onData: () => undefined, onEnd: () => undefined, onClose: () => echo.closedStreams.push(s.id), onDrain: () => undefined };
    };
    const c = new RawClient(echo.port);
    try {
      c.write(frame(HEADERS, 0x4, 1, REQUEST()), frame(RST_STREAM, 0, 1, Buffer.from([0, 0, 0, 8])), frame(DATA, 0, 1, Buffer.from('late')));
      c.write(frame(PING, 0, 0, Buffer.alloc(8)));
      await c.next((f) => f.type === PING);
      expect(echo.closedStreams).toEqual([1]);
      expect(c.frames.some((f) => f.type === GOAWAY)).toBe(false);
    } finally {
      c.close();
    }
  });

  it('answers a header list over 64 KiB with 431, and goes on serving the connection', async () => {
    const c = new RawClient(echo.port);
    try {
      const big = encodeHeaders([
        [':method', 'POST'],
        [':scheme', 'http'],
        [':path', '/svc/Echo'],
        ['x-big', 'a'.repeat(70_000)],
      ]);
      const parts = [frame(HEADERS, 0, 1, big.subarray(0, 16_000))];
      for (let off = 16_000; off < big.length; off += 16_000) {
        parts.push(frame(CONTINUATION, off + 16_000 >= big.length ? 0x4 : 0, 1, big.subarray(off, off + 16_000)));
      }
      c.write(...parts);
      const goaway = await c.next((f) => f.type === GOAWAY || f.type === HEADERS);
      // A block over 64 KiB ends the connection (a CONTINUATION flood); one under it but whose
      // list is over (counted with 32 bytes per field) is answered 431.
      expect(goaway.type).toBe(GOAWAY);
      expect(goaway.payload.readUInt32BE(4)).toBe(H2_ERROR.ENHANCE_YOUR_CALM);
    } finally {
      c.close();
    }
    const d = new RawClient(echo.port);
    try {
      const fields: [string, string][] = [
        [':method', 'POST'],
        [':scheme', 'http'],
        [':path', '/svc/Echo'],
      ];
      for (let i = 0; i < 2100; i++) fields.push(['x', '']);
      const block = encodeHeaders(fields); // about 2 KiB on the wire, 2100 * 33 bytes as a list
      d.write(frame(HEADERS, 0x5, 1, block));
      const h = await d.next((f) => f.type === HEADERS && f.stream === 1);
      expect(d.headersOf(h)[':status']).toBe('431');
      d.write(frame(HEADERS, 0x4, 3, REQUEST()), frame(DATA, 0x1, 3, Buffer.from('ok')));
      expect((await d.next((f) => f.type === DATA && f.stream === 3)).payload.toString()).toBe('ok');
    } finally {
      d.close();
    }
  });

  it('ends the connection with GOAWAY on protocol errors: a bad preface, DATA on an idle stream, an oversize frame, a broken header block', async () => {
    const cases: [string, (c: net.Socket) => void, number][] = [
      ['bad preface', (s) => s.write('GET / HTTP/1.1\r\n\r\n'), H2_ERROR.PROTOCOL_ERROR],
      [
        'DATA on an idle stream',
        (s) => s.write(Buffer.concat([CLIENT_PREFACE, frame(SETTINGS, 0, 0), frame(DATA, 0, 9, Buffer.from('x'))])),
        H2_ERROR.PROTOCOL_ERROR,
      ],
      [
        'a 20 KB frame',
        (s) => s.write(Buffer.concat([CLIENT_PREFACE, frame(SETTINGS, 0, 0), frame(DATA, 0, 1, Buffer.alloc(20_000))])),
        H2_ERROR.FRAME_SIZE_ERROR,
      ],
      [
        'index 0 in HPACK',
        (s) => s.write(Buffer.concat([CLIENT_PREFACE, frame(SETTINGS, 0, 0), frame(HEADERS, 0x4, 1, Buffer.from([0x80]))])),
        H2_ERROR.COMPRESSION_ERROR,
      ],
      ['a first frame other than SETTINGS', (s) => s.write(Buffer.concat([CLIENT_PREFACE, frame(PING, 0, 0, Buffer.alloc(8))])), H2_ERROR.PROTOCOL_ERROR],
      ['an even stream id', (s) => s.write(Buffer.concat([CLIENT_PREFACE, frame(SETTINGS, 0, 0), frame(HEADERS, 0x4, 2, REQUEST())])), H2_ERROR.PROTOCOL_ERROR],
      [
        'a header block interrupted',
        (s) =>
          s.write(Buffer.concat([CLIENT_PREFACE, frame(SETTINGS, 0, 0), frame(HEADERS, 0, 1, REQUEST().subarray(0, 4)), frame(PING, 0, 0, Buffer.alloc(8))])),
        H2_ERROR.PROTOCOL_ERROR,
      ],
    ];
    for (const [name, send, code] of cases) {
      const socket = net.connect(echo.port, '127.0.0.1');
      const got: Buffer[] = [];
      socket.on('data', (d: Buffer) => got.push(d));
      await new Promise<void>((resolve) => socket.once('connect', resolve));
      send(socket);
      await new Promise<void>((resolve) => socket.once('close', resolve));
      const all = Buffer.concat(got);
      let off = 0;
      let goaway: number | undefined;
      while (off + 9 <= all.length) {
        const len = all.readUIntBE(off, 3);
        if (all[off + 3] === GOAWAY) goaway = all.readUInt32BE(off + 13);
        off += 9 + len;
      }
      expect({ name, goaway }).toEqual({ name, goaway: code });
    }
  });

  it('ends a connection whose client resets or overruns streams faster than it may ("rapid reset"), and keeps one that stays under', async () => {
    echo.serve = (s) => {
      s.listener = { onData: () => undefined, onEnd: () => undefined, onClose: () => undefined, onDrain: () => undefined };
    };
    const pairs = (first: number, n: number): Buffer[] => {
      const out: Buffer[] = [];
      for (let i = 0; i < n; i++) out.push(frame(HEADERS, 0x4, first + 2 * i, REQUEST()), frame(RST_STREAM, 0, first + 2 * i, Buffer.from([0, 0, 0, 8])));
      return out;
    };
    const calm = new RawClient(echo.port);
    try {
      calm.write(...pairs(1, 900), frame(PING, 0, 0, Buffer.alloc(8)));
      await calm.next((f) => f.type === PING);
      expect(calm.frames.some((f) => f.type === GOAWAY)).toBe(false);
      expect(echo.requests).toHaveLength(900);
    } finally {
      calm.close();
    }
    const rapid = new RawClient(echo.port);
    try {
      rapid.write(...pairs(1, 1200));
      const goaway = await rapid.next((f) => f.type === GOAWAY);
      expect(goaway.payload.readUInt32BE(4)).toBe(H2_ERROR.ENHANCE_YOUR_CALM);
      await rapid.untilClosed();
      // Served up to the bucket's burst (and what it refilled meanwhile), not all 1,200.
      expect(echo.requests.length - 900).toBeGreaterThanOrEqual(1000);
      expect(echo.requests.length - 900).toBeLessThan(1200);
    } finally {
      rapid.close();
    }
  });

  it('counts streams refused over the concurrency limit, malformed requests, and streams reset for errors of the client against the same allowance', async () => {
    const flood = async (port: number, perStream: (id: number) => Buffer[], code: number): Promise<void> => {
      const c = new RawClient(port);
      try {
        const frames = [frame(HEADERS, 0x4, 1, REQUEST())];
        for (let i = 1; i <= 1200; i++) frames.push(...perStream(1 + 2 * i));
        c.write(...frames);
        const goaway = await c.next((f) => f.type === GOAWAY);
        expect(goaway.payload.readUInt32BE(4)).toBe(H2_ERROR.ENHANCE_YOUR_CALM);
        const resets = c.frames.filter((f) => f.type === RST_STREAM).map((f) => f.payload.readUInt32BE(0));
        expect(resets.length).toBeGreaterThanOrEqual(1000);
        expect(resets.length).toBeLessThan(1200);
        expect(new Set(resets)).toEqual(new Set([code]));
      } finally {
        c.close();
      }
    };
    echo.serve = (s) => {
      s.listener = { onData: () => undefined, onEnd: () => undefined, onClose: () => undefined, onDrain: () => undefined };
    };
    // Requests without :path, beside one open stream.
    const malformed = encodeHeaders([
      [':method', 'POST'],
      [':scheme', 'http'],
    ]);
    await flood(echo.port, (id) => [frame(HEADERS, 0x4, id, malformed)], H2_ERROR.PROTOCOL_ERROR);
    // Requests, each followed by a WINDOW_UPDATE of 0 on its stream.
    await flood(echo.port, (id) => [frame(HEADERS, 0x4, id, REQUEST()), frame(WINDOW_UPDATE, 0, id, Buffer.alloc(4))], H2_ERROR.PROTOCOL_ERROR);
    // PRIORITY frames of a wrong size.
    await flood(echo.port, (id) => [frame(2, 0, id, Buffer.alloc(4))], H2_ERROR.FRAME_SIZE_ERROR);
    // Well-formed requests over a limit of one open stream.
    const serve = echo.serve;
    await echo.stop();
    echo = new EchoServer();
    echo.serve = serve;
    await echo.start(1);
    await flood(echo.port, (id) => [frame(HEADERS, 0x4, id, REQUEST())], H2_ERROR.REFUSED_STREAM);
  });

  it('ends a header block spread over too many frames (empty CONTINUATIONs), and keeps no empty DATA for a paused stream', async () => {
    const c = new RawClient(echo.port);
    try {
      const block = REQUEST();
      const frames = [frame(HEADERS, 0, 1, block.subarray(0, 4))];
      for (let i = 0; i < 200; i++) frames.push(frame(CONTINUATION, 0, 1));
      frames.push(frame(CONTINUATION, 0x4, 1, block.subarray(4)));
      c.write(...frames);
      const goaway = await c.next((f) => f.type === GOAWAY);
      expect(goaway.payload.readUInt32BE(4)).toBe(H2_ERROR.ENHANCE_YOUR_CALM);
    } finally {
      c.close();
    }
    let paused!: H2Stream;
    echo.serve = (s) => {
      paused = s;
      s.pause();
      s.listener = { onData: () => undefined, onEnd: () => undefined, onClose: () => undefined, onDrain: () => undefined };
    };
    const d = new RawClient(echo.port);
    try {
      const empty = frame(DATA, 0, 1);
      d.write(
        frame(HEADERS, 0x4, 1, REQUEST()),
        ...Array.from({ length: 5000 }, () => empty),
        frame(DATA, 0, 1, Buffer.from('x')),
        frame(PING, 0, 0, Buffer.alloc(8)),
      );
      await d.next((f) => f.type === PING);
      expect(paused.held?.map((b) => b.toString())).toEqual(['x']);
    } finally {
      d.close();
    }
  });

  it('drops a connection that does not finish its start in time, and keeps one that did', async () => {
    await echo.stop();
    echo = new EchoServer();
    await echo.start(100, 1 << 20, 300);
    const silent = net.connect(echo.port, '127.0.0.1');
    silent.on('error', () => undefined);
    silent.resume();
    const noAck = new RawClient(echo.port, Buffer.alloc(0), false);
    const good = new RawClient(echo.port);
    try {
      await new Promise<void>((resolve) => silent.once('close', () => resolve()));
      const goaway = await noAck.next((f) => f.type === GOAWAY);
      expect(goaway.payload.readUInt32BE(4)).toBe(H2_ERROR.SETTINGS_TIMEOUT);
      await noAck.untilClosed();
      await new Promise((r) => setTimeout(r, 400));
      good.write(frame(PING, 0, 0, Buffer.alloc(8)));
      await good.next((f) => f.type === PING && (f.flags & 1) === 1);
      expect(good.closed).toBe(false);
      expect(good.frames.some((f) => f.type === GOAWAY)).toBe(false);
    } finally {
      silent.destroy();
      noAck.close();
      good.close();
    }
  });

  it('closes gracefully: GOAWAY NO_ERROR, open streams finish, later ones are refused, then the socket ends', async () => {
    let first!: H2Stream;
    echo.serve = (s) => {
      first ??= s;
      s.listener = { onData: () => undefined, onEnd: () => undefined, onClose: () => undefined, onDrain: () => undefined };
    };
    const c = new RawClient(echo.port);
    try {
      c.write(frame(HEADERS, 0x4, 1, REQUEST()));
      await new Promise((r) => setTimeout(r, 50));
      echo.connections[0]!.close();
      const goaway = await c.next((f) => f.type === GOAWAY);
      expect(goaway.payload.readUInt32BE(0)).toBe(1);
      expect(goaway.payload.readUInt32BE(4)).toBe(H2_ERROR.NO_ERROR);
      c.write(frame(HEADERS, 0x4, 3, REQUEST()));
      const refused = await c.next((f) => f.type === RST_STREAM && f.stream === 3);
      expect(refused.payload.readUInt32BE(0)).toBe(H2_ERROR.REFUSED_STREAM);
      expect(c.closed).toBe(false);
      first.respondAll(encodeHeaders([[':status', '200']]), Buffer.from('bye'), encodeHeaders([['grpc-status', '0']]));
      expect((await c.next((f) => f.type === DATA && f.stream === 1)).payload.toString()).toBe('bye');
      await c.untilClosed();
    } finally {
      c.close();
    }
  });
});

describe('H2ClientConnection', () => {
  it("talks to node:http2's server: a stream with a large body each way, the half-close, trailers, PING, and GOAWAY", async () => {
    const server = http2.createServer();
    const sessions: http2.ServerHttp2Session[] = [];
    server.on('session', (session) => sessions.push(session));
    server.on('stream', (stream, headers) => {
      const parts: Buffer[] = [];
      stream.on('data', (c: Buffer) => parts.push(c));
      stream.on('end', () => {
        stream.respond({ ':status': 200, 'x-path': String(headers[':path']) }, { waitForTrailers: true });
        stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0', 'x-bytes': String(Buffer.concat(parts).length) }));
        stream.end(Buffer.concat(parts));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    let goaway = false;
    let closed = false;
    const conn = new H2ClientConnection(net.connect(port, '127.0.0.1'), {
      streamWindowBytes: 65_535,
      connectionWindowBytes: 65_535,
      onGoAway: () => (goaway = true),
      onClose: () => (closed = true),
    });
    try {
      const body = Buffer.alloc(500_000);
      for (let i = 0; i < body.length; i++) body[i] = (i * 13) & 0xff;
      const got: Buffer[] = [];
      const heads: [Record<string, string>, boolean][] = [];
      let drains = 0;
      const done = new Promise<void>((resolve) => {
        const s = conn.request(
          encodeHeaders([
            [':method', 'POST'],
            [':scheme', 'http'],
            [':path', '/echo'],
            [':authority', `127.0.0.1:${port}`],
          ]),
          {
            onData: (c) => got.push(Buffer.from(c)),
            onHeaders: (h, trailers) => heads.push([h, trailers]),
            onEnd: () => undefined,
            onClose: resolve,
            onDrain: () => drains++,
          },
        );
        // node's server grants 65,535 bytes per stream at first: most of the body waits.
        expect(s.write(body)).toBe(false);
        s.end(undefined, undefined);
      });
      await done;
      expect(Buffer.concat(got).equals(body)).toBe(true);
      expect(heads).toEqual([
        [expect.objectContaining({ ':status': '200', 'x-path': '/echo' }), false],
        [expect.objectContaining({ 'grpc-status': '0', 'x-bytes': '500000' }), true],
      ]);
      expect(drains).toBe(0); // no drain is due once the stream is ended: its end went out after the data
      const pong = await new Promise<boolean>((resolve) => conn.ping(() => resolve(true)));
      expect(pong).toBe(true);
      // The server's session closes gracefully: GOAWAY, then the connection ends.
      for (const session of sessions) session.close();
      for (let i = 0; i < 100 && !closed; i++) await new Promise((r) => setTimeout(r, 20));
      expect(goaway).toBe(true);
      expect(closed).toBe(true);
    } finally {
      conn.destroy();
      server.close();
    }
  });
});
