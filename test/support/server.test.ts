/**
 * Tests of the e2e harness itself, against a fake server (fixtures/fake-apiserver.mjs) that
 * follows the API server's start-up contract, so they run before the real server exists.
 */
import { promises as fs } from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { ensurePki } from '@app/pki';
import { EtcdCluster } from './etcd.js';
import { ServerStartError, etcdServerArgs, getFreePort, kubectl, repoRoot, request, request2, runKubectl, startServer, type ServerHandle } from './server.js';

const fake = path.join(repoRoot(), 'test', 'support', 'fixtures', 'fake-apiserver.mjs');

async function freshPkiDir(): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'harness-spec-'));
  await ensurePki(dir, {});
  return dir;
}

describe('getFreePort', () => {
  it('returns a port that can be bound right away', async () => {
    const port = await getFreePort();
    expect(port).toBeGreaterThan(0);
    const srv = net.createServer();
    await new Promise<void>((resolve, reject) => {
      srv.once('error', reject);
      srv.listen(port, '127.0.0.1', resolve);
    });
    srv.close();
  });
});

describe('runKubectl', () => {
  it('runs kubectl version --client', async () => {
    const r = await runKubectl(null, ['version', '--client', '-o', 'json']);
    expect(r.code).toBe(0);
    const v = JSON.parse(r.stdout) as { clientVersion: { major: string } };
    expect(v.clientVersion.major).toBe('1');
  });

  it('reports unexpected exit codes with the output', async () => {
    await expect(runKubectl(null, ['no-such-command'])).rejects.toThrow(/exited 1[\s\S]*unknown command/);
    const r = await runKubectl(null, ['no-such-command'], { expectFail: true });
    expect(r.code).not.toBe(0);
    await expect(runKubectl(null, ['version', '--client'], { expectFail: true })).rejects.toThrow(/expected to fail/);
  });
});

describe('startServer (against the fake server)', () => {
  let dataDir: string;
  let h: ServerHandle | undefined;
  beforeAll(async () => {
    dataDir = await freshPkiDir();
  });
  afterAll(async () => {
    await h?.cleanup();
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('waits for readiness and exposes credentials, logs, HTTPS, HTTP/2 and kubectl', async () => {
    h = await startServer({ entry: fake, dataDir, args: ['--extra-flag', 'x'] });
    expect(h.url).toBe(`https://127.0.0.1:${h.port}`);
    expect(h.caPem).toContain('BEGIN CERTIFICATE');
    expect(h.stderr).toContain(`--data-dir ${dataDir} --secure-port ${h.port} --bind-address 127.0.0.1 --extra-flag x`);

    const ready = await request(h, 'GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toBe('ok');

    const echo = await request(h, 'POST', '/echo?x=1', { body: { a: 1 } });
    expect(echo.status).toBe(200);
    expect(echo.json()).toMatchObject({
      method: 'POST',
      path: '/echo?x=1',
      body: '{"a":1}',
      contentType: 'application/json',
      cn: 'kubernetes-admin',
      httpVersion: '1.1',
    });
    const anon = await request(h, 'GET', '/echo', { identity: 'anonymous' });
    expect(anon.json()).toMatchObject({ cn: null });

    const h2 = await request2(h, 'PUT', '/echo', { body: 'raw', headers: { 'content-type': 'text/plain' } });
    expect(h2.status).toBe(200);
    expect(h2.json()).toMatchObject({ method: 'PUT', body: 'raw', httpVersion: '2.0', cn: 'kubernetes-admin' });

    const nf = await request(h, 'GET', '/nope');
    expect(nf.status).toBe(404);
    expect(nf.json<{ reason: string }>().reason).toBe('NotFound');

    // kubectl talks TLS to the server with the harness kubeconfig (Go's TLS stack accepts our
    // ECDSA certificates and PKCS#8 keys).
    const v = await kubectl(h, ['version', '-o', 'json']);
    expect((JSON.parse(v.stdout) as { serverVersion: { minor: string } }).serverVersion.minor).toBe('32');
    expect(h.serverKubeconfig).toBe(path.join(dataDir, 'admin.kubeconfig'));
  }, 60_000);

  it('restarts on the same port and stops with SIGTERM', async () => {
    const handle = h!;
    const pid = handle.pid;
    await handle.restart();
    expect(handle.pid).not.toBe(pid);
    expect((await request(handle, 'GET', '/readyz')).status).toBe(200);
    const st = await handle.stop();
    expect(st).toEqual({ code: 0, signal: null });
    expect(handle.stderr).toContain('fake: SIGTERM');
    await handle.start();
    await handle.kill();
    expect(handle.exited?.signal).toBe('SIGKILL');
  }, 60_000);

  it('fails fast with the stderr tail when the server exits early', async () => {
    const err = await startServer({ entry: fake, dataDir, env: { FAKE_MODE: 'crash' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServerStartError);
    expect((err as Error).message).toMatch(/exited before ready \(code 3[\s\S]*fatal: something broke/);
  });

  it('times out with the last /readyz answer when the server never gets ready', async () => {
    const err = await startServer({ entry: fake, dataDir, env: { FAKE_MODE: 'never-ready' }, readyTimeoutMs: 1_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServerStartError);
    expect((err as Error).message).toMatch(/not ready after 1000 ms \(\/readyz answered 503[\s\S]*fake starting/);
  });

  it('refuses a missing entry', async () => {
    await expect(startServer({ entry: '/nonexistent/main.js' })).rejects.toThrow(/does not exist/);
  });
});

describe('etcdServerArgs (KAPI_TEST_STORAGE=etcd3)', () => {
  it("adds the etcd flags and turns the built-in store's compaction interval into etcd's", () => {
    const member = { name: 'e1', clientURL: 'http://127.0.0.1:1', peerURL: 'http://127.0.0.1:2', dataDir: '/x', process: undefined, log: '' };
    const etcd = new EtcdCluster([member, { ...member, name: 'e2', clientURL: 'http://127.0.0.1:3' }], '/x', undefined);
    expect(etcdServerArgs(['--compaction-interval', '1', '--min-request-timeout=2', '--compaction-interval=0'], etcd)).toEqual([
      '--storage-backend',
      'etcd3',
      '--etcd-servers',
      'http://127.0.0.1:1,http://127.0.0.1:3',
      '--etcd-compaction-interval',
      '1s',
      '--min-request-timeout=2',
      '--etcd-compaction-interval',
      '0',
    ]);
    const tls = new EtcdCluster([member], '/x', '/pki');
    expect(tls.apiServerArgs()).toEqual([
      '--storage-backend',
      'etcd3',
      '--etcd-servers',
      'http://127.0.0.1:1',
      '--etcd-cafile',
      '/pki/ca.crt',
      '--etcd-certfile',
      '/pki/admin.crt',
      '--etcd-keyfile',
      '/pki/admin.key',
    ]);
  });
});
