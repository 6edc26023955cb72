/**
 * The CronJob controller (kube-controller-manager's cronjob controller v2): creates a CronJob's
 * Jobs on its schedule. A sync of one CronJob:
 *
 * - reconciles `status.active` with the Jobs it controls: a finished Job leaves it
 *   (`SawCompletedJob`) and a succeeded one moves `lastSuccessfulTime`; a Job gone leaves it
 *   (`MissingJob`); an unfinished Job it controls but does not list is reported
 *   (`UnexpectedJob`);
 * - unless it is being deleted or suspended, finds the latest scheduled time since
 *   `lastScheduleTime` (or its creation), in `spec.timeZone` (else the process's zone), no
 *   earlier than `startingDeadlineSeconds` ago (`MissSchedule` when that time is too late,
 *   `TooManyMissedTimes` past a hundred missed);
 * - for a time not handled yet, with concurrencyPolicy Forbid and a Job still active, starts
 *   nothing (`JobAlreadyActive`); with Replace, deletes the active Jobs first; then creates the
 *   Job `<name>-<minutes since the epoch>` from `jobTemplate` (owned by the CronJob, with the
 *   `batch.kubernetes.io/cronjob-scheduled-timestamp` annotation), adds it to `status.active`
 *   and sets `lastScheduleTime`. The deterministic name makes a second creation for the same
 *   time fail, so a crash between the creation and the status write starts no second Job;
 * - deletes the oldest finished Jobs beyond `successfulJobsHistoryLimit` and
 *   `failedJobsHistoryLimit`;
 * - looks at the CronJob again just after its next scheduled time.
 */
import { isDeepStrictEqual } from 'node:util';
import { Inject, Injectable } from '@nestjs/common';
import type { KubeObject } from '@app/apimachinery';
import { collectionPrefix, KindRegistry, type KindDeclaration } from '@app/registry';
import type { Storage, StorageEvent } from '@app/storage';
import { asMap } from '../groups/core/core.helpers.js';
import { knownTimeZone } from '../groups/batch/cronjob/cronjob.schedule.js';
import { STORAGE, STORES, type StoreFactory } from '../tokens.js';
import { ManagedController } from './controller.runner.js';
import { KindController } from './kind.controller.js';
import {
  dueTime,
  finishedCondition,
  jobForCronJob,
  jobName,
  jobRef,
  jobsBeyondHistory,
  nextCheck,
  rfc1123z,
  scheduleOf,
  TOO_MANY_MISSED,
} from './cronjob.logic.js';
import { controllerOf } from './disruption.logic.js';
import { EventRecorder } from './event.recorder.js';

const USER = 'cronjob-controller';

const codeOf = (e: unknown): number | undefined => (e as { code?: number }).code;
const rfc3339 = (t: number): string => new Date(t).toISOString().replace(/\.\d{3}Z$/, 'Z');
type Ref = Record<string, unknown>;

/** Runs the CronJob controller while this node holds the controller Lease. */
@ManagedController({ name: 'cronjob' })
@Injectable()
export class CronJobControllerRunner extends KindController {
  /** The Jobs, from a watch-fed copy while this node leads. */
  private readonly jobReader = this.collection(() => this.jobs(), `${USER}: jobs`);

  constructor(registry: KindRegistry, @Inject(STORAGE) storage: Storage, @Inject(STORES) stores: StoreFactory, recorder: EventRecorder) {
    super(registry, storage, stores, recorder, USER);
  }

  private cronJobs(): KindDeclaration | undefined {
    return this.decl('batch', 'cronjobs');
  }

  private jobs(): KindDeclaration | undefined {
    return this.decl('batch', 'jobs');
  }

  protected kindsServed(): boolean {
    return this.cronJobs() !== undefined && this.jobs() !== undefined;
  }

  protected watchPrefixes(): string[] {
    return [collectionPrefix(this.cronJobs()!, ''), collectionPrefix(this.jobs()!, '')];
  }

  protected relist(): Promise<number> {
    return this.listAndQueue(this.cronJobs()!);
  }

  protected onEvent(e: StorageEvent): void {
    const ns = e.object.metadata.namespace ?? '';
    if (e.key.startsWith(collectionPrefix(this.cronJobs()!, ''))) {
      if (e.type === 'DELETED') this.cancelRequeue(`${ns}/${e.object.metadata.name}`);
      else this.queue.add(`${ns}/${e.object.metadata.name}`);
      return;
    }
    const ref = controllerOf(e.object);
    if (ref?.kind === 'CronJob') this.queue.add(`${ns}/${ref.name}`);
  }

