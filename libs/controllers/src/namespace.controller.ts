/**
 * Namespace lifecycle controller (Kubernetes' namespace controller and its
 * NamespacedResourcesDeleter): a namespace being deleted (deletionTimestamp set, phase
 * Terminating, spec finalizer `kubernetes`) is emptied of every namespaced object of every
 * served kind, custom kinds included (deletecollection with Background propagation, else one
 * delete per object); its progress is reported in status.conditions with Kubernetes' five
 * condition types, reasons and messages; once nothing is left it is finalized through the
 * namespace `finalize` subresource (the in-process form of PUT /api/v1/namespaces/{name}/finalize),
 * after which the store removes it (when metadata.finalizers is empty too).
 *
 * Triggers, none of them a busy loop: namespace events; events of objects inside a terminating
 * namespace (an object going away or losing a finalizer may unblock it); a per-namespace
 * backoff retry while content remains; and a slow periodic resync. One recursive storage watch
 * over `/registry/` feeds all of them; work goes through a deduplicating queue.
 */
import { formatMetaTime, StatusError, type KubeObject } from '@app/apimachinery';
import type { Storage, StorageEvent, WatchHandle } from '@app/storage';
import { collectionPrefix, verbsOf, type GenericStore, type KindDeclaration, type KindRegistry, type RequestContext } from '@app/registry';
import { finalizersOf } from './owner.graph.js';
import { WorkQueue } from './work.queue.js';

/** Dependencies of the controller (in-process store access). */
export interface NamespaceControllerDeps {
  registry: KindRegistry;
  storage: Storage;
  storeFor(decl: KindDeclaration): GenericStore;
  /** Resync period in ms (a missed event is picked up within it). Default 5 minutes. */
  resyncMs?: number;
  /** First retry delay while content remains (doubles per attempt up to 30 s). Default 1000 ms. */
  retryMs?: number;
  /** Where failures are reported. Default stderr. */
  log?: (message: string) => void;
}

/** The spec finalizer the namespace controller owns. */
export const NAMESPACE_FINALIZER = 'kubernetes';

const CONTROLLER_USER = { username: 'system:serviceaccount:kube-system:namespace-controller', groups: ['system:serviceaccounts', 'system:authenticated'] };

function ctx(): RequestContext {
  return { user: CONTROLLER_USER, dryRun: false, warnings: [], now: () => new Date() };
}

function isTerminating(ns: KubeObject): boolean {
  return ns.metadata.deletionTimestamp !== undefined && ns.metadata.deletionTimestamp !== null;
}

function specFinalizers(ns: KubeObject): string[] {
  const f = (ns.spec as { finalizers?: unknown } | undefined)?.finalizers;
  return Array.isArray(f) ? f.filter((x): x is string => typeof x === 'string') : [];
}

/** v1.NamespaceCondition. */
export interface NamespaceCondition {
  type: string;
  status: 'True' | 'False';
  lastTransitionTime?: string;
  reason: string;
  message: string;
}

/** What one deletion pass over a namespace's content found. */
export interface ContentTotals {
  /** Remaining objects per "<resource>.<group>" (core group: "configmaps."). */
  remaining: Map<string, number>;
  /** Remaining objects per finalizer they carry. */
  finalizers: Map<string, number>;
  /** Errors deleting content (one per resource). */
  errors: string[];
}

/** The condition types the namespace deleter maintains, in Kubernetes' order, with their OK state. */
export const NAMESPACE_CONDITION_TYPES: ReadonlyArray<{ type: string; okReason: string; okMessage: string }> = [
  { type: 'NamespaceDeletionDiscoveryFailure', okReason: 'ResourcesDiscovered', okMessage: 'All resources successfully discovered' },
  { type: 'NamespaceDeletionGroupVersionParsingFailure', okReason: 'ParsedGroupVersions', okMessage: 'All legacy kube types successfully parsed' },
  { type: 'NamespaceDeletionContentFailure', okReason: 'ContentDeleted', okMessage: 'All content successfully deleted, may be waiting on finalization' },
  { type: 'NamespaceContentRemaining', okReason: 'ContentRemoved', okMessage: 'All content successfully removed' },
  { type: 'NamespaceFinalizersRemaining', okReason: 'ContentHasNoFinalizers', okMessage: 'All content-preserving finalizers finished' },
];

