import { execFile } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { prerequisite } from '../../../test/support/prereq.js';
import { BOLT_PAGE_SIZE, fnv1a64, writeBoltFile } from './etcd.bolt-writer.js';

const execFileP = promisify(execFile);

/** etcd's revision key (8 bytes main big-endian, `_`, 8 bytes sub). */
const rev = (main: number): Buffer => {
  const b = Buffer.alloc(17);
  b.writeBigUInt64BE(BigInt(main), 0);
  b[8] = 0x5f;
  return b;
};

describe('writeBoltFile', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'bolt-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('computes FNV-1a 64 as bbolt checksums its meta pages', () => {
    expect(fnv1a64(new Uint8Array(0))).toBe(0xcbf29ce484222325n);
    expect(fnv1a64(Buffer.from('a'))).toBe(0xaf63dc4c8601ec8cn);
    expect(fnv1a64(Buffer.from('foobar'))).toBe(0x85944171f73967e8n);
  });

  it('refuses keys out of order or repeated, and bucket names out of order', async () => {
    const out = (n: string) => join(dir, n);
    await expect(
      writeBoltFile(out('a'), [
        {
          name: Buffer.from('k'),
          entries: [
            [rev(2), Buffer.alloc(1)],
            [rev(1), Buffer.alloc(1)],
          ],
        },
      ]),
    ).rejects.toThrow('bolt: bucket keys must be unique and in byte order');
    await expect(
      writeBoltFile(out('b'), [
        {
          name: Buffer.from('k'),
          entries: [
            [rev(1), Buffer.alloc(1)],
            [rev(1), Buffer.alloc(1)],
          ],
        },
      ]),
    ).rejects.toThrow('bolt: bucket keys must be unique and in byte order');
    await expect(
      writeBoltFile(out('c'), [
        { name: Buffer.from('meta'), entries: [] },
        { name: Buffer.from('key'), entries: [] },
      ]),
    ).rejects.toThrow('bolt: bucket names must be unique and in byte order');
  });

  it('writes a file etcd reads whole: two branch levels, values spanning pages, an empty bucket (etcdctl snapshot status)', async () => {
    const have = prerequisite('etcdctl', 'a bbolt file read by etcdctl snapshot status (libs/storage/src/etcd.bolt-writer.spec.ts)');
    const keys = 20_000;
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const entries: [Buffer, Buffer][] = [];
    for (let i = 1; i <= keys; i++) {
      // Mostly small values; every 1,000th one larger than a page (it spans pages of its own).
      const size = i % 1000 === 0 ? 3 * BOLT_PAGE_SIZE + 100 : 20 + Math.floor(random() * 200);
      entries.push([rev(i), Buffer.alloc(size, i % 251)]);
    }
    const file = join(dir, 'db');
    const bytes = await writeBoltFile(file, [
      { name: Buffer.from('key'), entries },
      { name: Buffer.from('lease'), entries: [] },
      { name: Buffer.from('meta'), entries: [[Buffer.from('consistent_index'), Buffer.alloc(8)]] },
    ]);
    expect(bytes % BOLT_PAGE_SIZE).toBe(0);
    expect((await stat(file)).size).toBe(bytes);
    // More than 124 leaves (what one branch page of 17-byte keys holds): the tree has two branch levels.
    expect(bytes / BOLT_PAGE_SIZE).toBeGreaterThan(300);
    if (!have) return;
    // etcdctl checks the file's consistency (every page reachable once, in bounds) before it
    // walks every key of every bucket.
    const { stdout } = await execFileP('etcdctl', ['snapshot', 'status', file, '-w', 'json'], { env: { ...process.env, ETCDCTL_API: '3' } });
    expect(JSON.parse(stdout)).toMatchObject({ revision: keys, totalKey: keys + 1, totalSize: bytes });
  });
});
