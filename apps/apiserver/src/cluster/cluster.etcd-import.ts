/**
 * An etcd backend file (what `etcdctl snapshot save` writes against etcd, or a member's
 * `member/snap/db` copied while it was stopped) made into a backup of the built-in store, which
 * `npm run snapshot -- restore` then makes members' data dirs from (docs/backup.md "Moving from
 * etcd"). A cluster that ran the API server on etcd (`--storage-backend=etcd3`) moves to the
 * built-in store keeping every key, value and revision: resourceVersions stay what clients saw.
 *
 * What is carried (etcd 3.4's backend layout, the inverse of cluster.etcd-export.ts):
 * - bucket `key`: revision keys (8 bytes of main revision big-endian, `_`, 8 bytes of sub
 *   revision, and `t` after them for a deletion) in revision order, each with its
 *   mvccpb.KeyValue: the history, every put and deletion etcd still holds. Keys are bytes in
 *   etcd and strings in the store: they map as the etcd API maps them (docs/etcd-api.md "Keys").
 *   Each becomes the store's records of that change (snapshotOfHistory), so reads at past
 *   revisions and watches from them answer as etcd answered. A key's newest record decides
 *   whether it is live now.
 * - bucket `lease`: each lease (leasepb.Lease) with its TTL. A lease's clock starts again at its
 *   TTL when the new cluster's leader takes it, as etcd's own restore does. The lease of each
 *   version in `key` becomes the store's attachment records, changed in the revisions where a
 *   key's lease changed, so past reads name the lease they named on etcd; a current version
 *   whose lease the bucket does not hold is carried without one.
 * - bucket `meta`: the compacted revision (`finishedCompactRev`, or `scheduledCompactRev` when
 *   a compaction was under way: etcd finishes it when it starts) and `consistent_index` (kept
 *   as the store's applied index).
 * The store's revision is etcd's current one (the newest record's main revision, at least the
 * compacted one), and the backup is compacted where etcd was. A tombstone of a key under the
 * store's reserved prefix is the mark the export leaves when its last revisions touched only
 * such keys (cluster.etcd-export.ts): it counts for the revision and is otherwise skipped.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, open, rm, stat, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type HistoryChange, snapshotOfHistory } from '@app/mvcc';
import { ATTACH_PREFIX, BoltReader, attachmentRecord, isReservedKey, leaseRecord } from '@app/storage';
import { bytesToKey } from '../etcd/etcd.convert.js';
import { REVISION_MARK_KEY, etcdRecordTypes } from './cluster.etcd-export.js';
import { RestoreError, inspectSnapshotFile, refuseExisting, snapshotPadding, type SnapshotFileSummary } from './cluster.restore.js';

/** Bytes of the hash `etcdctl snapshot save` appends to the database. */
const HASH_BYTES = 32;
/** Versions handed to the snapshot encoder at a time. */
const CHUNK = 500;

/** What importFromEtcd wrote. */
export interface EtcdImportResult {
  /** The backup written, as `snapshot status` describes it. */
  snapshot: SnapshotFileSummary;
  /** etcd's current revision: the store's revision in the backup. */
  revision: number;
  /** etcd's compacted revision, the backup's too (0: never compacted). */
  compacted: number;
  /** Changes carried (puts and deletions of the history). */
  changes: number;
  /** Live keys carried. */
  keys: number;
  leases: number;
  /** Live keys whose lease was not in the lease bucket: carried without a lease. */
  orphanedLeaseKeys: number;
}

/** A revision key of etcd's `key` bucket. */
interface RevisionKey {
  main: number;
  sub: number;
  tombstone: boolean;
}

