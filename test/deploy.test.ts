/**
 * Deployment checks: the launcher, docker-compose.yml and haproxy against each other.
 *
 * 1. docker-compose.yml, the Dockerfile and cluster/haproxy.cfg against the topology the launcher
 *    uses (clusterTopology in cluster/launcher.ts), so the compose deployment and `npm run
 *    cluster` cannot drift. No Docker engine runs here, so this is the compose file's test.
 * 2. `node dist/cluster/launcher.cli.js` for real: three server processes and haproxy (a test
 *    prerequisite, test/support/prereq.ts; KAPI_TEST_WITHOUT=haproxy runs the launcher's
 *    no-balancer path instead and reports the balancer as not covered) on free ports, real kubectl through the generated kubeconfig, then SIGINT and
 *    every child gone. It does not assume replication (J1's Raft tests cover that): writes are
 *    read back from the node that took them.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, promises as fs, readFileSync } from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { haproxyConfig } from '../cluster/haproxy.js';
import { type ClusterTopology, clusterTopology, nodeArgs, pkiCliArgs } from '../cluster/launcher.js';
import { certificateCoversHost, loadPki } from '@app/pki';
import { prerequisite } from './support/prereq.js';
import { type KubectlTarget, delay, getFreePort, getFreePorts, repoRoot, runKubectl } from './support/server.js';

const root = repoRoot();

interface ComposeService {
  build?: unknown;
  image?: string;
  entrypoint?: string[];
  command?: string[];
  ports?: string[];
  volumes?: string[];
  restart?: string;
  healthcheck?: { test?: string[] };
  depends_on?: Record<string, { condition?: string }>;
}
interface ComposeFile {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
}

describe('docker-compose.yml matches the launcher topology', () => {
  // `merge: true` resolves the `<<: *kapi` merge keys as compose does.
  const compose = parseYaml(readFileSync(path.join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as ComposeFile;
  const t: ClusterTopology = clusterTopology({ target: 'compose' });
  const local = clusterTopology();
  const svc = (name: string): ComposeService => {
    const s = compose.services[name];
    if (s === undefined) throw new Error(`docker-compose.yml has no service ${name}`);
    return s;
  };

  it('has exactly the PKI init step, one service per node and the balancer', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['pki-init', ...t.nodes.map((n) => n.name), t.balancer.name].sort());
  });

  it('uses the same node names and ports as `npm run cluster`', () => {
    expect(t.nodes.map((n) => [n.name, n.securePort, n.peerPort])).toEqual(local.nodes.map((n) => [n.name, n.securePort, n.peerPort]));
    expect(t.balancer.port).toBe(local.balancer.port);
  });

  it('runs the pki CLI into the shared volume, for every node name and the balancer', () => {
    const s = svc('pki-init');
    expect(s.entrypoint).toEqual(['node', 'dist/cluster/pki.cli.js']);
    expect(existsSync(path.join(root, 'dist', 'cluster', 'pki.cli.js'))).toBe(true);
    expect(s.command).toEqual(pkiCliArgs(t));
    expect(s.volumes).toEqual([`pki:${t.pkiDir}`]);
    expect(s.restart).toBe('no');
  });

  it('starts each node with exactly the launcher flags, its own volume, the PKI read-only and a /readyz health check', () => {
    for (const n of t.nodes) {
      const s = svc(n.name);
      expect({ node: n.name, command: s.command }).toEqual({ node: n.name, command: nodeArgs(t, n) });
      // Same flags, in the same order, as the processes the launcher starts.
      const flags = (a: readonly string[]): string[] => a.filter((x) => x.startsWith('--'));
      expect(flags(s.command ?? [])).toEqual(flags(nodeArgs(local, n.name)));
      expect(s.command).toContain('0.0.0.0');
      expect(s.ports).toEqual([`${n.securePort}:${n.securePort}`]);
      expect(s.volumes).toEqual([`${n.name}-data:${n.dataDir}`, `pki:${t.pkiDir}:ro`]);
      expect(s.image).toBe(svc('pki-init').image);
      expect(s.build).toBe('.');
      expect(s.depends_on).toEqual({ 'pki-init': { condition: 'service_completed_successfully' } });
      const hc = (s.healthcheck?.test ?? []).join(' ');
      expect(hc).toContain("path:'/readyz'");
      expect(hc).toContain(`port:${n.securePort}`);
    }
  });

  it('declares every named volume it mounts', () => {
    expect(Object.keys(compose.volumes ?? {}).sort()).toEqual(['pki', ...t.nodes.map((n) => `${n.name}-data`)].sort());
  });

  it('builds the server image whose entry point is the built main.js', () => {
    const dockerfile = readFileSync(path.join(root, 'Dockerfile'), 'utf8');
    const entry = /^ENTRYPOINT (\[.*\])$/m.exec(dockerfile);
    expect(entry).not.toBeNull();
    expect(JSON.parse(entry![1]!)).toEqual(['node', 'dist/apps/apiserver/src/main.js']);
    expect(existsSync(path.join(root, 'dist', 'apps', 'apiserver', 'src', 'main.js'))).toBe(true);
    // The image's mount points exist for every node volume and the PKI.
    for (const d of [t.pkiDir, ...t.nodes.map((n) => n.dataDir)]) expect(dockerfile).toContain(d);
  });

  it('puts the official haproxy in front, after every node is healthy, with the generated config', () => {
    const lb = svc(t.balancer.name);
    expect(lb.image).toMatch(/^haproxy:/);
    expect(lb.ports).toEqual([`${t.balancer.port}:${t.balancer.port}`]);
    expect(lb.volumes).toEqual(['./cluster/haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro']);
    expect(lb.depends_on).toEqual(Object.fromEntries(t.nodes.map((n) => [n.name, { condition: 'service_healthy' }])));
  });

  it('commits cluster/haproxy.cfg exactly as generated for the compose topology, one backend per node', () => {
    const committed = readFileSync(path.join(root, 'cluster', 'haproxy.cfg'), 'utf8');
    expect(committed).toBe(haproxyConfig(t));
    const backends = committed
      .split('\n')
      .filter((l) => /^\s+server /.test(l))
      .map((l) => l.trim().split(/\s+/).slice(1, 3).join(' '));
    expect(backends).toEqual(t.nodes.map((n) => `${n.name} ${n.name}:${n.securePort}`));
    expect(committed).toContain(`bind 0.0.0.0:${t.balancer.port}`);
  });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

describe('npm run cluster (dist/cluster/launcher.cli.js)', () => {
  let base: string;
  let child: ChildProcess | undefined;
  let out = '';
  let err = '';
  const launcher = path.join(root, 'dist', 'cluster', 'launcher.cli.js');

  beforeAll(async () => {
    base = await fs.mkdtemp(path.join(os.tmpdir(), 'kapi-deploy-'));
  });
  afterAll(async () => {
    if (child !== undefined && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child!.once('exit', r));
    }
    await fs.rm(base, { recursive: true, force: true });
  });

  it('starts three nodes and haproxy, serves kubectl on every context, starts a killed node again, and stops everything on SIGINT', async () => {
    // Decided before anything starts: a missing haproxy fails here, not as a changed expectation.
    const balanced = prerequisite('haproxy', 'the launcher with its balancer: the lb context and haproxy health checks (test/deploy.test.ts)');
    const ports = await getFreePorts(10);
    const [lbPort, ...rest] = ports;
    const secure = rest.slice(0, 3);
    const peer = rest.slice(3, 6);
    const client = rest.slice(6, 9);
    const dir = path.join(base, 'cluster');
    child = spawn(
      process.execPath,
      [
        launcher,
        '--base-dir',
        dir,
        '--secure-port',
        secure.join(','),
        '--peer-port',
        peer.join(','),
        '--client-port',
        client.join(','),
        '--lb-port',
        String(lbPort),
        '--grace',
        '10',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child.stdout!.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.stderr!.setEncoding('utf8').on('data', (c: string) => (err += c));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child!.once('exit', (code, signal) => r({ code, signal })));

    const deadline = Date.now() + 120_000;
    while (!/^Admin kubeconfig: /m.test(out)) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`launcher not ready (exit ${child.exitCode})\nstdout:\n${out}\nstderr:\n${err}`);
      await delay(100);
    }
    const kubeconfig = /^Admin kubeconfig: (.+)$/m.exec(out)![1]!.trim();
    expect(kubeconfig).toBe(path.join(dir, 'admin.kubeconfig'));

    // Prefixed node logs: each server printed its own ready line.
    for (const n of ['n1', 'n2', 'n3']) expect(out).toMatch(new RegExp(`^\\[${n}\\] Admin kubeconfig: ${dir}/${n}/admin.kubeconfig$`, 'm'));
    const pids = [...out.matchAll(/^ {2}(n\d|lb)\s+https:\/\/127\.0\.0\.1:(\d+)\s+pid (\d+)/gm)].map((m) => ({
      name: m[1]!,
      port: Number(m[2]),
      pid: Number(m[3]),
    }));
    expect(pids.map((p) => p.name)).toEqual(balanced ? ['n1', 'n2', 'n3', 'lb'] : ['n1', 'n2', 'n3']);
    expect(pids.map((p) => p.port)).toEqual(balanced ? [...secure, lbPort] : secure);
    expect(out).toContain(balanced ? 'Cluster ready: 3 nodes behind haproxy' : 'Cluster ready: 3 nodes (no load balancer: haproxy is not installed)');
    for (const p of pids) expect(alive(p.pid)).toBe(true);

    // One shared PKI whose serving certificate covers every node and the balancer.
    const pki = await loadPki(path.join(dir, 'pki'));
    for (const h of ['127.0.0.1', 'localhost', 'n1', 'n2', 'n3', 'lb']) expect(certificateCoversHost(pki.servingCertPem, h)).toBe(true);

    const target: KubectlTarget = { kubeconfig, kubectlCacheDir: path.join(base, 'kube-cache'), homeDir: path.join(base, 'home') };
    await fs.mkdir(target.homeDir, { recursive: true });
    const contexts = (await runKubectl(target, ['config', 'get-contexts', '-o', 'name'])).stdout.trim().split('\n');
    expect(contexts.sort()).toEqual(balanced ? ['lb', 'n1', 'n2', 'n3'] : ['n1', 'n2', 'n3']);
    const current = (await runKubectl(target, ['config', 'current-context'])).stdout.trim();
    expect(current).toBe(balanced ? 'lb' : 'n1');

    // The default context (the balancer when there is one).
    const ns = await runKubectl(target, ['get', 'ns', '-o', 'name']);
    expect(ns.stdout).toContain('namespace/default');
    const created = await runKubectl(target, ['create', 'configmap', 'deploy-via-default', '--from-literal=a=b']);
    expect(created.stdout).toContain('configmap/deploy-via-default created');
    // Every node directly: write then read back on the same node (no replication assumed).
    for (const n of ['n1', 'n2', 'n3']) {
      expect((await runKubectl(target, ['--context', n, 'get', 'ns', 'kube-system', '-o', 'name'])).stdout.trim()).toBe('namespace/kube-system');
      await runKubectl(target, ['--context', n, 'create', 'configmap', `deploy-${n}`, `--from-literal=node=${n}`]);
      const got = await runKubectl(target, ['--context', n, 'get', 'configmap', `deploy-${n}`, '-o', 'jsonpath={.data.node}']);
      expect(got.stdout).toBe(n);
    }

    // The compose health check command, run for real against a node (its port substituted).
    const hc = (parseYaml(readFileSync(path.join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as ComposeFile).services.n1!.healthcheck!.test!;
    expect(hc.slice(0, 3)).toEqual(['CMD', 'node', '-e']);
    const script = hc[3]!.replace('port:6444', `port:${secure[0]}`);
    expect(spawnSync(process.execPath, ['-e', script], { timeout: 10_000 }).status).toBe(0);
    // ... and it fails when nothing listens there.
    const nothing = hc[3]!.replace('port:6444', `port:${await getFreePort()}`);
    expect(spawnSync(process.execPath, ['-e', nothing], { timeout: 10_000 }).status).toBe(1);

    // A node that dies while the cluster runs is started again from its data dir, as compose's
    // `restart: unless-stopped` does (the launcher's default; --no-restart turns it off).
    const n2 = pids.find((p) => p.name === 'n2')!;
    process.kill(n2.pid, 'SIGKILL');
    const restarted = /^\[launcher\] n2 restarted \(pid (\d+)\)$/m;
    const restartDeadline = Date.now() + 60_000;
    while (!restarted.test(out)) {
      if (Date.now() > restartDeadline) throw new Error(`n2 was not restarted\nstdout:\n${out}`);
      await delay(100);
    }
    const again = { name: 'n2 (restarted)', port: n2.port, pid: Number(restarted.exec(out)![1]) };
    expect(again.pid).not.toBe(n2.pid);
    pids.push(again);
    let kept = await runKubectl(target, ['--context', 'n2', 'get', 'configmap', 'deploy-n2', '-o', 'jsonpath={.data.node}'], { expectFail: 'any' });
    while (kept.code !== 0 && Date.now() < restartDeadline) {
      await delay(250);
      kept = await runKubectl(target, ['--context', 'n2', 'get', 'configmap', 'deploy-n2', '-o', 'jsonpath={.data.node}'], { expectFail: 'any' });
    }
    expect(kept.stdout).toBe('n2');

    child.kill('SIGINT');
    let timer: NodeJS.Timeout | undefined;
    const res = await Promise.race([exited, new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), 30_000)))]);
    clearTimeout(timer);
    expect(res).toEqual({ code: 0, signal: null });
    expect(out).toMatch(/\[launcher\] SIGINT: stopping the cluster/);
    expect(out).toMatch(/\[launcher\] stopped/);
    for (const p of pids) expect({ name: p.name, alive: alive(p.pid) }).toEqual({ name: p.name, alive: false });
    for (const p of [...secure, lbPort]) expect(await portFree(p)).toBe(true);
  }, 180_000);

  it('fails fast with exit code 1 and a clear message when a port is taken', async () => {
    const [taken, ...others] = await getFreePorts(10);
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(taken, '127.0.0.1', r));
    try {
      const r = spawnSync(
        process.execPath,
        [
          launcher,
          '--base-dir',
          path.join(base, 'busy'),
          '--secure-port',
          [taken, others[0], others[1]].join(','),
          '--peer-port',
          others.slice(2, 5).join(','),
          '--lb-port',
          String(others[5]),
          '--client-port',
          others.slice(6, 9).join(','),
        ],
        { encoding: 'utf8', timeout: 30_000 },
      );
      expect(r.status).toBe(1);
      expect(r.stderr).toContain(`n1 HTTPS port 127.0.0.1:${taken} is not available`);
    } finally {
      await new Promise((r) => blocker.close(r));
    }
  });

  it('rejects bad flags with exit code 2 and the usage', () => {
    const r = spawnSync(process.execPath, [launcher, '--nodes', 'x'], { encoding: 'utf8', timeout: 30_000 });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--nodes must be 1-9[\s\S]*usage: cluster/);
  });
});
