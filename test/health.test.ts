/**
 * Health, version and start-up refusals of the real server (docs/health.md):
 * - one node: /livez, /readyz, /healthz with ?verbose and ?exclude in kube-apiserver's format,
 *   per-check paths for authenticated clients, /version carrying the built commit;
 * - flags and environment that cannot be honoured stop the start naming the flag or variable;
 * - three nodes: a node whose peers stop loses readiness; restarted alone into that minority it
 *   stays unready with the raft check failing (while live), and turns ready once a peer is back.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPki } from '@app/pki';
import {
  delay,
  getFreePort,
  repoRoot,
  request,
  runServerToExit,
  startServer,
  testStorage,
  type HttpResponse,
  type HttpTarget,
  type ServerHandle,
} from './support/server.js';

const ENTRY = join(repoRoot(), 'dist', 'apps', 'apiserver', 'src', 'main.js');

const runToExit = (args: string[], env: Record<string, string> = {}) => runServerToExit(args, env, 20_000);

/** Polls until `f` returns a value, at most `ms`. */
async function until<T>(what: string, f: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await f();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    await delay(100);
  }
  throw new Error(`${what}: not within ${ms} ms${last ? ` (last error: ${(last as Error).message})` : ''}`);
}

describe('one node: health endpoints and /version', () => {
  // The storage backend's readiness check and hooks (docs/storage-backends.md): `raft` and the
  // member self-registration with the built-in store; `etcd` on external etcd
  // (KAPI_TEST_STORAGE=etcd3), which has no Raft member to register.
  const etcd = testStorage() === 'etcd3';
  const own = etcd ? 'etcd' : 'raft';
  const other = etcd ? 'raft' : 'etcd';
  const hooks = [
    'crd-informer-synced',
    'initial-objects',
    'apiservice-registration-controller',
    'start-cluster-authentication-info-controller',
    'bootstrap-controller',
    'admin-kubeconfig',
    'start-controllers',
    ...(etcd ? [] : ['cluster-registration']),
  ];
  let server: ServerHandle;
  beforeAll(async () => {
    // The explicit default is accepted.
    server = await startServer({ args: ['--authorization-mode=RBAC'] });
  });
  afterAll(async () => {
    await server?.cleanup();
  });

  it('livez, readyz and healthz list the checks they ran, in kube-apiserver format', async () => {
    for (const e of ['livez', 'readyz', 'healthz']) {
      const plain = await request(server, 'GET', `/${e}`, { identity: 'anonymous' });
      expect([plain.status, plain.body]).toEqual([200, 'ok']);
      expect(plain.headers['content-type']).toBe('text/plain; charset=utf-8');
    }
    const live = await request(server, 'GET', '/livez?verbose', { identity: 'anonymous' });
    expect(live.body).toBe('[+]ping ok\n[+]eventloop ok\n[+]storage ok\nlivez check passed\n');
    const ready = await request(server, 'GET', '/readyz?verbose', { identity: 'anonymous' });
    const readyChecks = ['ping', 'storage', own, 'storage-disk', ...hooks.map((h) => `poststarthook/${h}`), 'shutdown'];
    expect(ready.body).toBe(`${readyChecks.map((c) => `[+]${c} ok\n`).join('')}readyz check passed\n`);
    const health = await request(server, 'GET', '/healthz?verbose', { identity: 'anonymous' });
    expect(health.body.split('\n').filter((l) => l.startsWith('[+]'))).toEqual(
      ['ping', 'eventloop', 'storage', own, 'storage-disk', ...hooks.map((h) => `poststarthook/${h}`), 'shutdown'].map((c) => `[+]${c} ok`),
    );
    const excluded = await request(server, 'GET', `/readyz?verbose&exclude=${own}&exclude=${other}`, { identity: 'anonymous' });
    expect(excluded.body).toContain(`[+]${own} excluded: ok\n`);
    expect(excluded.body).toContain(`warn: some health checks cannot be excluded: no matches for "${other}"\n`);
  });

  it('each check has its own path, not for anonymous clients (system:public-info-viewer grants the endpoints only)', async () => {
    expect((await request(server, 'GET', `/readyz/${own}`)).body).toBe('ok');
    expect((await request(server, 'GET', '/readyz/poststarthook/initial-objects')).body).toBe('ok');
    expect((await request(server, 'GET', '/livez/eventloop')).body).toBe('ok');
    expect((await request(server, 'GET', `/livez/${own}`)).status).toBe(404);
    expect((await request(server, 'GET', `/readyz/${own}`, { identity: 'anonymous' })).status).toBe(403);
  });

  it('/version carries the commit, tree state and date the build recorded', async () => {
    const v = (await request(server, 'GET', '/version', { identity: 'anonymous' })).json<Record<string, string>>();
    const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repoRoot(), encoding: 'utf8' }).trim();
    expect(v.gitCommit).toBe(head);
    expect(v.gitTreeState).toMatch(/^(clean|dirty)$/);
    const recorded = JSON.parse(await readFile(join(repoRoot(), 'dist', 'build-info.json'), 'utf8')) as Record<string, string>;
    expect(v).toMatchObject({ major: '1', minor: '32', gitCommit: recorded.gitCommit, gitTreeState: recorded.gitTreeState, buildDate: recorded.buildDate });
    expect(v.buildDate).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
  });
});

