/**
 * Disk faults on a real server process (docs/disk-faults.md). The server runs with the test-only
 * switch (`--test-disk-faults <control file>` and KAPI_TEST_FAULTS=1); each test writes the
 * control file to make the node's storage writes fail or wait, then clears it.
 *
 * - a full disk (ENOSPC): the write gets a 5xx Status, /readyz fails its storage-disk check,
 *   /metrics shows kapi_storage_disk_full 1; once space is back the node serves again on its
 *   own and the write is there whole;
 * - an I/O error on a write or on its fsync: the write gets a 5xx Status and the node stops
 *   (exit 1, never retrying an fsync); restarted, it has each object whole or not at all;
 * - a slow fsync: writes past the node's bound of pending proposal bytes are refused at once
 *   (429, and etcd's "too many requests" through the etcd API); the pending ones land;
 * - flipped bytes: a corrupt Raft log record stops the start with a message naming the
 *   directory and the entry; a corrupt stored object is a 500 naming the key, never another value.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { type ServerHandle, getFreePort, metricValue, repoRoot, request, startServer, waitFor } from './support/server.js';

const CM = '/api/v1/namespaces/default/configmaps';
const cm = (name: string, v = 'value') => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { v } });

/** The data of ConfigMap `name`, or 'absent' (any other answer is returned as its status). */
async function wholeOrAbsent(h: ServerHandle, name: string): Promise<unknown> {
  const r = await request(h, 'GET', `${CM}/${name}`);
  return r.status === 404 ? 'absent' : r.status === 200 ? r.json<{ data: unknown }>().data : r.status;
}

interface Status {
  kind: string;
  status: string;
  code: number;
  reason?: string;
  message: string;
}

