/**
 * Garbage collector (Kubernetes' generic garbage collector, kube-controller-manager), running
 * in-process: it keeps an owner -> dependents graph of every object of every served kind
 * (custom kinds included) from ONE recursive storage watch over the `/registry/` key space,
 * and acts through the kinds' GenericStores so every store rule (finalizers, preconditions,
 * removal of finalized objects) applies to its writes:
 *
 * - Background: the owner is removed at once; its DELETED event makes each dependent whose
 *   every owner is now absent get deleted (dangling references cleaned up the same way).
 * - Foreground: the owner carries `foregroundDeletion` while Terminating; its dependents are
 *   deleted; when no dependent with blockOwnerDeletion=true is left the finalizer is removed
 *   and the store removes the owner.
 * - Orphan: the owner carries `orphan`; references to it are removed from its dependents, then
 *   the finalizer, and the store removes the owner.
 * Owners are matched by uid (same name, other uid = absent), with the scope rules of
 * owner.graph.ts. Absence seen in the graph is confirmed by a live (Most Recent) read before
 * anything is deleted, as Kubernetes does, because the graph may lag the store.
 *
 * Scale: events update the graph in O(references); work goes through a deduplicating queue
 * processed by a few workers; failures retry with exponential backoff; the periodic resync
 * re-judges only suspicious nodes from memory (no relist). A relist happens only when the
 * watch fails (e.g. compacted history). Dry-run requests never reach storage, so they are
 * never seen here.
 */
import { StatusError, type KubeObject } from '@app/apimachinery';
import type { Storage, StorageEvent, WatchHandle } from '@app/storage';
import type { GenericStore, KindDeclaration, KindRegistry, RequestContext } from '@app/registry';
import {
  decideDependent,
  FINALIZER_FOREGROUND,
  FINALIZER_ORPHAN,
  finalizersOf,
  groupOf,
  OwnerGraph,
  ownerReferencesOf,
  type GraphNode,
  type ObjectIdentity,
  type OwnerReference,
  type OwnerState,
  type WorkItem,
} from './owner.graph.js';
import { WorkQueue } from './work.queue.js';

/** Dependencies of the collector (in-process store access). */
export interface GarbageCollectorDeps {
  registry: KindRegistry;
  storage: Storage;
  storeFor(decl: KindDeclaration): GenericStore;
  /** Period of the in-memory resync (ms). Default 30 s. */
  resyncMs?: number;
  /** Concurrent workers. Default 4. */
  workers?: number;
  /** Where failures are reported. Default stderr. */
  log?: (message: string) => void;
  /**
   * Records an Event about an object (the server's event recorder, component
   * "garbage-collector-controller"); must not wait or throw. Default: none recorded.
   */
  recordEvent?: (
    ref: { kind: string; apiVersion: string; namespace?: string; name: string; uid: string },
    type: 'Normal' | 'Warning',
    reason: string,
    message: string,
  ) => void;
}

/** Key prefix covering every kind's objects (DESIGN "Storage model"). */
const REGISTRY_PREFIX = '/registry/';

const GC_USER = { username: 'system:serviceaccount:kube-system:generic-garbage-collector', groups: ['system:serviceaccounts', 'system:authenticated'] };

function gcContext(): RequestContext {
  return { user: GC_USER, dryRun: false, warnings: [], now: () => new Date() };
}

function isStatus(e: unknown, ...codes: number[]): boolean {
  return e instanceof StatusError && codes.includes(e.code);
}

/** The in-process garbage collector. */
export class GarbageCollector {
  /** The graph (exposed for tests and metrics). */
  readonly graph = new OwnerGraph();
  private readonly queue: WorkQueue;
  private watch?: WatchHandle;
  private resyncTimer?: NodeJS.Timeout;
  private stopped = false;
  private inFlight = 0;
  private pumpScheduled = false;
  private readonly failures = new Map<string, number>();
  private readonly retryTimers = new Set<NodeJS.Timeout>();
  private kindsVersion = -1;
  private readonly kinds = new Map<string, KindDeclaration>();
  private idleWaiters: Array<() => void> = [];
  /** Revision of the last storage event (or initial list) applied to the graph. */
  private seenRevision = 0;
  private processed = 0;
  private items = 0;

