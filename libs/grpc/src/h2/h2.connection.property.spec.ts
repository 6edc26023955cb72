/**
 * H2ServerConnection under generated frame sequences from a raw client over a real socket: any
 * frame type (unknown ones too) on any stream id, with flags, padding, lengths, settings, window
 * increments and header blocks drawn towards the edges, well-formed requests among them. What
 * must hold for every sequence:
 *
 * - the server answers a PING sent after the sequence, or ends the connection: it never hangs;
 * - no GOAWAY or RST_STREAM it sends names INTERNAL_ERROR, which this server sends only when its
 *   own code failed on the input (a protocol fault of the peer has its own code);
 * - once the client is gone, every stream the server opened for a request is closed;
 * - and after all of them, the server still serves node:http2 requests.
 *
 * FC_RUNS raises the number of sequences, FC_SEED picks other ones.
 */
import * as http2 from 'node:http2';
import * as fc from 'fast-check';
import { H2_ERROR } from './h2.connection.js';
import { encodeHeaders } from './hpack.js';
import { EchoServer, GOAWAY, PING, RST_STREAM, RawClient, frame, h2request } from './h2.connection.fixture.js';

const numRuns = Number(process.env.FC_RUNS) || 300;
const seed = Number(process.env.FC_SEED) || 7;

const FLAG_END_STREAM = 0x1;
const FLAG_END_HEADERS = 0x4;
const FLAG_PADDED = 0x8;
const FLAG_PRIORITY = 0x20;

const streamId = fc.oneof(fc.constantFrom(0, 1, 2, 3, 5, 7, 0x7fffffff), fc.integer({ min: 0, max: 0x7fffffff }));
const u32 = fc.oneof(fc.constantFrom(0, 1, 65_535, 65_536, 16_384, 16_777_215, 16_777_216, 0x7fffffff, 0x80000000, 0xffffffff), fc.nat());

/** Header lists a client might send: a gRPC request, with fields left out, repeated, upper-cased or in the wrong order. */
const REQUEST_FIELDS: [string, string][] = [
  [':method', 'POST'],
  [':scheme', 'http'],
  [':path', '/svc/Echo'],
  [':authority', '127.0.0.1'],
  ['content-type', 'application/grpc'],
];
const field = fc.oneof(
  fc.constantFrom(...REQUEST_FIELDS),
  fc.constantFrom<[string, string]>(
    [':status', '200'],
    [':protocol', 'x'],
    ['connection', 'close'],
    ['te', 'gzip'],
    ['te', 'trailers'],
    ['Upper', 'x'],
    ['', 'x'],
    [':method', ''],
  ),
  fc.tuple(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 })),
);
const headerBlock: fc.Arbitrary<Buffer> = fc.oneof(
  fc.constant(encodeHeaders(REQUEST_FIELDS)),
  fc.array(field, { maxLength: 8 }).map((fields) => encodeHeaders(fields)),
  fc.uint8Array({ maxLength: 48 }).map((b) => Buffer.from(b)),
);

/** A payload behind optional padding (PADDED: a pad length octet, possibly past the end). */
function padded(flags: number, body: Buffer, pad: number): Buffer {
  if ((flags & FLAG_PADDED) === 0) return body;
  return Buffer.concat([Buffer.from([pad & 0xff]), body, Buffer.alloc(Math.min(pad, 16))]);
}

