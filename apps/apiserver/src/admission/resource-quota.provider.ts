/**
 * The ResourceQuota admission plugin (kube's apiserver/pkg/admission/plugin/resourcequota;
 * docs/architecture.md "ResourceQuota"): every create (and, for services and claims, update) of a
 * namespaced object is checked against the ResourceQuotas of its namespace and charged to them
 * before the object is stored.
 *
 * Charging is a compare-and-swap of each matching quota's status.used: the quota is read at
 * MostRecent, the new usage computed (resource-quota.evaluator.ts checkRequest), and written
 * through /status with the resourceVersion it was read at as a precondition. A conflict (another
 * node, or the resourcequota controller, wrote the quota meanwhile) re-reads the quotas that
 * failed and decides again, so two requests can never both spend the same last unit, whichever
 * node they reach. Requests of one namespace are serialized on this node, as kube's evaluator
 * queues them per namespace, so conflicts come only from other nodes and the controller.
 *
 * Whether a namespace has a quota that concerns the request is first decided from this node's
 * watch-fed copy of the ResourceQuotas (as kube's plugin uses its informer), so requests in
 * namespaces without one cost no storage read; only those a quota concerns read the quotas at
 * MostRecent and queue. A quota created through another node is in force here once this node
 * has applied it (milliseconds; an object created in between goes uncharged until the
 * controller's next recount, as with kube's informer lag).
 *
 * A refused request is a 403 with Kubernetes' message; a dry run is checked but charges nothing.
 * Usage charged for an object that is then not stored (a later failure) is given back by the
 * controller's recomputation, as in Kubernetes.
 */
import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { Errors, StatusError, type KubeObject } from '@app/apimachinery';
import { collectionPrefix, KindRegistry, type Admission, type AdmissionAttributes, type KindDeclaration, type RequestContext } from '@app/registry';
import type { Storage } from '@app/storage';
import { WatchedCollection } from '../pipeline/watched-collection.js';
import { STORAGE, STORES, type StoreFactory } from '../tokens.js';
import { AdmissionPlugin } from './admission.plugin.js';
import {
  checkRequest,
  handles,
  quotaMatches,
  QuotaRefusal,
  writeList,
  type GroupResource,
  type QuotaRequest,
  type ResourceList,
} from './resource-quota.evaluator.js';

/** Resources quota never looks at (quota/v1/install DefaultIgnoredResources). */
const IGNORED = new Set(['/events']);
/** Rounds of re-reading conflicting quotas before the conflict is returned to the client. */
const MAX_ATTEMPTS = 10;

/** The identity the plugin writes quota status as (kube's loopback client). */
const APISERVER_CTX = (): RequestContext => ({
  user: { username: 'system:apiserver', groups: ['system:masters', 'system:authenticated'] },
  dryRun: false,
  warnings: [],
  now: () => new Date(),
});

/** Whether the plugin evaluates this request at all (QuotaAdmission.Validate and Evaluator.Handles). */
export function quotaApplies(attrs: Pick<AdmissionAttributes, 'operation' | 'subresource' | 'namespace' | 'object' | 'decl'>): GroupResource | undefined {
  if (!attrs.namespace || !attrs.object) return undefined;
  if (attrs.operation !== 'CREATE' && attrs.operation !== 'UPDATE') return undefined;
  const gr = { group: attrs.decl.group, resource: attrs.decl.plural };
  if (IGNORED.has(`${gr.group}/${gr.resource}`)) return undefined;
  return handles(gr, attrs.operation, attrs.subresource) ? gr : undefined;
}

/**
 * The plugin: validating only, last of the chain (kube-apiserver runs ResourceQuota after
 * ValidatingAdmissionWebhook), also after the RBAC escalation check, which kube makes in the
 * role stores before admission runs: nothing is charged for a write refused earlier.
 */
@AdmissionPlugin({ name: 'ResourceQuota', order: 11_000 })
@Injectable()
export class ResourceQuotaPlugin implements Admission, OnApplicationBootstrap, OnApplicationShutdown {
  /** The tail of each namespace's queue of evaluations on this node. */
  private readonly tails = new Map<string, Promise<void>>();
  /** This node's watch-fed copy of every ResourceQuota (undefined when the kind is not served). */
  private cached: WatchedCollection<KubeObject> | undefined;

  constructor(
    @Inject(STORAGE) private readonly storage: Storage,
    @Inject(STORES) private readonly stores: StoreFactory,
    private readonly registry: KindRegistry,
  ) {}