  constructor(private readonly deps: GarbageCollectorDeps) {
    this.queue = new WorkQueue(() => this.schedulePump());
  }

  /** Lists every object, starts the watch and the resync timer. Resolves after the first sync. */
  async start(): Promise<void> {
    await this.sync();
    const tick = (): void => {
      if (this.stopped) return;
      for (const w of this.graph.resyncWork()) this.enqueue(w);
    };
    this.resyncTimer = setInterval(tick, this.deps.resyncMs ?? 30_000);
    this.resyncTimer.unref();
  }

  /** Stops watching and processing (work in flight finishes). */
  stop(): void {
    this.stopped = true;
    this.watch?.stop();
    if (this.resyncTimer) clearInterval(this.resyncTimer);
    for (const t of this.retryTimers) clearTimeout(t);
    this.retryTimers.clear();
    this.queue.clear();
    this.notifyIdle();
  }

  /** Resolves when no work is queued or in flight (tests). */
  whenIdle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * The storage revision up to which the collector has finished: every event at or below it is
   * in the graph and all work it caused is done (nothing queued, in flight or waiting to retry).
   * It only grows; 0 before the first sync. A caller that wrote at revision R and sees this at
   * >= R knows the collector has judged that write (served as a metric, see the server).
   */
  get processedRevision(): number {
    return this.processed;
  }

  /** Work items handled so far (each attempt, retries included). */
  get itemsProcessed(): number {
    return this.items;
  }

  /** Moves {@link processedRevision} up to the last seen event when no work is outstanding. */
  private advance(): void {
    if (this.stopped || this.queue.length > 0 || this.inFlight > 0 || this.retryTimers.size > 0) return;
    if (this.seenRevision > this.processed) this.processed = this.seenRevision;
  }

  private isIdle(): boolean {
    return this.stopped || (this.queue.length === 0 && this.inFlight === 0);
  }

  private notifyIdle(): void {
    this.advance();
    if (!this.isIdle()) return;
    const w = this.idleWaiters;
    this.idleWaiters = [];
    for (const r of w) r();
  }

  private log(msg: string): void {
    (this.deps.log ?? ((m: string) => process.stderr.write(`${m}\n`)))(`garbage collector: ${msg}`);
  }

  /** (Re)builds the graph from a Most Recent list, then watches from that revision. */
  private async sync(): Promise<void> {
    const res = await this.deps.storage.list(REGISTRY_PREFIX, { consistency: { mode: 'MostRecent' }, skipUndecodable: true });
    const seen = new Set<string>();
    for (const obj of res.items) {
      const uid = obj.metadata?.uid;
      if (typeof uid === 'string') seen.add(uid);
      for (const w of this.graph.upsert(obj)) this.enqueue(w);
    }
    for (const uid of this.graph.uids()) {
      if (!seen.has(uid)) for (const w of this.graph.removeUid(uid)) this.enqueue(w);
    }
    this.seenRevision = Math.max(this.seenRevision, res.revision);
    this.advance();
    if (this.stopped) return;
    this.watch = this.deps.storage.watch(
      { key: REGISTRY_PREFIX, recursive: true, afterRevision: res.revision },
      {
        event: (e) => this.onEvent(e),
        error: (err) => {
          this.log(`watch failed (${err.code}: ${err.message}): relisting`);
          this.resyncLater();
        },
      },
    );
  }

  private resyncLater(): void {
    this.watch?.stop();
    if (this.stopped) return;
    const t = setTimeout(() => {
      this.retryTimers.delete(t);
      this.sync().catch((e) => {
        this.log(`relist failed: ${(e as Error).message}`);
        this.resyncLater();
      });
    }, 1000);
    t.unref();
    this.retryTimers.add(t);
  }

