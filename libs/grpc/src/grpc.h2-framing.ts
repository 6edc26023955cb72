/**
 * The wire format of gRPC over HTTP/2 that GrpcH2Server speaks (gRPC's
 * PROTOCOL-HTTP2.md), kept free of sockets so it is tested on its own: length-prefixed messages
 * (a compressed flag byte, a 4-byte big-endian length, the payload) cut from DATA chunks however
 * they are split or joined, the grpc-timeout header, and the percent-encoding of grpc-message.
 */

/**
 * The largest request message accepted unless a server says otherwise: etcd's 1.5 MiB request
 * limit plus the 512 KiB it allows for gRPC's overhead, as etcd's default.
 */
export const MAX_REQUEST_MESSAGE_BYTES = 2 * 1024 * 1024;

/** Length of a message's prefix: the compressed flag and the 4-byte length. */
const PREFIX_BYTES = 5;

/** Why a request's byte stream is refused; `code` is a gRPC status code. */
export interface FrameError {
  code: number;
  details: string;
}

// gRPC status codes used here (doc/statuscodes.md); equal to grpc-js's `status` enum.
const RESOURCE_EXHAUSTED = 8;
const INTERNAL = 13;

/**
 * Cuts length-prefixed messages out of the DATA chunks of one request stream. `onMessage` sees
 * each payload as a view of the received chunk when the message lies within one chunk (the
 * common case: no copy), or as one concatenation of the chunks it spans; the view is valid for
 * as long as the caller keeps it. Compressed messages are refused: the server advertises no
 * encoding, so a set flag is a protocol error (INTERNAL, doc/compression.md).
 */
export abstract class MessageDecoder {
  /** Chunks of an incomplete message (prefix included), in arrival order. */
  private parts: Buffer[] | undefined;
  /** Bytes in `parts`. */
  private buffered = 0;
  /** Bytes `parts` must hold before decoding resumes: the prefix, then the whole message. */
  private need = PREFIX_BYTES;

  /** `maxMessageBytes`: a longer message ends the stream with RESOURCE_EXHAUSTED. */
  constructor(private readonly maxMessageBytes: number = MAX_REQUEST_MESSAGE_BYTES) {}

  /** Called with every complete message's payload, in order. */
  protected abstract onMessage(payload: Buffer): void;

  /**
   * Feeds one DATA chunk. Returns the error that ends the stream (then nothing more should be
   * pushed), or undefined. Messages before an error in the same chunk have been delivered.
   */
  push(chunk: Buffer): FrameError | undefined {
    let buf = chunk;
    if (this.parts !== undefined) {
      this.parts.push(chunk);
      this.buffered += chunk.length;
      if (this.buffered < this.need) return undefined;
      buf = Buffer.concat(this.parts, this.buffered);
      this.parts = undefined;
      this.buffered = 0;
    }
    let off = 0;
    const end = buf.length;
    while (end - off >= PREFIX_BYTES) {
      const flag = buf[off]!;
      const len = buf.readUInt32BE(off + 1);
      if (flag !== 0)
        return { code: INTERNAL, details: flag === 1 ? 'compressed message received, but no grpc-encoding was negotiated' : `invalid message flag ${flag}` };
      if (len > this.maxMessageBytes) {
        return { code: RESOURCE_EXHAUSTED, details: `received message larger than max (${len} vs. ${this.maxMessageBytes})` };
      }
      const next = off + PREFIX_BYTES + len;
      if (next > end) {
        this.need = PREFIX_BYTES + len;
        break;
      }
      this.onMessage(buf.subarray(off + PREFIX_BYTES, next));
      off = next;
    }
    if (off < end) {
      if (end - off < PREFIX_BYTES) this.need = PREFIX_BYTES;
      const rest = off === 0 ? buf : buf.subarray(off);
      this.parts = [rest];
      this.buffered = rest.length;
    }
    return undefined;
  }

  /** Whether bytes of an unfinished message are held (at the end of the stream: a truncated message). */
  get partial(): boolean {
    return this.parts !== undefined;
  }

  /** Bytes held of an unfinished message (its prefix included). */
  get partialBytes(): number {
    return this.buffered;
  }

  /** Drops the bytes of an unfinished message; decoding would start afresh at a prefix. */
  discard(): void {
    this.parts = undefined;
    this.buffered = 0;
    this.need = PREFIX_BYTES;
  }
}

/**
 * A response a handler serialized itself, in pieces whose concatenation is the message. Protobuf
 * parses concatenated encodings of one message type as their merge (repeated fields append), so
 * a large message can be serialized a slice of its repeated field at a time, with turns of the
 * event loop in between. The server frames it as it is (GrpcH2Server).
 */
export class SerializedMessage {
  constructor(readonly pieces: readonly Uint8Array[]) {}

  /** The pieces framed as one gRPC message (uncompressed), copied once. */
  frame(): Buffer {
    let length = 0;
    for (const p of this.pieces) length += p.length;
    const out = Buffer.allocUnsafe(PREFIX_BYTES + length);
    out[0] = 0;
    out.writeUInt32BE(length, 1);
    let at = PREFIX_BYTES;
    for (const p of this.pieces) {
      out.set(p, at);
      at += p.length;
    }
    return out;
  }
}

/** One payload framed as a gRPC message (uncompressed). */
export function encodeMessage(payload: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(PREFIX_BYTES + payload.length);
  out[0] = 0;
  out.writeUInt32BE(payload.length, 1);
  out.set(payload, PREFIX_BYTES);
  return out;
}

/** Milliseconds per grpc-timeout unit (Hours, Minutes, Seconds, milli, micro, nano). */
const TIMEOUT_UNIT_MS: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 1e-3, n: 1e-6 };

/**
 * The grpc-timeout header in milliseconds: at most 8 ASCII digits and a unit
 * (PROTOCOL-HTTP2.md "Timeout"). Undefined when absent; NaN when malformed.
 */
export function parseGrpcTimeout(value: string | string[] | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length < 2 || value.length > 9) return NaN;
  const unit = TIMEOUT_UNIT_MS[value[value.length - 1]!];
  if (unit === undefined) return NaN;
  let n = 0;
  for (let i = 0; i < value.length - 1; i++) {
    const d = value.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return NaN;
    n = n * 10 + d;
  }
  return n * unit;
}

/**
 * grpc-message's encoding (PROTOCOL-HTTP2.md "Responses"): the UTF-8 bytes outside printable
 * ASCII, and '%' itself, become %XX with upper-case hex; everything else is sent as is.
 */
export function encodeGrpcMessage(message: string): string {
  let plain = true;
  for (let i = 0; i < message.length; i++) {
    const c = message.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x25) {
      plain = false;
      break;
    }
  }
  if (plain) return message;
  let out = '';
  for (const b of Buffer.from(message, 'utf8')) {
    out += b < 0x20 || b > 0x7e || b === 0x25 ? `%${b < 16 ? '0' : ''}${b.toString(16).toUpperCase()}` : String.fromCharCode(b);
  }
  return out;
}
