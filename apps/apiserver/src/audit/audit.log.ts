/**
 * The audit log backend (`--audit-log-path`): one line per event, in JSON (an audit.k8s.io/v1
 * Event per line, the default) or in the legacy one-line text format, to a file or to standard
 * output (`-`).
 *
 * Modes (`--audit-log-mode`): `blocking` (the default) writes each event before the request
 * goes on; `blocking-strict` does too, and a request whose RequestReceived event cannot be
 * written fails; `batch` queues events (at most BATCH_BUFFER_EVENTS; more are dropped and
 * counted) and writes them on later turns of the event loop.
 *
 * Rotation as kube-apiserver's (lumberjack): a write that would take the file past
 * `--audit-log-maxsize` megabytes (0: 100) renames it to `<name>-<UTC time>.<ext>` and starts a
 * new one; backups beyond `--audit-log-maxbackup` (0: all kept) or older than
 * `--audit-log-maxage` days (0: no limit) are removed; `--audit-log-compress` gzips each backup.
 * The log and its backups are created readable by the server's user only (0600, directory 0700).
 */
import {
  closeSync,
  createReadStream,
  createWriteStream,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { write as writeAsync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import type { AuditEvent } from '../pipeline/audit.port.js';

export const AUDIT_LOG_FORMATS = ['json', 'legacy'] as const;
export const AUDIT_LOG_MODES = ['blocking', 'blocking-strict', 'batch'] as const;

export interface AuditLogOptions {
  /** The file, or `-` for standard output. */
  path: string;
  format: (typeof AUDIT_LOG_FORMATS)[number];
  mode: (typeof AUDIT_LOG_MODES)[number];
  /** Days a backup is kept (0: no limit). */
  maxAgeDays: number;
  /** Backups kept (0: all). */
  maxBackups: number;
  /** Megabytes a file may grow to before it is rotated (0: 100). */
  maxSizeMB: number;
  /** Gzip backups. */
  compress: boolean;
}

/** Events a batch-mode log holds before it drops new ones. */
export const BATCH_BUFFER_EVENTS = 10_000;

/** Go's RFC3339Nano of an RFC 3339 timestamp: the fraction without trailing zeros. */
function rfc3339Nano(ts: string): string {
  return ts.replace(/\.(\d*?)0*Z$/, (_m, digits: string) => (digits ? `.${digits}Z` : 'Z'));
}

/** Go's %q of a list of strings, joined by commas (the legacy format's groups). */
function quotedList(list: readonly string[] | undefined): string | undefined {
  return list && list.length > 0 ? list.map((g) => JSON.stringify(g)).join(',') : undefined;
}

/** kube-apiserver's legacy one-line form of an event. */
export function legacyLine(ev: AuditEvent): string {
  const username = ev.user.username ? ev.user.username : '<none>';
  const groups = (ev.user.username && quotedList(ev.user.groups)) || '<none>';
  const as = ev.impersonatedUser ? (ev.impersonatedUser.username ?? '') : '<self>';
  const asGroups = (ev.impersonatedUser?.groups && quotedList(ev.impersonatedUser.groups)) ?? (ev.impersonatedUser?.groups ? '' : '<lookup>');
  const namespace = ev.objectRef?.namespace || '<none>';
  const response = ev.responseStatus ? String(ev.responseStatus.code) : '<deferred>';
  const ip = ev.sourceIPs[0] ?? '<unknown>';
  const q = JSON.stringify;
  return (
    `${rfc3339Nano(ev.requestReceivedTimestamp)} AUDIT: id=${q(ev.auditID)} stage=${q(ev.stage)} ip=${q(ip)} method=${q(ev.verb)} ` +
    `user=${q(username)} groups=${q(groups)} as=${q(as)} asgroups=${q(asGroups)} user-agent=${q(ev.userAgent ?? '')} ` +
    `namespace=${q(namespace)} uri=${q(ev.requestURI)} response="${response}"`
  );
}

/** `<name>-<UTC time>.<ext>`, lumberjack's backup name. */
export function backupName(path: string, at: Date): string {
  const ext = extname(path);
  const stem = basename(path, ext);
  const t = at.toISOString().replace(/:/g, '-').replace(/Z$/, '');
  return join(dirname(path), `${stem}-${t}${ext}`);
}

/** The audit log: see the module comment. */
export class AuditLogWriter {
  private fd: number | undefined;
  private size = 0;
  private readonly maxBytes: number;
  private readonly pending: string[] = [];
  private flushing: Promise<void> | undefined;
  private closed = false;
  /** Events a batch-mode log dropped because its buffer was full. */
  dropped = 0;
  /** Events that could not be written. */
  errors = 0;
  /** Backups being compressed, and their names (pruning leaves those alone). */
  private readonly compressing = new Set<Promise<void>>();
  private readonly compressingNames = new Set<string>();

  constructor(
    readonly opts: AuditLogOptions,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.maxBytes = (opts.maxSizeMB > 0 ? opts.maxSizeMB : 100) * 1024 * 1024;
  }

  /** Opens (creating) the log; throws when it cannot be opened. */
  open(): void {
    if (this.opts.path === '-') return;
    mkdirSync(dirname(this.opts.path), { recursive: true, mode: 0o700 });
    this.fd = openSync(this.opts.path, 'a', 0o600);
    this.size = fstatSync(this.fd).size;
  }

  /** The line of an event in the configured format. */
  line(ev: AuditEvent): string {
    return (this.opts.format === 'legacy' ? legacyLine(ev) : JSON.stringify(ev)) + '\n';
  }

  /** Writes (blocking modes) or queues (batch) an event; a blocking write that fails throws. */
  write(ev: AuditEvent): void {
    if (this.closed) return;
    const line = this.line(ev);
    if (this.opts.mode === 'batch') {
      if (this.pending.length >= BATCH_BUFFER_EVENTS) {
        this.dropped++;
        return;
      }
      this.pending.push(line);
      this.flushing ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.drain());
      return;
    }
    try {
      this.writeLine(line);
    } catch (e) {
      this.errors++;
      throw e;
    }
  }

  /** Waits until every queued event is written. */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  /** Writes what is queued and closes the file. */
  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
    await Promise.all([...this.compressing]);
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private async drain(): Promise<void> {
    try {
      while (this.pending.length > 0) {
        const lines = this.pending.splice(0, this.pending.length).join('');
        try {
          if (this.opts.path === '-') writeSync(1, lines);
          else {
            this.rotateFor(Buffer.byteLength(lines));
            await new Promise<void>((resolve, reject) => writeAsync(this.fd!, lines, null, 'utf8', (e) => (e ? reject(e) : resolve())));
            this.size += Buffer.byteLength(lines);
          }
        } catch (e) {
          this.errors++;
          process.stderr.write(`audit: cannot write to ${this.opts.path}: ${(e as Error).message}\n`);
        }
      }
    } finally {
      this.flushing = undefined;
    }
  }

  private writeLine(line: string): void {
    if (this.opts.path === '-') {
      writeSync(1, line);
      return;
    }
    const bytes = Buffer.byteLength(line);
    this.rotateFor(bytes);
    writeSync(this.fd!, line);
    this.size += bytes;
  }

  /** Rotates first when `bytes` more would take a non-empty file past the limit. */
  private rotateFor(bytes: number): void {
    if (this.fd === undefined || this.size === 0 || this.size + bytes <= this.maxBytes) return;
    closeSync(this.fd);
    this.fd = undefined;
    const backup = backupName(this.opts.path, this.now());
    renameSync(this.opts.path, backup);
    this.fd = openSync(this.opts.path, 'a', 0o600);
    this.size = 0;
    if (this.opts.compress) {
      this.compressingNames.add(basename(backup));
      const done = this.compress(backup).finally(() => this.compressing.delete(done));
      this.compressing.add(done);
    } else this.prune();
  }

  private async compress(file: string): Promise<void> {
    try {
      await pipeline(createReadStream(file), createGzip(), createWriteStream(`${file}.gz`, { mode: 0o600 }));
      unlinkSync(file);
    } catch (e) {
      process.stderr.write(`audit: cannot compress ${file}: ${(e as Error).message}\n`);
    }
    this.compressingNames.delete(basename(file));
    this.prune();
  }

  /** Removes backups beyond --audit-log-maxbackup and older than --audit-log-maxage. */
  private prune(): void {
    const { maxBackups, maxAgeDays } = this.opts;
    if (maxBackups === 0 && maxAgeDays === 0) return;
    const dir = dirname(this.opts.path);
    const ext = extname(this.opts.path);
    const stem = basename(this.opts.path, ext);
    const pattern = new RegExp(`^${escapeRe(stem)}-(\\d{4}-\\d\\d-\\d\\dT\\d\\d-\\d\\d-\\d\\d\\.\\d{3})${escapeRe(ext)}(\\.gz)?$`);
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    const backups = names
      .map((n) => ({ n, m: pattern.exec(n) }))
      .filter((x): x is { n: string; m: RegExpExecArray } => x.m !== null && !this.compressingNames.has(x.n))
      .sort((a, b) => (a.m[1]! < b.m[1]! ? 1 : -1));
    const cutoff = this.now().getTime() - maxAgeDays * 86_400_000;
    backups.forEach(({ n, m }, i) => {
      const at = Date.parse(`${m[1]!.replace(/T(\d\d)-(\d\d)-(\d\d)/, 'T$1:$2:$3')}Z`);
      const tooMany = maxBackups > 0 && i >= maxBackups;
      const tooOld = maxAgeDays > 0 && at < cutoff;
      if (!tooMany && !tooOld) return;
      try {
        unlinkSync(join(dir, n));
      } catch {
        // gone already
      }
    });
  }

  /** The size of the current file as written (tests). */
  currentSize(): number {
    return this.opts.path === '-' ? 0 : statSync(this.opts.path).size;
  }
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
