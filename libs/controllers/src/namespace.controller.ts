/**
 * Namespace lifecycle controller (Kubernetes' namespace controller): a namespace being deleted
 * (deletionTimestamp set, phase Terminating, spec finalizer `kubernetes`) is emptied of every
 * namespaced object of every served kind, its progress is reported in status.conditions, and
 * then it is finalized (the `kubernetes` finalizer removed through the finalize subresource),
 * after which storage removes it.
 */
import { StatusError } from '@app/apimachinery';
import type { KubeObject, Storage, WatchHandle } from '@app/storage';
import { collectionPrefix, type GenericStore, type KindDeclaration, type KindRegistry, type RequestContext } from '@app/registry';

/** Dependencies of the controller (in-process store access). */
export interface NamespaceControllerDeps {
  registry: KindRegistry;
  storage: Storage;
  storeFor(decl: KindDeclaration): GenericStore;
  /** Resync period in ms (a missed event is picked up within it). */
  resyncMs?: number;
}

const CONTROLLER_USER = { username: 'system:serviceaccount:kube-system:namespace-controller', groups: ['system:serviceaccounts', 'system:authenticated'] };

function ctx(): RequestContext {
  return { user: CONTROLLER_USER, dryRun: false, warnings: [], now: () => new Date() };
}

function isTerminating(ns: KubeObject): boolean {
  return ns.metadata.deletionTimestamp !== undefined;
}

/** Runs the namespace lifecycle loop until stopped. */
export class NamespaceController {
  private watch?: WatchHandle;
  private timer?: NodeJS.Timeout;
  private running = false;
  private again = false;
  private stopped = false;

  constructor(private readonly deps: NamespaceControllerDeps) {}

  private nsDecl(): KindDeclaration {
    return this.deps.registry.lookup('', 'v1', 'namespaces') as KindDeclaration;
  }

  /** Starts watching namespaces and reconciling terminating ones. */
  start(): void {
    const decl = this.nsDecl();
    this.watch = this.deps.storage.watch(
      { key: collectionPrefix(decl, ''), recursive: true, afterRevision: this.deps.storage.currentRevision() },
      { event: () => this.kick(), error: () => this.kick() },
    );
    const tick = (): void => {
      if (this.stopped) return;
      this.kick();
      this.timer = setTimeout(tick, this.deps.resyncMs ?? 5000);
      this.timer.unref();
    };
    tick();
  }

  stop(): void {
    this.stopped = true;
    this.watch?.stop();
    if (this.timer) clearTimeout(this.timer);
  }

  /** Schedules a reconcile pass; passes never overlap. */
  private kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    this.reconcileAll()
      .catch((e) => process.stderr.write(`namespace controller: ${(e as Error).message}\n`))
      .finally(() => {
        this.running = false;
        if (this.again) {
          this.again = false;
          setImmediate(() => this.kick());
        }
      });
  }

  private async reconcileAll(): Promise<void> {
    const nsStore = this.deps.storeFor(this.nsDecl());
    const list = await nsStore.list('', {});
    for (const ns of list.items) {
      if (this.stopped) return;
      if (isTerminating(ns)) await this.reconcile(ns);
    }
  }

  /** Deletes the contents of one terminating namespace, then finalizes it. */
  private async reconcile(ns: KubeObject): Promise<void> {
    const name = ns.metadata.name as string;
    let remaining = 0;
    const remainingKinds: string[] = [];
    for (const decl of this.deps.registry.all()) {
      if (!decl.namespaced || !(decl.verbs ?? ['list', 'delete']).includes('delete')) continue;
      const store = this.deps.storeFor(decl);
      const items = (await store.list(name, {})).items;
      for (const item of items) {
        if (item.metadata.deletionTimestamp === undefined) {
          try {
            await store.delete(name, item.metadata.name as string, {}, ctx());
          } catch (e) {
            if (!(e instanceof StatusError && (e.code === 404 || e.code === 409))) throw e;
          }
        }
      }
      const left = (await store.list(name, {})).items.length;
      if (left > 0) {
        remaining += left;
        remainingKinds.push(`${decl.plural}${decl.group ? '.' + decl.group : ''} has ${left} resource instances`);
      }
    }
    const nsStore = this.deps.storeFor(this.nsDecl());
    if (remaining > 0) {
      await this.setConditions(nsStore, name, remainingKinds);
      return;
    }
    const fins = ((ns.spec as { finalizers?: string[] } | undefined)?.finalizers ?? []).filter((f) => f !== 'kubernetes');
    try {
      await nsStore.update('', name, { ...ns, spec: { ...(ns.spec as object), finalizers: fins } }, {
        ctx: ctx(),
        fieldValidation: 'Ignore',
        subresource: 'finalize',
      });
    } catch (e) {
      if (!(e instanceof StatusError && (e.code === 404 || e.code === 409))) throw e;
    }
  }

  private async setConditions(nsStore: GenericStore, name: string, remaining: string[]): Promise<void> {
    const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    const cur = await nsStore.get('', name).catch(() => undefined);
    if (!cur) return;
    const status = { ...((cur.status as Record<string, unknown>) ?? {}) };
    const message = `Some resources are remaining: ${remaining.join(', ')}`;
    const conds = [
      { type: 'NamespaceDeletionDiscoveryFailure', status: 'False', reason: 'ResourcesDiscovered', message: 'All resources successfully discovered' },
      { type: 'NamespaceDeletionGroupVersionParsingFailure', status: 'False', reason: 'ParsedGroupVersions', message: 'All legacy kube types successfully parsed' },
      { type: 'NamespaceDeletionContentFailure', status: 'False', reason: 'ContentDeleted', message: 'All content successfully deleted, may be waiting on finalization' },
      { type: 'NamespaceContentRemaining', status: 'True', reason: 'SomeResourcesRemain', message },
    ];
    const old = (status.conditions as Array<Record<string, unknown>> | undefined) ?? [];
    status.conditions = conds.map((c) => {
      const prev = old.find((o) => o.type === c.type);
      return { ...c, lastTransitionTime: prev && prev.status === c.status ? prev.lastTransitionTime : now };
    });
    if (JSON.stringify(old) === JSON.stringify(status.conditions)) return;
    try {
      await nsStore.update('', name, { ...cur, status }, { ctx: ctx(), fieldValidation: 'Ignore', subresource: 'status' });
    } catch (e) {
      if (!(e instanceof StatusError && (e.code === 404 || e.code === 409))) throw e;
    }
  }
}
