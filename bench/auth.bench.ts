/**
 * Authentication + authorization benchmark (`node dist/bench/auth.bench.js`, `npm run bench:auth`,
 * part of `npm run bench`).
 *
 * What a credential and an RBAC decision cost per request: authenticated GETs of one ConfigMap
 * over keep-alive HTTPS (bench/lean.client.ts, fixed concurrency), per authentication method,
 * against two single-node servers started side by side:
 *   RBAC         --authorization-mode=RBAC; the method's user is granted `get configmaps` by a
 *                RoleBinding (not system:masters), among --other-bindings bindings of other
 *                users and groups, so that a decision that scanned bindings would show (the
 *                AlwaysAllow server holds the same objects)
 *   AlwaysAllow  --authorization-mode=AlwaysAllow --anonymous-auth=true: the same method's
 *                user, and an anonymous client (no credential, nothing decided) as the anchor
 * Every round measures every system once, in an order rotated per round (cluster.bench.ts
 * roundOrder); each figure is the median over the rounds of the per-round values, so machine
 * drift between rounds cancels out of the ratios.
 *
 * Printed per method: req/s under RBAC and under AlwaysAllow, the authn + RBAC cost (1 - RBAC
 * req/s / anonymous AlwaysAllow req/s; target under 15%) and the RBAC share alone (1 - RBAC /
 * AlwaysAllow with the same credential); and the server's CPU time per request (utime + stime
 * of the server process around each phase), with the cost it implies for a CPU-bound server
 * (1 - anchor CPU/req / RBAC CPU/req), which the load of other processes on the machine moves
 * far less than req/s.
 *
 * A method is one row of METHODS: its name, the RBAC subject its identity is, and how a client
 * gets its credential from a started server. Adding a method adds a row.
 *
 * Flags: --seconds N per measured phase (env BENCH_SECONDS, default 3), --rounds N (default 3),
 * --concurrency N (env BENCH_CONCURRENCY, default 32), --other-bindings N (default 200),
 * --json-out FILE. Exit code 0 when every phase ran without a failed request, 1 otherwise (the
 * target is reported, not enforced: tests never assert time).
 */
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { issueClientCertificate } from '@app/pki';
import { type PhaseResult, runPhase } from './api.bench.js';
import { median, readProcessCpuMs, roundOrder } from './cluster.bench.js';
import { type BenchClient, type LeanTls, LeanPool } from './lean.client.js';
import { type ServerHandle, request, startServer } from '../test/support/server.js';
import { isEntryPoint } from '../cluster/entry-point.js';
import { positive } from './flags.js';

const NS = 'bench-auth';
const CM_PATH = `/api/v1/namespaces/${NS}/configmaps/target`;
const RBAC_GROUP = 'rbac.authorization.k8s.io';

/** A server under test, as the method rows see it. */
export interface AuthBenchServer {
  readonly handle: ServerHandle;
  /** The static token every server reads from its --token-auth-file. */
  readonly staticToken: string;
}

/** How a client of one method connects: TLS material and headers sent with every request. */
export interface MethodCredentials {
  readonly tls: LeanTls;
  readonly headers: Readonly<Record<string, string>>;
}

/** One authentication method of the benchmark. */
export interface AuthMethodRow {
  readonly name: string;
  /** The RBAC subject the method's identity is, granted by the RoleBinding. */
  readonly subject: { readonly kind: 'User' | 'ServiceAccount'; readonly name: string; readonly namespace?: string };
  /** Obtains the credential from a started server (may create objects on it as the admin). */
  credentials(s: AuthBenchServer): Promise<MethodCredentials>;
}

const CERT_USER = 'bench-cert-user';
const TOKEN_USER = 'bench-token-user';
const SA_NAME = 'bench-sa';

