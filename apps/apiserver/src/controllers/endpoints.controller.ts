/**
 * The endpoints and endpointslice controllers (kube-controller-manager's): for every Service
 * with a selector, the first keeps an Endpoints object of the Service's name, the second its
 * EndpointSlices, listing the selected pods that have an IP (the rules are in
 * endpoints.logic.ts). Nothing runs pods here, so a pod gets an IP and a Ready condition from
 * whoever writes its status (a kubelet of its own, a test, a simulator).
 *
 * Both watch the Services and the pods: a Service queues itself, a pod queues every Service of
 * its namespace whose selector selects it (before or after the change), and a periodic resync
 * repairs what a failed write left behind. Each also watches what it writes, as kube's do: a
 * deleted Endpoints is written again, a slice changed or deleted by someone else is set right. The Endpoints of a deleted Service are deleted
 * with it (and at the controller's start, Endpoints left without a Service, leader-election
 * locks aside); the slices carry the Service as their controlling owner, so the garbage
 * collector removes them.
 */
import { Inject, Injectable } from '@nestjs/common';
import type { KubeObject } from '@app/apimachinery';
import { collectionPrefix, KindRegistry, type KindDeclaration } from '@app/registry';
import type { Storage, StorageEvent } from '@app/storage';
import { asMap } from '../groups/core/core.helpers.js';
import { STORAGE, STORES, type StoreFactory } from '../tokens.js';
import { ManagedController } from './controller.runner.js';
import {
  desiredEndpoints,
  desiredServiceSlices,
  endpointsPodView,
  isServiceSlice,
  managesService,
  planServiceSlices,
  selects,
  TriggerTimeTracker,
  withTriggerTime,
} from './endpoints.logic.js';
import { LABEL_SERVICE_NAME, LEADER_ANNOTATION } from './endpointslicemirroring.logic.js';
import { EventRecorder } from './event.recorder.js';
import { KindController } from './kind.controller.js';

