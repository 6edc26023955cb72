/**
 * The test-only disk fault switch (docs/disk-faults.md): `--test-disk-faults <control file>`
 * installs @app/level's DiskFaultSwitch, which makes storage writes fail or wait as the control
 * file says. It is honoured only when KAPI_TEST_FAULTS=1 is set as well: a production start
 * that carries the flag by mistake stops with an error instead of running with faults.
 */
import { DiskFaultPlanError, DiskFaultSwitch, installDiskFaults } from '@app/level';
import { envInt } from './env.js';
import { FlagError } from './flags.js';

/**
 * Installs the switch when `raw` has --test-disk-faults; returns the warning to print, or
 * undefined when the flag is absent. Throws FlagError without KAPI_TEST_FAULTS=1 or for a
 * control file that is not a valid plan.
 */
export function installTestDiskFaults(raw: Readonly<Record<string, string>>, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const file = raw['test-disk-faults'];
  if (file === undefined) return undefined;
  if (envInt('KAPI_TEST_FAULTS', env) !== 1)
    throw new FlagError('--test-disk-faults is a test-only switch: it is honoured only with KAPI_TEST_FAULTS=1 in the environment');
  if (file === '') throw new FlagError('--test-disk-faults needs the path of a control file');
  try {
    installDiskFaults(new DiskFaultSwitch(file));
  } catch (e) {
    if (e instanceof DiskFaultPlanError) throw new FlagError(`--test-disk-faults ${file}: ${e.message}`);
    throw e;
  }
  return `TEST MODE: storage writes fail or wait as ${file} says (--test-disk-faults); never use this in production`;
}
