/**
 * A pod's `eviction` subresource (conventions: a virtual type; kube's
 * pkg/registry/core/pod/storage/eviction.go): POST a policy/v1 Eviction naming the pod, and the
 * pod is deleted with the Eviction's DeleteOptions, as `kubectl drain` does it, unless a
 * PodDisruptionBudget covering it allows no disruption now.
 *
 * - A pod that is Pending, Succeeded, Failed or already terminating is deleted without looking
 *   at budgets.
 * - Otherwise the budgets of its namespace whose selector selects it are found: none, the pod is
 *   deleted; more than one, 500. With one: a pod that is not ready is deleted without spending
 *   the budget when its policy is AlwaysAllow, or (IfHealthyBudget, the default) while the
 *   budget holds; any other eviction spends one of status.disruptionsAllowed (429 when none is
 *   left or the budget's status is older than its spec) and records the pod in
 *   status.disruptedPods, in one conditional write of the budget's status retried on conflict.
 * - Before the delete the pod gets the DisruptionTarget condition (not on a dry run), and unless
 *   the client set one, the delete carries the pod's resourceVersion read above as a
 *   precondition, so a pod that became ready in between is not deleted on a stale decision.
 *
 * The answer is kube's: 201 with a Status of Success.
 */
import { Errors, DeleteOptionsSchema, StatusError, defineSchema, fieldOf, objectRootSchema, type KubeObject } from '@app/apimachinery';
import type { DeleteOptions, RequestContext, SubresourceDeclaration } from '@app/registry';
import { DeleteOptionsQueryDto } from '../../../http/options.dto.js';
import { asMap } from '../core.helpers.js';
import { budgetSelects, MAX_DISRUPTED_PODS, podReady, rfc3339, withDisruptionAllowedCondition } from '../../policy/poddisruptionbudget/pdb.status.js';

/** What the handler uses of the server; the core group module fills it in at start. */
export interface EvictionDeps {
  /** The pod, read as a GET would (404 when it does not exist). */
  getPod(ns: string, name: string): Promise<KubeObject>;
  /** The PodDisruptionBudgets of a namespace ([] when the kind is not served). */
  listBudgets(ns: string): Promise<KubeObject[]>;
  /** One budget, read again after a conflict. */
  getBudget(ns: string, name: string): Promise<KubeObject>;
  /** Writes a budget's status, conditional on its resourceVersion (409 when it changed). */
  updateBudgetStatus(pdb: KubeObject): Promise<void>;
  /**
   * Adds the DisruptionTarget condition to the pod's status, after checking the delete's uid and
   * resourceVersion preconditions against the latest pod (409 as a delete would answer).
   * Returns the pod's new resourceVersion.
   */
  markDisruptionTarget(ns: string, name: string, preconditions: DeleteOptions['preconditions'], ctx: RequestContext): Promise<string>;
  /** Deletes the pod as a DELETE request would (404 when it does not exist). */
  deletePod(ns: string, name: string, options: DeleteOptions, ctx: RequestContext): Promise<void>;
  /** The clock of disruptedPods entries and conditions. */
  now(): Date;
}

/** The deps, set once the stores exist. */
export class EvictionPorts {
  deps?: EvictionDeps;
}

/** policy/v1 Eviction. */
export const EvictionSchema = defineSchema(
  'io.k8s.api.policy.v1.Eviction',
  objectRootSchema({ group: 'policy', version: 'v1', kind: 'Eviction' }, 'Evicts a pod: the body of its eviction subresource.', {
    deleteOptions: fieldOf(DeleteOptionsSchema, { description: 'How the pod is deleted.' }),
  }),
);

/** Conflicts are retried this many times (kube's EvictionsRetry: 20 steps). */
const RETRIES = 20;
const VIOLATES = "Cannot evict pod as it would violate the pod's disruption budget.";

const isConflict = (e: unknown): boolean => e instanceof StatusError && e.code === 409;
const num = (v: unknown): number => (typeof v === 'number' ? v : 0);

/** 429 with a DisruptionBudget cause (createTooManyRequestsError and the no-disruption case). */
function tooManyRequests(cause: string, retryAfterSeconds: number): StatusError {
  return new StatusError(
    429,
    'TooManyRequests',
    VIOLATES,
    { causes: [{ reason: 'DisruptionBudget', message: cause }], ...(retryAfterSeconds ? { retryAfterSeconds } : {}) },
    retryAfterSeconds ? { 'Retry-After': String(retryAfterSeconds) } : undefined,
  );
}

const stillProcessing = (pdbName: string): StatusError => tooManyRequests(`The disruption budget ${pdbName} is still being processed by the server.`, 10);

/** canIgnorePDB: the pod is not running (Pending, Succeeded, Failed) or already terminating. */
function canIgnoreBudgets(pod: KubeObject): boolean {
  const phase = asMap(pod.status).phase;
  return phase === 'Succeeded' || phase === 'Failed' || phase === 'Pending' || !!pod.metadata.deletionTimestamp;
}

/** shouldEnforceResourceVersion: not for a finished or terminating pod. */
function pinsResourceVersion(pod: KubeObject): boolean {
  const phase = asMap(pod.status).phase;
  return !(phase === 'Succeeded' || phase === 'Failed' || pod.metadata.deletionTimestamp);
}