describe('start-up refusals', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kapi-refuse-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('an authorization mode not built, or ABAC without its policy file, is refused with the flag named, before anything starts', async () => {
    const port = await getFreePort();
    const r = await runToExit(['--data-dir', join(dir, 'node'), '--secure-port', String(port), '--authorization-mode=Keystone']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('error: --authorization-mode=Keystone: authorization mode "Keystone" is not built into this server');
    const abac = await runToExit(['--data-dir', join(dir, 'node'), '--secure-port', String(port), '--authorization-mode=ABAC,RBAC']);
    expect(abac.code).toBe(2);
    expect(abac.stderr).toContain("error: --authorization-mode=ABAC,RBAC: authorization-mode ABAC's authorization policy file not passed");
  });

  it('an out-of-bounds KAPI_ variable is refused with the variable named', async () => {
    const port = await getFreePort();
    const r = await runToExit(['--data-dir', join(dir, 'env'), '--secure-port', String(port)], { KAPI_LEASE_DURATION_MS: '15s' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('error: invalid value "15s" for KAPI_LEASE_DURATION_MS');
  });
});

describe('readiness of a node in a minority (3 real nodes)', () => {
  const NAMES = ['n1', 'n2', 'n3'];
  let dir: string;
  const nodes = new Map<string, ServerHandle>();
  const peerPorts = new Map<string, number>();
  let initial = '';
  let alone: ChildProcess | undefined;
  const args = (name: string): string[] => [
    '--name',
    name,
    '--pki-dir',
    join(dir, 'pki'),
    '--listen-peer-port',
    String(peerPorts.get(name)),
    '--initial-cluster',
    initial,
  ];
  const readyz = (t: HttpTarget, q = '?verbose'): Promise<HttpResponse> => request(t, 'GET', `/readyz${q}`, { identity: 'anonymous', timeoutMs: 2_000 });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kapi-minority-'));
    await createPki({ outDir: join(dir, 'pki'), hosts: ['127.0.0.1'] });
    for (const n of NAMES) peerPorts.set(n, await getFreePort());
    initial = NAMES.map((n) => `${n}=127.0.0.1:${peerPorts.get(n)}`).join(',');
    // Started together: no node waits for another's readiness, each only for a quorum.
    const started = await Promise.all(NAMES.map((n) => startServer({ args: args(n), dataDir: join(dir, n), readyTimeoutMs: 40_000 })));
    started.forEach((h, i) => nodes.set(NAMES[i]!, h));
  });
  afterAll(async () => {
    alone?.kill('SIGKILL');
    for (const h of nodes.values()) await h.cleanup();
    await rm(dir, { recursive: true, force: true });
  });

  it('is not ready without a leader, restarted alone stays so while live, and turns ready when a peer returns', async () => {
    const n1 = nodes.get('n1')!;
    expect((await readyz(n1)).body).toContain('[+]raft ok\n');

    // Its peers stop: within an election timeout or two it has no leader to hear from.
    await Promise.all([nodes.get('n2')!.stop(), nodes.get('n3')!.stop()]);
    const lost = await until('n1 unready after losing its peers', async () => {
      const r = await readyz(n1);
      return r.status === 500 ? r : undefined;
    });
    expect(lost.body).toContain('[-]raft failed: reason withheld\n');
    expect(lost.body.endsWith('readyz check failed\n')).toBe(true);

    // Restarted alone: it has never heard from a leader since it started.
    await n1.stop();
    alone = spawn(process.execPath, [ENTRY, '--data-dir', join(dir, 'n1'), '--secure-port', String(n1.port), '--bind-address', '127.0.0.1', ...args('n1')], {
      stdio: ['ignore', 'ignore', 'ignore'],
    });
    const target: HttpTarget = { url: n1.url, caPem: n1.caPem, adminCertPem: n1.adminCertPem, adminKeyPem: n1.adminKeyPem };
    const first = await until('the restarted n1 answers /readyz', () => readyz(target));
    for (let i = 0; i < 5; i++) {
      const r = i === 0 ? first : await readyz(target);
      expect(r.status).toBe(500);
      expect(r.body).toContain('[-]raft failed: reason withheld\n');
      expect(r.body).toContain('[-]poststarthook/crd-informer-synced failed: reason withheld\n');
      expect(r.body).toContain('[-]poststarthook/initial-objects failed: reason withheld\n');
      await delay(200);
    }
    const raft = await request(target, 'GET', '/readyz/raft', { timeoutMs: 2_000 });
    expect(raft.status).toBe(500);
    expect(raft.body).toMatch(/^internal server error: no leader known \(term \d+, (follower|preCandidate|candidate)\)\n$/);
    // Live all the same: the process makes progress, it only lacks a quorum.
    expect((await request(target, 'GET', '/livez', { identity: 'anonymous', timeoutMs: 2_000 })).status).toBe(200);

    // The partition heals: one peer back makes a majority of three.
    await nodes.get('n2')!.start();
    const healed = await until(
      'n1 ready once n2 is back',
      async () => {
        const r = await readyz(target);
        return r.status === 200 ? r : undefined;
      },
      30_000,
    );
    expect(healed.body).toContain('[+]raft ok\n[+]storage-disk ok\n[+]poststarthook/crd-informer-synced ok\n[+]poststarthook/initial-objects ok\n');
  });
});
