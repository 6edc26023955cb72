import { status as GrpcStatus } from '@grpc/grpc-js';
import fc from 'fast-check';
import { MvccError } from '@app/mvcc';
import { StorageError } from '@app/storage';
import { EtcdApiError, bytesToKey, keyBytes, putSpecIn, rangeIn, toServiceError, txnSpecIn } from './etcd.convert.js';

const b = (s: string): Buffer => Buffer.from(s);
const put = (key: string) => ({ request_put: { key: b(key), value: b('v'), lease: '0' } });
const del = (key: string, end?: string) => ({ request_delete_range: { key: b(key), ...(end ? { range_end: b(end) } : {}) } });

describe('etcd wire conversions', () => {
  it('keeps UTF-8 keys as they are and round-trips any bytes (NUL, invalid UTF-8, the escape range)', () => {
    expect(bytesToKey(b('/registry/core/pods/a/é'))).toBe('/registry/core/pods/a/é');
    for (const bytes of [
      Buffer.from([0x2f, 0x00, 0xff, 0x80, 0x41]),
      Buffer.from([0xf4, 0x8f, 0xbc, 0x80]),
      Buffer.from('ok\uFFFD', 'utf8'),
      Buffer.from([0xc3]),
      Buffer.from([0xef, 0xbb, 0xbf, 0x61]),
    ]) {
      const key = bytesToKey(bytes);
      expect(key.includes('\u0000')).toBe(false);
      expect(keyBytes(key).equals(bytes)).toBe(true);
    }
  });

  it('maps any bytes as a piece-by-piece decoder does, to a flat string, and back', () => {
    // The definition, one byte or one UTF-8 sequence at a time: a sequence stays when a strict
    // decoder reads it back to the same bytes and it is below the escape range.
    const reference = (bytes: Buffer): string => {
      let out = '';
      for (let i = 0; i < bytes.length;) {
        const c = bytes[i]!;
        const n = c === 0 ? 0 : c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
        if (n > 0 && i + n <= bytes.length) {
          const piece = bytes.subarray(i, i + n);
          let t: string | undefined;
          try {
            // ignoreBOM: EF BB BF is U+FEFF like any other character, not a mark to drop.
            t = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(piece);
          } catch {
            t = undefined;
          }
          if (t !== undefined && t.codePointAt(0)! < 0x10ff00) {
            out += t;
            i += n;
            continue;
          }
        }
        out += String.fromCodePoint(0x10ff00 + c);
        i++;
      }
      return out;
    };
    // Bytes drawn to hit NUL, ASCII, lead and continuation bytes and the escape range's own
    // encoding (F4 8F BC..BF) often.
    const byte = fc.oneof(
      fc.constantFrom(0x00, 0x2f, 0x41, 0x80, 0x8f, 0xbc, 0xbf, 0xc0, 0xc2, 0xdf, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff),
      fc.integer({ min: 0, max: 255 }),
    );
    fc.assert(
      fc.property(fc.array(byte, { maxLength: 40 }), (arr) => {
        const bytes = Buffer.from(arr);
        const key = bytesToKey(bytes);
        expect(key).toBe(reference(bytes));
        expect(keyBytes(key).equals(bytes)).toBe(true);
      }),
      { numRuns: 5000 },
    );
    // etcdctl check perf's keys: a prefix, a varint, then NULs.
    const perf = Buffer.concat([b('/etcdctl-check-perf/'), Buffer.from([0x96, 0xe4, 0x01]), Buffer.alloc(253)]);
    expect(bytesToKey(perf)).toBe(reference(perf));
    expect(keyBytes(bytesToKey(perf)).equals(perf)).toBe(true);
    // Keys of valid UTF-8 (astral code points included) keep their bytes.
    expect(keyBytes('/a/\u{1F600}/\u00e9/\u{10FEFF}').equals(b('/a/\u{1F600}/\u00e9/\u{10FEFF}'))).toBe(true);
  });

  it('reads etcd ranges: one key, [key, end), from key with "\\0", everything from "\\0"', () => {
    expect(rangeIn(b('/a'), Buffer.alloc(0))).toEqual({ key: '/a' });
    expect(rangeIn(b('/a'), b('/b'))).toEqual({ key: '/a', end: '/b' });
    expect(rangeIn(b('/a'), Buffer.from([0]))).toEqual({ key: '/a', end: '\u0000' });
    expect(rangeIn(Buffer.from([0]), Buffer.from([0]))).toEqual({ key: '\u0000', end: '\u0000' });
    expect(() => rangeIn(Buffer.alloc(0), undefined)).toThrow('etcdserver: key is not provided');
  });

  it("applies etcd's Put argument rules", () => {
    expect(() => putSpecIn({ key: b('/k'), value: b('v'), ignore_value: true })).toThrow('etcdserver: value is provided');
    expect(() => putSpecIn({ key: b('/k'), lease: '5', ignore_lease: true })).toThrow('etcdserver: lease is provided');
    expect(() => putSpecIn({ key: b('\u0001etcd/lease/1'), value: b('x') })).toThrow(EtcdApiError);
    expect(putSpecIn({ key: b('/k'), value: b('v'), lease: '12', prev_kv: true })).toEqual({
      key: '/k',
      value: b('v'),
      lease: '12',
      prevKv: true,
      ignoreValue: false,
      ignoreLease: false,
    });
  });

  it("refuses a Txn branch that puts a key twice or puts and deletes it (etcd's duplicate key rule)", () => {
    const dup = 'etcdserver: duplicate key given in txn request';
    expect(() => txnSpecIn({ success: [put('/a'), put('/a')] })).toThrow(dup);
    expect(() => txnSpecIn({ success: [put('/a/1'), del('/a/', '/a0')] })).toThrow(dup);
    expect(() => txnSpecIn({ success: [put('/a'), { request_txn: { success: [put('/a')] } }] })).toThrow(dup);
    // Different branches, and overlapping deletes, are fine.
    expect(txnSpecIn({ success: [put('/a')], failure: [put('/a')] }).success).toHaveLength(1);
    expect(txnSpecIn({ success: [del('/a', '/c'), del('/b', '/d')] }).success).toHaveLength(2);
    // The two branches of a nested Txn may put the same key (only one runs), not the level around them.
    expect(txnSpecIn({ success: [{ request_txn: { success: [put('/a')], failure: [put('/a')] } }] }).success).toHaveLength(1);
    expect(() => txnSpecIn({ success: [{ request_txn: { success: [put('/a')], failure: [put('/a')] } }, put('/a')] })).toThrow(dup);
    expect(() => txnSpecIn({ success: [{ request_txn: { failure: [put('/a/1')] } }, del('/a/', '/a0')] })).toThrow(dup);
    expect(() => txnSpecIn({ success: [{ request_txn: { success: [put('/a')] } }, { request_txn: { failure: [put('/a')] } }] })).toThrow(dup);
    // Put by one nested Txn, deleted by a later one: refused here (etcd lets it pass).
    expect(() => txnSpecIn({ success: [{ request_txn: { success: [put('/a/1')] } }, { request_txn: { success: [del('/a/', '/a0')] } }] })).toThrow(dup);
    expect(() => txnSpecIn({ success: [{ request_txn: { success: [del('/a/', '/a0')] } }, { request_txn: { success: [put('/a/1')] } }] })).toThrow(dup);
    expect(() => txnSpecIn({ success: Array.from({ length: 129 }, (_, i) => put(`/k${i}`)) })).toThrow('etcdserver: too many operations in txn request');
  });

  it("maps store failures to etcd's gRPC errors", () => {
    expect(toServiceError(new MvccError('Compacted', 'x', 5))).toEqual({
      code: GrpcStatus.OUT_OF_RANGE,
      details: 'etcdserver: mvcc: required revision has been compacted',
    });
    expect(toServiceError(new MvccError('FutureRevision', 'x', 5))).toEqual({
      code: GrpcStatus.OUT_OF_RANGE,
      details: 'etcdserver: mvcc: required revision is a future revision',
    });
    expect(toServiceError(new StorageError('NoSpace', '', 'etcdserver: mvcc: database space exceeded (this node ...)'))).toEqual({
      code: GrpcStatus.RESOURCE_EXHAUSTED,
      details: 'etcdserver: mvcc: database space exceeded',
    });
  });
});
