/**
 * The endpointslicemirroring controller (kube-controller-manager's): keeps the EndpointSlices
 * of every Service without a selector in step with the Service's Endpoints, which is what
 * kubectl 1.2x+ and other consumers of discovery.k8s.io read (`describe service`, `describe
 * ingress`). The rules are in endpointslicemirroring.logic.ts. Watches of the core group
 * (Endpoints and Services) and of the EndpointSlices queue `<namespace>/<name>` keys; a slice
 * this controller manages that someone else changes or deletes queues its Service again; a
 * periodic resync repairs what a failed write left behind. Slices of Services with a selector
 * are nobody's here (no endpointslice controller: pods never become ready endpoints).
 */
import { Inject, Injectable } from '@nestjs/common';
import type { KubeObject } from '@app/apimachinery';
import { collectionPrefix, KindRegistry, type KindDeclaration, type RequestContext } from '@app/registry';
import type { Storage, StorageEvent } from '@app/storage';
import { STORAGE, STORES, type StoreFactory } from '../tokens.js';
import { ManagedController } from './controller.runner.js';
import { EventRecorder, type ComponentRecorder } from './event.recorder.js';
import { WatchQueueController } from './watch-queue.controller.js';
import {
  desiredSlices,
  hasSelector,
  isMirrored,
  LABEL_SERVICE_NAME,
  MAX_ENDPOINTS_PER_SUBSET,
  planMirror,
  shouldMirror,
} from './endpointslicemirroring.logic.js';

const CONTROLLER_CTX = (): RequestContext => ({
  user: {
    username: 'system:serviceaccount:kube-system:endpointslicemirroring-controller',
    groups: ['system:masters', 'system:serviceaccounts', 'system:serviceaccounts:kube-system', 'system:authenticated'],
  },
  dryRun: false,
  warnings: [],
  now: () => new Date(),
});
const FIELD_MANAGER = 'endpointslicemirroring-controller';
/** Resync period: a missed event costs at most this long. */
const RESYNC_MS = 30_000;

/** Runs the endpointslicemirroring controller while this node holds the controller Lease. */
@ManagedController({ name: 'endpointslicemirroring' })
@Injectable()
export class EndpointSliceMirroringRunner extends WatchQueueController {
  /** Events, as kube-controller-manager's endpointslicemirroring controller records them. */
  private readonly events: ComponentRecorder;
  /** The EndpointSlices, from a watch-fed copy while this node leads (shared with the EndpointSlice controller's). */
  private readonly sliceReader = this.collection(() => this.slices(), 'endpointslicemirroring: endpointslices');

  constructor(
    private readonly registry: KindRegistry,
    @Inject(STORAGE) storage: Storage,
    @Inject(STORES) private readonly stores: StoreFactory,
    recorder: EventRecorder,
  ) {
    super(storage, 'endpointslicemirroring', RESYNC_MS);
    this.events = recorder.for('endpoint-slice-mirroring-controller');
  }

  private decl(group: string, plural: string): KindDeclaration | undefined {
    return this.registry.lookup(group, 'v1', plural) as KindDeclaration | undefined;
  }

  private slices(): KindDeclaration | undefined {
    return this.decl('discovery.k8s.io', 'endpointslices');
  }

  protected kindsServed(): boolean {
    return !!this.slices() && !!this.decl('', 'endpoints') && !!this.decl('', 'services');
  }

  protected watchPrefixes(): string[] {
    return [collectionPrefix(this.decl('', 'endpoints')!, ''), collectionPrefix(this.decl('', 'services')!, ''), collectionPrefix(this.slices()!, '')];
  }

  /** Lists and queues every Endpoints and mirrored slice. */
  protected async relist(): Promise<number> {
    const endpoints = await this.storage.list(collectionPrefix(this.decl('', 'endpoints')!, ''), { consistency: { mode: 'MostRecent' } });
    const slices = await this.storage.list(collectionPrefix(this.slices()!, ''), { consistency: { mode: 'MostRecent' } });
    for (const o of endpoints.items) this.queue.add(`${o.metadata.namespace ?? ''}/${o.metadata.name}`);
    for (const s of slices.items) this.enqueueSlice(s);
    return Math.max(endpoints.revision, slices.revision);
  }