/** Go's utilerrors.NewAggregate(errs).Error(): one message as is, several as "[a, b]". */
function aggregate(errs: string[]): string {
  return errs.length === 1 ? errs[0]! : `[${errs.join(', ')}]`;
}

/**
 * Computes the five deletion conditions from a pass's totals and the namespace's previous
 * conditions (namespace_condition_utils: ProcessContentTotals, ProcessDeleteContentErr, then
 * updateConditions). A condition keeps its lastTransitionTime while its status is unchanged.
 * Messages are sorted for stable updates, exactly as Kubernetes formats them.
 */
export function namespaceConditions(totals: ContentTotals, previous: NamespaceCondition[], now: string): NamespaceCondition[] {
  const fresh = new Map<string, Omit<NamespaceCondition, 'type'>>();
  if (totals.errors.length) {
    fresh.set('NamespaceDeletionContentFailure', {
      status: 'True',
      reason: 'ContentDeletionFailed',
      message: `Failed to delete all resource types, ${totals.errors.length} remaining: ${aggregate(totals.errors)}`,
    });
  }
  const remaining = [...totals.remaining]
    .filter(([, n]) => n > 0)
    .map(([r, n]) => `${r} has ${n} resource instances`)
    .sort();
  if (remaining.length) {
    fresh.set('NamespaceContentRemaining', { status: 'True', reason: 'SomeResourcesRemain', message: `Some resources are remaining: ${remaining.join(', ')}` });
  }
  const fins = [...totals.finalizers]
    .filter(([, n]) => n > 0)
    .map(([f, n]) => `${f} in ${n} resource instances`)
    .sort();
  if (fins.length) {
    fresh.set('NamespaceFinalizersRemaining', {
      status: 'True',
      reason: 'SomeFinalizersRemain',
      message: `Some content in the namespace has finalizers remaining: ${fins.join(', ')}`,
    });
  }
  return NAMESPACE_CONDITION_TYPES.map(({ type, okReason, okMessage }) => {
    const c = fresh.get(type) ?? { status: 'False' as const, reason: okReason, message: okMessage };
    const prev = previous.find((p) => p.type === type);
    return {
      type,
      status: c.status,
      lastTransitionTime: prev && prev.status === c.status && prev.lastTransitionTime ? prev.lastTransitionTime : now,
      reason: c.reason,
      message: c.message,
    };
  });
}

/** Runs the namespace lifecycle loop until stopped. */
export class NamespaceController {
  private readonly queue: WorkQueue;
  private readonly terminating = new Set<string>();
  private readonly attempts = new Map<string, number>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private watch?: WatchHandle;
  private resyncTimer?: NodeJS.Timeout;
  private stopped = false;
  private busy = false;
  private idleWaiters: Array<() => void> = [];

  constructor(private readonly deps: NamespaceControllerDeps) {
    this.queue = new WorkQueue(() => setImmediate(() => this.pump()));
  }

  private nsDecl(): KindDeclaration {
    const d = this.deps.registry.lookup('', 'v1', 'namespaces');
    if (!d) throw new Error('the namespaces kind is not registered');
    return d;
  }

  private log(msg: string): void {
    (this.deps.log ?? ((m: string) => process.stderr.write(`${m}\n`)))(`namespace controller: ${msg}`);
  }

  /** Lists namespaces, starts the watch and the resync timer. */
  start(): void {
    this.sync().catch((e) => {
      this.log(`initial sync failed: ${(e as Error).message}`);
      this.later(() => this.start(), 1000);
    });
    if (!this.resyncTimer) {
      this.resyncTimer = setInterval(() => {
        if (!this.stopped) this.relist().catch((e) => this.log(`resync failed: ${(e as Error).message}`));
      }, this.deps.resyncMs ?? 300_000);
      this.resyncTimer.unref();
    }
  }

  /** Stops the watch, timers and queued work. */
  stop(): void {
    this.stopped = true;
    this.watch?.stop();
    if (this.resyncTimer) clearInterval(this.resyncTimer);
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.queue.clear();
    this.notifyIdle();
  }

