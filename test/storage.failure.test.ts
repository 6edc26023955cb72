/**
 * A node whose disk refuses a write (a full disk, an I/O error) stops and exits non-zero, so
 * that a supervisor restarts it from its durable state; every write it acknowledged before is
 * there after the restart (docs/storage.md "When a write fails"). A node whose store lost a
 * batch it had not synced, before one it kept, refuses to start (docs/cluster.md "Durability").
 *
 * The failure is real, not mocked: the server runs under a file-size limit (`ulimit -f`, with
 * SIGXFSZ ignored), so LevelDB's write of its log fails with EFBIG once the file reaches it, as
 * a write to a full disk fails with ENOSPC. Both take the same path in the server.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClassicLevel } from 'classic-level';
import { type ServerHandle, ServerStartError, request, startServer } from './support/server.js';

const CM = '/api/v1/namespaces/default/configmaps';
const VALUE = 'x'.repeat(900 * 1024);
/** 12 MiB: a few dozen small startup writes fit, about a dozen 900 KiB ConfigMaps do not. */
const LIMIT_KIB = 12 * 1024;

describe('a node whose storage write fails', () => {
  let dir: string;
  const handles: ServerHandle[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kapi-storage-failure-'));
  });

  afterAll(async () => {
    for (const h of handles) await h.cleanup();
    await rm(dir, { recursive: true, force: true });
  });

  it('exits with a fatal error instead of serving on; after a restart every acknowledged write is there', async () => {
    const dataDir = join(dir, 'data');
    const limited = await startServer({
      dataDir,
      wrap: ['sh', '-c', `ulimit -f ${LIMIT_KIB} && trap '' XFSZ && exec "$0" "$@"`],
    });
    handles.push(limited);
    const acked: string[] = [];
    const refused: number[] = [];
    for (let i = 0; i < 40 && limited.exited === undefined; i++) {
      const name = `big-${i}`;
      const r = await request(limited, 'POST', CM, {
        body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { v: VALUE } },
        timeoutMs: 20_000,
      }).catch(() => undefined);
      if (r?.status === 201) acked.push(name);
      else if (r !== undefined) refused.push(r.status);
    }
    // Some writes fit under the limit, then one failed and the node stopped for good.
    expect(acked.length).toBeGreaterThan(3);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused[0]).toBe(500);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([limited.waitExit(), new Promise((r) => (timer = setTimeout(r, 30_000)))]);
    clearTimeout(timer);
    expect(limited.exited).toEqual({ code: 1, signal: null });
    expect(limited.stderr).toMatch(/fatal: storage failure: .*File too large/);

    // Restarted without the limit on the same data dir: nothing acknowledged was lost.
    const again = await startServer({ dataDir, port: limited.port });
    handles.push(again);
    for (const name of acked) {
      const r = await request(again, 'GET', `${CM}/${name}`);
      expect(r.status).toBe(200);
      expect(r.json<{ data: { v: string } }>().data.v.length).toBe(VALUE.length);
    }
    expect((await request(again, 'POST', CM, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after' }, data: { v: 'ok' } } })).status).toBe(
      201,
    );
  });

  it('refuses to start on a store that lost an unsynced batch before one it kept, naming the entry and the way out', async () => {
    const dataDir = join(dir, 'hole');
    const h = await startServer({ dataDir });
    handles.push(h);
    for (let i = 0; i < 4; i++) {
      const r = await request(h, 'POST', CM, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}` }, data: { v: String(i) } } });
      expect(r.status).toBe(201);
    }
    await h.kill();

    // What a system crash can leave behind: LevelDB switched log files without syncing the old
    // one and recovered the new one, so a batch in the middle is gone with its mark. Removing
    // the mark is what the store sees of that.
    const db = new ClassicLevel<string, string>(join(dataDir, 'mvcc'), { keyEncoding: 'utf8', valueEncoding: 'utf8' });
    await db.open();
    const synced = Number(await db.get('m:synced'));
    const marks: { key: string; first: number }[] = [];
    for await (const key of db.keys({ gt: 'm:b:', lt: 'm:b;' })) {
      const first = parseInt(key.slice('m:b:'.length), 16);
      if (first > synced) marks.push({ key, first });
    }
    expect(marks.length).toBeGreaterThanOrEqual(3);
    const lost = marks[1]!;
    await db.del(lost.key);
    await db.close();

    const err = await startServer({ dataDir, port: h.port }).then(
      (again) => {
        handles.push(again);
        return undefined;
      },
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ServerStartError);
    expect((err as Error).message).toMatch(/exited before ready \(code 1/);
    expect((err as Error).message).toContain(`lost the batch of entries from ${lost.first}`);
    expect((err as Error).message).toMatch(/fatal: .*this member must be rebuilt/);
  });
});