describe('disk faults on a single node', () => {
  let dir: string;
  let control: string;
  const handles: ServerHandle[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kapi-diskfaults-'));
    control = join(dir, 'faults.json');
    await writeFile(control, '');
  });
  afterAll(async () => {
    for (const h of handles) await h.cleanup();
    await rm(dir, { recursive: true, force: true });
  });

  const setFaults = (plan: object) => writeFile(control, JSON.stringify(plan));
  // A test that failed midway must not leave its fault to the next one.
  afterEach(() => setFaults({}));
  const start = async (name: string, args: string[] = [], env: Record<string, string> = {}): Promise<ServerHandle> => {
    const h = await startServer({ dataDir: join(dir, name), args: ['--test-disk-faults', control, ...args], env: { KAPI_TEST_FAULTS: '1', ...env } });
    handles.push(h);
    return h;
  };

  it('refuses the switch without KAPI_TEST_FAULTS=1', () => {
    const entry = join(repoRoot(), 'dist', 'apps', 'apiserver', 'src', 'main.js');
    const env = { ...process.env };
    delete env.KAPI_TEST_FAULTS;
    const r = spawnSync(process.execPath, [entry, '--data-dir', join(dir, 'refused'), '--test-disk-faults', control], {
      env,
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--test-disk-faults is a test-only switch: it is honoured only with KAPI_TEST_FAULTS=1');
  });

  it('a full disk fails the write with a 5xx Status, shows in readyz and metrics, and the node recovers when space is back', async () => {
    const h = await start('full');
    expect((await request(h, 'POST', CM, { body: cm('before') })).status).toBe(201);
    expect(await metricValue(h, 'kapi_storage_disk_full')).toBe(0);
    await setFaults({ write: 'ENOSPC' });
    const refused = await request(h, 'POST', CM, { body: cm('during', 'whole') });
    const st = refused.json<Status>();
    // The proposal waited in the refused write until its bound: outcome unknown, and why.
    expect([refused.status, st.kind, st.status, st.code, st.reason]).toEqual([504, 'Status', 'Failure', 504, 'Timeout']);
    expect(st.message).toMatch(/this node's disk is full: IO error: .*No space left on device/);
    const ready = await request(h, 'GET', '/readyz?verbose', { identity: 'anonymous' });
    expect(ready.status).toBe(500);
    expect(ready.body).toContain('[-]storage-disk failed: reason withheld\n');
    const own = await request(h, 'GET', '/readyz/storage-disk');
    expect(own.status).toBe(500);
    expect(own.body).toMatch(/^internal server error: no space left on device: storage writes wait for space \(IO error: .*No space left on device/);
    expect(await metricValue(h, 'kapi_storage_disk_full')).toBe(1);
    expect(await metricValue(h, 'kapi_storage_disk_full_retries_total')).toBeGreaterThan(0);
    expect(h.exited).toBeUndefined();

    await setFaults({});
    await waitFor('readyz to pass again', async () => (await request(h, 'GET', '/readyz', { identity: 'anonymous' })).status === 200, 20_000);
    expect(await metricValue(h, 'kapi_storage_disk_full')).toBe(0);
    // The refused write's outcome was unknown to its client: it is there whole or not at all.
    expect([{ v: 'whole' }, 'absent']).toContainEqual(await wholeOrAbsent(h, 'during'));
    expect((await request(h, 'POST', CM, { body: cm('after') })).status).toBe(201);
    expect((await request(h, 'GET', `${CM}/before`)).status).toBe(200);
    expect(h.exited).toBeUndefined();
  }, 60_000);

  // The third fails only the store's writes, which come after the entry was applied (the Raft
  // log is fine): the node stops on that failure, not at the next entry it applies.
  // [name, fault, the database the fatal message names]
  for (const [name, fault, db] of [
    ['write', { write: 'EIO' }, /\/(raft|mvcc): /],
    ['fsync', { fsync: 'EIO' }, /\/(raft|mvcc): /],
    ['store', { write: 'EIO', match: '/mvcc' }, /\/mvcc: /],
  ] as const) {
    it(`an I/O error (${JSON.stringify(fault)}) fails the write with a 5xx Status and stops the node; restarted, it has each object whole or not at all`, async () => {
      const h = await start(`eio-${name}`);
      expect((await request(h, 'POST', CM, { body: cm('kept') })).status).toBe(201);
      await setFaults(fault);
      // Background writes (lease renewals) hit the fault too: when one does first, the node is
      // already stopping and this request's connection closes instead of answering.
      const r = await request(h, 'POST', CM, { body: cm('lost', 'whole') }).catch(() => undefined);
      const answer = r === undefined ? 'connection closed' : r.status >= 500 && r.json<Status>().code === r.status ? 'a 5xx Status' : r.body;
      expect(['connection closed', 'a 5xx Status']).toContain(answer);
      await waitFor('the node to stop', async () => h.exited !== undefined, 20_000);
      expect(h.exited).toEqual({ code: 1, signal: null });
      expect(h.stderr).toMatch(/fatal: storage failure: IO error: .*Input\/output error \(injected on (write|fsync)\)/);
      expect(h.stderr.split('\n').find((l) => l.startsWith('fatal: storage failure:'))).toMatch(db);
      await setFaults({});
      await h.start();
      expect((await request(h, 'GET', `${CM}/kept`)).status).toBe(200);
      expect([{ v: 'whole' }, 'absent']).toContainEqual(await wholeOrAbsent(h, 'lost'));
      expect((await request(h, 'POST', CM, { body: cm('again') })).status).toBe(201);
    }, 60_000);
  }

  it('a flipped byte in a Raft log record stops the start with the directory and the entry named', async () => {
    const h = await start('corrupt-log');
    expect((await request(h, 'POST', CM, { body: cm('a') })).status).toBe(201);
    await h.stop();
    const raftDir = join(h.dataDir, 'raft');
    const db = new ClassicLevel<string, Uint8Array>(raftDir, { keyEncoding: 'utf8', valueEncoding: 'view' });
    await db.open();
    const [last] = await db.keys({ gt: 'e', lt: 'f', reverse: true, limit: 1 }).all();
    const raw = (await db.get(last!))!.slice();
    raw[raw.length - 1] ^= 0x10;
    await db.put(last!, raw);
    await db.close();
    await expect(h.start()).rejects.toThrow();
    expect(h.exited?.code).toBe(1);
    const index = parseInt(last!.slice(1), 16);
    expect(h.stderr).toContain(`raft log in ${raftDir}: checksum mismatch in record ${last} (log entry ${index})`);
  }, 60_000);

  it('a flipped byte in a stored object is a 500 naming the key, never another value', async () => {
    const h = await start('corrupt-value');
    expect((await request(h, 'POST', CM, { body: cm('flipped', 'original') })).status).toBe(201);
    await h.stop();
    const db = new ClassicLevel<string, Buffer>(join(h.dataDir, 'mvcc'), { keyEncoding: 'utf8', valueEncoding: 'buffer' });
    await db.open();
    const keys = (await db.keys({ gte: 'k:', lt: 'k;' }).all()).filter((k) => k.endsWith('/configmaps/default/flipped'));
    expect(keys).toHaveLength(1);
    const raw = Buffer.from((await db.get(keys[0]!))!);
    const at = raw.indexOf('original');
    expect(at).toBeGreaterThan(0);
    raw[at] ^= 0x01; // 'o' -> 'n': still valid JSON, a different value if nothing checked it
    await db.put(keys[0]!, raw);
    await db.close();
    await h.start();
    const r = await request(h, 'GET', `${CM}/flipped`);
    expect(r.status).toBe(500);
    expect(r.json<Status>()).toMatchObject({ kind: 'Status', code: 500 });
    expect(r.json<Status>().message).toContain(`checksum mismatch in current record of ${keys[0]!.slice(2)}`);
    expect(r.body).not.toContain('nriginal');
  }, 60_000);

  it('a slow disk: writes past the bound of pending proposals are refused at once (429, etcd\'s "too many requests"), the pending ones land', async () => {
    const etcdPort = await getFreePort();
    const h = await start('backpressure', ['--listen-client-urls', `http://127.0.0.1:${etcdPort}`], { KAPI_MAX_PENDING_PROPOSAL_BYTES: '300000' });
    expect((await request(h, 'POST', CM, { body: cm('before') })).status).toBe(201);
    await setFaults({ fsyncDelayMs: 4000 });
    // About 200 KB pending while the log's fsync waits: under the bound of 300,000 bytes.
    const pending = request(h, 'POST', CM, { body: cm('pending', 'p'.repeat(200_000)), timeoutMs: 30_000 });
    await waitFor('the first write to be pending', async () => (await metricValue(h, 'kapi_proposals_pending_bytes')) >= 200_000, 10_000);

    // A write that would pass the bound is refused at once, before it is proposed.
    const refused = await request(h, 'POST', CM, { body: cm('refused', 'r'.repeat(120_000)) });
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.json<Status>()).toMatchObject({ kind: 'Status', code: 429, reason: 'TooManyRequests' });
    expect(refused.json<Status>().message).toMatch(/too many requests: proposals of \d+ bytes are pending on this node \(at most 300000\)/);
    // The same through the etcd API, in etcd's words (etcdctl does not retry it).
    const put = spawnSync('etcdctl', ['--endpoints', `http://127.0.0.1:${etcdPort}`, '--command-timeout', '10s', 'put', '/refused', 'e'.repeat(120_000)], {
      env: { ...process.env, ETCDCTL_API: '3' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(put.status).not.toBe(0);
    expect(put.stderr).toContain('etcdserver: too many requests');
    expect(await metricValue(h, 'kapi_proposals_refused_total')).toBe(2);

    // The pending write lands once the disk is fast again; nothing refused was written.
    await setFaults({});
    expect((await pending).status).toBe(201);
    expect(await wholeOrAbsent(h, 'refused')).toBe('absent');
    const get = spawnSync('etcdctl', ['--endpoints', `http://127.0.0.1:${etcdPort}`, 'get', '/refused'], {
      env: { ...process.env, ETCDCTL_API: '3' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(get.status).toBe(0);
    expect(get.stdout).toBe('');
    expect(await metricValue(h, 'kapi_proposals_pending_bytes')).toBe(0);
    expect((await request(h, 'POST', CM, { body: cm('after', 'a'.repeat(120_000)) })).status).toBe(201);
  }, 60_000);
});
