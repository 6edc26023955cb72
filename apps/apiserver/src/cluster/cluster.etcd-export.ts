/**
 * A backup of the built-in store (`etcdctl snapshot save` against a node) made into an etcd
 * backend file: a bbolt database with etcd's buckets, framed as `etcdctl snapshot save` frames
 * etcd's own (the SHA-256 of the database at its end). `etcdctl snapshot status` reads it and
 * `etcdctl snapshot restore` makes etcd members' data dirs from it, so a cluster moves from the
 * built-in store to an etcd cluster (then served with `--storage-backend=etcd3`) keeping every
 * key, value and revision: resourceVersions stay what clients have seen (docs/backup.md).
 *
 * What the file holds (etcd 3.4's backend layout):
 * - bucket `key`: each live key once, at its mod revision, as etcd's revision key (8 bytes of
 *   main revision big-endian, `_`, 8 bytes of sub revision; keys written by one revision get
 *   sub revisions in key order) with the mvccpb.KeyValue (key, create and mod revision,
 *   version, value, lease);
 * - bucket `lease`: each lease (8-byte big-endian id -> leasepb.Lease {ID, TTL});
 * - bucket `meta`: `finishedCompactRev` and `scheduledCompactRev` at the store's revision R
 *   (history before R is not carried: etcd holds the file as compacted at R, and its revision
 *   counter goes on from R), `consistent_index` (the store's applied Raft index).
 * The store's reserved etcd records (lease tables) and the old cluster's member records are
 * left out, as `etcdctl snapshot restore` drops an etcd backup's members.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { appendFile, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import protobuf from 'protobufjs';
import { MvccStore } from '@app/mvcc';
import { findProtoFile } from '@app/raft';
import { EtcdApplier, isReservedKey, writeBoltFile } from '@app/storage';
import { keyBytes } from '../etcd/etcd.convert.js';
import { MEMBER_PREFIX, REMOVED_PREFIX } from './cluster.members.js';
import { inspectSnapshotFile, refuseExisting, type SnapshotFileSummary } from './cluster.restore.js';

/** Keys read per page while listing the store. */
const EXPORT_PAGE = 1000;

/** What exportForEtcd wrote. */
export interface EtcdExportResult {
  snapshot: SnapshotFileSummary;
  /** The store's revision: etcd's current (and compacted) revision after a restore. */
  revision: number;
  keys: number;
  leases: number;
  /** Size of the written file (the database and its 32-byte hash). */
  bytes: number;
}

/** etcd's revision key: main and sub revision, big-endian, joined by `_`. */
export function etcdRevisionKey(main: number, sub: number): Buffer {
  const b = Buffer.alloc(17);
  b.writeBigUInt64BE(BigInt(main), 0);
  b[8] = 0x5f;
  b.writeBigUInt64BE(BigInt(sub), 9);
  return b;
}

function u64be(n: bigint | number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(n), 0);
  return b;
}

/** mvccpb.KeyValue (proto/etcd/kv.proto) and leasepb.Lease (ID = 1, TTL = 2, RemainingTTL = 3, all int64). */
export function etcdRecordTypes(): { keyValue: protobuf.Type; lease: protobuf.Type } {
  const file = findProtoFile('etcd/kv.proto');
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => (isAbsolute(target) ? target : join(dirname(file), target));
  root.loadSync(file, { keepCase: true });
  const lease = new protobuf.Type('Lease')
    .add(new protobuf.Field('ID', 1, 'int64'))
    .add(new protobuf.Field('TTL', 2, 'int64'))
    .add(new protobuf.Field('RemainingTTL', 3, 'int64'));
  new protobuf.Root().define('leasepb').add(lease);
  return { keyValue: root.lookupType('mvccpb.KeyValue'), lease };
}

/** Writes `out` from the snapshot file `file` (see the module comment); `out` must not exist. */
export async function exportForEtcd(o: { file: string; out: string; skipHashCheck?: boolean }): Promise<EtcdExportResult> {
  await refuseExisting(o.out);
  const snapshot = await inspectSnapshotFile(o.file, { skipHashCheck: o.skipHashCheck });
  const work = await mkdtemp(join(tmpdir(), 'kapi-etcd-export-'));
  try {
    const store = await MvccStore.open(join(work, 'mvcc'));
    try {
      await store.importSnapshotFrom(() => createReadStream(o.file, { start: 0, end: snapshot.bytes - 1, highWaterMark: 1 << 20 }));
      const leases = new EtcdApplier(store, () => Date.now());
      await leases.ready();
      const revision = store.currentRevision();
      const { keyValue, lease } = etcdRecordTypes();
      // The keys and their mod revisions first (values are read again one by one as the
      // bucket is written, so memory holds the key list, not the store).
      const live: { key: string; bytes: Buffer; modRevision: number }[] = [];
      for (let after: string | undefined; ;) {
        const page = await store.range('', { limit: EXPORT_PAGE, ...(after !== undefined ? { startAfter: after } : {}) });
        for (const kv of page.kvs) {
          if (isReservedKey(kv.key) || kv.key.startsWith(MEMBER_PREFIX) || kv.key.startsWith(REMOVED_PREFIX)) continue;
          live.push({ key: kv.key, bytes: keyBytes(kv.key), modRevision: kv.modRevision });
        }
        if (page.kvs.length < EXPORT_PAGE) break;
        after = page.kvs[page.kvs.length - 1]!.key;
      }
      live.sort((a, b) => a.modRevision - b.modRevision || Buffer.compare(a.bytes, b.bytes));
      async function* keyEntries(): AsyncGenerator<readonly [Buffer, Buffer]> {
        let sub = 0;
        for (const [i, k] of live.entries()) {
          sub = i > 0 && live[i - 1]!.modRevision === k.modRevision ? sub + 1 : 0;
          const kv = await store.get(k.key);
          if (!kv) throw new Error(`bolt export: ${k.key} vanished from the scratch store`);
          const message = {
            key: k.bytes,
            create_revision: kv.createRevision,
            mod_revision: kv.modRevision,
            version: kv.version,
            value: Buffer.from(kv.value),
            lease: leases.leaseOf(kv.key),
          };
          yield [etcdRevisionKey(kv.modRevision, sub), Buffer.from(keyValue.encode(keyValue.fromObject(message)).finish())];
        }
      }
      const leaseEntries = leases
        .leaseIds()
        .map((id) => BigInt(id))
        .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
        .map((id): [Buffer, Buffer] => [
          u64be(id),
          Buffer.from(lease.encode(lease.fromObject({ ID: id.toString(), TTL: leases.lease(id.toString())!.ttl })).finish()),
        ]);
      const compacted = etcdRevisionKey(revision, 0);
      await writeBoltFile(o.out, [
        { name: Buffer.from('key'), entries: keyEntries() },
        { name: Buffer.from('lease'), entries: leaseEntries },
        {
          name: Buffer.from('meta'),
          entries: [
            [Buffer.from('consistent_index'), u64be(store.appliedIndex())],
            [Buffer.from('finishedCompactRev'), compacted],
            [Buffer.from('scheduledCompactRev'), compacted],
          ],
        },
      ]);
      // etcdctl's framing: the database, then its SHA-256 (the database is whole pages, so 512n).
      const hash = createHash('sha256');
      for await (const chunk of createReadStream(o.out, { highWaterMark: 1 << 20 })) hash.update(chunk as Buffer);
      await appendFile(o.out, hash.digest());
      return { snapshot, revision, keys: live.length, leases: leaseEntries.length, bytes: (await stat(o.out)).size };
    } finally {
      await store.close();
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
