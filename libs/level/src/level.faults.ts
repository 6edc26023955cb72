/**
 * Test-only disk faults (docs/disk-faults.md): a switch that makes this process's storage
 * writes fail or slow down as a failing disk would, driven at run time by a control file.
 *
 * Nothing here runs unless a switch was installed (installDiskFaults), which only the server's
 * `--test-disk-faults` flag does, and only with KAPI_TEST_FAULTS=1 in its environment. The
 * faults are injected where our code hands a batch to LevelDB (writeBatch) and where it writes
 * a snapshot file, before the real write: the database and the file are left as they were, as
 * after a write the kernel refused.
 *
 * The control file holds one JSON object; a missing or empty file means no faults:
 *   { "write": "EIO" | "ENOSPC",   every write (synced or not) fails with that error
 *     "fsync": "EIO",              every synced write fails with EIO
 *     "fsyncDelayMs": 200,         every synced write first waits that long
 *     "match": "raft" }            only databases/files whose path contains this string
 * It is re-read whenever its modification time or size changes, checked at every write, so a
 * fault written by a test applies to the very next write.
 */
import { readFileSync, statSync } from 'node:fs';

/** The faults the control file may ask for. */
export interface DiskFaultPlan {
  readonly write?: 'EIO' | 'ENOSPC';
  readonly fsync?: 'EIO';
  readonly fsyncDelayMs?: number;
  readonly match?: string;
}

/** Raised for a control file that is not a valid plan (the server then refuses to start). */
export class DiskFaultPlanError extends Error {}

const MESSAGES = { EIO: 'Input/output error', ENOSPC: 'No space left on device' } as const;

/**
 * An injected failure, shaped like classic-level's own I/O errors (code LEVEL_IO_ERROR, the
 * message LevelDB builds from the file and strerror) plus the errno name, so that every layer
 * above treats it exactly as a real one.
 */
export class InjectedDiskError extends Error {
  readonly code = 'LEVEL_IO_ERROR';
  constructor(
    readonly errno: 'EIO' | 'ENOSPC',
    where: string,
    op: string,
  ) {
    super(`IO error: ${where}: ${MESSAGES[errno]} (injected on ${op})`);
  }
}

/** Parses and checks a control file's text; throws DiskFaultPlanError. */
export function parseDiskFaultPlan(text: string): DiskFaultPlan {
  if (text.trim() === '') return {};
  let o: unknown;
  try {
    o = JSON.parse(text);
  } catch (e) {
    throw new DiskFaultPlanError(`disk fault control file is not JSON: ${(e as Error).message}`);
  }
  if (typeof o !== 'object' || o === null || Array.isArray(o)) throw new DiskFaultPlanError('disk fault control file must hold a JSON object');
  const p = o as Record<string, unknown>;
  for (const k of Object.keys(p))
    if (!['write', 'fsync', 'fsyncDelayMs', 'match'].includes(k)) throw new DiskFaultPlanError(`unknown disk fault ${JSON.stringify(k)}`);
  if (p.write !== undefined && p.write !== 'EIO' && p.write !== 'ENOSPC') throw new DiskFaultPlanError('"write" must be "EIO" or "ENOSPC"');
  if (p.fsync !== undefined && p.fsync !== 'EIO') throw new DiskFaultPlanError('"fsync" must be "EIO"');
  if (p.fsyncDelayMs !== undefined && !(typeof p.fsyncDelayMs === 'number' && p.fsyncDelayMs >= 0 && p.fsyncDelayMs <= 60_000))
    throw new DiskFaultPlanError('"fsyncDelayMs" must be a number of milliseconds from 0 to 60000');
  if (p.match !== undefined && typeof p.match !== 'string') throw new DiskFaultPlanError('"match" must be a string');
  return p as DiskFaultPlan;
}

/** The switch: the current plan from the control file, and counts of what it injected. */
export class DiskFaultSwitch {
  private plan: DiskFaultPlan = {};
  private seen = '';
  /** Faults injected so far, by kind (write-EIO, write-ENOSPC, fsync-EIO, fsync-delay). */
  readonly injected = new Map<string, number>();

  /** Reads `controlFile` now (throws DiskFaultPlanError when it is not a valid plan). */
  constructor(readonly controlFile: string) {
    this.refresh(true);
  }

  /** The plan in force (re-read when the file changed; a bad edit keeps the previous plan). */
  current(): DiskFaultPlan {
    this.refresh(false);
    return this.plan;
  }

  private refresh(strict: boolean): void {
    let stamp: string;
    try {
      const st = statSync(this.controlFile);
      stamp = `${st.mtimeMs}:${st.size}:${st.ino}`;
    } catch {
      stamp = 'missing';
    }
    if (stamp === this.seen) return;
    try {
      this.plan = stamp === 'missing' ? {} : parseDiskFaultPlan(readFileSync(this.controlFile, 'utf8'));
      this.seen = stamp;
    } catch (e) {
      // A test writing the file may be caught halfway: keep the old plan and look again.
      if (strict) throw e;
    }
  }

  /**
   * Before a write to `where` (a database directory or a file): throws the planned failure, or
   * resolves after the planned fsync delay. `sync`: the write is fsynced.
   */
  before(where: string, sync: boolean): Promise<void> | undefined {
    const p = this.current();
    if (p.match !== undefined && !where.includes(p.match)) return undefined;
    if (p.write) throw this.count(new InjectedDiskError(p.write, where, 'write'), `write-${p.write}`);
    if (sync && p.fsync) throw this.count(new InjectedDiskError(p.fsync, where, 'fsync'), `fsync-${p.fsync}`);
    if (sync && p.fsyncDelayMs) {
      this.count(undefined, 'fsync-delay');
      const ms = p.fsyncDelayMs;
      return new Promise((r) => setTimeout(r, ms));
    }
    return undefined;
  }

  private count<E>(e: E, kind: string): E {
    this.injected.set(kind, (this.injected.get(kind) ?? 0) + 1);
    return e;
  }
}

let active: DiskFaultSwitch | undefined;

/** Installs the process's switch (the server's test mode only). */
export function installDiskFaults(s: DiskFaultSwitch | undefined): void {
  active = s;
}

/** The installed switch, if any. */
export function activeDiskFaults(): DiskFaultSwitch | undefined {
  return active;
}

/**
 * For a write about to be made to `where`: undefined (no switch, or no fault: the common case,
 * one check), a promise to wait for (a slow fsync), or a thrown injected error.
 */
export function diskFaultBefore(where: string, sync: boolean): Promise<void> | undefined {
  return active === undefined ? undefined : active.before(where, sync);
}
