import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { ClassicLevel } from 'classic-level';
import { writeBatch } from './level.batch.js';
import { DiskFaultPlanError, DiskFaultSwitch, installDiskFaults, parseDiskFaultPlan } from './level.faults.js';

describe('disk fault switch', () => {
  let dir: string;
  let control: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'kapi-faults-'));
    control = path.join(dir, 'faults.json');
  });
  afterEach(async () => {
    installDiskFaults(undefined);
    await rm(dir, { recursive: true, force: true });
  });

  it('accepts the documented plans and refuses anything else', () => {
    expect(parseDiskFaultPlan('')).toEqual({});
    expect(parseDiskFaultPlan('{"write":"ENOSPC","match":"raft"}')).toEqual({ write: 'ENOSPC', match: 'raft' });
    expect(parseDiskFaultPlan('{"fsync":"EIO","fsyncDelayMs":20}')).toEqual({ fsync: 'EIO', fsyncDelayMs: 20 });
    for (const bad of ['nope', '[]', '{"write":"EFAULT"}', '{"fsync":"ENOSPC"}', '{"fsyncDelayMs":-1}', '{"slow":1}', '{"match":3}'])
      expect(() => parseDiskFaultPlan(bad)).toThrow(DiskFaultPlanError);
  });

  it('fails writes as the control file says, from the next write on, for matching databases only', async () => {
    const db = new ClassicLevel<string, Uint8Array>(path.join(dir, 'raft'), { keyEncoding: 'utf8', valueEncoding: 'view' });
    const other = new ClassicLevel<string, Uint8Array>(path.join(dir, 'mvcc'), { keyEncoding: 'utf8', valueEncoding: 'view' });
    await db.open();
    await other.open();
    const sw = new DiskFaultSwitch(control);
    installDiskFaults(sw);
    const put = (d: typeof db, v: number, sync: boolean) => writeBatch(d, [{ type: 'put', key: 'k', value: new Uint8Array([v]) }], sync);
    await put(db, 1, true);
    await writeFile(control, JSON.stringify({ write: 'ENOSPC', match: 'raft' }));
    await expect(put(db, 2, false)).rejects.toMatchObject({
      code: 'LEVEL_IO_ERROR',
      errno: 'ENOSPC',
      message: expect.stringMatching(/No space left on device/),
    });
    await put(other, 2, true);
    await writeFile(control, JSON.stringify({ fsync: 'EIO' }));
    await put(db, 3, false);
    await expect(put(other, 4, true)).rejects.toMatchObject({ errno: 'EIO', message: expect.stringMatching(/Input\/output error \(injected on fsync\)/) });
    await writeFile(control, JSON.stringify({ fsyncDelayMs: 30 }));
    await put(db, 5, true);
    await writeFile(control, '');
    // The refused writes left the databases as they were.
    expect([...(await db.get('k'))!]).toEqual([5]);
    expect([...(await other.get('k'))!]).toEqual([2]);
    expect(Object.fromEntries(sw.injected)).toEqual({ 'write-ENOSPC': 1, 'fsync-EIO': 1, 'fsync-delay': 1 });
    await db.close();
    await other.close();
  });

  it('refuses a control file that is not a plan when installed, and keeps the last good plan on a bad edit', async () => {
    await writeFile(control, '{"write":');
    expect(() => new DiskFaultSwitch(control)).toThrow(DiskFaultPlanError);
    await writeFile(control, '{"write":"EIO"}');
    const sw = new DiskFaultSwitch(control);
    await writeFile(control, '{"write":"EIO"');
    expect(sw.current()).toEqual({ write: 'EIO' });
  });
});
