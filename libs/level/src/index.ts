export { RawBatchError, writeBatch } from './level.batch.js';
export type { RawBatchOp, RawBatchTarget } from './level.batch.js';
export { StorageDiskState, isNoSpace, storageDisk, writeUntilSpace } from './level.disk-state.js';
export type { SpaceWaitOptions } from './level.disk-state.js';
export {
  DiskFaultPlanError,
  DiskFaultSwitch,
  InjectedDiskError,
  activeDiskFaults,
  diskFaultBefore,
  installDiskFaults,
  parseDiskFaultPlan,
} from './level.faults.js';
export type { DiskFaultPlan } from './level.faults.js';