const frames: fc.Arbitrary<Buffer> = fc.oneof(
  // HEADERS, with or without END_HEADERS, END_STREAM, padding and a priority block.
  fc
    .record({
      stream: streamId,
      flags: fc.oneof(fc.constantFrom(FLAG_END_HEADERS, FLAG_END_HEADERS | FLAG_END_STREAM, 0, FLAG_END_STREAM), fc.nat(0xff)),
      block: headerBlock,
      pad: fc.nat(40),
      dep: streamId,
    })
    .map(({ stream, flags, block, pad, dep }) => {
      const prio =
        (flags & FLAG_PRIORITY) !== 0 ? Buffer.from([(dep >>> 24) & 0xff, (dep >>> 16) & 0xff, (dep >>> 8) & 0xff, dep & 0xff, 16]) : Buffer.alloc(0);
      return frame(1, flags, stream, padded(flags, Buffer.concat([prio, block]), pad));
    }),
  // CONTINUATION, alone or after a HEADERS that left its block open.
  fc.record({ stream: streamId, end: fc.boolean(), block: headerBlock }).map(({ stream, end, block }) => frame(9, end ? FLAG_END_HEADERS : 0, stream, block)),
  // DATA, padded or not, up to one byte over the largest frame a server takes by default.
  fc
    .record({
      stream: streamId,
      flags: fc.constantFrom(0, FLAG_END_STREAM, FLAG_PADDED, FLAG_PADDED | FLAG_END_STREAM),
      data: fc.oneof(fc.uint8Array({ maxLength: 64 }), fc.constant(new Uint8Array(16_385))),
      pad: fc.nat(300),
    })
    .map(({ stream, flags, data, pad }) => frame(0, flags, stream, padded(flags, Buffer.from(data), pad))),
  // SETTINGS: known and unknown ids, values at their bounds, an ACK, a length that is not a multiple of 6.
  fc
    .record({
      ack: fc.boolean(),
      stream: fc.constantFrom(0, 0, 1),
      params: fc.array(fc.tuple(fc.integer({ min: 0, max: 9 }), u32), { maxLength: 4 }),
      extra: fc.constantFrom(0, 0, 0, 1, 5),
    })
    .map(({ ack, stream, params, extra }) => {
      const body = Buffer.alloc(params.length * 6 + extra);
      params.forEach(([id, value], i) => {
        body.writeUInt16BE(id, i * 6);
        body.writeUInt32BE(value >>> 0, i * 6 + 2);
      });
      return frame(4, ack ? 1 : 0, stream, ack && params.length === 0 && extra === 0 ? Buffer.alloc(0) : body);
    }),
  // WINDOW_UPDATE: zero, huge and overflowing increments; a wrong length.
  fc.record({ stream: streamId, inc: u32, len: fc.constantFrom(4, 4, 4, 3, 5) }).map(({ stream, inc, len }) => {
    const b = Buffer.alloc(Math.max(len, 4));
    b.writeUInt32BE(inc >>> 0);
    return frame(8, 0, stream, b.subarray(0, len));
  }),
  // RST_STREAM, PRIORITY, PUSH_PROMISE (a client must not send one), GOAWAY.
  fc.record({ stream: streamId, code: u32, len: fc.constantFrom(4, 4, 3) }).map(({ stream, code, len }) => {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(code >>> 0);
    return frame(RST_STREAM, 0, stream, b.subarray(0, len));
  }),
  fc.record({ stream: streamId, body: fc.uint8Array({ minLength: 4, maxLength: 6 }) }).map(({ stream, body }) => frame(2, 0, stream, Buffer.from(body))),
  fc
    .record({ stream: streamId, block: headerBlock })
    .map(({ stream, block }) => frame(5, FLAG_END_HEADERS, stream, Buffer.concat([Buffer.from([0, 0, 0, 2]), block]))),
  fc
    .record({ stream: fc.constantFrom(0, 1), body: fc.uint8Array({ minLength: 0, maxLength: 16 }) })
    .map(({ stream, body }) => frame(GOAWAY, 0, stream, Buffer.from(body))),
  // PING of the right and wrong lengths, ACK or not, on stream 0 or not.
  fc
    .record({ ack: fc.boolean(), stream: fc.constantFrom(0, 0, 1), body: fc.uint8Array({ minLength: 7, maxLength: 9 }) })
    .map(({ ack, stream, body }) => frame(PING, ack ? 1 : 0, stream, Buffer.from(body))),
  // A frame of a type HTTP/2 does not define: ignored.
  fc
    .record({ type: fc.integer({ min: 10, max: 255 }), flags: fc.nat(0xff), stream: streamId, body: fc.uint8Array({ maxLength: 32 }) })
    .map(({ type, flags, stream, body }) => frame(type, flags, stream, Buffer.from(body))),
);

