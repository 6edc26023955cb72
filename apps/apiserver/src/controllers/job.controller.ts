/**
 * The Job controller (kube-controller-manager's job controller, and its ttl-after-finished
 * controller): runs a Job's pods to completion. A sync of one Job:
 *
 * - counts its finished pods as kube does, in three steps that survive a crash between any two:
 *   the uids of finished pods still carrying the `batch.kubernetes.io/job-tracking` finalizer go
 *   into `status.uncountedTerminatedPods`, then the finalizers are removed, then the uids become
 *   `succeeded`/`failed` counts (an Indexed Job's successes also `completedIndexes`);
 * - decides whether the Job has finished: completions reached (SuccessCriteriaMet,
 *   `CompletionsReached`), more failures than `backoffLimit` (FailureTarget,
 *   `BackoffLimitExceeded`), active longer than `activeDeadlineSeconds` (`DeadlineExceeded`), or
 *   an Indexed Job's `successPolicy` met (SuccessCriteriaMet, `SuccessPolicy`), or with
 *   `backoffLimitPerIndex` its failed indexes (`FailedIndexes`, `MaxFailedIndexesExceeded`). The
 *   decision is recorded as that interim condition and the Job's remaining pods are deleted; the
 *   terminal condition (Complete or Failed, with the same reason) follows once every pod is
 *   counted and none is terminating any more, as kube (1.31+) does. With
 *   `ttlSecondsAfterFinished` the Job itself goes once that long has passed after it;
 * - a suspended Job has no pods (Suspended condition, no startTime); otherwise it gets as many
 *   as parallelism and the missing completions ask for (Indexed: the lowest missing indexes),
 *   created from the template with the tracking finalizer, in batches of 1, 2, 4, ...;
 * - writes the status (startTime, active, ready, terminating, uncountedTerminatedPods, counts,
 *   completedIndexes, completionTime, conditions) through `/status`.
 *
 * Nothing runs pods here: a Job's pods stay Pending until something writes their phase (a test,
 * or a kubelet of your own), as in a cluster without nodes.
 */
import { isDeepStrictEqual } from 'node:util';
import { Inject, Injectable } from '@nestjs/common';
import type { KubeObject } from '@app/apimachinery';
import { collectionPrefix, KindRegistry, type KindDeclaration } from '@app/registry';
import type { Storage, StorageEvent } from '@app/storage';
import { envInt } from '../config/env.js';
import { asMap } from '../groups/core/core.helpers.js';
import { podReady } from '../groups/policy/poddisruptionbudget/pdb.status.js';
import { STORAGE, STORES, type StoreFactory } from '../tokens.js';
import { ManagedController } from './controller.runner.js';
import { KindController } from './kind.controller.js';
import { controllerOf } from './disruption.logic.js';
import { EventRecorder } from './event.recorder.js';
import {
  completionsReached,
  conditionsOf,
  formatIndexes,
  hasTrackingFinalizer,
  indexesToStart,
  isFinished,
  isIndexed,
  recordedVerdict,
  type JobVerdict,
  managedElsewhere,
  backoffRemainingMs,
  indexBackoffRemainingMs,
  nextBackoffRecord,
  type BackoffRecord,
  failsIndex,
  hasBackoffLimitPerIndex,
  indexFailureCounts,
  onlyReplaceFailedPods,
  JOB_TRACKING_FINALIZER,
  matchPodFailurePolicy,
  parseIndexes,
  podActive,
  podFinished,
  podForJob,
  podIndex,
  podTerminating,
  statusCounts,
  successPolicyMatch,
  wantedActive,
  withCondition,
  type JobCondition,
} from './job.logic.js';
import { BURST_REPLICAS, podsToDelete, slowStartBatches } from './replicaset.logic.js';

const USER = 'job-controller';

const codeOf = (e: unknown): number | undefined => (e as { code?: number }).code;
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const rfc3339 = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, 'Z');
/** Thrown when the sync must start over from fresh copies (a write lost a race). */
class Requeue extends Error {}

