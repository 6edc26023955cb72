export { RawBatchError, writeBatch } from './level.batch.js';
export type { RawBatchOp, RawBatchTarget } from './level.batch.js';
