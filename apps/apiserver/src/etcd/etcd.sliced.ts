/**
 * Large etcd answers serialized a slice at a time (docs/etcd-api.md "KV" and "Watch"): a
 * RangeResponse of 100,000 keys or a WatchResponse carrying the 100,000 events of one large
 * DeleteRange, serialized as one message, holds the node's event loop for most of a second.
 * Protobuf parses concatenated encodings of one message type as their merge (repeated fields
 * append), so the message is serialized as its head (every field but the repeated one) and then
 * one piece per slice of the repeated field, with a turn of the event loop before each slice.
 * The gRPC server frames the pieces as they are (SerializedMessage).
 */
import { SerializedMessage } from '@app/grpc';
import type { Msg } from './etcd.convert.js';

/** Items of the repeated field per piece; a message with at most this many is not sliced. */
export const SLICE_ITEMS = 1000;

/** Resolves on the next turn of the event loop (after the I/O callbacks that are due). */
export const nextTurn = (): Promise<void> => new Promise((r) => setImmediate(r));

/**
 * `head` plus `items` as the repeated `field`, serialized SLICE_ITEMS items per turn of the event
 * loop; `toMsg` makes each item's message as its slice is serialized. Undefined when `stop()`
 * turns true after a turn (the answer is no longer wanted).
 */
export async function serializeInSlices<T>(
  head: Msg,
  field: string,
  items: readonly T[],
  toMsg: (item: T) => Msg,
  serialize: (m: Msg) => Buffer,
  stop: () => boolean = () => false,
): Promise<SerializedMessage | undefined> {
  const pieces = [serialize(head)];
  for (let i = 0; i < items.length; i += SLICE_ITEMS) {
    await nextTurn();
    if (stop()) return undefined;
    pieces.push(serialize({ [field]: items.slice(i, i + SLICE_ITEMS).map(toMsg) }));
  }
  return new SerializedMessage(pieces);
}

/**
 * `fn` over `items`, SLICE_ITEMS at a time, each slice after a turn of the event loop: the
 * leases of a large revision's events are read from the store's history one key each, and
 * 100,000 reads started at once held the node for seconds.
 */
export async function mapInSlices<T, R>(items: readonly T[], fn: (item: T) => R | Promise<R>): Promise<R[]> {
  if (items.length <= SLICE_ITEMS) return Promise.all(items.map(fn));
  const out: R[] = [];
  for (let i = 0; i < items.length; i += SLICE_ITEMS) {
    await nextTurn();
    for (const r of await Promise.all(items.slice(i, i + SLICE_ITEMS).map(fn))) out.push(r);
  }
  return out;
}

/**
 * `pieces` (one message's encoding) as the field `field` of an enclosing message: a tag and a
 * length, then the pieces as they are (protobuf's embedded messages are length-delimited).
 */
export function embedded(field: number, pieces: readonly Uint8Array[]): Uint8Array[] {
  let length = 0;
  for (const p of pieces) length += p.length;
  const head: number[] = [(field << 3) | 2];
  for (let n = length; ;) {
    if (n < 0x80) {
      head.push(n);
      break;
    }
    head.push((n % 0x80) | 0x80);
    n = Math.floor(n / 0x80);
  }
  return [Buffer.from(head), ...pieces];
}
