/**
 * The batch API group (`/apis/batch/v1`): Job and CronJob, stored only. No job or cronjob
 * controller runs, so a Job never gets Pods and a CronJob never creates Jobs; status stays what
 * the status subresource writes.
 */
import { Module } from '@nestjs/common';
import type { KindDeclaration } from '@app/registry';
import { apiKinds } from '../api-group.js';
import { cronJobKind } from './cronjob/cronjob.kind.js';
import { jobKind } from './job/job.kind.js';

/** The batch/v1 kinds. */
export const BATCH_KINDS: readonly KindDeclaration[] = [cronJobKind, jobKind];

/** Provides the batch/v1 kinds. */
@Module({ providers: [apiKinds('batch', BATCH_KINDS)] })
export class BatchGroupModule {}