function revisionKey(k: Buffer): RevisionKey {
  if ((k.length !== 17 && !(k.length === 18 && k[17] === 0x74)) || k[8] !== 0x5f)
    throw new RestoreError(`not an etcd backend: the key bucket holds the key ${k.toString('hex')}, which is no revision`);
  const main = k.readBigUInt64BE(0);
  if (main > BigInt(Number.MAX_SAFE_INTEGER)) throw new RestoreError(`revision ${main} is beyond what the store counts`);
  return { main: Number(main), sub: Number(k.readBigUInt64BE(9)), tombstone: k.length === 18 };
}

function counter(v: unknown, what: string): number {
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 0) throw new RestoreError(`${what}: ${String(v)} is not a revision, version or TTL`);
  return n;
}

/**
 * The store key of a `key` bucket record; undefined for the export's revision mark (a tombstone
 * of a reserved key). Any other key under the reserved prefix is refused: the store keeps its
 * lease records there.
 */
function recordKey(rec: { key?: Buffer }, at: RevisionKey): string | undefined {
  if (!rec.key || rec.key.length === 0) throw new RestoreError(`the record of revision ${at.main}.${at.sub} has no key`);
  const key = bytesToKey(rec.key);
  if (!isReservedKey(key)) return key;
  if (at.tombstone && key === REVISION_MARK_KEY) return undefined;
  throw new RestoreError(`the key ${JSON.stringify(key)} lies under the prefix the store keeps for its own lease records; it cannot be carried`);
}

/**
 * Writes `out`, a backup of the built-in store in etcdctl's framing, from the etcd backend file
 * `file` (see the module comment); `out` must not exist. `skipHashCheck`: accept a file without
 * etcdctl's SHA-256 trailer (a copied `member/snap/db`), or one whose hash does not match.
 */