/** The methods measured. */
export const METHODS: readonly AuthMethodRow[] = [
  {
    name: 'client certificate',
    subject: { kind: 'User', name: CERT_USER },
    credentials: async (s) => {
      const c = await issueClientCertificate(path.join(s.handle.dataDir, 'pki'), CERT_USER, ['bench-group']);
      return { tls: { ca: s.handle.caPem, cert: c.certPem, key: c.keyPem }, headers: {} };
    },
  },
  {
    name: 'static token',
    subject: { kind: 'User', name: TOKEN_USER },
    credentials: async (s) => ({ tls: { ca: s.handle.caPem }, headers: { authorization: `Bearer ${s.staticToken}` } }),
  },
  {
    name: 'service-account JWT',
    subject: { kind: 'ServiceAccount', name: SA_NAME, namespace: NS },
    credentials: async (s) => {
      await admin(s.handle, 'POST', `/api/v1/namespaces/${NS}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: SA_NAME } });
      const r = await request(s.handle, 'POST', `/api/v1/namespaces/${NS}/serviceaccounts/${SA_NAME}/token`, {
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
      });
      if (r.status !== 201) throw new Error(`TokenRequest: ${r.status} ${r.body.slice(0, 300)}`);
      const token = (JSON.parse(r.body) as { status: { token: string } }).status.token;
      return { tls: { ca: s.handle.caPem }, headers: { authorization: `Bearer ${token}` } };
    },
  },
];

/** A client sending `headers` with each request (every system goes through one, so the client's cost is alike). */
function withHeaders(pool: BenchClient, headers: Readonly<Record<string, string>>): BenchClient {
  return {
    request: (r) => pool.request({ ...r, headers: { ...r.headers, ...headers } }),
    close: () => pool.close(),
  };
}

async function admin(s: ServerHandle, method: string, p: string, body: unknown, ok: readonly number[] = [201, 409]): Promise<void> {
  const r = await request(s, method, p, { body });
  if (!ok.includes(r.status)) throw new Error(`${method} ${p}: ${r.status} ${r.body.slice(0, 300)}`);
}

/** The namespace and ConfigMap every GET reads. */
async function seedTarget(s: ServerHandle): Promise<void> {
  await admin(s, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  const data: Record<string, string> = {};
  for (let k = 0; k < 10; k++) data[`key-${k}`] = `value-${k}-0123456789`;
  await admin(s, 'POST', `/api/v1/namespaces/${NS}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'target' }, data });
}

/** The Role granting the GET, bound to every method's subject, plus `others` bindings of other subjects. */
async function seedPolicy(s: ServerHandle, others: number): Promise<void> {
  const base = `/apis/${RBAC_GROUP}/v1`;
  await admin(s, 'POST', `${base}/namespaces/${NS}/roles`, {
    apiVersion: `${RBAC_GROUP}/v1`,
    kind: 'Role',
    metadata: { name: 'configmap-reader' },
    rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }],
  });
  const binding = (name: string, subjects: object[]): object => ({
    apiVersion: `${RBAC_GROUP}/v1`,
    kind: 'RoleBinding',
    metadata: { name },
    roleRef: { apiGroup: RBAC_GROUP, kind: 'Role', name: 'configmap-reader' },
    subjects,
  });
  await admin(
    s,
    'POST',
    `${base}/namespaces/${NS}/rolebindings`,
    binding(
      'bench-readers',
      METHODS.map((m) => (m.subject.kind === 'User' ? { apiGroup: RBAC_GROUP, ...m.subject } : { ...m.subject, namespace: m.subject.namespace ?? NS })),
    ),
  );
  // Other subjects' grants: half RoleBindings here, half ClusterRoleBindings of `view`.
  const jobs: Array<() => Promise<void>> = [];
  for (let i = 0; i < others; i++) {
    const subjects = [
      { apiGroup: RBAC_GROUP, kind: 'User', name: `other-user-${i}` },
      { apiGroup: RBAC_GROUP, kind: 'Group', name: `other-group-${i}` },
    ];
    if (i % 2 === 0) jobs.push(() => admin(s, 'POST', `${base}/namespaces/${NS}/rolebindings`, binding(`other-${i}`, subjects)));
    else
      jobs.push(() =>
        admin(s, 'POST', `${base}/clusterrolebindings`, {
          apiVersion: `${RBAC_GROUP}/v1`,
          kind: 'ClusterRoleBinding',
          metadata: { name: `bench-other-${i}` },
          roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: 'view' },
          subjects,
        }),
      );
  }
  const workers = Array.from({ length: 8 }, async () => {
    for (let job = jobs.shift(); job; job = jobs.shift()) await job();
  });
  await Promise.all(workers);
}

