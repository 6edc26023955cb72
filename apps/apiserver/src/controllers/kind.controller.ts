/**
 * What the workload controllers share on top of WatchQueueController: the kinds they keep,
 * looked up in the registry; writes through the stores as their kube-system service account;
 * Events from their component (the service account's name, as kube-controller-manager's).
 */
import type { KubeObject } from '@app/apimachinery';
import { collectionPrefix, type KindDeclaration, type KindRegistry, type RequestContext } from '@app/registry';
import type { Storage } from '@app/storage';
import type { StoreFactory } from '../tokens.js';
import { controllerContext } from './controller.runner.js';
import type { ComponentRecorder, EventRecorder } from './event.recorder.js';
import { type NamesByNamespace, WatchQueueController } from './watch-queue.controller.js';

/** Resync period of the workload controllers: a missed event costs at most this long. */
export const WORKLOAD_RESYNC_MS = 30_000;

export abstract class KindController extends WatchQueueController {
  protected readonly events: ComponentRecorder;

  protected constructor(
    protected readonly registry: KindRegistry,
    storage: Storage,
    protected readonly stores: StoreFactory,
    recorder: EventRecorder,
    /** The service account (and, unless `component` is given, Event component) the controller acts as. */
    protected readonly user: string,
    component: string = user,
  ) {
    super(storage, user, WORKLOAD_RESYNC_MS);
    this.events = recorder.for(component);
  }

  /** The context of the controller's own writes. */
  protected ctx(): RequestContext {
    return controllerContext(this.user);
  }

  /** A served kind of the core (`''`) or a named group, version v1. */
  protected decl(group: string, plural: string): KindDeclaration | undefined {
    return this.registry.lookup(group, 'v1', plural) as KindDeclaration | undefined;
  }

  /** Lists a kind in every namespace and queues each object's key (remembering its name when given an index); returns the list's revision. */
  protected async listAndQueue(decl: KindDeclaration, names?: NamesByNamespace): Promise<number> {
    const res = await this.storage.list(collectionPrefix(decl, ''), { consistency: { mode: 'MostRecent' } });
    names?.clear();
    for (const o of res.items as KubeObject[]) {
      names?.add(o);
      this.queue.add(`${o.metadata.namespace ?? ''}/${o.metadata.name}`);
    }
    return res.revision;
  }
}
