import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { AuditLogWriter, backupName, legacyLine, type AuditLogOptions } from './audit.log.js';
import type { AuditEvent } from '../pipeline/audit.port.js';

const event = (over: Partial<AuditEvent> = {}): AuditEvent => ({
  kind: 'Event',
  apiVersion: 'audit.k8s.io/v1',
  level: 'Metadata',
  auditID: '7e0f0f0e-1111-2222-3333-444455556666',
  stage: 'ResponseComplete',
  requestURI: '/api/v1/namespaces/a/pods?limit=500',
  verb: 'list',
  user: { username: 'alice', groups: ['devs', 'system:authenticated'] },
  sourceIPs: ['10.0.0.7'],
  userAgent: 'kubectl/v1.32.4',
  objectRef: { resource: 'pods', namespace: 'a', apiVersion: 'v1' },
  responseStatus: { metadata: {}, code: 200 },
  requestReceivedTimestamp: '2026-12-03T10:00:00.120000Z',
  stageTimestamp: '2026-12-03T10:00:00.130000Z',
  ...over,
});

describe('audit log', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'audit-log-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const options = (over: Partial<AuditLogOptions> = {}): AuditLogOptions => ({
    path: join(dir, 'logs', 'audit.log'),
    format: 'json',
    mode: 'blocking',
    maxAgeDays: 0,
    maxBackups: 0,
    maxSizeMB: 0,
    compress: false,
    ...over,
  });

  it('writes one JSON event per line to a file only its owner can read', async () => {
    const log = new AuditLogWriter(options());
    log.open();
    log.write(event());
    log.write(event({ stage: 'RequestReceived', responseStatus: undefined }));
    const lines = readFileSync(join(dir, 'logs', 'audit.log'), 'utf8')
      .trim()
      .split('\n');
    expect(lines.map((l) => (JSON.parse(l) as AuditEvent).stage)).toEqual(['ResponseComplete', 'RequestReceived']);
    expect(JSON.parse(lines[0]!)).toEqual(event());
    expect(statSync(join(dir, 'logs', 'audit.log')).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'logs')).mode & 0o777).toBe(0o700);
    await log.close();
  });

  it('writes the legacy one-line format', () => {
    expect(legacyLine(event())).toBe(
      '2026-12-03T10:00:00.12Z AUDIT: id="7e0f0f0e-1111-2222-3333-444455556666" stage="ResponseComplete" ip="10.0.0.7" method="list" ' +
        'user="alice" groups="\\"devs\\",\\"system:authenticated\\"" as="<self>" asgroups="<lookup>" user-agent="kubectl/v1.32.4" ' +
        'namespace="a" uri="/api/v1/namespaces/a/pods?limit=500" response="200"',
    );
    expect(
      legacyLine(event({ user: {}, impersonatedUser: { username: 'bob', groups: ['x'] }, objectRef: undefined, responseStatus: undefined, sourceIPs: [] })),
    ).toContain('ip="<unknown>" method="list" user="<none>" groups="<none>" as="bob" asgroups="\\"x\\"" user-agent="kubectl/v1.32.4" namespace="<none>"');
    expect(legacyLine(event({ responseStatus: undefined }))).toMatch(/response="<deferred>"$/);
  });

  it('rotates before a write would pass the size limit, keeping --audit-log-maxbackup backups', async () => {
    let t = Date.parse('2026-12-03T10:00:00.000Z');
    const log = new AuditLogWriter(options({ maxSizeMB: 1500 / (1024 * 1024), maxBackups: 2 }), () => new Date((t += 1000)));
    log.open();
    const line = log.line(event());
    for (let i = 0; i < 12; i++) log.write(event());
    const perFile = Math.floor(1500 / Buffer.byteLength(line));
    const rotations = Math.ceil(12 / perFile) - 1;
    expect(rotations).toBeGreaterThan(2);
    const files = readdirSync(join(dir, 'logs')).sort();
    expect(files).toHaveLength(3);
    expect(files[2]).toBe('audit.log');
    for (const f of files.slice(0, 2)) {
      expect(f).toMatch(/^audit-2026-12-03T10-00-\d\d\.000\.log$/);
      expect(readFileSync(join(dir, 'logs', f), 'utf8').split('\n').length - 1).toBe(perFile);
    }
    const lines = (f: string) => readFileSync(join(dir, 'logs', f), 'utf8').split('\n').length - 1;
    expect(lines(files[0]!) + lines(files[1]!) + lines('audit.log')).toBe(12 - (rotations - 2) * perFile);
    expect(statSync(join(dir, 'logs', 'audit.log')).size).toBeLessThanOrEqual(1500);
    expect(statSync(join(dir, 'logs', files[0]!)).mode & 0o777).toBe(0o600);
    await log.close();
  });

  it('removes backups older than --audit-log-maxage days and gzips backups with --audit-log-compress', async () => {
    let t = Date.parse('2026-12-01T10:00:00.000Z');
    const now = () => new Date(t);
    const log = new AuditLogWriter(options({ maxSizeMB: 1000 / (1024 * 1024), maxAgeDays: 1, compress: true }), now);
    log.open();
    log.write(event());
    t += 1000;
    log.write(event()); // rotates: a backup of 2026-12-01
    t += 3 * 86_400_000;
    log.write(event()); // rotates: a backup of 2026-12-04; the first is three days old
    await log.close();
    const files = readdirSync(join(dir, 'logs')).sort();
    expect(files).toEqual(['audit-2026-12-04T10-00-01.000.log.gz', 'audit.log']);
    const lines = gunzipSync(readFileSync(join(dir, 'logs', files[0]!)))
      .toString()
      .trim()
      .split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toEqual(event());
  });

  it('queues events in batch mode and writes them all on flush, dropping none below the buffer', async () => {
    const log = new AuditLogWriter(options({ mode: 'batch' }));
    log.open();
    for (let i = 0; i < 500; i++) log.write(event({ auditID: String(i) }));
    expect(statSync(join(dir, 'logs', 'audit.log')).size).toBe(0);
    await log.flush();
    const ids = readFileSync(join(dir, 'logs', 'audit.log'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as AuditEvent).auditID);
    expect(ids).toEqual(Array.from({ length: 500 }, (_, i) => String(i)));
    expect(log.dropped).toBe(0);
    await log.close();
  });

  it('names backups as lumberjack does', () => {
    expect(backupName('/var/log/kube/audit.log', new Date('2026-12-03T10:11:12.345Z'))).toBe('/var/log/kube/audit-2026-12-03T10-11-12.345.log');
    expect(backupName('/var/log/audit', new Date('2026-12-03T10:11:12.345Z'))).toBe('/var/log/audit-2026-12-03T10-11-12.345');
  });
});
