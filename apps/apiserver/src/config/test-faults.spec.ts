import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { activeDiskFaults, installDiskFaults } from '@app/level';
import { FlagError } from './flags.js';
import { installTestDiskFaults } from './test-faults.js';

describe('--test-disk-faults', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'kapi-test-faults-'));
  });
  afterEach(() => {
    installDiskFaults(undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  it('does nothing without the flag', () => {
    expect(installTestDiskFaults({}, { KAPI_TEST_FAULTS: '1' })).toBeUndefined();
    expect(activeDiskFaults()).toBeUndefined();
  });

  it('is refused without KAPI_TEST_FAULTS=1, so a production start never runs with it', () => {
    const file = join(dir, 'faults.json');
    for (const env of [{}, { KAPI_TEST_FAULTS: '0' }]) {
      expect(() => installTestDiskFaults({ 'test-disk-faults': file }, env)).toThrow(FlagError);
    }
    expect(activeDiskFaults()).toBeUndefined();
  });

  it('installs the switch with KAPI_TEST_FAULTS=1, and refuses a control file that is not a plan', () => {
    const file = join(dir, 'faults.json');
    writeFileSync(file, '{"write":"EIO"}');
    expect(installTestDiskFaults({ 'test-disk-faults': file }, { KAPI_TEST_FAULTS: '1' })).toMatch(/^TEST MODE: /);
    expect(activeDiskFaults()?.current()).toEqual({ write: 'EIO' });
    installDiskFaults(undefined);
    writeFileSync(file, '{"write":"EBADF"}');
    expect(() => installTestDiskFaults({ 'test-disk-faults': file }, { KAPI_TEST_FAULTS: '1' })).toThrow(/must be "EIO" or "ENOSPC"/);
    expect(activeDiskFaults()).toBeUndefined();
  });
});