const codeOf = (e: unknown): number | undefined => (e as { code?: number }).code;
const messageOf = (e: unknown): string => (e as Error).message ?? String(e);
const keyOf = (o: KubeObject): string => `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;

/** What both controllers share: the Services with selectors per namespace, and pods queueing the Services that select them. */
abstract class ServicePodsController extends KindController {
  /** Services per namespace, by name, from the list and the watch. */
  private readonly services = new Map<string, Map<string, KubeObject>>();
  /** When the changes each Service's writes follow happened (the last-change-trigger-time annotation). */
  protected readonly triggerTimes = new TriggerTimeTracker();
  /** The pods (the fields the rules read), from a watch-fed copy while this node leads. */
  private readonly podReader = this.collection(() => this.podDecl(), `${this.user}: pods`, endpointsPodView);

  protected serviceDecl(): KindDeclaration | undefined {
    return this.decl('', 'services');
  }

  protected podDecl(): KindDeclaration | undefined {
    return this.decl('', 'pods');
  }

  /** The kind this controller writes. */
  protected abstract ownDecl(): KindDeclaration | undefined;
  /** Lists what this controller writes and queues the Services it concerns. */
  protected abstract relistOwn(): Promise<number>;
  /** Queues the Service an event of the written kind concerns. */
  protected abstract onOwnEvent(e: StorageEvent): void;

  protected kindsServed(): boolean {
    return !!this.serviceDecl() && !!this.podDecl() && !!this.ownDecl();
  }

  protected override reset(): void {
    this.services.clear();
    this.triggerTimes.clear();
  }

  protected watchPrefixes(): string[] {
    return [collectionPrefix(this.serviceDecl()!, ''), collectionPrefix(this.podDecl()!, ''), collectionPrefix(this.ownDecl()!, '')];
  }

  private remember(service: KubeObject): void {
    const ns = service.metadata.namespace ?? '';
    let byName = this.services.get(ns);
    if (!byName) this.services.set(ns, (byName = new Map()));
    byName.set(service.metadata.name ?? '', service);
  }

  protected async relist(): Promise<number> {
    const res = await this.storage.list(collectionPrefix(this.serviceDecl()!, ''), { consistency: { mode: 'MostRecent' } });
    this.services.clear();
    for (const s of res.items) {
      this.remember(s);
      this.queue.add(keyOf(s));
    }
    return Math.max(res.revision, await this.relistOwn());
  }

  protected onEvent(e: StorageEvent): void {
    if (e.key.startsWith(collectionPrefix(this.serviceDecl()!, ''))) {
      if (e.type === 'DELETED') this.services.get(e.object.metadata.namespace ?? '')?.delete(e.object.metadata.name ?? '');
      else this.remember(e.object);
      this.queue.add(keyOf(e.object));
    } else if (e.key.startsWith(collectionPrefix(this.podDecl()!, ''))) {
      const ns = e.object.metadata.namespace ?? '';
      for (const svc of this.services.get(ns)?.values() ?? []) {
        if (!managesService(svc)) continue;
        if (selects(svc, e.object) || (e.prevObject && selects(svc, e.prevObject))) this.queue.add(keyOf(svc));
      }
    } else {
      this.onOwnEvent(e);
    }
  }

  /** The Service, or undefined when it is gone. */
  protected async service(ns: string, name: string): Promise<KubeObject | undefined> {
    try {
      return await this.stores.storeFor(this.serviceDecl()!).get(ns, name);
    } catch (e) {
      if (codeOf(e) === 404) return undefined;
      throw e;
    }
  }

  /** The pods of a namespace as of now (the fields the rules read). */
  protected pods(ns: string): Promise<KubeObject[]> {
    return this.podReader.inNamespace(ns);
  }

  protected writeOptions() {
    return { ctx: this.ctx(), fieldValidation: 'Ignore' as const, fieldManager: this.user };
  }

  /**
   * What a failed write means: changed or gone meanwhile (look again), a namespace being deleted
   * (nothing to do), a refused object (an Event, retried at the next resync); anything else fails
   * the sync.
   */
  protected failed(key: string, subject: KubeObject, e: unknown, reason: string, message: string): void {
    const code = codeOf(e);
    if (code === 404 || code === 409) {
      this.retryLater(key);
      return;
    }
    if (code === 403) return;
    this.events.record(subject, 'Warning', reason, message, messageOf(e));
    if (code === 422) return;
    throw e;
  }
}

/** The endpoints controller: an Endpoints object per Service with a selector. */
@ManagedController({ name: 'endpoint' })
@Injectable()
export class EndpointsControllerRunner extends ServicePodsController {
  /** Whether the leftover Endpoints were looked at since the controller started (kube does it once). */
  private leftoversChecked = false;

  constructor(registry: KindRegistry, @Inject(STORAGE) storage: Storage, @Inject(STORES) stores: StoreFactory, recorder: EventRecorder) {
    super(registry, storage, stores, recorder, 'endpoint-controller');
  }

  protected ownDecl(): KindDeclaration | undefined {
    return this.decl('', 'endpoints');
  }

  protected override reset(): void {
    super.reset();
    this.leftoversChecked = false;
  }

  /** checkLeftoverEndpoints, at the first list: every Endpoints but leader-election locks is queued, so one without a Service goes. */
  protected async relistOwn(): Promise<number> {
    if (this.leftoversChecked) return 0;
    const res = await this.storage.list(collectionPrefix(this.ownDecl()!, ''), { consistency: { mode: 'MostRecent' } });
    for (const ep of res.items) if (!(LEADER_ANNOTATION in asMap(ep.metadata.annotations))) this.queue.add(keyOf(ep));
    this.leftoversChecked = true;
    return res.revision;
  }

  /** A deleted Endpoints: its Service looks again (kube's endpoints controller follows only deletions of what it writes). */
  protected onOwnEvent(e: StorageEvent): void {
    if (e.type === 'DELETED') this.queue.add(keyOf(e.object));
  }

  protected async process(key: string): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    const store = this.stores.storeFor(this.ownDecl()!);
    const service = await this.service(ns, name);
    if (!service) {
      // The Service is gone: so are its Endpoints.
      this.triggerTimes.forget(ns, name);
      await store.delete(ns, name, {}, this.ctx()).catch((e: unknown) => {
        if (codeOf(e) !== 404) throw e;
      });
      return;
    }
    if (!managesService(service)) return;
    let current: KubeObject | undefined;
    try {
      current = await store.get(ns, name);
    } catch (e) {
      if (codeOf(e) !== 404) throw e;
    }
    const pods = await this.pods(ns);
    // Computed at every sync, so that a sync that writes nothing still moves the times on.
    const trigger = this.triggerTimes.compute(
      service,
      pods.filter((p) => selects(service, p)),
    );
    const found = desiredEndpoints(service, pods, current);
    if (!found) return;
    const wanted = withTriggerTime(found, trigger);
    try {
      if (current) await store.update(ns, name, wanted, this.writeOptions());
      else await store.create(ns, wanted, this.writeOptions());
    } catch (e) {
      if (current) this.failed(key, wanted, e, 'FailedToUpdateEndpoint', `Failed to update endpoint ${ns}/${name}: %v`);
      else this.failed(key, wanted, e, 'FailedToCreateEndpoint', `Failed to create endpoint for service ${ns}/${name}: %v`);
    }
  }
}

/** The endpointslice controller: the EndpointSlices of every Service with a selector. */
@ManagedController({ name: 'endpointslice' })
@Injectable()
export class EndpointSliceControllerRunner extends ServicePodsController {
  /** The EndpointSlices, from a watch-fed copy while this node leads (shared with the mirroring controller's). */
  private readonly sliceReader = this.collection(() => this.ownDecl(), 'endpointslice-controller: endpointslices');
  constructor(registry: KindRegistry, @Inject(STORAGE) storage: Storage, @Inject(STORES) stores: StoreFactory, recorder: EventRecorder) {
    super(registry, storage, stores, recorder, 'endpointslice-controller', 'endpoint-slice-controller');
  }

  protected ownDecl(): KindDeclaration | undefined {
    return this.registry.lookup('discovery.k8s.io', 'v1', 'endpointslices') as KindDeclaration | undefined;
  }

  /** The Services of the slices this controller manages (one of a deleted Service has nothing to do: the collector removes it). */
  protected async relistOwn(): Promise<number> {
    const res = await this.storage.list(collectionPrefix(this.ownDecl()!, ''), { consistency: { mode: 'MostRecent' } });
    for (const s of res.items) this.onSlice(s);
    return res.revision;
  }

  private onSlice(s: KubeObject | undefined): void {
    const service = asMap(s?.metadata.labels)[LABEL_SERVICE_NAME];
    if (s && isServiceSlice(s) && typeof service === 'string') this.queue.add(`${s.metadata.namespace ?? ''}/${service}`);
  }

  protected onOwnEvent(e: StorageEvent): void {
    this.onSlice(e.object);
    this.onSlice(e.prevObject);
  }

  /** The zones of the nodes the pods run on (topology.kubernetes.io/zone). */
  private async zones(pods: KubeObject[]): Promise<Map<string, string>> {
    const zones = new Map<string, string>();
    const nodeDecl = this.decl('', 'nodes');
    if (!nodeDecl) return zones;
    const names = new Set(pods.map((p) => asMap(p.spec).nodeName).filter((n): n is string => typeof n === 'string' && n !== ''));
    for (const n of names) {
      try {
        const zone = asMap((await this.stores.storeFor(nodeDecl).get('', n)).metadata.labels)['topology.kubernetes.io/zone'];
        if (typeof zone === 'string' && zone !== '') zones.set(n, zone);
      } catch (e) {
        if (codeOf(e) !== 404) throw e;
      }
    }
    return zones;
  }

  protected async process(key: string): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    const service = await this.service(ns, name);
    if (!service) {
      this.triggerTimes.forget(ns, name);
      return;
    }
    const mine = (await this.sliceReader.inNamespace(ns)).filter((s) => isServiceSlice(s, name));
    let plan: { create: KubeObject[]; update: KubeObject[]; delete: string[] };
    if (managesService(service)) {
      const pods = await this.pods(ns);
      const trigger = this.triggerTimes.compute(
        service,
        pods.filter((p) => selects(service, p)),
      );
      const planned = planServiceSlices(service, desiredServiceSlices(service, pods, await this.zones(pods)), mine);
      plan = { ...planned, create: planned.create.map((s) => withTriggerTime(s, trigger)), update: planned.update.map((s) => withTriggerTime(s, trigger)) };
    } else {
      // The selector went away (or the type became ExternalName): the slices this controller
      // wrote would go on listing the old pods beside what the Service's Endpoints now say.
      plan = { create: [], update: [], delete: mine.map((s) => s.metadata.name ?? '') };
    }
    const store = this.stores.storeFor(this.ownDecl()!);
    try {
      for (const s of plan.create) await store.create(ns, s, this.writeOptions());
      for (const s of plan.update) await store.update(ns, s.metadata.name ?? '', s, this.writeOptions());
      for (const n of plan.delete) {
        await store.delete(ns, n, {}, this.ctx()).catch((e: unknown) => {
          if (codeOf(e) !== 404) throw e;
        });
      }
    } catch (e) {
      this.failed(key, service, e, 'FailedToUpdateEndpointSlices', `Error updating Endpoint Slices for Service ${ns}/${name}: %v`);
    }
  }
}
