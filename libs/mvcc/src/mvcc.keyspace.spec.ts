import { decodeHistory, decodeHistoryRecord, decodeLatest, encodeHistory, encodeLatest, isTombstone } from './mvcc.keyspace.js';
import { MvccError, type KeyValue } from './mvcc.types.js';

const kv: KeyValue = { key: 'a', value: new TextEncoder().encode('{"data":"one"}'), createRevision: 3, modRevision: 7, version: 2 };

/** The record layout written before records were sealed: header, then the value. */
function unsealedLatest(v: KeyValue): Buffer {
  const b = Buffer.alloc(24 + v.value.length);
  b.writeDoubleBE(v.createRevision, 0);
  b.writeDoubleBE(v.modRevision, 8);
  b.writeDoubleBE(v.version, 16);
  b.set(v.value, 24);
  return b;
}

describe('record envelope', () => {
  it('reads back what it wrote, for current, history and tombstone records', () => {
    expect(decodeLatest('a', encodeLatest(kv))).toEqual(kv);
    expect(decodeHistory('a', encodeHistory(kv, false))).toEqual(kv);
    expect(decodeHistory('a', encodeHistory(kv, true))).toBeUndefined();
    expect(decodeHistoryRecord('a', 7, encodeHistory(kv, true))).toEqual(kv);
    expect(isTombstone(encodeHistory(kv, true))).toBe(true);
    expect(isTombstone(encodeHistory(kv, false))).toBe(false);
  });

  it('still reads records of the earlier unsealed format', () => {
    const old = unsealedLatest(kv);
    expect(decodeLatest('a', old)).toEqual(kv);
    expect(decodeHistory('a', Buffer.concat([Buffer.from([1]), old]))).toEqual(kv);
    expect(decodeHistory('a', Buffer.concat([Buffer.from([0]), old]))).toBeUndefined();
    expect(isTombstone(Buffer.concat([Buffer.from([0]), old]))).toBe(true);
  });

  it('reports every single flipped byte of a sealed record as corrupt, never as another value', () => {
    for (const encoded of [encodeLatest(kv), encodeHistory(kv, false), encodeHistory(kv, true)]) {
      for (let i = 0; i < encoded.length; i++) {
        for (const bit of [0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80]) {
          const b = Buffer.from(encoded);
          b[i] = b[i]! ^ bit;
          const read = (): unknown => (encoded[0] === 0xe5 ? decodeLatest('a', b) : decodeHistory('a', b));
          expect(read).toThrow(MvccError);
        }
      }
    }
  });

  it('names the key in the error', () => {
    const b = encodeLatest(kv);
    b[b.length - 1] ^= 0x04;
    expect(() => decodeLatest('/registry/configmaps/default/x', b)).toThrow(/checksum mismatch in current record of \/registry\/configmaps\/default\/x/);
  });
});