const rvUnset = (o: DeleteOptions): boolean => !o.preconditions?.resourceVersion;
const withRv = (o: DeleteOptions, rv: string | undefined): DeleteOptions => ({ ...o, preconditions: { ...o.preconditions, resourceVersion: rv } });

/**
 * checkAndDecrement: refuses when the budget's status is stale, negative, overfull or allows no
 * disruption; else spends one disruption and (not on a dry run) records the pod, in a write
 * conditional on the budget's resourceVersion.
 */
export function decrementedBudget(pdb: KubeObject, podName: string, now: Date, dryRun: boolean): KubeObject | undefined {
  const name = pdb.metadata.name ?? '';
  const status = asMap(pdb.status);
  if (num(status.observedGeneration) < num(pdb.metadata.generation)) throw stillProcessing(name);
  const allowed = num(status.disruptionsAllowed);
  const gr = { group: 'policy', resource: 'poddisruptionbudget' };
  if (allowed < 0) throw Errors.forbidden(gr, name, 'pdb disruptions allowed is negative');
  if (Object.keys(asMap(status.disruptedPods)).length > MAX_DISRUPTED_PODS) {
    throw Errors.forbidden(gr, name, 'DisruptedPods map too big - too many evictions not confirmed by PDB controller');
  }
  if (allowed === 0) {
    throw tooManyRequests(`The disruption budget ${name} needs ${num(status.desiredHealthy)} healthy pods and has ${num(status.currentHealthy)} currently`, 0);
  }
  if (dryRun) return undefined;
  let next: Record<string, unknown> = { ...status, disruptionsAllowed: allowed - 1 };
  if (allowed - 1 === 0) next = withDisruptionAllowedCondition(next, now);
  next.disruptedPods = { ...asMap(status.disruptedPods), [podName]: rfc3339(now) };
  return { ...pdb, status: next };
}

/** The subresource, with the ports its handler uses. */
export function evictionSubresource(ports: EvictionPorts): SubresourceDeclaration {
  return {
    verbs: ['create'],
    kind: { group: 'policy', version: 'v1', kind: 'Eviction', protobufMessage: 'k8s.io.api.policy.v1.Eviction', schema: EvictionSchema },
    rest: {
      async create(ns: string, name: string, eviction: KubeObject, ctx: RequestContext): Promise<KubeObject> {
        const deps = ports.deps;
        if (!deps) throw Errors.internal('the eviction subresource is not wired');
        if ((eviction.metadata?.name ?? '') !== name) throw Errors.badRequest('name in URL does not match name in Eviction object');
        const options = new DeleteOptionsQueryDto().toDeleteOptions(eviction.deleteOptions ?? {});
        const dryRun = ctx.dryRun || (options.dryRun?.length ?? 0) > 0;
        const dctx = { ...ctx, dryRun };
        const success = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 } as unknown as KubeObject;

        /** addConditionAndDeletePod. */
        const evict = async (opts: DeleteOptions): Promise<void> => {
          let o = opts;
          if (!dryRun) {
            const rv = await deps.markDisruptionTarget(ns, name, o.preconditions, dctx);
            if (!rvUnset(o)) o = withRv(o, rv);
          }
          await deps.deletePod(ns, name, o, dctx);
        };

        // A pod whose budgets do not matter is deleted at once (conflicts retried unless the
        // client pinned a resourceVersion).
        let pod: KubeObject;
        for (let attempt = 0; ; attempt++) {
          pod = await deps.getPod(ns, name);
          if (!canIgnoreBudgets(pod)) break;
          const opts = pinsResourceVersion(pod) && rvUnset(options) ? withRv(options, pod.metadata.resourceVersion) : options;
          try {
            await evict(opts);
            return success;
          } catch (e) {
            if (!(isConflict(e) && rvUnset(options) && attempt < RETRIES)) throw e;
          }
        }

        const budgets = (await deps.listBudgets(ns)).filter((b) => budgetSelects(b, pod));
        if (budgets.length > 1) {
          throw new StatusError(500, '', 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.');
        }
        let pinToRead = false;
        let pdbName = '';
        if (budgets.length === 1) {
          let pdb = budgets[0]!;
          pdbName = pdb.metadata.name ?? '';
          if (!podReady(pod)) {
            const status = asMap(pdb.status);
            if (asMap(pdb.spec).unhealthyPodEvictionPolicy === 'AlwaysAllow') pinToRead = true;
            else if (num(status.currentHealthy) >= num(status.desiredHealthy) && num(status.desiredHealthy) > 0) pinToRead = true;
          }
          for (let attempt = 0; !pinToRead; attempt++) {
            if (attempt > RETRIES) throw Errors.timeout(`couldn't update PodDisruptionBudget "${pdbName}" due to conflicts`, 10);
            if (attempt > 0) pdb = await deps.getBudget(ns, pdbName);
            const next = decrementedBudget(pdb, name, deps.now(), dryRun);
            if (!next) break;
            try {
              await deps.updateBudgetStatus(next);
              break;
            } catch (e) {
              if (!isConflict(e)) throw e;
            }
          }
        }
        const opts = pinToRead ? withRv(options, pod.metadata.resourceVersion) : options;
        try {
          await evict(opts);
        } catch (e) {
          if (isConflict(e) && pinToRead && rvUnset(options)) throw stillProcessing(pdbName);
          throw e;
        }
        return success;
      },
    },
  };
}
