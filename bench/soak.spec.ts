import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dirBytes, soakOptions } from './soak.js';

describe('soak options and sizes', () => {
  it('takes flags over the environment over the defaults, and refuses bad numbers', () => {
    const d = soakOptions([], {});
    expect(d).toMatchObject({ minutes: 30, sampleSeconds: 10, rate: 40, snapshotCount: 500, compactionIntervalS: 60, objectKiB: 16 });
    expect(d.csv).toMatch(/kapi-soak-.*\/soak\.csv$/);
    expect(soakOptions([], { SOAK_MINUTES: '2', SOAK_SAMPLE_SECONDS: '3' })).toMatchObject({ minutes: 2, sampleSeconds: 3 });
    expect(soakOptions(['--minutes', '0.5', '--csv', '/x/y.csv'], { SOAK_MINUTES: '2' })).toMatchObject({ minutes: 0.5, csv: '/x/y.csv' });
    expect(() => soakOptions(['--minutes', 'soon'], {})).toThrow(/bad number/);
    expect(() => soakOptions(['--hours', '1'], {})).toThrow();
  });

  it('adds up the files under a directory, nested ones included', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kapi-soak-spec-'));
    try {
      await mkdir(join(dir, 'a', 'b'), { recursive: true });
      await writeFile(join(dir, 'x'), Buffer.alloc(100));
      await writeFile(join(dir, 'a', 'b', 'y'), Buffer.alloc(23));
      expect(await dirBytes(dir)).toBe(123);
      expect(await dirBytes(join(dir, 'missing'))).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