export async function importFromEtcd(o: { file: string; out: string; skipHashCheck?: boolean }): Promise<EtcdImportResult> {
  await refuseExisting(o.out);
  let size: number;
  try {
    size = (await stat(o.file)).size;
  } catch (e) {
    throw new RestoreError(`cannot read ${o.file}: ${(e as Error).message}`);
  }
  // etcdctl's rule: a database is whole pages (512n), the saved snapshot 32 bytes of hash more.
  const hashed = size % 512 === HASH_BYTES;
  if (hashed && !o.skipHashCheck) {
    const hash = createHash('sha256');
    for await (const chunk of createReadStream(o.file, { start: 0, end: size - HASH_BYTES - 1, highWaterMark: 1 << 20 })) hash.update(chunk as Buffer);
    const tail = Buffer.alloc(HASH_BYTES);
    const fh = await open(o.file, 'r');
    try {
      await fh.read(tail, 0, HASH_BYTES, size - HASH_BYTES);
    } finally {
      await fh.close();
    }
    if (!hash.digest().equals(tail)) throw new RestoreError(`${o.file}: snapshot file integrity check failed: its SHA-256 does not match the one it ends with`);
  } else if (!hashed && !o.skipHashCheck) {
    throw new RestoreError(
      `${o.file} has no SHA-256 trailer (is it a member's db file rather than a snapshot saved by etcdctl?): pass --skip-hash-check to take it as it is`,
    );
  }
  const bolt = await BoltReader.open(o.file, hashed ? size - HASH_BYTES : size).catch((e: Error) => {
    throw new RestoreError(e.message);
  });
  try {
    const names = (await bolt.bucketNames()).map((n) => n.toString('latin1'));
    if (!names.includes('key') || !names.includes('meta'))
      throw new RestoreError(`${o.file} is a bbolt database but not etcd's backend: it has no key and meta buckets`);
    const { keyValue, lease: leaseType } = etcdRecordTypes();
    const decode = (v: Buffer, where: RevisionKey) => {
      try {
        return keyValue.toObject(keyValue.decode(v), { longs: String, bytes: Buffer }) as {
          key?: Buffer;
          create_revision?: string;
          mod_revision?: string;
          version?: string;
          value?: Buffer;
          lease?: string;
        };
      } catch (e) {
        throw new RestoreError(`the record of revision ${where.main}.${where.sub} is damaged: ${(e as Error).message}`);
      }
    };

    let compacted = 0;
    let appliedIndex = 0;
    for await (const [k, v] of bolt.entries('meta')) {
      const name = k.toString('latin1');
      if ((name === 'finishedCompactRev' || name === 'scheduledCompactRev') && v.length >= 8)
        compacted = Math.max(compacted, counter(v.readBigUInt64BE(0), name));
      if (name === 'consistent_index' && v.length === 8) appliedIndex = counter(v.readBigUInt64BE(0), 'consistent_index');
    }

    // Pass 1: each key's newest record (revision order is the bucket's order).
    const newest = new Map<string, RevisionKey>();
    let revision = Math.max(1, compacted);
    for await (const [k, v] of bolt.entries('key')) {
      const at = revisionKey(k);
      revision = Math.max(revision, at.main);
      const key = recordKey(decode(v, at), at);
      if (key === undefined) continue;
      if (at.tombstone) newest.delete(key);
      else newest.set(key, at);
    }

    const leases = new Map<string, number>();
    for await (const [k, v] of bolt.entries('lease')) {
      if (k.length !== 8) throw new RestoreError(`the lease bucket holds the key ${k.toString('hex')}, which is no lease id`);
      let ttl: number;
      try {
        ttl = counter((leaseType.toObject(leaseType.decode(v), { longs: String }) as { TTL?: string }).TTL ?? '0', 'lease TTL');
      } catch (e) {
        throw e instanceof RestoreError ? e : new RestoreError(`the lease ${k.readBigInt64BE(0)} is damaged: ${(e as Error).message}`);
      }
      leases.set(k.readBigInt64BE(0).toString(), ttl);
    }

    // Leases as the store records them (etcd.applier.ts): a key's attachment is a record written
    // in the revision of the put that changes the key's lease, and deleted with the key or by a
    // put that takes the lease away. A put leaves its own lease attached, except a current
    // version whose lease the file does not hold: that key is carried without one.
    const isCurrent = (key: string, at: RevisionKey) => {
      const live = newest.get(key);
      return live !== undefined && live.main === at.main && live.sub === at.sub;
    };
    const leaseLeft = (rec: { lease?: string }, current: boolean) => {
      const lease = BigInt.asIntN(64, BigInt(rec.lease ?? '0')).toString();
      return lease !== '0' && (!current || leases.has(lease)) ? lease : '0';
    };
    interface Attachment {
      lease: string;
      createRevision: number;
      version: number;
    }
    const attach = (state: Map<string, Attachment>, key: string, lease: string, at: number): 'put' | 'delete' | undefined => {
      const now = state.get(key);
      if ((now?.lease ?? '0') === lease) return undefined;
      if (lease === '0') {
        state.delete(key);
        return 'delete';
      }
      state.set(key, { lease, createRevision: now?.createRevision ?? at, version: (now?.version ?? 0) + 1 });
      return 'put';
    };
    // Pass 2: where each key's attachment last changes (that record is its current version).
    const lastAttach = new Map<string, string>();
    {
      const state = new Map<string, Attachment>();
      for await (const [k, v] of bolt.entries('key')) {
        const at = revisionKey(k);
        const rec = decode(v, at);
        const key = recordKey(rec, at);
        if (key === undefined) continue;
        const change = attach(state, key, at.tombstone ? '0' : leaseLeft(rec, isCurrent(key, at)), at.main);
        if (change === 'put') lastAttach.set(key, `${at.main}.${at.sub}`);
        else if (change === 'delete') lastAttach.delete(key);
      }
    }

    // Pass 3: every change, the newest put of each live key marked current, with the attachment
    // changes, then the lease records (at the store's revision: when the store wrote them does
    // not matter).
    let orphanedLeaseKeys = 0;
    let changes = 0;
    async function* history(): AsyncGenerator<HistoryChange[]> {
      const state = new Map<string, Attachment>();
      let chunk: HistoryChange[] = [];
      for await (const [k, v] of bolt.entries('key')) {
        const at = revisionKey(k);
        const rec = decode(v, at);
        const key = recordKey(rec, at);
        if (key === undefined) continue;
        changes++;
        let lease = '0';
        if (at.tombstone) {
          chunk.push({ type: 'delete', key, revision: at.main });
        } else {
          const modRevision = counter(rec.mod_revision, `mod revision of ${key}`);
          if (modRevision !== at.main)
            throw new RestoreError(`the record of revision ${at.main}.${at.sub} (${key}) says it was written at revision ${modRevision}`);
          const current = isCurrent(key, at);
          const kv = {
            key,
            createRevision: counter(rec.create_revision, `create revision of ${key}`),
            modRevision,
            version: counter(rec.version, `version of ${key}`),
            value: new Uint8Array(rec.value ?? Buffer.alloc(0)),
          };
          chunk.push({ type: 'put', kv, current });
          lease = leaseLeft(rec, current);
          if (current && lease === '0' && leaseLeft(rec, false) !== '0') orphanedLeaseKeys++;
        }
        const change = attach(state, key, lease, at.main);
        if (change === 'delete') chunk.push({ type: 'delete', key: ATTACH_PREFIX + key, revision: at.main });
        if (change === 'put') {
          const a = state.get(key)!;
          const r = attachmentRecord(key, lease);
          chunk.push({
            type: 'put',
            kv: { key: r.key, createRevision: a.createRevision, modRevision: at.main, version: a.version, value: r.value },
            current: lastAttach.get(key) === `${at.main}.${at.sub}`,
          });
        }
        if (chunk.length >= CHUNK) {
          yield chunk;
          chunk = [];
        }
      }
      for (const [id, ttl] of leases) {
        const r = leaseRecord(id, ttl);
        chunk.push({ type: 'put', kv: { key: r.key, createRevision: revision, modRevision: revision, version: 1, value: r.value }, current: true });
      }
      yield chunk;
    }

    const header = { revision, applied: Math.max(1, appliedIndex), compacted };
    await writeFramed(o.out, snapshotOfHistory(header, history()));
    const snapshot = await inspectSnapshotFile(o.out);
    return { snapshot, revision, compacted, changes, keys: newest.size, leases: leases.size, orphanedLeaseKeys };
  } catch (e) {
    await unlink(o.out).catch(() => undefined);
    throw e;
  } finally {
    await bolt.close();
  }
}

