/**
 * kube-aggregator's AvailableConditionController: keeps the `Available` condition of every
 * remote APIService (one with a service whose group-version is not served here) true to what a
 * probe finds (RemoteApis.probe: the service, its port and endpoints, then a GET of the
 * group-version's discovery). It runs on the node that holds the controller Lease; APIService,
 * Service and Endpoints changes queue the APIServices they concern, and a relist every 30 s
 * checks them all again. The status is written only when the condition changed, through
 * /status, as `system:kube-aggregator`.
 */
import { Inject, Injectable } from '@nestjs/common';
import { formatMetaTime, StatusError, type KubeObject } from '@app/apimachinery';
import { collectionPrefix, KindRegistry, type KindDeclaration, type RequestContext } from '@app/registry';
import type { Storage, StorageEvent } from '@app/storage';
import { ManagedController } from '../../../controllers/controller.runner.js';
import { WatchQueueController } from '../../../controllers/watch-queue.controller.js';
import { STORAGE, STORES, type StoreFactory } from '../../../tokens.js';
import { apiServiceView, type Availability } from './aggregation.logic.js';
import { RemoteApis } from './remote-apis.js';

const RESYNC_MS = 30_000;
const CTX = (): RequestContext => ({
  user: { username: 'system:kube-aggregator', groups: ['system:masters', 'system:authenticated'] },
  dryRun: false,
  warnings: [],
  now: () => new Date(),
});

type Obj = Record<string, unknown>;

/** The APIService with its `Available` condition set to `a` (the transition time kept when the status did not change). */
export function withAvailability(obj: KubeObject, a: Availability, now: Date): KubeObject | undefined {
  const status = (obj.status ?? {}) as Obj;
  const conds = (Array.isArray(status.conditions) ? status.conditions : []) as Obj[];
  const old = conds.find((c) => c.type === 'Available');
  if (old && old.status === a.status && old.reason === a.reason && old.message === a.message) return undefined;
  const cond = {
    type: 'Available',
    status: a.status,
    lastTransitionTime: old && old.status === a.status && typeof old.lastTransitionTime === 'string' ? old.lastTransitionTime : formatMetaTime(now),
    reason: a.reason,
    message: a.message,
  };
  return { ...obj, status: { ...status, conditions: [...conds.filter((c) => c.type !== 'Available'), cond] } };
}

@ManagedController({ name: 'apiservice-availability' })
@Injectable()
export class ApiServiceAvailabilityRunner extends WatchQueueController {
  constructor(
    private readonly registry: KindRegistry,
    @Inject(STORAGE) storage: Storage,
    @Inject(STORES) private readonly stores: StoreFactory,
    private readonly remote: RemoteApis,
  ) {
    super(storage, 'apiservice-availability', RESYNC_MS);
  }

  private decl(group: string, plural: string): KindDeclaration | undefined {
    return this.registry.lookup(group, 'v1', plural) as KindDeclaration | undefined;
  }

  protected kindsServed(): boolean {
    return !!this.decl('apiregistration.k8s.io', 'apiservices') && !!this.decl('', 'services') && !!this.decl('', 'endpoints');
  }

  protected watchPrefixes(): string[] {
    return [
      collectionPrefix(this.decl('apiregistration.k8s.io', 'apiservices')!, ''),
      collectionPrefix(this.decl('', 'services')!, ''),
      collectionPrefix(this.decl('', 'endpoints')!, ''),
    ];
  }

  protected async relist(): Promise<number> {
    const list = await this.storage.list(collectionPrefix(this.decl('apiregistration.k8s.io', 'apiservices')!, ''), { consistency: { mode: 'MostRecent' } });
    for (const o of list.items) if (apiServiceView(o).service) this.queue.add(o.metadata.name ?? '');
    return list.revision;
  }

  protected onEvent(e: StorageEvent): void {
    if (e.key.startsWith(collectionPrefix(this.decl('apiregistration.k8s.io', 'apiservices')!, ''))) {
      if (apiServiceView(e.object).service) this.queue.add(e.object.metadata.name ?? '');
      return;
    }
    for (const name of this.remote.apiServicesOf(e.object.metadata.namespace ?? '', e.object.metadata.name ?? '')) this.queue.add(name);
  }

  protected async process(name: string): Promise<void> {
    const decl = this.decl('apiregistration.k8s.io', 'apiservices');
    if (!decl) return;
    const store = this.stores.storeFor(decl);
    let obj: KubeObject;
    try {
      obj = await store.get('', name, {});
    } catch (e) {
      if (e instanceof StatusError && e.code === 404) return;
      throw e;
    }
    const view = apiServiceView(obj);
    // Local APIServices are the registration hook's; a group-version served here is local whatever it names.
    if (!view.service || this.registry.hasGroupVersion(view.group, view.version)) return;
    const { availability } = await this.remote.refresh(view);
    const next = withAvailability(obj, availability, new Date());
    if (!next) return;
    try {
      await store.update('', name, next, { ctx: CTX(), fieldValidation: 'Ignore', subresource: 'status', fieldManager: 'kube-aggregator' });
    } catch (e) {
      // Changed meanwhile: its event queues it again. Gone: nothing to do.
      if (e instanceof StatusError && (e.code === 409 || e.code === 404)) return;
      throw e;
    }
  }
}
