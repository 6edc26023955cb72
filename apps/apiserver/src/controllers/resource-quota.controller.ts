/**
 * The resourcequota controller (kube-controller-manager's; pkg/controller/resourcequota): keeps
 * every ResourceQuota's status in step with its namespace. status.hard is spec.hard; status.used
 * is recomputed from the stored objects (resource-quota.evaluator.ts calculateUsage) and written
 * through /status, conditional on the resourceVersion the quota was read at, so a charge the
 * ResourceQuota admission plugin made meanwhile is never overwritten (the write conflicts and the
 * quota is computed again).
 *
 * A quota is recomputed when it is created or its spec changes, when an object it counts is
 * deleted or its usage changes (a pod reaching a terminal phase, a service changing type, a
 * claim growing), and on a periodic resync (kube's --resource-quota-sync-period, 5 minutes),
 * which gives back what a charged but never stored object took.
 *
 * The objects are read from watch-fed copies (CollectionReader, made at the first recount that
 * needs a resource), as kube's controller reads informers: pods, services and claims whole (the
 * pods' copy is the one the workload controllers share), the objects of every other resource as
 * their names only, for their count. The copy of a resource that is no longer served (a deleted
 * CRD) is dropped at the next recount.
 */
import { Inject, Injectable } from '@nestjs/common';
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '@app/apimachinery';
import { collectionPrefix, KindRegistry, type KindDeclaration, type RequestContext } from '@app/registry';
import type { Storage, StorageEvent } from '@app/storage';
import {
  calculateUsage,
  evaluatorOf,
  listsEqual,
  matchingResources,
  resourcesFor,
  usageOf,
  writeList,
  type GroupResource,
} from '../admission/resource-quota.evaluator.js';
import type { CollectionReader } from '../pipeline/collection-reader.js';
import { asMap } from '../groups/core/core.helpers.js';
import { STORAGE, STORES, type StoreFactory } from '../tokens.js';
import { ManagedController } from './controller.runner.js';
import { WatchQueueController } from './watch-queue.controller.js';

const CONTROLLER_CTX = (): RequestContext => ({
  user: { username: 'system:serviceaccount:kube-system:resourcequota-controller', groups: ['system:masters', 'system:authenticated'] },
  dryRun: false,
  warnings: [],
  now: () => new Date(),
});
/** Full resync period (kube-controller-manager's --resource-quota-sync-period default). */
const RESYNC_MS = 5 * 60_000;

/** The status a quota should have: hard from spec, used as computed. Undefined when it already has it. */
export function nextQuotaStatus(quota: KubeObject, used: ReturnType<typeof calculateUsage>): Record<string, unknown> | undefined {
  const spec = asMap(quota.spec);
  const status = asMap(quota.status);
  const hard = asMap(spec.hard);
  const next = { hard: { ...hard }, used: writeList(used) };
  const dirty = status.hard === undefined || status.used === undefined || !isDeepStrictEqual(asMap(status.hard), hard);
  if (!dirty && isDeepStrictEqual(asMap(status.used), next.used)) return undefined;
  return next;
}

/** What an object count reads of an object: that it exists. */
export const countedView = (o: KubeObject): KubeObject => ({
  apiVersion: o.apiVersion,
  kind: o.kind,
  metadata: { namespace: o.metadata.namespace, name: o.metadata.name },
});

/** Splits a storage key `/registry/<group|core>/<plural>/<ns>/<name>`. */
function keyParts(key: string): { gr: GroupResource; ns: string } | undefined {
  const p = key.split('/');
  if (p.length < 6) return undefined;
  return { gr: { group: p[2] === 'core' ? '' : p[2]!, resource: p[3]! }, ns: p[4]! };
}

/** Runs the resourcequota controller while this node holds the controller Lease. */
@ManagedController({ name: 'resourcequota' })
@Injectable()
export class ResourceQuotaControllerRunner extends WatchQueueController {
  /** Hard resource names of each quota, per namespace (from the list and the watch). */
  private readonly quotas = new Map<string, Map<string, string[]>>();
  /** The objects usage is computed from, by `group/resource` (see the top of this file). */
  private readonly readers = new Map<string, CollectionReader>();

  constructor(
    private readonly registry: KindRegistry,
    @Inject(STORAGE) storage: Storage,
    @Inject(STORES) private readonly stores: StoreFactory,
  ) {
    super(storage, 'resourcequota', RESYNC_MS);
  }

  private quotaDecl(): KindDeclaration | undefined {
    return this.registry.lookup('', 'v1', 'resourcequotas') as KindDeclaration | undefined;
  }

  protected kindsServed(): boolean {
    return this.quotaDecl() !== undefined;
  }

  protected override reset(): void {
    this.quotas.clear();
  }

  /** Every namespaced object: a deletion or a change of usage gives usage back. */
  protected watchPrefixes(): string[] {
    return ['/registry/'];
  }