/**
 * The frames after the client preface, often behind a well-formed request on stream 1 (most
 * generated frames are faults that end the connection, so what follows a request is what
 * reaches open streams), cut into the pieces the client writes them in.
 */
const sequence = fc.record({
  lead: fc.constantFrom('none', 'open', 'ended'),
  frames: fc.array(frames, { minLength: 1, maxLength: 12 }),
  piece: fc.constantFrom(0, 0, 1, 7, 100),
});
const LEAD: Record<string, Buffer> = {
  none: Buffer.alloc(0),
  open: frame(1, FLAG_END_HEADERS, 1, encodeHeaders(REQUEST_FIELDS)),
  ended: Buffer.concat([frame(1, FLAG_END_HEADERS, 1, encodeHeaders(REQUEST_FIELDS)), frame(0, FLAG_END_STREAM, 1, Buffer.from('hi'))]),
};

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('H2ServerConnection under generated frame sequences', () => {
  let echo: EchoServer;

  beforeAll(async () => {
    echo = new EchoServer();
    await echo.start(8, 65_535);
  });

  afterAll(async () => {
    await echo.stop();
  });

  it('answers or ends every connection, never with INTERNAL_ERROR, and closes every stream it opened', async () => {
    let pings = 0;
    await fc.assert(
      fc.asyncProperty(sequence, async ({ lead, frames: sent, piece }) => {
        const client = new RawClient(echo.port);
        const requestsBefore = echo.requests.length;
        const closedBefore = echo.closedStreams.length;
        try {
          const bytes = Buffer.concat([LEAD[lead]!, ...sent]);
          if (piece === 0) client.write(bytes);
          else for (let off = 0; off < bytes.length; off += piece) client.write(bytes.subarray(off, off + piece));
          // A PING after the sequence: its ACK says the server read everything before it.
          const token = Buffer.alloc(8);
          token.writeUInt32BE(++pings);
          client.write(frame(PING, 0, 0, token));
          const answered = client
            .next((f) => f.type === PING && (f.flags & 1) === 1 && f.payload.equals(token))
            .then(
              () => 'answered',
              () => 'closed',
            );
          let timer: NodeJS.Timeout | undefined;
          const silent = new Promise<string>((resolve) => (timer = setTimeout(() => resolve('silent'), 5000)));
          const outcome = await Promise.race([answered, silent]);
          clearTimeout(timer);
          if (outcome === 'silent') throw new Error('the server neither answered the PING nor ended the connection');
          const internal = client.frames.filter(
            (f) =>
              (f.type === GOAWAY && f.payload.length >= 8 && f.payload.readUInt32BE(4) === H2_ERROR.INTERNAL_ERROR) ||
              (f.type === RST_STREAM && f.payload.length === 4 && f.payload.readUInt32BE(0) === H2_ERROR.INTERNAL_ERROR),
          );
          if (internal.length > 0) {
            const why = internal.map((f) => (f.type === GOAWAY ? f.payload.subarray(8).toString() : `RST_STREAM ${f.stream}`));
            throw new Error(`INTERNAL_ERROR from the server: ${why.join(', ')}`);
          }
        } finally {
          client.close();
        }
        // Every request stream of this connection is closed once the server sees the socket end.
        const opened = echo.requests.length - requestsBefore;
        for (let i = 0; i < 100 && echo.closedStreams.length - closedBefore < opened; i++) await sleep(5);
        if (echo.closedStreams.length - closedBefore !== opened) {
          throw new Error(`${opened} request streams opened, ${echo.closedStreams.length - closedBefore} closed`);
        }
      }),
      { numRuns, seed, endOnFailure: true },
    );
    // Well-formed requests were among the sequences, so streams were opened and served.
    expect(echo.requests.length).toBeGreaterThan(0);
    const session = http2.connect(`http://127.0.0.1:${echo.port}`);
    try {
      const a = await h2request(session, Buffer.from('still here'));
      expect(a.status).toBe(200);
      expect(a.body.toString()).toBe('still here');
    } finally {
      session.close();
    }
  }, 120_000);
});
