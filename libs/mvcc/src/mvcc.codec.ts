/**
 * A minimal binary writer/reader shared by the command encoding (Raft entries) and the on-disk
 * records of the store. Numbers are revisions/indexes: non-negative integers below 2^53, written
 * as float64 big-endian (exact in that range). Strings are UTF-8 with a u32 length prefix.
 * Reading past the end throws `CodecError` so corrupt input becomes a typed error, not a crash.
 */

/** Thrown when bytes do not decode (truncated or malformed input). */
export class CodecError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CodecError';
  }
}

const textEncoder = new TextEncoder();
// ignoreBOM: a string that starts with U+FEFF (a key may: etcd keys are any bytes) keeps it;
// by default TextDecoder drops a leading byte order mark.
const textDecoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Appends fields to a growable buffer; `finish()` returns exactly the written bytes. */
export class BinWriter {
  private buf: Buffer;
  private pos = 0;

  constructor(initialSize = 256) {
    this.buf = Buffer.allocUnsafe(initialSize);
  }

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  u8(v: number): this {
    this.ensure(1);
    this.buf[this.pos++] = v;
    return this;
  }

  u32(v: number): this {
    this.ensure(4);
    this.buf.writeUInt32BE(v >>> 0, this.pos);
    this.pos += 4;
    return this;
  }

  num(v: number): this {
    this.ensure(8);
    this.buf.writeDoubleBE(v, this.pos);
    this.pos += 8;
    return this;
  }

  bytes(v: Uint8Array): this {
    this.u32(v.length);
    this.ensure(v.length);
    this.buf.set(v, this.pos);
    this.pos += v.length;
    return this;
  }

  str(v: string): this {
    return this.bytes(textEncoder.encode(v));
  }

  finish(): Buffer {
    return this.buf.subarray(0, this.pos);
  }
}

/** Reads fields written by `BinWriter`, in the same order. */
export class BinReader {
  private pos = 0;
  private readonly view: Buffer;

  constructor(data: Uint8Array) {
    this.view = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  }

  private need(n: number): void {
    if (this.pos + n > this.view.length) throw new CodecError(`truncated input at byte ${this.pos} (need ${n})`);
  }

  u8(): number {
    this.need(1);
    return this.view[this.pos++]!;
  }

  u32(): number {
    this.need(4);
    const v = this.view.readUInt32BE(this.pos);
    this.pos += 4;
    return v;
  }

  num(): number {
    this.need(8);
    const v = this.view.readDoubleBE(this.pos);
    this.pos += 8;
    if (!Number.isSafeInteger(v) || v < 0) throw new CodecError(`invalid number ${v} at byte ${this.pos - 8}`);
    return v;
  }

  /** Returns a copy, so the caller may keep it after the source buffer is reused. */
  bytes(): Uint8Array {
    const n = this.u32();
    this.need(n);
    const out = new Uint8Array(n);
    out.set(this.view.subarray(this.pos, this.pos + n));
    this.pos += n;
    return out;
  }

  str(): string {
    const n = this.u32();
    this.need(n);
    let s: string;
    try {
      s = textDecoder.decode(this.view.subarray(this.pos, this.pos + n));
    } catch {
      throw new CodecError(`invalid UTF-8 at byte ${this.pos}`);
    }
    this.pos += n;
    return s;
  }

  /** True when every byte was consumed. */
  done(): boolean {
    return this.pos === this.view.length;
  }
}