  protected async process(key: string): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    try {
      await this.syncCronJob(ns, name);
    } catch (e) {
      if (codeOf(e) !== 409) throw e;
      this.retryLater(key); // a write lost a race: look again from fresh copies
    }
  }

  private async syncCronJob(ns: string, name: string): Promise<void> {
    const key = `${ns}/${name}`;
    let found: KubeObject;
    try {
      found = await this.stores.storeFor(this.cronJobs()!).get(ns, name);
    } catch (e) {
      if (codeOf(e) === 404) return;
      throw e;
    }
    const cronJob = found;
    const listed = await this.jobReader.inNamespace(ns);
    const jobs = listed.filter((j) => controllerOf(j)?.uid === cronJob.metadata.uid);
    const status: Record<string, unknown> = { ...asMap(cronJob.status) };
    let active: Ref[] = (Array.isArray(status.active) ? status.active : []).map((r) => ({ ...asMap(r) }));
    const isActive = (uid: unknown): boolean => active.some((r) => r.uid === uid);
    const now = Date.now();

    // What became of the Jobs it started.
    for (const job of jobs) {
      const finished = finishedCondition(job);
      if (!finished) {
        if (!isActive(job.metadata.uid))
          this.events.record(cronJob, 'Warning', 'UnexpectedJob', 'Saw a job that the controller did not create or forgot: %s', job.metadata.name);
        continue;
      }
      if (isActive(job.metadata.uid)) {
        active = active.filter((r) => r.uid !== job.metadata.uid);
        this.events.record(cronJob, 'Normal', 'SawCompletedJob', 'Saw completed job: %s, condition: %v', job.metadata.name, finished);
      }
      const completed = Date.parse(String(asMap(job.status).completionTime ?? ''));
      if (finished === 'Complete' && Number.isFinite(completed)) {
        const last = Date.parse(String(status.lastSuccessfulTime ?? ''));
        if (!Number.isFinite(last) || completed > last) status.lastSuccessfulTime = asMap(job.status).completionTime;
      }
    }
    const children = new Set(jobs.map((j) => j.metadata.uid));
    for (const r of [...active]) {
      if (children.has(r.uid as string)) continue;
      this.events.record(cronJob, 'Normal', 'MissingJob', 'Active job went missing: %v', r.name);
      active = active.filter((a) => a.uid !== r.uid);
    }

    const created = cronJob.metadata.deletionTimestamp ? undefined : await this.startDue(cronJob, key, now, status, active, jobs);
    if (created) {
      active = created.active;
      if (created.scheduled !== undefined) status.lastScheduleTime = rfc3339(created.scheduled);
    }

    // History: the oldest finished Jobs beyond the limits.
    for (const job of jobsBeyondHistory(cronJob, jobs)) if (await this.deleteJob(cronJob, job)) active = active.filter((r) => r.uid !== job.metadata.uid);

    if (active.length) status.active = active;
    else delete status.active;
    if (!isDeepStrictEqual(JSON.parse(JSON.stringify(asMap(cronJob.status))), JSON.parse(JSON.stringify(status)))) await this.writeStatus(cronJob, status);
  }

  /**
   * Starts the Job of the scheduled time due now, if any (syncCronJob after the reconciliation);
   * returns the new active list and the time it started (no time when Replace deleted the active
   * Jobs but the new one could not be created), or undefined when it changed nothing.
   * Requeues the CronJob for its next scheduled time.
   */
  private async startDue(
    cronJob: KubeObject,
    key: string,
    now: number,
    status: Record<string, unknown>,
    activeIn: Ref[],
    jobs: KubeObject[],
  ): Promise<{ active: Ref[]; scheduled?: number } | undefined> {
    const spec = asMap(cronJob.spec);
    if (typeof spec.timeZone === 'string' && !knownTimeZone(spec.timeZone)) {
      this.events.record(cronJob, 'Warning', 'UnknownTimeZone', 'invalid timeZone: %q: %s', spec.timeZone, `unknown time zone ${spec.timeZone}`);
      return undefined;
    }
    if (spec.suspend === true) {
      this.cancelRequeue(key);
      return undefined;
    }
    if (/^\s*(CRON_)?TZ=/.test(String(spec.schedule ?? '')))
      this.events.record(
        cronJob,
        'Warning',
        'UnsupportedSchedule',
        'CRON_TZ or TZ used in schedule %q is not officially supported, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details',
        spec.schedule,
      );
    const schedule = scheduleOf(cronJob);
    if (typeof schedule === 'string') {
      this.events.record(cronJob, 'Warning', 'UnparseableSchedule', 'unparseable schedule: %q : %s', spec.schedule, schedule);
      return undefined;
    }
    let due: ReturnType<typeof dueTime>;
    try {
      due = dueTime({ ...cronJob, status }, now, schedule, true);
    } catch (e) {
      this.events.record(cronJob, 'Warning', 'InvalidSchedule', 'invalid schedule: %s : %s', spec.schedule, (e as Error).message);
      return undefined;
    }
    const again = nextCheck(now, schedule);
    if (again !== undefined) this.requeueAfter(key, again - now);
    const scheduled = due.mostRecent;
    if (scheduled === undefined) return undefined;
    if (due.missed > TOO_MANY_MISSED)
      this.events.record(
        cronJob,
        'Warning',
        'TooManyMissedTimes',
        'too many missed start times: %d. Set or decrease .spec.startingDeadlineSeconds or check clock skew',
        due.missed,
      );
    if (typeof spec.startingDeadlineSeconds === 'number' && scheduled + spec.startingDeadlineSeconds * 1000 < now) {
      this.events.record(cronJob, 'Warning', 'MissSchedule', 'Missed scheduled time to start a job: %s', rfc1123z(scheduled));
      return undefined;
    }
    const name = jobName(cronJob, scheduled);
    if (activeIn.some((r) => r.name === name) || Date.parse(String(status.lastScheduleTime ?? '')) === scheduled) return undefined;
    let active = activeIn;
    if (spec.concurrencyPolicy === 'Forbid' && active.length) {
      this.events.record(cronJob, 'Normal', 'JobAlreadyActive', 'Not starting job because prior execution is running and concurrency policy is Forbid');
      return undefined;
    }
    if (spec.concurrencyPolicy === 'Replace') {
      for (const r of active) {
        const job = jobs.find((j) => j.metadata.uid === r.uid);
        if (job && !(await this.deleteJob(cronJob, job))) {
          // Could not replace it: try again in a while.
          this.requeueAfter(key, 10_000);
          return undefined;
        }
        active = active.filter((a) => a.uid !== r.uid);
      }
    }
    const store = this.stores.storeFor(this.jobs()!);
    let job: KubeObject;
    try {
      job = await store.create(cronJob.metadata.namespace ?? '', jobForCronJob(cronJob, scheduled), {
        ctx: this.ctx(),
        fieldValidation: 'Ignore',
        fieldManager: USER,
      });
      this.events.record(cronJob, 'Normal', 'SuccessfulCreate', 'Created job %v', job.metadata.name);
    } catch (e) {
      if (codeOf(e) !== 409) {
        // A quota, a namespace being deleted: try again in a while.
        this.events.record(cronJob, 'Warning', 'FailedCreate', 'Error creating job: %v', (e as Error).message);
        this.requeueAfter(key, 10_000);
        return active === activeIn ? undefined : { active };
      }
      // Created before (a crash or a lost status write since): take it back into the list, if ours.
      job = await store.get(cronJob.metadata.namespace ?? '', name);
      if (controllerOf(job)?.uid !== cronJob.metadata.uid || active.some((r) => r.uid === job.metadata.uid)) return undefined;
    }
    return { active: [...active, jobRef(job)], scheduled };
  }

  /** Deletes a Job (its pods go with it, in the background); false when that failed. */
  private async deleteJob(cronJob: KubeObject, job: KubeObject): Promise<boolean> {
    try {
      await this.stores
        .storeFor(this.jobs()!)
        .delete(
          job.metadata.namespace ?? '',
          job.metadata.name ?? '',
          { propagationPolicy: 'Background', preconditions: { uid: job.metadata.uid } },
          this.ctx(),
        );
    } catch (e) {
      if (codeOf(e) !== 404) {
        this.events.record(cronJob, 'Warning', 'FailedDelete', 'Deleted job: %v', (e as Error).message);
        return false;
      }
    }
    this.events.record(cronJob, 'Normal', 'SuccessfulDelete', 'Deleted job %v', job.metadata.name);
    return true;
  }

  private async writeStatus(cronJob: KubeObject, status: Record<string, unknown>): Promise<void> {
    try {
      await this.stores
        .storeFor(this.cronJobs()!)
        .update(
          cronJob.metadata.namespace ?? '',
          cronJob.metadata.name ?? '',
          { ...cronJob, status },
          { ctx: this.ctx(), fieldValidation: 'Ignore', subresource: 'status', fieldManager: USER },
        );
    } catch (e) {
      if (codeOf(e) === 404) return;
      throw e;
    }
  }
}