/** Runs the job controller while this node holds the controller Lease. */
@ManagedController({ name: 'job' })
@Injectable()
export class JobControllerRunner extends KindController {
  /** Each Job's failures since its last success (kube's pod back-off store), by `namespace/name`. */
  private readonly backoffs = new Map<string, BackoffRecord>();
  /** The pods, from a watch-fed copy while this node leads. */
  private readonly podReader = this.collection(() => this.pods(), 'job-controller: pods');

  constructor(registry: KindRegistry, @Inject(STORAGE) storage: Storage, @Inject(STORES) stores: StoreFactory, recorder: EventRecorder) {
    super(registry, storage, stores, recorder, USER);
  }

  protected override reset(): void {
    this.backoffs.clear();
  }

  private jobs(): KindDeclaration | undefined {
    return this.decl('batch', 'jobs');
  }

  private pods(): KindDeclaration | undefined {
    return this.decl('', 'pods');
  }

  protected kindsServed(): boolean {
    return this.jobs() !== undefined && this.pods() !== undefined;
  }

  protected watchPrefixes(): string[] {
    return [collectionPrefix(this.jobs()!, ''), collectionPrefix(this.pods()!, '')];
  }

  protected relist(): Promise<number> {
    return this.listAndQueue(this.jobs()!);
  }

  protected onEvent(e: StorageEvent): void {
    const ns = e.object.metadata.namespace ?? '';
    if (e.key.startsWith(collectionPrefix(this.jobs()!, ''))) {
      this.queue.add(`${ns}/${e.object.metadata.name}`);
      return;
    }
    const ref = controllerOf(e.object);
    if (ref?.kind === 'Job') this.queue.add(`${ns}/${ref.name}`);
  }

