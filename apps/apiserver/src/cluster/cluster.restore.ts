/**
 * Restoring a node's data dir from a snapshot saved with `etcdctl snapshot save` (docs/backup.md).
 *
 * The file is the store's own snapshot (MvccStore's export) in etcdctl's framing: zero padding to
 * a multiple of 512 bytes, then the SHA-256 of everything before it. A restore checks that hash,
 * validates the whole snapshot, and writes a new data dir for one member of a new cluster:
 *   - `mvcc/`: the snapshot imported (keys, values, revisions and retained history, so clients'
 *     resourceVersions stay valid), then, as the entry after the snapshot's applied index, the
 *     deletion of the old cluster's member records and removal markers: the new cluster's
 *     members are the ones `--initial-cluster` names, and each writes its own record when it
 *     starts;
 *   - `raft/`: a Raft log that starts after that entry, with a snapshot record (no data: the
 *     store holds it) whose configuration is the new cluster's voters, term 1, commit at it.
 * Every member restored from the same file with the same `--initial-cluster` gets the same store
 * at the same index, so they start as a consistent cluster and elect a leader as a new one does.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { MvccStore, inspectSnapshot, type SnapshotSummary } from '@app/mvcc';
import { LevelDbRaftStorage } from '@app/raft';
import { ALARM_PREFIX, looksLikeBolt } from '@app/storage';
import { type ClusterMemberSpec, nodeIdFromName, parseInitialCluster, validateNodeName } from './cluster.ids.js';
import { MEMBER_PREFIX, REMOVED_PREFIX } from './cluster.members.js';

/** Bytes of etcdctl's trailer: the SHA-256 of the padded snapshot. */
const HASH_BYTES = 32;
/** etcdctl pads a snapshot to a multiple of this before the hash. */
const PAD_TO = 512;

/** A restore that cannot be done (bad file, data dir in use, bad member list). */
export class RestoreError extends Error {
  override readonly name = 'RestoreError';
}

/** The zero padding that frames a snapshot of `bytes` bytes for etcdctl. */
export function snapshotPadding(bytes: number): number {
  return (PAD_TO - (bytes % PAD_TO)) % PAD_TO;
}

/** What a snapshot file holds (SnapshotSummary), and its size on disk. */
export interface SnapshotFileSummary extends SnapshotSummary {
  fileBytes: number;
  /** The file's SHA-256 trailer (hex), when it has etcdctl's framing. */
  sha256?: string;
}

/**
 * Checks a snapshot file: etcdctl's framing (512n + 32 bytes) and its SHA-256 unless
 * `skipHashCheck`, then the snapshot inside (MvccError('Corrupt') when malformed). With
 * `skipHashCheck` a file without the framing is read as a bare export.
 */
export async function inspectSnapshotFile(file: string, opts: { skipHashCheck?: boolean } = {}): Promise<SnapshotFileSummary> {
  let size: number;
  try {
    size = (await stat(file)).size;
  } catch (e) {
    throw new RestoreError(`cannot read ${file}: ${(e as Error).message}`);
  }
  if (await isEtcdBackendFile(file))
    throw new RestoreError(
      `${file} is an etcd backend file (a snapshot of etcd), not a backup of the built-in store: \`npm run snapshot -- from-etcd ${file} --out FILE\` makes one of it`,
    );
  const framed = size >= HASH_BYTES && (size - HASH_BYTES) % PAD_TO === 0;
  let sha256: string | undefined;
  if (framed) {
    const hash = createHash('sha256');
    for await (const chunk of createReadStream(file, { start: 0, end: size - HASH_BYTES - 1, highWaterMark: 1 << 20 })) hash.update(chunk as Buffer);
    const trailer = await readTail(file, size);
    sha256 = trailer.toString('hex');
    if (!opts.skipHashCheck && !hash.digest().equals(trailer)) {
      throw new RestoreError(`${file}: snapshot file integrity check failed: its SHA-256 does not match the one it ends with`);
    }
  } else if (!opts.skipHashCheck) {
    throw new RestoreError(`${file}: ${size} bytes is not the size of a snapshot saved by etcdctl (a multiple of 512, then a 32-byte hash)`);
  }
  const body = framed ? size - HASH_BYTES : size;
  const summary = await inspectSnapshot(body === 0 ? [] : createReadStream(file, { start: 0, end: body - 1, highWaterMark: 1 << 20 }));
  return { ...summary, fileBytes: size, ...(sha256 ? { sha256 } : {}) };
}

