import { MAX_REQUEST_MESSAGE_BYTES, MessageDecoder, encodeGrpcMessage, encodeMessage, parseGrpcTimeout, type FrameError } from './grpc.h2-framing.js';

class Collect extends MessageDecoder {
  readonly got: string[] = [];
  protected onMessage(payload: Buffer): void {
    this.got.push(payload.toString());
  }
}

const frame = (s: string): Buffer => encodeMessage(Buffer.from(s));

describe('gRPC message framing', () => {
  it('encodes a payload behind a zero flag and its big-endian length', () => {
    expect([...encodeMessage(Buffer.from('abc'))]).toEqual([0, 0, 0, 0, 3, 0x61, 0x62, 0x63]);
    expect([...encodeMessage(Buffer.alloc(0))]).toEqual([0, 0, 0, 0, 0]);
    const big = encodeMessage(Buffer.alloc(0x10203));
    expect(big.readUInt32BE(1)).toBe(0x10203);
    expect(big.length).toBe(0x10203 + 5);
  });

  it('cuts several messages out of one chunk, empty ones included', () => {
    const d = new Collect();
    expect(d.push(Buffer.concat([frame('one'), frame(''), frame('three')]))).toBeUndefined();
    expect(d.got).toEqual(['one', '', 'three']);
    expect(d.partial).toBe(false);
  });

  it('joins a message split at every byte, the prefix too', () => {
    const all = Buffer.concat([frame('hello'), frame('world!')]);
    const d = new Collect();
    for (let i = 0; i < all.length; i++) {
      expect(d.push(all.subarray(i, i + 1))).toBeUndefined();
      // Between the two messages (after byte 9) nothing is held.
      expect(d.partial).toBe(i !== 9 && i !== all.length - 1);
    }
    expect(d.got).toEqual(['hello', 'world!']);
    expect(d.partial).toBe(false);
  });

  it('joins messages split at arbitrary points, several messages per chunk', () => {
    const msgs = Array.from({ length: 20 }, (_, i) => 'x'.repeat(i * 37) + String(i));
    const all = Buffer.concat(msgs.map(frame));
    for (const step of [3, 7, 64, 100, 1000]) {
      const d = new Collect();
      for (let off = 0; off < all.length; off += step) expect(d.push(all.subarray(off, off + step))).toBeUndefined();
      expect(d.got).toEqual(msgs);
      expect(d.partial).toBe(false);
    }
  });

  it('reports a truncated message as partial', () => {
    const d = new Collect();
    d.push(frame('complete'));
    d.push(frame('truncated').subarray(0, 8));
    expect(d.got).toEqual(['complete']);
    expect(d.partial).toBe(true);
    expect(d.partialBytes).toBe(8);
    d.push(frame('truncated').subarray(8, 10));
    expect(d.partialBytes).toBe(10);
  });

  it('counts no held bytes once a message completes, and starts afresh after discard', () => {
    const d = new Collect();
    const msg = frame('whole');
    d.push(msg.subarray(0, 3));
    expect(d.partialBytes).toBe(3);
    d.push(msg.subarray(3));
    expect(d.partialBytes).toBe(0);
    d.push(frame('dropped').subarray(0, 9));
    d.discard();
    expect(d.partial).toBe(false);
    expect(d.partialBytes).toBe(0);
    d.push(frame('next'));
    expect(d.got).toEqual(['whole', 'next']);
  });

  it('refuses a message over the limit as soon as its prefix is complete', () => {
    const d = new Collect();
    const prefix = Buffer.from([0, 0, 0, 0, 0]);
    prefix.writeUInt32BE(MAX_REQUEST_MESSAGE_BYTES + 1, 1);
    expect(d.push(prefix.subarray(0, 3))).toBeUndefined();
    const err = d.push(prefix.subarray(3)) as FrameError;
    expect(err.code).toBe(8); // RESOURCE_EXHAUSTED
    expect(err.details).toMatch(/larger than max/);
    // The largest accepted message goes through.
    const ok = new Collect();
    expect(ok.push(encodeMessage(Buffer.alloc(MAX_REQUEST_MESSAGE_BYTES)))).toBeUndefined();
    expect(ok.got).toHaveLength(1);
  });

  it('takes a limit of its own instead of the default', () => {
    const small = new Collect(10);
    expect(small.push(frame('0123456789'))).toBeUndefined();
    expect(small.push(frame('0123456789a'))?.details).toBe('received message larger than max (11 vs. 10)');
    const large = new Collect(MAX_REQUEST_MESSAGE_BYTES * 4);
    expect(large.push(encodeMessage(Buffer.alloc(MAX_REQUEST_MESSAGE_BYTES * 3)))).toBeUndefined();
    expect(large.got).toHaveLength(1);
  });

  it('refuses a compressed message and an unknown flag, after the messages before it', () => {
    const d = new Collect();
    const compressed = frame('zipped');
    compressed[0] = 1;
    const err = d.push(Buffer.concat([frame('plain'), compressed]));
    expect(d.got).toEqual(['plain']);
    expect(err?.code).toBe(13); // INTERNAL
    expect(err?.details).toMatch(/compressed/);
    const other = frame('x');
    other[0] = 2;
    expect(new Collect().push(other)?.code).toBe(13);
  });
});

describe('grpc-timeout', () => {
  it('reads every unit in milliseconds', () => {
    expect(parseGrpcTimeout('1H')).toBe(3_600_000);
    expect(parseGrpcTimeout('2M')).toBe(120_000);
    expect(parseGrpcTimeout('5S')).toBe(5000);
    expect(parseGrpcTimeout('250m')).toBe(250);
    expect(parseGrpcTimeout('4999847u')).toBeCloseTo(4999.847, 6);
    expect(parseGrpcTimeout('1000000n')).toBeCloseTo(1, 9);
    expect(parseGrpcTimeout('99999999S')).toBe(99_999_999_000);
    expect(parseGrpcTimeout('0m')).toBe(0);
  });

  it('is undefined when absent and NaN when malformed', () => {
    expect(parseGrpcTimeout(undefined)).toBeUndefined();
    for (const bad of ['', 'S', '10', '10s', '1.5S', '-1S', '123456789S', ' 1S', ['1S']]) expect(parseGrpcTimeout(bad)).toBeNaN();
  });
});

describe('grpc-message encoding', () => {
  it('keeps printable ASCII and percent-encodes the rest as UTF-8 bytes', () => {
    expect(encodeGrpcMessage('etcdserver: mvcc: required revision has been compacted')).toBe('etcdserver: mvcc: required revision has been compacted');
    expect(encodeGrpcMessage('100% done')).toBe('100%25 done');
    expect(encodeGrpcMessage('line1\nline2\t')).toBe('line1%0Aline2%09');
    expect(encodeGrpcMessage('clé ☃')).toBe('cl%C3%A9 %E2%98%83');
    expect(decodeURIComponent(encodeGrpcMessage('mixed % é\r\n ~'))).toBe('mixed % é\r\n ~');
  });
});