  protected async process(key: string): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    try {
      await this.syncJob(ns, name);
    } catch (e) {
      if (!(e instanceof Requeue) && codeOf(e) !== 409) throw e;
      this.retryLater(key);
    }
  }

  private async syncJob(ns: string, name: string): Promise<void> {
    const key = `${ns}/${name}`;
    const jobs = this.stores.storeFor(this.jobs()!);
    let found: KubeObject | undefined;
    try {
      found = await jobs.get(ns, name);
    } catch (e) {
      if (codeOf(e) !== 404) throw e;
    }
    // A Job another controller manages (`spec.managedBy`) is left to it, pods and status.
    if (found && !found.metadata.deletionTimestamp && managedElsewhere(found)) return;
    const listed = await this.podReader.inNamespace(ns);
    // The pods of a Job that is gone or going (or of an earlier Job of that name) keep no
    // tracking finalizer, or they could never be deleted.
    for (const p of listed) {
      const ref = controllerOf(p);
      if (ref?.kind !== 'Job' || ref.name !== name || !hasTrackingFinalizer(p)) continue;
      if (!found || found.metadata.deletionTimestamp || ref.uid !== found.metadata.uid) await this.dropFinalizer(p);
    }
    if (!found || found.metadata.deletionTimestamp) {
      this.backoffs.delete(key);
      return;
    }
    let job: KubeObject = found;
    const pods = listed.filter((p) => controllerOf(p)?.uid === job.metadata.uid);
    const now = new Date();
    const spec = asMap(job.spec);
    const status: Record<string, unknown> = { ...asMap(job.status) };
    const indexed = isIndexed(job);
    // A decision an earlier sync recorded (SuccessCriteriaMet or FailureTarget) stands.
    const recorded0 = recordedVerdict(job);
    const succeededIndexes = parseIndexes(status.completedIndexes);

    // 1. Finished pods not counted yet: their uids are recorded first, then their finalizers go.
    const uncounted = asMap(status.uncountedTerminatedPods);
    const pending = {
      succeeded: new Set((uncounted.succeeded as string[] | undefined) ?? []),
      failed: new Set((uncounted.failed as string[] | undefined) ?? []),
    };
    let recorded = false;
    // The podFailurePolicy's verdicts on failed pods: Ignore'd ones do not count, FailJob fails the Job.
    const verdicts = new Map(pods.map((p) => [p.metadata.uid ?? '', matchPodFailurePolicy(job, p)] as const));
    const ignored = (p: KubeObject): boolean => verdicts.get(p.metadata.uid ?? '')?.action === 'Ignore';
    const onlyFailed = onlyReplaceFailedPods(job);
    const perIndex = hasBackoffLimitPerIndex(job);
    const failedIndexes = parseIndexes(status.failedIndexes);
    // The pods found finished in this sync, for the back-off before replacements.
    const newlySucceeded: KubeObject[] = [];
    const newlyFailed: KubeObject[] = [];
    for (const p of pods) {
      // A pod deleted before it finished counts as failed, unless only failed pods are replaced
      // or the Job is finishing: then only when it is failing.
      const failedByDeletion = recorded0 ? recorded0.type === 'Failed' : !onlyFailed;
      const phase = podFinished(p) ?? (p.metadata.deletionTimestamp && failedByDeletion ? 'Failed' : undefined);
      const uid = p.metadata.uid ?? '';
      if (!phase || !hasTrackingFinalizer(p) || pending.succeeded.has(uid) || pending.failed.has(uid) || ignored(p)) continue;
      (phase === 'Succeeded' ? pending.succeeded : pending.failed).add(uid);
      (phase === 'Succeeded' ? newlySucceeded : newlyFailed).push(p);
      const index = podIndex(p);
      if (phase === 'Succeeded' && indexed && index !== undefined) succeededIndexes.add(index);
      if (phase === 'Failed' && perIndex && index !== undefined && failsIndex(job, p, verdicts.get(uid))) failedIndexes.add(index);
      recorded = true;
    }
    if (recorded) {
      status.uncountedTerminatedPods = {
        ...(pending.succeeded.size ? { succeeded: [...pending.succeeded] } : {}),
        ...(pending.failed.size ? { failed: [...pending.failed] } : {}),
      };
      if (indexed) status.completedIndexes = formatIndexes(succeededIndexes);
      if (perIndex) status.failedIndexes = formatIndexes(failedIndexes);
      job = await this.writeStatus(job, statusCounts(status));
      // Recorded: these pods are not new to the next sync, so the record moves on once.
      this.backoffs.set(key, nextBackoffRecord(this.backoffs.get(key), newlySucceeded, newlyFailed));
    }
    const dropped = new Set<string>();
    for (const p of pods) {
      const uid = p.metadata.uid ?? '';
      // A terminating pod's finalizer goes too (kube's canRemoveFinalizer), counted or not.
      const release =
        pending.succeeded.has(uid) ||
        pending.failed.has(uid) ||
        ignored(p) ||
        podTerminating(p) ||
        (!podActive(p) && (isFinished(job) || recorded0 !== undefined));
      if (hasTrackingFinalizer(p) && release) {
        await this.dropFinalizer(p);
        dropped.add(uid);
      }
    }
    // 2. Recorded uids whose pods no longer hold the finalizer (or are gone) become counts.
    const stillHeld = new Set(pods.filter((p) => hasTrackingFinalizer(p) && !dropped.has(p.metadata.uid ?? '')).map((p) => p.metadata.uid));
    let succeeded = num(status.succeeded);
    let failed = num(status.failed);
    for (const uid of [...pending.succeeded]) {
      if (stillHeld.has(uid)) continue;
      pending.succeeded.delete(uid);
      succeeded++;
    }
    for (const uid of [...pending.failed]) {
      if (stillHeld.has(uid)) continue;
      pending.failed.delete(uid);
      failed++;
    }
    status.succeeded = succeeded;
    status.failed = failed;
    status.uncountedTerminatedPods = {
      ...(pending.succeeded.size ? { succeeded: [...pending.succeeded] } : {}),
      ...(pending.failed.size ? { failed: [...pending.failed] } : {}),
    };

    let active = pods.filter(podActive);
    const terminating = pods.filter(podTerminating);
    // Terminating pods hold their place until they are gone when only failed pods are replaced.
    const holding = onlyFailed ? terminating : [];
    let conditions = conditionsOf(job);
    const stamp = rfc3339(now);
    // 3. Has it finished now? A decision becomes its interim condition at once; the terminal
    // condition waits (below) for the pods.
    let verdict = recordedVerdict(job);
    if (!verdict && !isFinished(job)) {
      const backoffLimit = typeof spec.backoffLimit === 'number' ? spec.backoffLimit : 6;
      const deadline = spec.activeDeadlineSeconds;
      const started = Date.parse(String(status.startTime ?? ''));
      const failJob = [...verdicts.values()].find((v) => v?.action === 'FailJob');
      const fail = (reason: string, message: string): JobVerdict => ({ type: 'Failed', reason, message });
      // kube's order: a failure first, then the success policy, then the completions.
      const policyMet = successPolicyMatch(job, succeededIndexes);
      if (failJob) verdict = fail('PodFailurePolicy', failJob.message);
      else if (failed > backoffLimit) verdict = fail('BackoffLimitExceeded', 'Job has reached the specified backoff limit');
      else if (typeof deadline === 'number' && Number.isFinite(started) && started + deadline * 1000 <= now.getTime() && spec.suspend !== true)
        verdict = fail('DeadlineExceeded', 'Job was active longer than specified deadline');
      else if (perIndex && typeof spec.maxFailedIndexes === 'number' && failedIndexes.size > spec.maxFailedIndexes)
        verdict = fail('MaxFailedIndexesExceeded', 'Job has exceeded the specified maximal number of failed indexes');
      else if (perIndex && failedIndexes.size > 0 && succeededIndexes.size + failedIndexes.size >= num(spec.completions))
        verdict = fail('FailedIndexes', 'Job has failed indexes');
      else if (policyMet) verdict = { type: 'Complete', reason: 'SuccessPolicy', message: policyMet };
      else if (completionsReached(job, succeeded, succeededIndexes, active.length))
        verdict = { type: 'Complete', reason: 'CompletionsReached', message: 'Reached expected number of succeeded pods' };
      if (verdict) {
        const interim = verdict.type === 'Complete' ? 'SuccessCriteriaMet' : 'FailureTarget';
        conditions = withCondition(conditions, { type: interim, status: 'True', reason: verdict.reason, message: verdict.message }, stamp);
      }
    }
    const finishing = verdict !== undefined;
    let finished = isFinished(job);

    // 4. The pods it should have. New pods wait out the back-off after failures (per index with
    // backoffLimitPerIndex): `retryAt` is when the next sync may create what had to wait.
    const base = envInt('KAPI_JOB_POD_FAILURE_BACKOFF_MS') ?? 10_000;
    const record = this.backoffs.get(key) ?? { failures: 0 };
    let retryAt: number | undefined;
    const waitUntil = (ms: number) => {
      if (ms > 0) retryAt = Math.min(retryAt ?? Infinity, Date.now() + ms);
      return ms > 0;
    };
    if (finished || finishing) this.backoffs.delete(key);
    let deleted = 0;
    if (finished || finishing || spec.suspend === true) {
      // A failing Job's deleted pods keep their finalizer until the next sync counts them failed.
      const left = await this.deletePods(job, active, active.length, verdict?.type !== 'Failed');
      deleted = active.length - left.length;
      active = left;
      if (!finished && !finishing) {
        if (conditions.find((c) => c.type === 'Suspended')?.status !== 'True') this.events.record(job, 'Normal', 'Suspended', 'Job suspended');
        conditions = withCondition(conditions, { type: 'Suspended', status: 'True', reason: 'JobSuspended', message: 'Job suspended' }, stamp);
        delete status.startTime;
      }
    } else {
      if (conditions.find((c) => c.type === 'Suspended')?.status === 'True') {
        conditions = withCondition(conditions, { type: 'Suspended', status: 'False', reason: 'JobResumed', message: 'Job resumed' }, stamp);
        this.events.record(job, 'Normal', 'Resumed', 'Job resumed');
      }
      status.startTime ??= stamp;
      if (indexed) {
        // The pods of an index that failed go; the index gets no more.
        const doomed = active.filter((p) => failedIndexes.has(podIndex(p) ?? -1));
        if (doomed.length) active = [...active.filter((p) => !doomed.includes(p)), ...(await this.deletePods(job, doomed, doomed.length))];
        const running = new Set([...active, ...holding].map(podIndex).filter((i): i is number => i !== undefined));
        const start = indexesToStart(job, succeededIndexes, running, failedIndexes).filter(
          (i) =>
            !waitUntil(
              perIndex ? indexBackoffRemainingMs(pods, i, now.getTime(), base) : backoffRemainingMs(record.failures, record.lastFailure, now.getTime(), base),
            ),
        );
        const verdictOf = (p: KubeObject) => verdicts.get(p.metadata.uid ?? '');
        const counts = perIndex ? new Map(start.map((i) => [i, indexFailureCounts(pods, i, verdictOf)] as const)) : undefined;
        active = [...active, ...(await this.createPods(job, start, counts))];
      } else {
        // Too many active pods are deleted against what is wanted; new ones also wait for the
        // terminating ones that hold their place (kube's manageJob).
        const want = wantedActive(job, succeeded);
        const missing = want - holding.length - active.length;
        if (active.length > want) active = await this.deletePods(job, active, active.length - want);
        else if (missing > 0 && !waitUntil(backoffRemainingMs(record.failures, record.lastFailure, now.getTime(), base)))
          active = [
            ...active,
            ...(await this.createPods(
              job,
              Array.from({ length: missing }, () => undefined),
            )),
          ];
      }
    }

    status.active = active.length;
    status.ready = active.filter(podReady).length;
    // Pods deleted in this sync are terminating until their deletion is seen (kube counts them so).
    status.terminating = terminating.length + deleted;
    // 5. The terminal condition, once every finished pod is counted and none is active (a
    // deletion failed) or terminating.
    if (verdict && !finished && pending.succeeded.size + pending.failed.size === 0 && active.length === 0 && status.terminating === 0) {
      conditions = withCondition(conditions, { type: verdict.type, status: 'True', reason: verdict.reason, message: verdict.message }, stamp);
      // A finished Job has a start time (the status validation insists), even one that failed while suspended.
      status.startTime ??= stamp;
      if (verdict.type === 'Complete') {
        status.completionTime = stamp;
        this.events.record(job, 'Normal', 'Completed', 'Job completed');
      } else this.events.record(job, 'Warning', verdict.reason, verdict.message);
      finished = true;
    }
    if (indexed) status.completedIndexes = formatIndexes(succeededIndexes);
    if (perIndex) status.failedIndexes = formatIndexes(failedIndexes);
    if (conditions.length) status.conditions = conditions;
    const next = statusCounts(status);
    if (!isDeepStrictEqual(JSON.parse(JSON.stringify(asMap(job.status))), JSON.parse(JSON.stringify(next)))) job = await this.writeStatus(job, next);
    this.schedule(job, finished, now, retryAt);
  }

  /** Creates pods (one per entry: an index in Indexed mode, undefined otherwise), in slow-start batches; returns those created. */
  private async createPods(
    job: KubeObject,
    indexes: (number | undefined)[],
    counts?: ReadonlyMap<number, { failures: number; ignored: number }>,
  ): Promise<KubeObject[]> {
    const store = this.stores.storeFor(this.pods()!);
    const ns = job.metadata.namespace ?? '';
    const created: KubeObject[] = [];
    let next = 0;
    for (const size of slowStartBatches(Math.min(indexes.length, BURST_REPLICAS))) {
      const batch = indexes.slice(next, next + size);
      next += size;
      const results = await Promise.allSettled(
        batch.map((i) =>
          store.create(ns, podForJob(job, i, i === undefined ? undefined : counts?.get(i)), { ctx: this.ctx(), fieldValidation: 'Ignore', fieldManager: USER }),
        ),
      );
      let failed = false;
      for (const r of results) {
        if (r.status === 'fulfilled') {
          created.push(r.value);
          this.events.record(job, 'Normal', 'SuccessfulCreate', 'Created pod: %v', r.value.metadata.name);
        } else {
          failed = true;
          this.events.record(job, 'Warning', 'FailedCreate', 'Error creating: %v', (r.reason as Error).message);
        }
      }
      if (failed) break;
    }
    return created;
  }

  /** Deletes `n` of the active pods (the least useful first); returns those left. */
  private async deletePods(job: KubeObject, active: KubeObject[], n: number, release = true): Promise<KubeObject[]> {
    if (n <= 0) return active;
    const store = this.stores.storeFor(this.pods()!);
    const victims = podsToDelete(active, n);
    const gone = new Set<KubeObject>();
    for (const p of victims) {
      try {
        await store.delete(p.metadata.namespace ?? '', p.metadata.name ?? '', { preconditions: { uid: p.metadata.uid } }, this.ctx());
        this.events.record(job, 'Normal', 'SuccessfulDelete', 'Deleted pod: %v', p.metadata.name);
        gone.add(p);
      } catch (e) {
        if (codeOf(e) === 404) gone.add(p);
        else this.events.record(job, 'Warning', 'FailedDelete', 'Error deleting: %v', (e as Error).message);
      }
    }
    // A deleted pod with the tracking finalizer stays until it is removed: this controller removes it.
    if (release) for (const p of victims) if (gone.has(p) && hasTrackingFinalizer(p)) await this.dropFinalizer(p, true);
    return active.filter((p) => !gone.has(p));
  }

  /** Removes the tracking finalizer from a pod (gone already: nothing to do). */
  private async dropFinalizer(pod: KubeObject, fresh = false): Promise<void> {
    const store = this.stores.storeFor(this.pods()!);
    const ns = pod.metadata.namespace ?? '';
    const name = pod.metadata.name ?? '';
    try {
      const cur = fresh ? await store.get(ns, name) : pod;
      if (cur.metadata.uid !== pod.metadata.uid) return;
      const finalizers = (Array.isArray(cur.metadata.finalizers) ? cur.metadata.finalizers : []).filter((f) => f !== JOB_TRACKING_FINALIZER);
      await store.update(ns, name, { ...cur, metadata: { ...cur.metadata, finalizers } }, { ctx: this.ctx(), fieldValidation: 'Ignore', fieldManager: USER });
    } catch (e) {
      if (codeOf(e) === 404) return;
      if (codeOf(e) === 409) throw new Requeue();
      throw e;
    }
  }

  private async writeStatus(job: KubeObject, status: Record<string, unknown>): Promise<KubeObject> {
    const store = this.stores.storeFor(this.jobs()!);
    try {
      const res = await store.update(
        job.metadata.namespace ?? '',
        job.metadata.name ?? '',
        { ...job, status },
        { ctx: this.ctx(), fieldValidation: 'Ignore', subresource: 'status', fieldManager: USER },
      );
      return res.object;
    } catch (e) {
      if (codeOf(e) === 409 || codeOf(e) === 404) throw new Requeue();
      throw e;
    }
  }

  /**
   * Looks at the Job again when something is due: its activeDeadlineSeconds while it runs, and
   * once finished with ttlSecondsAfterFinished, its deletion (done here when due).
   */
  private schedule(job: KubeObject, finished: boolean, now: Date, retryAt?: number): void {
    const key = `${job.metadata.namespace ?? ''}/${job.metadata.name}`;
    const spec = asMap(job.spec);
    const status = asMap(job.status);
    let due: number | undefined;
    if (finished && typeof spec.ttlSecondsAfterFinished === 'number') {
      const at = conditionsOf(job).find((c: JobCondition) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True')?.lastTransitionTime;
      const end = Date.parse(String(status.completionTime ?? at ?? '')) + spec.ttlSecondsAfterFinished * 1000;
      if (Number.isFinite(end)) {
        if (end <= now.getTime()) {
          void this.deleteFinished(job);
          return;
        }
        due = end;
      }
    } else if (!finished && typeof spec.activeDeadlineSeconds === 'number' && typeof status.startTime === 'string') {
      due = Date.parse(status.startTime) + spec.activeDeadlineSeconds * 1000;
    }
    const at = Math.min(due !== undefined && Number.isFinite(due) ? due + 500 : Infinity, retryAt ?? Infinity);
    if (at === Infinity) this.cancelRequeue(key);
    else this.requeueAfter(key, Math.max(0, at - Date.now()));
  }

  /** Deletes a finished Job whose time to live has passed; the garbage collector takes its pods. */
  private async deleteFinished(job: KubeObject): Promise<void> {
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
      if (codeOf(e) !== 404 && codeOf(e) !== 409) process.stderr.write(`${USER}: deleting ${job.metadata.name}: ${(e as Error).message}\n`);
    }
  }
}