/** Waits (bounded) until `client` gets 200 for the GET: the RoleBinding reached the authorizer. */
async function untilGranted(what: string, client: BenchClient): Promise<void> {
  const end = Date.now() + 15_000;
  let last = '';
  while (Date.now() < end) {
    const r = await client.request({ method: 'GET', path: CM_PATH, headers: { accept: 'application/json' } });
    const text = await r.body.text();
    if (r.statusCode === 200) return;
    last = `${r.statusCode} ${text.slice(0, 200)}`;
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error(`${what}: GET ${CM_PATH} never answered 200 (last: ${last})`);
}

interface Options {
  readonly seconds: number;
  readonly rounds: number;
  readonly concurrency: number;
  readonly otherBindings: number;
  readonly jsonOut?: string;
}

/** One measured system: a client of one server. */
interface System {
  readonly name: string;
  readonly client: BenchClient;
  /** The server process, whose CPU time per request is read around each phase. */
  readonly pid: number | undefined;
}

/** One system's figures in one round. */
interface RoundFigure {
  readonly perSecond: number;
  /** Server CPU (user + system, all threads) per request, µs; NaN when unreadable. */
  readonly cpuUs: number;
}

/** The figures of one method. */
export interface MethodFigures {
  readonly method: string;
  readonly rbacPerSecond: number;
  readonly allowPerSecond: number;
  /** 1 - RBAC / anonymous AlwaysAllow, median of the rounds. */
  readonly authnRbacCost: number;
  /** 1 - RBAC / AlwaysAllow with the same credential, median of the rounds. */
  readonly rbacCost: number;
  readonly costPerRound: readonly number[];
  /** Server CPU per request under RBAC and under AlwaysAllow (same credential), µs, medians. */
  readonly rbacCpuUs: number;
  readonly allowCpuUs: number;
  /** 1 - anchor CPU per request / RBAC CPU per request: the throughput share a CPU-bound server loses, median of the rounds. */
  readonly cpuCost: number;
}

const log = (line: string): void => void process.stdout.write(`${line}\n`);
const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;
const rps = (x: number): string => x.toLocaleString('en-US', { maximumFractionDigits: 0 });

async function runBench(o: Options): Promise<number> {
  const started = new Date();
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'kapi-auth-bench-'));
  const staticToken = randomBytes(24).toString('base64url');
  const tokenFile = path.join(dir, 'tokens.csv');
  await fs.writeFile(tokenFile, `${staticToken},${TOKEN_USER},uid-bench,bench-group\n`, { mode: 0o600 });
  const servers: ServerHandle[] = [];
  const clients: BenchClient[] = [];
  const phases: PhaseResult[] = [];
  let failure: string | undefined;
  let figures: MethodFigures[] = [];
  let anchor = Number.NaN;
  let anchorCpuUs = Number.NaN;
  try {
    log('starting two API servers (RBAC, AlwaysAllow)...');
    const [rbac, allow] = await Promise.all([
      startServer({ args: ['--authorization-mode=RBAC', `--token-auth-file=${tokenFile}`], readyTimeoutMs: 60_000 }),
      startServer({ args: ['--authorization-mode=AlwaysAllow', '--anonymous-auth=true', `--token-auth-file=${tokenFile}`], readyTimeoutMs: 60_000 }),
    ]);
    servers.push(rbac, allow);
    await Promise.all([seedTarget(rbac), seedTarget(allow)]);
    // The same objects on both, so that the servers differ by their mode alone (background work
    // such as the controllers' scans then costs both the same).
    await Promise.all([seedPolicy(rbac, o.otherBindings), seedPolicy(allow, o.otherBindings)]);
    log(`RBAC server ${rbac.url} (pid ${rbac.pid}), AlwaysAllow server ${allow.url} (pid ${allow.pid}); ${o.otherBindings} other bindings`);

    const poolFor = (s: ServerHandle, c: MethodCredentials): BenchClient => {
      const client = withHeaders(new LeanPool(s.url, { connections: o.concurrency, tls: c.tls }), c.headers);
      clients.push(client);
      return client;
    };
    const systems: System[] = [{ name: 'anonymous, AlwaysAllow', client: poolFor(allow, { tls: { ca: allow.caPem }, headers: {} }), pid: allow.pid }];
    for (const m of METHODS) {
      const [onRbac, onAllow] = await Promise.all([m.credentials({ handle: rbac, staticToken }), m.credentials({ handle: allow, staticToken })]);
      systems.push(
        { name: `${m.name}, RBAC`, client: poolFor(rbac, onRbac), pid: rbac.pid },
        { name: `${m.name}, AlwaysAllow`, client: poolFor(allow, onAllow), pid: allow.pid },
      );
    }
    for (const s of systems) await untilGranted(s.name, s.client);
    log(`${o.rounds} rounds of ${o.seconds} s per system, ${o.concurrency} in flight, GET ${CM_PATH}`);

    // One unrecorded pass first: both servers' JIT warm on this very path before any round counts.
    for (const s of systems) await runPhase('warm-up', s.client, Math.min(1, o.seconds), o.concurrency, () => ({ method: 'GET', path: CM_PATH }), [200]);
    const perRound: Array<Map<string, RoundFigure>> = [];
    for (let r = 0; r < o.rounds; r++) {
      const got = new Map<string, RoundFigure>();
      for (const s of roundOrder(systems, r)) {
        // Warm: connections opened (and handshakes done) before the measured phase.
        await runPhase('warm-up', s.client, Math.min(0.5, o.seconds), o.concurrency, () => ({ method: 'GET', path: CM_PATH }), [200]);
        const cpuBefore = readProcessCpuMs(s.pid);
        const p = await runPhase(s.name, s.client, o.seconds, o.concurrency, () => ({ method: 'GET', path: CM_PATH }), [200]);
        const cpuAfter = readProcessCpuMs(s.pid);
        const cpuUs = cpuBefore !== undefined && cpuAfter !== undefined && p.requests > 0 ? ((cpuAfter - cpuBefore) * 1000) / p.requests : Number.NaN;
        phases.push(p);
        got.set(s.name, { perSecond: p.perSecond, cpuUs });
        log(
          `  round ${r + 1}: ${s.name.padEnd(34)} ${rps(p.perSecond).padStart(8)} req/s  ${cpuUs.toFixed(1).padStart(6)} µs server CPU/req${p.errors ? `  ${p.errors} errors: ${p.sampleErrors.join('; ')}` : ''}`,
        );
      }
      perRound.push(got);
    }
    const at = (g: Map<string, RoundFigure>, name: string): RoundFigure => g.get(name)!;
    const med = (name: string, f: (x: RoundFigure) => number): number => median(perRound.map((g) => f(at(g, name))));
    const ANCHOR = 'anonymous, AlwaysAllow';
    anchor = med(ANCHOR, (x) => x.perSecond);
    anchorCpuUs = med(ANCHOR, (x) => x.cpuUs);
    figures = METHODS.map((m) => {
      const [onRbac, onAllow] = [`${m.name}, RBAC`, `${m.name}, AlwaysAllow`];
      const costs = perRound.map((g) => 1 - at(g, onRbac).perSecond / at(g, ANCHOR).perSecond);
      return {
        method: m.name,
        rbacPerSecond: med(onRbac, (x) => x.perSecond),
        allowPerSecond: med(onAllow, (x) => x.perSecond),
        authnRbacCost: median(costs),
        rbacCost: median(perRound.map((g) => 1 - at(g, onRbac).perSecond / at(g, onAllow).perSecond)),
        costPerRound: costs,
        rbacCpuUs: med(onRbac, (x) => x.cpuUs),
        allowCpuUs: med(onAllow, (x) => x.cpuUs),
        cpuCost: median(perRound.map((g) => 1 - at(g, ANCHOR).cpuUs / at(g, onRbac).cpuUs)),
      };
    });
  } catch (e) {
    failure = (e as Error).message;
  } finally {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    for (const s of servers) await s.cleanup();
    await fs.rm(dir, { recursive: true, force: true });
  }

  if (figures.length > 0) {
    log('');
    log(`anchor: anonymous GET under AlwaysAllow (no credential, no decision) ${rps(anchor)} req/s, ${anchorCpuUs.toFixed(1)} µs server CPU/req`);
    const head = ['method', 'RBAC req/s', 'AlwaysAllow req/s', 'authn+RBAC cost', 'RBAC alone', 'CPU/req RBAC', 'CPU/req AlwaysAllow', 'CPU cost'];
    const us = (x: number): string => `${x.toFixed(1)} µs`;
    const rows = figures.map((f) => [
      f.method,
      rps(f.rbacPerSecond),
      rps(f.allowPerSecond),
      pct(f.authnRbacCost),
      pct(f.rbacCost),
      us(f.rbacCpuUs),
      us(f.allowCpuUs),
      pct(f.cpuCost),
    ]);
    const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
    const line = (cells: readonly string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
    log(line(head));
    log(widths.map((w) => '-'.repeat(w)).join('  '));
    for (const row of rows) log(line(row));
    log('');
    for (const f of figures) {
      const met = f.authnRbacCost < 0.15;
      log(
        `${`${f.method}: authn+RBAC cost`.padEnd(40)} = ${pct(f.authnRbacCost)} of req/s, ${pct(f.cpuCost)} by server CPU/req   (target < 15%)   ${met ? 'MET' : 'NOT MET'}`,
      );
    }
  }
  if (failure !== undefined) log(`bench failed: ${failure}`);
  if (o.jsonOut !== undefined) {
    const report = {
      startedAt: started.toISOString(),
      node: process.version,
      cpus: os.cpus().length,
      seconds: o.seconds,
      rounds: o.rounds,
      concurrency: o.concurrency,
      otherBindings: o.otherBindings,
      anchorPerSecond: anchor,
      anchorCpuUs,
      methods: figures,
      phases,
      failure: failure ?? null,
    };
    await fs.mkdir(path.dirname(path.resolve(o.jsonOut)), { recursive: true });
    await fs.writeFile(o.jsonOut, `${JSON.stringify(report, null, 2)}\n`);
    log(`results written to ${o.jsonOut}`);
  }
  return failure !== undefined || phases.some((p) => p.errors > 0) ? 1 : 0;
}

async function main(argv: readonly string[]): Promise<number> {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    options: {
      seconds: { type: 'string' },
      rounds: { type: 'string' },
      concurrency: { type: 'string' },
      'other-bindings': { type: 'string' },
      'json-out': { type: 'string' },
    },
  });
  const others = values['other-bindings'];
  return runBench({
    seconds: positive(values.seconds ?? process.env.BENCH_SECONDS, 3, 'seconds'),
    rounds: Math.round(positive(values.rounds, 3, 'rounds')),
    concurrency: Math.round(positive(values.concurrency ?? process.env.BENCH_CONCURRENCY, 32, 'concurrency')),
    otherBindings: others === '0' ? 0 : Math.round(positive(others, 200, 'other-bindings')),
    ...(values['json-out'] !== undefined ? { jsonOut: values['json-out'] } : {}),
  });
}

if (isEntryPoint(import.meta.url)) {
  try {
    process.exit(await main(process.argv.slice(2)));
  } catch (e) {
    process.stderr.write(`bench: ${(e as Error).message}\n`);
    process.exit(2);
  }
}