  private enqueueSlice(s: KubeObject): void {
    const service = (s.metadata.labels as Record<string, string> | undefined)?.[LABEL_SERVICE_NAME];
    if (isMirrored(s) && service) this.queue.add(`${s.metadata.namespace ?? ''}/${service}`);
  }

  protected onEvent(e: StorageEvent): void {
    if (e.key.startsWith(collectionPrefix(this.slices()!, ''))) {
      this.enqueueSlice(e.object);
      if (e.prevObject) this.enqueueSlice(e.prevObject);
    } else {
      this.queue.add(`${e.object.metadata.namespace ?? ''}/${e.object.metadata.name}`);
    }
  }

  private async getOrUndefined(decl: KindDeclaration, ns: string, name: string): Promise<KubeObject | undefined> {
    try {
      return await this.stores.storeFor(decl).get(ns, name);
    } catch (e) {
      if ((e as { code?: number }).code === 404) return undefined;
      throw e;
    }
  }

  /** syncEndpoints: mirrors one Endpoints, or deletes its mirrored slices when it should not be mirrored. */
  protected async process(key: string): Promise<void> {
    const [ns, name] = key.split('/') as [string, string];
    const sliceDecl = this.slices();
    const epDecl = this.decl('', 'endpoints');
    const svcDecl = this.decl('', 'services');
    if (!sliceDecl || !epDecl || !svcDecl) return;
    const endpoints = await this.getOrUndefined(epDecl, ns, name);
    const service = endpoints && shouldMirror(endpoints) ? await this.getOrUndefined(svcDecl, ns, name) : undefined;
    const mine = (await this.sliceReader.inNamespace(ns)).filter(
      (s) => isMirrored(s) && (s.metadata.labels as Record<string, string> | undefined)?.[LABEL_SERVICE_NAME] === name,
    );
    const store = this.stores.storeFor(sliceDecl);
    const wopts = { ctx: CONTROLLER_CTX(), fieldValidation: 'Ignore' as const, fieldManager: FIELD_MANAGER };
    const mirror = endpoints && service && !hasSelector(service);
    if (mirror) {
      // reconcile: addresses that are no IP, or beyond the limit of a subset, are not mirrored.
      const { invalidAddresses, skippedAddresses } = desiredSlices(endpoints);
      if (invalidAddresses > 0) {
        this.events.record(endpoints, 'Warning', 'InvalidIPAddress', 'Skipped %d invalid IP addresses when mirroring to EndpointSlices', invalidAddresses);
      }
      if (skippedAddresses > invalidAddresses) {
        this.events.record(
          endpoints,
          'Warning',
          'TooManyAddressesToMirror',
          'A max of %d addresses can be mirrored to EndpointSlices per Endpoints subset. %d addresses were skipped',
          MAX_ENDPOINTS_PER_SUBSET,
          skippedAddresses,
        );
      }
    }
    const plan = mirror ? planMirror(endpoints, mine) : { create: [], update: [], delete: mine.map((s) => s.metadata.name ?? '') };
    try {
      for (const s of plan.create) await store.create(ns, s, wopts);
      for (const s of plan.update) await store.update(ns, s.metadata.name ?? '', s, wopts);
      for (const n of plan.delete) {
        await store.delete(ns, n, {}, CONTROLLER_CTX()).catch((e: { code?: number }) => {
          if (e.code !== 404) throw e;
        });
      }
    } catch (e) {
      const code = (e as { code?: number }).code;
      // A slice changed or went away meanwhile: compute again from what is stored now.
      if (code === 404 || code === 409) {
        this.retryLater(key);
        return;
      }
      // A namespace being deleted refuses new slices; its Endpoints go away with it.
      if (code === 403) return;
      // A slice the server refuses (an Endpoints field a slice cannot hold): retried at the next resync.
      if (code === 422) {
        process.stderr.write(`endpointslicemirroring: ${key}: ${(e as Error).message}\n`);
        return;
      }
      throw e;
    }
  }
}