  /** Lists the quotas and queues them all. */
  protected async relist(): Promise<number> {
    const res = await this.storage.list(collectionPrefix(this.quotaDecl()!, ''), { consistency: { mode: 'MostRecent' }, skipUndecodable: true });
    this.quotas.clear();
    for (const q of res.items) this.remember(q);
    for (const q of res.items) this.queue.add(`${q.metadata.namespace ?? ''}/${q.metadata.name}`);
    return res.revision;
  }

  private remember(q: KubeObject): void {
    const ns = q.metadata.namespace ?? '';
    let m = this.quotas.get(ns);
    if (!m) this.quotas.set(ns, (m = new Map()));
    m.set(q.metadata.name ?? '', Object.keys(asMap(asMap(q.spec).hard)));
  }

  protected onEvent(e: StorageEvent): void {
    const parts = keyParts(e.key);
    if (!parts) return;
    const { gr, ns } = parts;
    if (gr.group === '' && gr.resource === 'resourcequotas') {
      const name = e.object.metadata.name ?? '';
      if (e.type === 'DELETED') {
        this.quotas.get(ns)?.delete(name);
        return;
      }
      this.remember(e.object);
      const spec = asMap(e.object.spec);
      const status = asMap(e.object.status);
      const specChanged = !e.prevObject || !isDeepStrictEqual(asMap(e.prevObject.spec), spec);
      if (specChanged || status.used === undefined || !isDeepStrictEqual(asMap(status.hard), asMap(spec.hard))) this.queue.add(`${ns}/${name}`);
    } else {
      const inNs = this.quotas.get(ns);
      if (!inNs || inNs.size === 0) return;
      // Replenishment: a deletion, or a change of what the object uses, may give usage back.
      if (e.type === 'ADDED') return;
      if (e.type === 'MODIFIED') {
        if (!e.prevObject) return;
        const now = new Date();
        if (listsEqual(usageOf(gr, e.prevObject, now), usageOf(gr, e.object, now))) return;
      }
      for (const [name, hard] of inNs) if (matchingResources(gr, hard).length) this.queue.add(`${ns}/${name}`);
    }
  }

  /** The namespaced resources served here, once per group and resource (any version). */
  private served(): Array<{ gr: GroupResource; decl: KindDeclaration }> {
    const seen = new Map<string, { gr: GroupResource; decl: KindDeclaration }>();
    for (const d of this.registry.all()) {
      if (!d.namespaced || d.rest) continue;
      // Events are not counted; a kind stored as another resource is counted as that one.
      if ((d.group === '' && d.plural === 'events') || d.storedAs) continue;
      const k = `${d.group}/${d.plural}`;
      if (!seen.has(k)) seen.set(k, { gr: { group: d.group, resource: d.plural }, decl: d });
    }
    return [...seen.values()];
  }

  /**
   * Stops reading the resources no longer served (a deleted CustomResourceDefinition): their
   * copies would only go on watching an empty prefix while this controller leads.
   */
  private forgetUnserved(served: ReadonlyArray<{ gr: GroupResource }>): void {
    if (this.readers.size === 0) return;
    const keys = new Set(served.map((s) => `${s.gr.group}/${s.gr.resource}`));
    for (const [key, reader] of this.readers) {
      if (keys.has(key)) continue;
      this.dropCollection(reader);
      this.readers.delete(key);
    }
  }

  /** The copy of a served resource's objects, made at its first use. */
  private objectsOf(gr: GroupResource): CollectionReader {
    const key = `${gr.group}/${gr.resource}`;
    let reader = this.readers.get(key);
    if (!reader) {
      const decl = () => this.served().find((s) => s.gr.group === gr.group && s.gr.resource === gr.resource)?.decl;
      reader = this.collection(decl, `resourcequota-controller: ${key}`, evaluatorOf(gr) === 'count' ? countedView : undefined);
      this.readers.set(key, reader);
    }
    return reader;
  }

  /** Recomputes one quota's status and writes it when it changed. */
  protected async process(key: string): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    const decl = this.quotaDecl();
    if (!decl) return;
    const store = this.stores.storeFor(decl);
    let quota: KubeObject;
    try {
      quota = await store.get(ns, name);
    } catch {
      return; // gone
    }
    const served = this.served();
    this.forgetUnserved(served);
    const wanted = resourcesFor(
      Object.keys(asMap(asMap(quota.spec).hard)),
      served.map((s) => s.gr),
    );
    const objects = new Map<string, KubeObject[]>();
    for (const gr of wanted) objects.set(`${gr.group}/${gr.resource}`, await this.objectsOf(gr).inNamespace(ns));
    const used = calculateUsage(quota, wanted, (gr) => objects.get(`${gr.group}/${gr.resource}`), new Date());
    const status = nextQuotaStatus(quota, used);
    if (!status) return;
    try {
      await store.update(
        ns,
        name,
        { ...quota, status },
        { ctx: CONTROLLER_CTX(), fieldValidation: 'Ignore', subresource: 'status', fieldManager: 'kube-controller-manager' },
      );
    } catch (e) {
      const code = (e as { code?: number }).code;
      if (code === 404) return;
      if (code === 409) {
        this.retryLater(key); // charged or changed meanwhile: compute again from the new version
        return;
      }
      throw e;
    }
  }
}