/** Writes `pieces` to a new file `out` in etcdctl's framing (zero padding to 512n, then the SHA-256), fsynced. */
async function writeFramed(out: string, pieces: AsyncIterable<Buffer>): Promise<void> {
  const fh = await open(out, 'wx', 0o600);
  try {
    const hash = createHash('sha256');
    let bytes = 0;
    const write = async (b: Buffer) => {
      hash.update(b);
      for (let at = 0; at < b.length;) at += (await fh.write(b, at)).bytesWritten;
    };
    for await (const piece of pieces) {
      await write(piece);
      bytes += piece.length;
    }
    await write(Buffer.alloc(snapshotPadding(bytes)));
    const digest = hash.digest();
    for (let at = 0; at < digest.length;) at += (await fh.write(digest, at)).bytesWritten;
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * Runs `use` on a backup made from the etcd backend file `file` (importFromEtcd into a scratch
 * directory, removed afterwards): `restore` and `status` take etcd's files this way.
 */
export async function withImportedEtcdFile<T>(
  file: string,
  skipHashCheck: boolean,
  use: (backup: string, imported: EtcdImportResult) => Promise<T>,
): Promise<T> {
  const work = await mkdtemp(join(tmpdir(), 'kapi-etcd-import-'));
  try {
    const backup = join(work, 'backup.db');
    return await use(backup, await importFromEtcd({ file, out: backup, skipHashCheck }));
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