/** A RestoreError when `out`, a file a conversion is to write, exists already. */
export async function refuseExisting(out: string): Promise<void> {
  if (
    await stat(out)
      .then(() => true)
      .catch(() => false)
  )
    throw new RestoreError(`${out} exists: name a new file`);
}

/** True when `file` starts as a bbolt database does (etcd's backend). */
export async function isEtcdBackendFile(file: string): Promise<boolean> {
  const fh = await open(file, 'r').catch(() => undefined);
  if (!fh) return false;
  try {
    const head = Buffer.alloc(64);
    const { bytesRead } = await fh.read(head, 0, head.length, 0);
    return looksLikeBolt(head.subarray(0, bytesRead));
  } finally {
    await fh.close();
  }
}

async function readTail(file: string, size: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of createReadStream(file, { start: size - HASH_BYTES, end: size - 1 })) parts.push(chunk as Buffer);
  return Buffer.concat(parts);
}

/** Options of restoreSnapshot. */
export interface RestoreOptions {
  /** The snapshot file (`etcdctl snapshot save`). */
  file: string;
  /** The new member's data dir; its `mvcc`, `raft` and `snap` must be absent or empty. */
  dataDir: string;
  /** The member's name (`--name` of the server). */
  name: string;
  /** The new cluster's members, `name=host:port,...`; absent: this member alone (a single node). */
  initialCluster?: string;
  skipHashCheck?: boolean;
}

/** What restoreSnapshot wrote. */
export interface RestoreResult {
  snapshot: SnapshotFileSummary;
  /** The Raft index the new log starts after (the store's applied index). */
  index: number;
  /** The store's revision after the restore (the snapshot's, plus one when member records were dropped). */
  revision: number;
  /** Member records and removal markers of the old cluster that were dropped. */
  droppedMemberKeys: number;
  members: ClusterMemberSpec[];
}

/** Writes a new member's data dir from a snapshot file (see the module comment). */
export async function restoreSnapshot(o: RestoreOptions): Promise<RestoreResult> {
  const bad = validateNodeName(o.name);
  if (bad) throw new RestoreError(`--name: ${bad}`);
  const members = o.initialCluster ? parseInitialCluster(o.initialCluster) : [{ name: o.name, id: nodeIdFromName(o.name), peerAddress: '127.0.0.1:2380' }];
  if (!members.some((m) => m.name === o.name)) throw new RestoreError(`--initial-cluster does not list this member (--name ${o.name})`);
  const dirs = { mvcc: join(o.dataDir, 'mvcc'), raft: join(o.dataDir, 'raft'), snap: join(o.dataDir, 'snap') };
  for (const [what, dir] of Object.entries(dirs)) {
    const entries = await readdir(dir).catch(() => [] as string[]);
    if (entries.length > 0) throw new RestoreError(`${o.dataDir} already holds a node's data (${what}/): restore into a new data dir`);
  }
  const snapshot = await inspectSnapshotFile(o.file, { skipHashCheck: o.skipHashCheck });
  await mkdir(dirs.mvcc, { recursive: true });
  await mkdir(dirs.raft, { recursive: true });
  await mkdir(dirs.snap, { recursive: true, mode: 0o700 });

  const store = await MvccStore.open(dirs.mvcc);
  let index: number;
  let revision: number;
  let droppedMemberKeys: number;
  try {
    await store.importSnapshotFrom(() => createReadStream(o.file, { start: 0, end: snapshot.bytes - 1, highWaterMark: 1 << 20 }));
    // The old cluster's members, removal markers and alarms (which name its members).
    const stale = [...(await store.range(MEMBER_PREFIX)).kvs, ...(await store.range(REMOVED_PREFIX)).kvs, ...(await store.range(ALARM_PREFIX)).kvs].map(
      (kv) => kv.key,
    );
    index = store.appliedIndex() + 1;
    await store.apply(index, { compares: [], success: stale.map((key) => ({ type: 'delete' as const, key })), failure: [] }, { sync: true });
    revision = store.currentRevision();
    droppedMemberKeys = stale.length;
  } finally {
    await store.close();
  }

  const raft = await LevelDbRaftStorage.open(dirs.raft, { sync: true });
  try {
    await raft.save({
      snapshot: { metadata: { index, term: 1, confState: { voters: members.map((m) => m.id), learners: [] } }, data: new Uint8Array(0) },
      hardState: { term: 1, vote: 0, commit: index },
      entries: [],
    });
  } finally {
    await raft.close();
  }
  return { snapshot, index, revision, droppedMemberKeys, members };
}
