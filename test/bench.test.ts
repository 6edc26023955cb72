/**
 * Short runs of the API server's benchmarks (`npm run bench` runs them at full length; the
 * storage benchmarks' short runs are in test/bench.storage.test.ts): each must start its systems,
 * measure every phase without a failed request and print its figures. Nothing here asserts on
 * speed (the figures vary with the machine); it keeps the benchmarks working.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { median, roundOrder } from '../bench/cluster.bench.js';
import { prerequisite } from './support/prereq.js';
import { runBench } from './support/bench.helper.js';

interface ClusterReport {
  rounds: number;
  failoverMs: number[];
  phases: { name: string; requests: number; errors: number; perSecond: number }[];
  allRounds: { name: string }[][];
  ratios: { name: string; value: number; perRound: number[]; target?: string; met?: boolean }[];
  failure: string | null;
}

describe('benchmarks (short runs)', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kapi-bench-test-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('median takes the lower middle and roundOrder rotates the systems per round', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2);
    expect(median([])).toBeNaN();
    expect([0, 1, 2, 3].map((r) => roundOrder(['s', 'lb', 'd'], r).join(','))).toEqual(['s,lb,d', 'lb,d,s', 'd,s,lb', 's,lb,d']);
  });

  it('cluster: measures the single node, the cluster through the balancer and direct, with a ratio per round', async () => {
    const balanced = prerequisite('haproxy', 'the cluster benchmark through the balancer (test/bench.test.ts)');
    const json = join(dir, 'cluster.json');
    const r = await runBench('cluster.bench.js', [
      '--seconds',
      '0.25',
      '--warm-up-seconds',
      '0.25',
      '--rounds',
      '2',
      '--concurrency',
      '12',
      '--kills',
      '2',
      '--json-out',
      json,
    ]);
    expect({ code: r.code, tail: r.code === 0 ? '' : r.out.slice(-2000) }).toEqual({ code: 0, tail: '' });
    const report = JSON.parse(await readFile(json, 'utf8')) as ClusterReport;
    expect(report.failure).toBeNull();
    expect(report.rounds).toBe(2);
    const names = report.phases.map((p) => p.name);
    const expected = ['single node: creates', 'single node: gets', 'cluster direct n1-n3: creates', 'cluster direct n1-n3: gets'];
    if (balanced) expected.push('cluster via haproxy: creates', 'cluster via haproxy: gets');
    expect(names).toEqual(expect.arrayContaining(expected));
    for (const p of report.phases) {
      expect(p.errors).toBe(0);
      expect(p.requests).toBeGreaterThan(0);
    }
    // Every round measured every phase, and each ratio has one value per round.
    for (const round of report.allRounds) expect(round.map((p) => p.name).sort()).toEqual([...names].sort());
    const direct = report.ratios.find((x) => x.name === 'cluster direct n1-n3 creates / single')!;
    expect(direct.perRound).toHaveLength(2);
    expect(direct.value).toBeGreaterThan(0);
    expect(direct.target).toBe('>= 0.6');
    expect(r.out).toMatch(/cluster direct n1-n3 creates \/ single\s+= [\d.]+%/);
    // With haproxy a balancer ratio per round; without it (opted out on a machine that lacks it)
    // no such ratio and a line saying why.
    expect({
      balancerRatioRounds: report.ratios.find((x) => x.name === 'cluster via haproxy creates / single')?.perRound.length,
      saysNotInstalled: r.out.includes('haproxy is not installed: no balancer phases'),
    }).toEqual(balanced ? { balancerRatioRounds: 2, saysNotInstalled: false } : { balancerRatioRounds: undefined, saysNotInstalled: true });
    // Two kills of the leader, each followed by an acknowledged create through another node.
    expect(report.failoverMs).toHaveLength(2);
    expect(r.out).toMatch(/failover \(kill -9 of the leader to the first acknowledged create\), 2 kills: median \d+ ms/);
  });

  it('scale: pages through the collection, reads pages at the current and a past revision, restarts, and compares with etcd when installed', async () => {
    const json = join(dir, 'scale.json');
    const r = await runBench('scale.bench.js', ['--objects', '300', '--namespaces', '3', '--limit', '50', '--json-out', json]);
    expect({ code: r.code, tail: r.code === 0 ? '' : r.out.slice(-2000) }).toEqual({ code: 0, tail: '' });
    const report = JSON.parse(await readFile(json, 'utf8')) as { figures: { name: string; value: number }[]; failure: string | null };
    expect(report.failure).toBeNull();
    const names = report.figures.map((f) => f.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'unpaginated list',

        'page at the current revision (limit 50)',
        'page at a past revision (Exact, limit 50)',
        'Exact list of one namespace (limit 50)',
        'list by fieldSelector metadata.name (one of 100)',
        '  a watch by the same: first event (new connection)',
        'cold start to ready',
        'RSS after start',
        'bytes on disk',
      ]),
    );
    // 300 ConfigMaps in 3 namespaces, and every namespace's kube-root-ca.crt: paging walks them all.
    expect(names.some((n) => /^paged list \(limit 50, [67] pages\)$/.test(n))).toBe(true);
    // The past page counts what follows it (the key index, corrected by the events since).
    const figure = (name: string) => report.figures.find((f) => f.name === name)?.value;
    expect(figure('items at the past revision')).toBeGreaterThan(300);
    expect(figure('remainingItemCount of the past page')).toBe(figure('items at the past revision')! - 50);
    expect(r.out).toMatch(/paged \/ unpaginated\s+[\d.]+ x/);
    expect(r.out).toMatch(/etcd: (not installed, skipped|paged get --limit 50 --rev \(6 pages\))/);
  });

  it('api: measures the server and the bare Fastify ceiling', async () => {
    const json = join(dir, 'api.json');
    const r = await runBench('api.bench.js', ['--seconds', '0.5', '--concurrency', '8', '--json-out', json]);
    expect({ code: r.code, tail: r.code === 0 ? '' : r.out.slice(-2000) }).toEqual({ code: 0, tail: '' });
    const report = JSON.parse(await readFile(json, 'utf8')) as {
      phases: { name: string; requests: number; errors: number }[];
      targets: { name: string }[];
      failure: string | null;
    };
    expect(report.failure).toBeNull();
    expect(report.phases.length).toBeGreaterThanOrEqual(3);
    for (const p of report.phases) {
      expect(p.errors).toBe(0);
      expect(p.requests).toBeGreaterThan(0);
    }
    expect(report.targets.map((t) => t.name)).toEqual(['gets / ceiling', 'creates/s']);
  });

  it('audit: four servers (audit off, Metadata blocking and batch, RequestResponse) under GETs and creates, every phase without a failed request', async () => {
    const json = join(dir, 'audit.json');
    const r = await runBench('audit.bench.js', ['--seconds', '0.25', '--rounds', '2', '--concurrency', '4', '--json-out', json]);
    expect({ code: r.code, tail: r.code === 0 ? '' : r.out.slice(-2000) }).toEqual({ code: 0, tail: '' });
    const report = JSON.parse(await readFile(json, 'utf8')) as {
      rows: { load: string; system: string; perSecond: number; logBytesPerRequest: number }[];
      phases: { name: string; requests: number; errors: number }[];
      failure: string | null;
    };
    expect(report.failure).toBeNull();
    expect(report.rows.map((x) => `${x.load}, ${x.system}`)).toEqual([
      'GET, off',
      'GET, Metadata',
      'GET, Metadata, batch',
      'GET, RequestResponse',
      'create, off',
      'create, Metadata',
      'create, Metadata, batch',
      'create, RequestResponse',
    ]);
    for (const row of report.rows) expect(row.perSecond).toBeGreaterThan(0);
    // Only the audited servers write a log, and RequestResponse writes more per request than Metadata.
    const bytes = (load: string, system: string) => report.rows.find((x) => x.load === load && x.system === system)!.logBytesPerRequest;
    expect(bytes('GET', 'off')).toBe(0);
    expect(bytes('GET', 'Metadata')).toBeGreaterThan(0);
    expect(bytes('GET', 'RequestResponse')).toBeGreaterThan(bytes('GET', 'Metadata'));
    expect(bytes('create', 'RequestResponse')).toBeGreaterThan(bytes('create', 'Metadata'));
    for (const p of report.phases) expect([p.errors, p.requests > 0]).toEqual([0, true]);
  });

  it('auth: GETs per authentication method under RBAC and AlwaysAllow, with the cost against the anonymous anchor', async () => {
    const json = join(dir, 'auth.json');
    const r = await runBench('auth.bench.js', ['--seconds', '0.25', '--rounds', '2', '--concurrency', '4', '--other-bindings', '10', '--json-out', json]);
    expect({ code: r.code, tail: r.code === 0 ? '' : r.out.slice(-2000) }).toEqual({ code: 0, tail: '' });
    const report = JSON.parse(await readFile(json, 'utf8')) as {
      methods: { method: string; rbacPerSecond: number; allowPerSecond: number; costPerRound: number[] }[];
      phases: { name: string; requests: number; errors: number }[];
      failure: string | null;
    };
    expect(report.failure).toBeNull();
    expect(report.methods.map((m) => m.method)).toEqual(['client certificate', 'static token', 'service-account JWT']);
    for (const m of report.methods) {
      expect(Math.min(m.rbacPerSecond, m.allowPerSecond)).toBeGreaterThan(0);
      expect(m.costPerRound).toHaveLength(2);
    }
    // Every system measured in both rounds, none with a failed request (a 403 would be one).
    expect(report.phases.map((p) => p.name).sort()).toEqual(
      [
        'anonymous, AlwaysAllow',
        'client certificate, AlwaysAllow',
        'client certificate, RBAC',
        'service-account JWT, AlwaysAllow',
        'service-account JWT, RBAC',
        'static token, AlwaysAllow',
        'static token, RBAC',
      ].flatMap((n) => [n, n]),
    );
    for (const p of report.phases) expect([p.errors, p.requests > 0]).toEqual([0, true]);
    expect(r.out).toMatch(/^static token: authn\+RBAC cost +\s*= -?[\d.]+%/m);
    expect(r.out).toMatch(/^service-account JWT: authn\+RBAC cost +\s*= -?[\d.]+%/m);
  });

  it("snapshot: exports and imports a store at two sizes, writes it as etcd's backend file, and prints throughput and peak memory against a file copy", async () => {
    const json = join(dir, 'snapshot.json');
    const r = await runBench('snapshot.bench.js', ['--megabytes', '4', '--json-out', json]);
    expect({ code: r.code, tail: r.code === 0 ? '' : r.out.slice(-2000) }).toEqual({ code: 0, tail: '' });
    const report = JSON.parse(await readFile(json, 'utf8')) as {
      sizes: { snapshotBytes: number; copyMs: number; export: { ms: number }; import: { ms: number }; etcd: { ms: number } }[];
      verdicts: { op: string }[];
    };
    expect(report.sizes).toHaveLength(2);
    // The second size holds about twice the data of the first.
    expect(report.sizes[1]!.snapshotBytes / report.sizes[0]!.snapshotBytes).toBeGreaterThan(1.8);
    for (const s of report.sizes) expect(Math.min(s.snapshotBytes, s.copyMs, s.export.ms, s.import.ms, s.etcd.ms)).toBeGreaterThan(0);
    expect(report.verdicts.map((v) => v.op)).toEqual(['export', 'import']);
    expect(r.out).toMatch(/import peak RSS, S -> 2S: -?[\d.]+% of the added snapshot bytes/);
    expect(r.out).toMatch(/2S {2}etcd backend file \(etcdctl snapshot save\): \d+ ms, [\d.]+x the export's time/);
  });
});