  onApplicationBootstrap(): void {
    const decl = this.registry.lookup('', 'v1', 'resourcequotas') as KindDeclaration | undefined;
    if (!decl) return;
    this.cached = new WatchedCollection<KubeObject>(this.storage, collectionPrefix(decl, ''), (o) => o, 'resourcequotas for admission', true);
    this.cached.start();
  }

  onApplicationShutdown(): void {
    this.cached?.stop();
  }

  async admit(): Promise<void> {}

  async validate(attrs: AdmissionAttributes): Promise<void> {
    const gr = quotaApplies(attrs);
    if (!gr) return;
    const decl = this.registry.lookup('', 'v1', 'resourcequotas') as KindDeclaration | undefined;
    if (!decl) return;
    // Most requests meet no quota: only those that do queue up behind the namespace's others.
    // The copy as it is, without waiting for this node's writes to settle (a wait every counted
    // write would pay): a quota constrains nothing before the controller has filled in its
    // status.hard anyway, and a quota that concerns the request is read again at MostRecent.
    const known = this.cached?.isSynced() ? this.cachedQuotas(attrs.namespace) : await this.quotas(decl, attrs.namespace);
    if (!known.some((q) => quotaMatches(q, gr, attrs.object!))) return;
    await this.serialized(attrs.namespace, () => this.evaluate(decl, attrs, gr));
  }

  /** The namespace's quotas in this node's copy. */
  private cachedQuotas(ns: string): KubeObject[] {
    return this.cached!.inNamespace(ns);
  }

  /** The namespace's quotas, read at MostRecent. */
  private async quotas(decl: KindDeclaration, ns: string): Promise<KubeObject[]> {
    return (await this.storage.list(collectionPrefix(decl, ns), { consistency: { mode: 'MostRecent' }, skipUndecodable: true })).items;
  }

  /** Runs `fn` after every evaluation of the namespace queued before it on this node. */
  private serialized(ns: string, fn: () => Promise<void>): Promise<void> {
    const prev = this.tails.get(ns) ?? Promise.resolve();
    const run = prev.then(fn, fn);
    const tail = run.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(ns, tail);
    void tail.then(() => {
      if (this.tails.get(ns) === tail) this.tails.delete(ns);
    });
    return run;
  }

  private async evaluate(decl: KindDeclaration, attrs: AdmissionAttributes, gr: GroupResource): Promise<void> {
    const req: QuotaRequest = {
      operation: attrs.operation as 'CREATE' | 'UPDATE',
      subresource: attrs.subresource,
      gr,
      object: attrs.object!,
      oldObject: attrs.oldObject,
    };
    let only: Set<string> | undefined;
    for (let attempt = 1; ; attempt++) {
      const listed = await this.quotas(decl, attrs.namespace);
      const quotas = only ? listed.filter((q) => only!.has(q.metadata.name ?? '')) : listed;
      if (quotas.length === 0) return;
      let charged;
      try {
        charged = checkRequest(quotas, req, attrs.ctx.now());
      } catch (e) {
        if (e instanceof QuotaRefusal) throw Errors.forbidden(gr, attrs.name, e.message);
        throw e;
      }
      if (attrs.ctx.dryRun || charged.size === 0) return;
      const failed = new Set<string>();
      let lastError: unknown;
      for (const q of quotas) {
        const used = charged.get(q.metadata.name ?? '');
        if (!used) continue;
        try {
          await this.writeUsed(decl, q, used);
        } catch (e) {
          failed.add(q.metadata.name ?? '');
          lastError = e;
        }
      }
      if (failed.size === 0) return;
      const conflict = lastError instanceof StatusError && lastError.code === 409;
      if (!conflict || attempt >= MAX_ATTEMPTS) throw lastError;
      only = failed;
    }
  }

  /** Writes one quota's status.used, conditional on the resourceVersion it was read at. */
  private async writeUsed(decl: KindDeclaration, quota: KubeObject, used: ResourceList): Promise<void> {
    const status = { ...((quota.status ?? {}) as Record<string, unknown>), used: writeList(used) };
    await this.stores
      .storeFor(decl)
      .update(
        quota.metadata.namespace ?? '',
        quota.metadata.name ?? '',
        { ...quota, status },
        { ctx: APISERVER_CTX(), fieldValidation: 'Ignore', subresource: 'status', fieldManager: 'kube-apiserver' },
      );
  }
}