  private onEvent(e: StorageEvent): void {
    if (this.stopped) return;
    const work = e.type === 'DELETED' ? this.graph.remove(e.object) : this.graph.upsert(e.object);
    for (const w of work) this.enqueue(w);
    this.seenRevision = Math.max(this.seenRevision, e.revision);
    this.advance();
  }

  private enqueue(w: WorkItem): void {
    if (this.stopped) return;
    this.queue.add(`${w.kind === 'attemptToDelete' ? 'd' : 'o'}:${w.uid}`);
  }

  private schedulePump(): void {
    if (this.pumpScheduled || this.stopped) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  private pump(): void {
    const max = this.deps.workers ?? 4;
    while (!this.stopped && this.inFlight < max) {
      const key = this.queue.take();
      if (key === undefined) break;
      this.inFlight++;
      this.items++;
      this.process(key)
        .then(
          () => this.failures.delete(key),
          (e) => this.retryLater(key, e),
        )
        .finally(() => {
          this.inFlight--;
          this.queue.done(key);
          this.pump();
          this.notifyIdle();
        });
    }
    this.notifyIdle();
  }

  /** Exponential backoff per key: 100 ms doubling up to 30 s. */
  private retryLater(key: string, err: unknown): void {
    if (this.stopped) return;
    const n = (this.failures.get(key) ?? 0) + 1;
    this.failures.set(key, n);
    if (n === 1 || n % 10 === 0) this.log(`${key}: ${(err as Error)?.message ?? String(err)} (retry ${n})`);
    const t = setTimeout(
      () => {
        this.retryTimers.delete(t);
        this.queue.add(key);
      },
      Math.min(100 * 2 ** (n - 1), 30_000),
    );
    t.unref();
    this.retryTimers.add(t);
  }

  private async process(key: string): Promise<void> {
    const uid = key.slice(2);
    if (key.startsWith('d:')) await this.attemptToDelete(uid);
    else await this.attemptToOrphan(uid);
  }

  // ---- kinds ------------------------------------------------------------------------------

  /** The served declaration of a group/kind (any version: storage keys ignore the version). */
  private declFor(group: string, kind: string): KindDeclaration | undefined {
    const v = this.deps.registry.version();
    if (v !== this.kindsVersion) {
      this.kinds.clear();
      for (const d of this.deps.registry.all()) {
        const k = `${d.group}/${d.kind}`;
        if (!this.kinds.has(k)) this.kinds.set(k, d);
      }
      this.kindsVersion = v;
    }
    return this.kinds.get(`${group}/${kind}`);
  }

  /** Live (Most Recent) read of an object; undefined when absent. */
  private async liveGet(decl: KindDeclaration, namespace: string, name: string): Promise<KubeObject | undefined> {
    try {
      return await this.deps.storeFor(decl).get(decl.namespaced ? namespace : '', name);
    } catch (e) {
      if (isStatus(e, 404)) return undefined;
      throw e;
    }
  }

  private async latest(id: ObjectIdentity): Promise<{ decl: KindDeclaration; obj: KubeObject } | undefined> {
    const decl = this.declFor(id.group, id.kind);
    if (!decl) return undefined;
    const obj = await this.liveGet(decl, id.namespace, id.name);
    if (!obj || obj.metadata.uid !== id.uid) return undefined;
    return { decl, obj };
  }

  // ---- owner state --------------------------------------------------------------------------

  private async ownerState(ref: OwnerReference, dependentNamespace: string): Promise<OwnerState> {
    const decl = this.declFor(groupOf(ref.apiVersion), ref.kind);
    if (!decl) return 'unknown';
    // A cluster-scoped dependent cannot have a namespaced owner; such a reference never resolves.
    if (decl.namespaced && dependentNamespace === '') return 'dangling';
    const known = this.graph.ownerKnown(ref, dependentNamespace);
    if (known) return known.deletingDependents ? 'waiting' : 'solid';
    const live = await this.liveGet(decl, decl.namespaced ? dependentNamespace : '', ref.name);
    if (!live || live.metadata.uid !== ref.uid) return 'dangling';
    const deleting = live.metadata.deletionTimestamp !== undefined && live.metadata.deletionTimestamp !== null;
    return deleting && finalizersOf(live).includes(FINALIZER_FOREGROUND) ? 'waiting' : 'solid';
  }

  // ---- actions ----------------------------------------------------------------------------

  /** Judges one object: a foreground owner may be finalized; a dependent may be deleted or released. */
  private async attemptToDelete(uid: string): Promise<void> {
    const node = this.graph.get(uid);
    if (!node) return;
    const cur = await this.latest(node.identity);
    if (!cur) return; // gone (its DELETED event updates the graph) or replaced by another uid
    const { obj } = cur;
    const deleting = obj.metadata.deletionTimestamp !== undefined && obj.metadata.deletionTimestamp !== null;
    if (deleting) {
      if (finalizersOf(obj).includes(FINALIZER_FOREGROUND)) await this.processDeletingDependents(node, cur.decl);
      return; // being deleted by someone else: nothing to decide
    }
    const refs = ownerReferencesOf(obj);
    if (refs.length === 0) return;
    const ns = cur.decl.namespaced ? (obj.metadata.namespace ?? '') : '';
    this.reportInvalidNamespaceOwnerRefs(node, refs, ns);
    const judged: Array<{ ref: OwnerReference; state: OwnerState }> = [];
    for (const ref of refs) judged.push({ ref, state: await this.ownerState(ref, ns) });
    const dependents = this.graph.dependentsOf(uid);
    const decision = decideDependent({
      refs: judged,
      finalizers: finalizersOf(obj),
      hasDependents: dependents.length > 0,
      aDependentIsDeletingDependents: dependents.some((d) => d.deletingDependents),
    });
    switch (decision.action) {
      case 'none':
        return;
      case 'removeOwnerReferences': {
        const drop = new Set(decision.uids);
        await this.mutate(cur.decl, node.identity, (o) => this.setOwnerReferences(o, (r) => !drop.has(r.uid as string)));
        return;
      }
      case 'delete': {
        if (decision.unblock.length) {
          const unblock = new Set(decision.unblock);
          await this.mutate(cur.decl, node.identity, (o) => {
            const raw = o.metadata.ownerReferences as Array<Record<string, unknown>>;
            let changed = false;
            for (const r of raw) {
              if (unblock.has(r.uid as string) && r.blockOwnerDeletion === true) {
                r.blockOwnerDeletion = false;
                changed = true;
              }
            }
            return changed;
          });
        }
        try {
          await this.deps.storeFor(cur.decl).delete(ns, node.identity.name, { propagationPolicy: decision.policy, preconditions: { uid } }, gcContext());
        } catch (e) {
          if (!isStatus(e, 404, 409)) throw e; // gone, or replaced by a new object under the name
        }
        return;
      }
    }
  }

  /**
   * reportInvalidNamespaceOwnerRef: a reference whose uid is a namespaced object of another
   * namespace than the dependent's (or of any namespace, for a cluster-scoped dependent) can
   * never resolve; Kubernetes says so in a Warning Event about the dependent.
   */
  private reportInvalidNamespaceOwnerRefs(node: GraphNode, refs: OwnerReference[], ns: string): void {
    if (!this.deps.recordEvent) return;
    for (const ref of refs) {
      const owner = this.graph.get(ref.uid);
      if (!owner || owner.identity.namespace === '' || owner.identity.namespace === ns) continue;
      const id = node.identity;
      this.deps.recordEvent(
        { kind: id.kind, apiVersion: id.apiVersion, namespace: id.namespace || undefined, name: id.name, uid: id.uid },
        'Warning',
        'OwnerRefInvalidNamespace',
        `ownerRef [${ref.apiVersion}/${ref.kind}, namespace: ${ns}, name: ${ref.name}, uid: ${ref.uid}] does not exist in namespace ${JSON.stringify(ns)}`,
      );
    }
  }

  /** A foreground owner: finalize it when no blocking dependent is left, else push them along. */
  private async processDeletingDependents(node: GraphNode, decl: KindDeclaration): Promise<void> {
    const blocking = this.graph.blockingDependentsOf(node.identity.uid);
    if (blocking.length === 0) {
      await this.mutate(decl, node.identity, (o) => this.removeFinalizer(o, FINALIZER_FOREGROUND));
      return;
    }
    for (const d of blocking) if (!d.deletingDependents) this.enqueue({ kind: 'attemptToDelete', uid: d.identity.uid });
  }

  /** An owner with the orphan finalizer: release its dependents, then drop the finalizer. */
  private async attemptToOrphan(uid: string): Promise<void> {
    const node = this.graph.get(uid);
    if (!node) return;
    const cur = await this.latest(node.identity);
    if (!cur) return;
    const deleting = cur.obj.metadata.deletionTimestamp !== undefined && cur.obj.metadata.deletionTimestamp !== null;
    if (!deleting || !finalizersOf(cur.obj).includes(FINALIZER_ORPHAN)) return;
    for (const dep of this.graph.dependentsOf(uid)) {
      const decl = this.declFor(dep.identity.group, dep.identity.kind);
      if (!decl) continue;
      await this.mutate(decl, dep.identity, (o) => this.setOwnerReferences(o, (r) => r.uid !== uid));
    }
    await this.mutate(cur.decl, node.identity, (o) => this.removeFinalizer(o, FINALIZER_ORPHAN));
  }

  /** Keeps the references `keep` accepts; false when nothing changed. */
  private setOwnerReferences(o: KubeObject, keep: (r: Record<string, unknown>) => boolean): boolean {
    const raw = o.metadata.ownerReferences;
    if (!Array.isArray(raw)) return false;
    const next = (raw as Array<Record<string, unknown>>).filter((r) => !r || typeof r !== 'object' || keep(r));
    if (next.length === raw.length) return false;
    if (next.length) o.metadata.ownerReferences = next;
    else delete o.metadata.ownerReferences;
    return true;
  }

  private removeFinalizer(o: KubeObject, finalizer: string): boolean {
    const f = finalizersOf(o);
    if (!f.includes(finalizer)) return false;
    const next = f.filter((x) => x !== finalizer);
    if (next.length) o.metadata.finalizers = next;
    else delete o.metadata.finalizers;
    return true;
  }

  /**
   * Optimistic read-modify-write through the kind's store (an update carrying the read
   * resourceVersion): retried on 409, a no-op when the object is gone or has another uid.
   */
  private async mutate(decl: KindDeclaration, id: ObjectIdentity, change: (o: KubeObject) => boolean): Promise<void> {
    const store = this.deps.storeFor(decl);
    const ns = decl.namespaced ? id.namespace : '';
    for (let attempt = 0; attempt < 10; attempt++) {
      const cur = await this.liveGet(decl, ns, id.name);
      if (!cur || cur.metadata.uid !== id.uid) return;
      const next = structuredClone(cur);
      if (!change(next)) return;
      try {
        await store.update(ns, id.name, next, { ctx: gcContext(), fieldValidation: 'Ignore' });
        return;
      } catch (e) {
        if (isStatus(e, 404)) return;
        if (isStatus(e, 409)) continue;
        throw e;
      }
    }
    throw new Error(`${id.kind} ${id.namespace ? `${id.namespace}/` : ''}${id.name}: too many conflicting writes`);
  }
}