  /** Resolves when no namespace is queued or being processed (tests). */
  whenIdle(): Promise<void> {
    if (this.stopped || (!this.busy && this.queue.length === 0)) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  private notifyIdle(): void {
    if (!this.stopped && (this.busy || this.queue.length > 0)) return;
    const w = this.idleWaiters;
    this.idleWaiters = [];
    for (const r of w) r();
  }

  private later(fn: () => void, ms: number): void {
    if (this.stopped) return;
    const t = setTimeout(() => {
      this.timers.delete(t);
      if (!this.stopped) fn();
    }, ms);
    t.unref();
    this.timers.add(t);
  }

  /** Lists namespaces (enqueueing terminating ones) and returns the list revision. */
  private async relist(): Promise<number> {
    const res = await this.deps.storage.list(collectionPrefix(this.nsDecl(), ''), { consistency: { mode: 'MostRecent' }, skipUndecodable: true });
    this.terminating.clear();
    for (const ns of res.items) {
      if (!isTerminating(ns)) continue;
      this.terminating.add(ns.metadata.name as string);
      this.queue.add(ns.metadata.name as string);
    }
    return res.revision;
  }

  private async sync(): Promise<void> {
    const rev = await this.relist();
    if (this.stopped) return;
    const nsPrefix = collectionPrefix(this.nsDecl(), '');
    this.watch = this.deps.storage.watch(
      { key: '/registry/', recursive: true, afterRevision: rev },
      {
        event: (e) => this.onEvent(e, nsPrefix),
        error: (err) => {
          this.log(`watch failed (${err.code}: ${err.message}): relisting`);
          this.watch?.stop();
          this.later(() => this.start(), 1000);
        },
      },
    );
  }

  private onEvent(e: StorageEvent, nsPrefix: string): void {
    if (this.stopped) return;
    if (e.key.startsWith(nsPrefix)) {
      const name = e.object.metadata.name as string;
      if (e.type === 'DELETED') {
        this.terminating.delete(name);
        this.attempts.delete(name);
      } else if (isTerminating(e.object)) {
        // Our own status updates come back here too; the queue dedupes and a pass is cheap
        // once the namespace is empty, so this converges.
        if (!this.terminating.has(name) || e.type === 'ADDED') this.queue.add(name);
        this.terminating.add(name);
      }
      return;
    }
    // Content of a terminating namespace went away or changed (e.g. lost a finalizer).
    const ns = e.object.metadata?.namespace;
    if (typeof ns === 'string' && this.terminating.has(ns) && e.type !== 'ADDED') this.queue.add(ns);
  }

  private pump(): void {
    if (this.busy || this.stopped) return;
    const name = this.queue.take();
    if (name === undefined) {
      this.notifyIdle();
      return;
    }
    this.busy = true;
    this.reconcile(name)
      .then(
        (done) => {
          if (done) this.attempts.delete(name);
          else this.retry(name);
        },
        (e) => {
          this.log(`${name}: ${(e as Error).message}`);
          this.retry(name);
        },
      )
      .finally(() => {
        this.busy = false;
        this.queue.done(name);
        this.pump();
      });
  }

  /** Retries a namespace with content left after a growing delay (events usually come first). */
  private retry(name: string): void {
    const n = (this.attempts.get(name) ?? 0) + 1;
    this.attempts.set(name, n);
    this.later(
      () => {
        if (this.terminating.has(name)) this.queue.add(name);
      },
      Math.min((this.deps.retryMs ?? 1000) * 2 ** (n - 1), 30_000),
    );
  }

  /** One pass over a terminating namespace. True when finished (finalized, gone, or not ours). */
  private async reconcile(name: string): Promise<boolean> {
    const nsStore = this.deps.storeFor(this.nsDecl());
    let ns: KubeObject;
    try {
      ns = await nsStore.get('', name);
    } catch (e) {
      if (e instanceof StatusError && e.code === 404) return true;
      throw e;
    }
    if (!isTerminating(ns)) return true;
    if (!specFinalizers(ns).includes(NAMESPACE_FINALIZER)) return true; // already finalized by us
    const totals = await this.deleteAllContent(name);
    await this.updateConditions(nsStore, name, totals);
    if (totals.errors.length || [...totals.remaining.values()].some((n) => n > 0)) return false;
    await this.finalize(nsStore, name);
    return true;
  }

  /** The namespaced collections served, one declaration per group/resource (storage ignores versions). */
  private namespacedCollections(): KindDeclaration[] {
    const seen = new Set<string>();
    const out: KindDeclaration[] = [];
    for (const d of this.deps.registry.all()) {
      // A kind stored as another resource goes with that resource's objects.
      if (!d.namespaced || d.storedAs) continue;
      const verbs = verbsOf(d);
      if (!verbs.includes('list') || !(verbs.includes('delete') || verbs.includes('deletecollection'))) continue;
      const k = `${d.group}/${d.plural}`;
      if (seen.has(k)) continue;
      seen.add(k);
      out.push(d);
    }
    return out;
  }

  /** Deletes everything in the namespace (Background propagation), then counts what is left. */
  private async deleteAllContent(name: string): Promise<ContentTotals> {
    const totals: ContentTotals = { remaining: new Map(), finalizers: new Map(), errors: [] };
    for (const decl of this.namespacedCollections()) {
      if (this.stopped) break;
      const store = this.deps.storeFor(decl);
      const gvr = `${decl.group}/${decl.version}, Resource=${decl.plural}`;
      try {
        if (verbsOf(decl).includes('deletecollection')) {
          await store.deleteCollection(name, {}, { propagationPolicy: 'Background' }, ctx());
        } else {
          for (const item of (await store.list(name, {})).items) {
            if (item.metadata.deletionTimestamp !== undefined) continue;
            try {
              await store.delete(name, item.metadata.name as string, { propagationPolicy: 'Background' }, ctx());
            } catch (e) {
              if (!(e instanceof StatusError && (e.code === 404 || e.code === 409))) throw e;
            }
          }
        }
        const left = (await store.list(name, {})).items;
        if (left.length === 0) continue;
        totals.remaining.set(`${decl.plural}.${decl.group}`, left.length);
        let withFinalizers = 0;
        for (const item of left) {
          const f = [...finalizersOf(item), ...(decl.strategy?.pendingFinalizers?.(item) ?? [])];
          if (f.length) withFinalizers++;
          for (const x of f) totals.finalizers.set(x, (totals.finalizers.get(x) ?? 0) + 1);
        }
        // Nothing should survive a delete without a finalizer holding it.
        if (withFinalizers === 0) totals.errors.push(`unexpected items still remain in namespace: ${name} for gvr: ${gvr}`);
      } catch (e) {
        totals.errors.push(`${gvr}: ${(e as Error).message}`);
      }
    }
    return totals;
  }

  private async updateConditions(nsStore: GenericStore, name: string, totals: ContentTotals): Promise<void> {
    const now = formatMetaTime(new Date());
    for (let attempt = 0; attempt < 3; attempt++) {
      let cur: KubeObject;
      try {
        cur = await nsStore.get('', name);
      } catch (e) {
        if (e instanceof StatusError && e.code === 404) return;
        throw e;
      }
      const status = { ...((cur.status as Record<string, unknown> | undefined) ?? {}) };
      const old = Array.isArray(status.conditions) ? (status.conditions as NamespaceCondition[]) : [];
      const next = namespaceConditions(totals, old, now);
      if (JSON.stringify(old) === JSON.stringify(next)) return;
      status.conditions = next;
      try {
        await nsStore.update('', name, { ...cur, status }, { ctx: ctx(), fieldValidation: 'Ignore', subresource: 'status' });
        return;
      } catch (e) {
        if (e instanceof StatusError && e.code === 404) return;
        if (!(e instanceof StatusError && e.code === 409)) throw e;
      }
    }
  }

  /** Removes the `kubernetes` spec finalizer through the finalize subresource (retried on conflict). */
  private async finalize(nsStore: GenericStore, name: string): Promise<void> {
    for (let attempt = 0; attempt < 5; attempt++) {
      let cur: KubeObject;
      try {
        cur = await nsStore.get('', name);
      } catch (e) {
        if (e instanceof StatusError && e.code === 404) return;
        throw e;
      }
      const fins = specFinalizers(cur);
      if (!fins.includes(NAMESPACE_FINALIZER)) return;
      try {
        await nsStore.update(
          '',
          name,
          { ...cur, spec: { ...(cur.spec as object), finalizers: fins.filter((f) => f !== NAMESPACE_FINALIZER) } },
          {
            ctx: ctx(),
            fieldValidation: 'Ignore',
            subresource: 'finalize',
          },
        );
        return;
      } catch (e) {
        if (e instanceof StatusError && e.code === 404) return;
        if (!(e instanceof StatusError && e.code === 409)) throw e;
      }
    }
    throw new Error(`namespace ${name}: too many conflicting writes while finalizing`);
  }
}
