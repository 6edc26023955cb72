/**
 * The PersistentVolume controller (kube-controller-manager's persistentvolume-binder): binds
 * claims to volumes, keeps the phases of both (Available, Bound, Released, Failed; Pending, Bound,
 * Lost), marks the claims an external provisioner is to serve, and applies a volume's reclaim
 * policy when its claim goes away. The rules are in persistentvolume.logic.ts.
 *
 * Watches of the volumes and the claims queue `v/<name>` and `c/<namespace>/<name>` keys (a
 * volume's event also queues its claim, a claim's its volume); each key is synced on its own, as
 * kube's two queues are, and a periodic resync retries what is still waiting (a claim without a
 * volume is looked at again every resync, as kube's is). Every write is conditional on the
 * version read, so a sync that raced another writer reads again.
 */
import { Inject, Injectable } from '@nestjs/common';
import type { KubeObject } from '@app/apimachinery';
import { collectionPrefix, KindRegistry, type KindDeclaration } from '@app/registry';
import type { Storage, StorageEvent } from '@app/storage';
import { asMap } from '../groups/core/core.helpers.js';
import { claimClass, claimHasClass, defaultStorageClass, isDefaultClass } from '../groups/storage/storageclass/storageclass.kind.js';
import { STORAGE, STORES, type StoreFactory } from '../tokens.js';
import { ManagedController } from './controller.runner.js';
import { EventRecorder } from './event.recorder.js';
import { KindController } from './kind.controller.js';
import {
  ANN_BETA_STORAGE_PROVISIONER,
  ANN_BIND_COMPLETED,
  ANN_BOUND_BY_CONTROLLER,
  ANN_PROVISIONED_BY,
  ANN_SELECTED_NODE,
  ANN_STORAGE_PROVISIONER,
  claimBoundTo,
  claimRefOf,
  claimWithPhase,
  findBestMatch,
  isDelayBinding,
  isVolumeBoundToClaim,
  reclaimAction,
  volumeBoundTo,
  volumeMismatch,
  volumeWithPhase,
} from './persistentvolume.logic.js';

const codeOf = (e: unknown): number | undefined => (e as { code?: number }).code;

/** Runs the PersistentVolume controller while this node holds the controller Lease. */
@ManagedController({ name: 'persistentvolume-binder' })
@Injectable()
export class PersistentVolumeControllerRunner extends KindController {
  constructor(registry: KindRegistry, @Inject(STORAGE) storage: Storage, @Inject(STORES) stores: StoreFactory, recorder: EventRecorder) {
    super(registry, storage, stores, recorder, 'persistent-volume-binder', 'persistentvolume-controller');
  }

  /** The volumes and the classes (read only while StorageClasses are served), from watch-fed copies while this node leads. */
  private readonly readers = {
    volumes: this.collection(() => this.pvDecl(), 'persistentvolume-binder: volumes'),
    classes: this.collection(() => this.scDecl(), 'persistentvolume-binder: classes'),
  };

  private pvDecl(): KindDeclaration | undefined {
    return this.decl('', 'persistentvolumes');
  }

  private pvcDecl(): KindDeclaration | undefined {
    return this.decl('', 'persistentvolumeclaims');
  }

  protected kindsServed(): boolean {
    return !!this.pvDecl() && !!this.pvcDecl();
  }

  private scDecl(): KindDeclaration | undefined {
    return this.registry.lookup('storage.k8s.io', 'v1', 'storageclasses') as KindDeclaration | undefined;
  }

  protected watchPrefixes(): string[] {
    const sc = this.scDecl();
    return [collectionPrefix(this.pvDecl()!, ''), collectionPrefix(this.pvcDecl()!, ''), ...(sc ? [collectionPrefix(sc, '')] : [])];
  }

  protected async relist(): Promise<number> {
    const volumes = await this.storage.list(collectionPrefix(this.pvDecl()!, ''), { consistency: { mode: 'MostRecent' } });
    const claims = await this.storage.list(collectionPrefix(this.pvcDecl()!, ''), { consistency: { mode: 'MostRecent' } });
    for (const pv of volumes.items) this.queue.add(`v/${pv.metadata.name ?? ''}`);
    for (const c of claims.items) this.queue.add(`c/${c.metadata.namespace ?? ''}/${c.metadata.name ?? ''}`);
    return Math.max(volumes.revision, claims.revision);
  }

  protected onEvent(e: StorageEvent): void {
    const o = e.object;
    const sc = this.scDecl();
    if (sc && e.key.startsWith(collectionPrefix(sc, ''))) {
      // A class that is now the default: the claims waiting for one need not wait for the resync.
      if (e.type !== 'DELETED' && isDefaultClass(o)) void this.queueClaimsWithoutClass();
      return;
    }
    if (e.key.startsWith(collectionPrefix(this.pvDecl()!, ''))) {
      this.queue.add(`v/${o.metadata.name ?? ''}`);
      const ref = claimRefOf(o);
      if (ref?.name) this.queue.add(`c/${String(ref.namespace ?? '')}/${String(ref.name)}`);
    } else {
      this.queue.add(`c/${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`);
      const volume = asMap(o.spec).volumeName;
      if (typeof volume === 'string' && volume !== '') this.queue.add(`v/${volume}`);
    }
  }

  private async queueClaimsWithoutClass(): Promise<void> {
    try {
      const claims = await this.storage.list(collectionPrefix(this.pvcDecl()!, ''), { consistency: { mode: 'MostRecent' } });
      for (const c of claims.items) {
        if (claimHasClass(c) || asMap(c.spec).volumeName) continue;
        this.queue.add(`c/${c.metadata.namespace ?? ''}/${c.metadata.name ?? ''}`);
      }
      // Queued after the event's own drain: process them now.
      this.drain();
    } catch (e) {
      process.stderr.write(`persistentvolume-binder: listing claims: ${(e as Error).message}\n`);
    }
  }

  private async getOrUndefined(decl: KindDeclaration, ns: string, name: string): Promise<KubeObject | undefined> {
    try {
      return await this.stores.storeFor(decl).get(ns, name);
    } catch (e) {
      if (codeOf(e) === 404) return undefined;
      throw e;
    }
  }

  protected async process(key: string): Promise<void> {
    try {
      if (key.startsWith('v/')) {
        const pv = await this.getOrUndefined(this.pvDecl()!, '', key.slice(2));
        if (pv) await this.syncVolume(pv);
      } else {
        const [ns, name] = key.slice(2).split('/') as [string, string];
        const claim = await this.getOrUndefined(this.pvcDecl()!, ns, name);
        if (claim) await this.syncClaim(claim);
      }
    } catch (e) {
      const code = codeOf(e);
      // Changed or gone meanwhile: read again.
      if (code === 404 || code === 409) {
        this.retryLater(key);
        return;
      }
      // Refused (a namespace going away, an admission plugin): tried again at the next resync.
      if (code === 403 || code === 422) {
        process.stderr.write(`persistentvolume-binder: ${key}: ${(e as Error).message}\n`);
        return;
      }
      throw e;
    }
  }

  // --- writes -------------------------------------------------------------------------------

  private opts(subresource?: 'status') {
    return { ctx: this.ctx(), fieldValidation: 'Ignore' as const, fieldManager: this.user, ...(subresource ? { subresource } : {}) };
  }

  private async writeVolume(pv: KubeObject, subresource?: 'status'): Promise<KubeObject> {
    return (await this.stores.storeFor(this.pvDecl()!).update('', pv.metadata.name ?? '', pv, this.opts(subresource))).object;
  }

  private async writeClaim(claim: KubeObject, subresource?: 'status'): Promise<KubeObject> {
    return (await this.stores.storeFor(this.pvcDecl()!).update(claim.metadata.namespace ?? '', claim.metadata.name ?? '', claim, this.opts(subresource)))
      .object;
  }

  private async volumePhase(pv: KubeObject, phase: string, message = ''): Promise<KubeObject> {
    const next = volumeWithPhase(pv, phase, message);
    return next ? this.writeVolume(next, 'status') : pv;
  }

  private async claimPhase(claim: KubeObject, phase: string, pv: KubeObject | undefined): Promise<KubeObject> {
    const next = claimWithPhase(claim, phase, pv);
    return next ? this.writeClaim(next, 'status') : claim;
  }

  /** updateClaimStatusWithEvent: the phase and, only when it changes, the Event. */
  private async claimPhaseWithEvent(claim: KubeObject, phase: string, reason: string, message: string): Promise<void> {
    if (asMap(claim.status).phase === phase) return;
    const written = await this.claimPhase(claim, phase, undefined);
    this.events.record(written, 'Warning', reason, message);
  }

  /** bind: the volume's claimRef, its phase, the claim's volumeName, its phase, in that order. */
  private async bind(pv: KubeObject, claim: KubeObject): Promise<void> {
    const bound = volumeBoundTo(pv, claim);
    let volume = bound ? await this.writeVolume(bound) : pv;
    volume = await this.volumePhase(volume, 'Bound');
    const claimed = claimBoundTo(claim, volume);
    const written = claimed ? await this.writeClaim(claimed) : claim;
    await this.claimPhase(written, 'Bound', volume);
  }

  // --- claims --------------------------------------------------------------------------------

  private async defaultClass(): Promise<KubeObject | undefined> {
    const decl = this.scDecl();
    if (!decl) return undefined;
    return defaultStorageClass(await this.readers.classes.all());
  }

  private async storageClass(name: string): Promise<KubeObject | undefined> {
    const decl = this.registry.lookup('storage.k8s.io', 'v1', 'storageclasses') as KindDeclaration | undefined;
    return name && decl ? this.getOrUndefined(decl, '', name) : undefined;
  }

  private async syncClaim(claim: KubeObject): Promise<void> {
    const anns = asMap(claim.metadata.annotations);
    if (anns[ANN_BIND_COMPLETED] === undefined) await this.syncUnboundClaim(claim);
    else await this.syncBoundClaim(claim);
  }

  private async syncUnboundClaim(claim: KubeObject): Promise<void> {
    const volumeName = asMap(claim.spec).volumeName;
    if (typeof volumeName !== 'string' || volumeName === '') {
      const className = claimClass(claim);
      const sc = await this.storageClass(className);
      const delay = isDelayBinding(sc) && asMap(claim.metadata.annotations)[ANN_SELECTED_NODE] === undefined;
      const volumes = await this.readers.volumes.all();
      const pv = findBestMatch(claim, volumes, delay);
      if (pv) {
        await this.bind(pv, claim);
        return;
      }
      // No volume for it: a claim that chose no class gets the default class, if there is one
      // now (kube's retroactive default StorageClass); the update queues it again, to be bound
      // or provisioned by that class.
      if (!claimHasClass(claim)) {
        const def = await this.defaultClass();
        if (def) {
          await this.writeClaim({ ...claim, spec: { ...asMap(claim.spec), storageClassName: def.metadata.name } });
          return;
        }
      }
      let current = claim;
      if (delay) {
        this.events.record(claim, 'Normal', 'WaitForFirstConsumer', 'waiting for first consumer to be created before binding');
      } else if (className !== '') {
        current = await this.provisionClaim(claim, className, sc);
      } else {
        this.events.record(claim, 'Normal', 'FailedBinding', 'no persistent volumes available for this claim and no storage class is set');
      }
      await this.claimPhase(current, 'Pending', undefined);
      return;
    }
    // The user asked for a volume by name.
    const pv = await this.getOrUndefined(this.pvDecl()!, '', volumeName);
    if (!pv) {
      await this.claimPhase(claim, 'Pending', undefined);
      return;
    }
    if (!claimRefOf(pv)) {
      const mismatch = volumeMismatch(pv, claim);
      if (mismatch) {
        this.events.record(claim, 'Warning', 'VolumeMismatch', `Cannot bind to requested volume "${volumeName}": ${mismatch}`);
        await this.claimPhase(claim, 'Pending', undefined);
        return;
      }
      await this.bind(pv, claim);
    } else if (isVolumeBoundToClaim(pv, claim)) {
      await this.bind(pv, claim);
    } else if (asMap(claim.metadata.annotations)[ANN_BOUND_BY_CONTROLLER] === undefined) {
      this.events.record(claim, 'Warning', 'FailedBinding', `volume "${volumeName}" already bound to a different claim.`);
      await this.claimPhase(claim, 'Pending', undefined);
    }
    // (Bound by the controller to a volume another claim holds cannot happen without someone
    // removing bind-completed; the claim is left as it is, as kube reports and leaves it.)
  }

  /**
   * provisionClaim for an external provisioner (every provisioner is external here): the claim
   * names it in its storage-provisioner annotations, and an Event says what it waits for.
   */
  private async provisionClaim(claim: KubeObject, className: string, sc: KubeObject | undefined): Promise<KubeObject> {
    if (!sc) {
      this.events.record(claim, 'Warning', 'ProvisioningFailed', `storageclass.storage.k8s.io "${className}" not found`);
      return claim;
    }
    const provisioner = String(sc.provisioner ?? '');
    let current = claim;
    const anns = asMap(claim.metadata.annotations) as Record<string, string>;
    if (anns[ANN_STORAGE_PROVISIONER] !== provisioner || anns[ANN_BETA_STORAGE_PROVISIONER] !== provisioner) {
      const next = structuredClone(claim);
      next.metadata.annotations = { ...anns, [ANN_STORAGE_PROVISIONER]: provisioner, [ANN_BETA_STORAGE_PROVISIONER]: provisioner };
      current = await this.writeClaim(next);
    }
    this.events.record(
      current,
      'Normal',
      'ExternalProvisioning',
      `Waiting for a volume to be created either by the external provisioner '${provisioner}' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.`,
    );
    return current;
  }

  private async syncBoundClaim(claim: KubeObject): Promise<void> {
    const volumeName = asMap(claim.spec).volumeName;
    if (typeof volumeName !== 'string' || volumeName === '') {
      await this.claimPhaseWithEvent(claim, 'Lost', 'ClaimLost', 'Bound claim has lost reference to PersistentVolume. Data on the volume is lost!');
      return;
    }
    const pv = await this.getOrUndefined(this.pvDecl()!, '', volumeName);
    if (!pv) {
      await this.claimPhaseWithEvent(claim, 'Lost', 'ClaimLost', 'Bound claim has lost its PersistentVolume. Data on the volume is lost!');
      return;
    }
    const ref = claimRefOf(pv);
    if (!ref || ref.uid === claim.metadata.uid) await this.bind(pv, claim);
    else await this.claimPhaseWithEvent(claim, 'Lost', 'ClaimMisbound', 'Two claims are bound to the same volume, this one is bound incorrectly');
  }

  // --- volumes -------------------------------------------------------------------------------

  private async syncVolume(pv: KubeObject): Promise<void> {
    const ref = claimRefOf(pv);
    if (!ref || !ref.uid) {
      // Unused, or reserved for a claim by name that the claim's sync will bind.
      await this.volumePhase(pv, 'Available');
      return;
    }
    let claim = await this.getOrUndefined(this.pvcDecl()!, String(ref.namespace ?? ''), String(ref.name ?? ''));
    // A claim of the same name but another uid: the one the volume was bound to was deleted.
    if (claim && claim.metadata.uid !== ref.uid) claim = undefined;
    if (!claim) {
      await this.release(pv);
      return;
    }
    const claimVolume = asMap(claim.spec).volumeName;
    if (typeof claimVolume !== 'string' || claimVolume === '') {
      // The binding is not complete: the claim's sync finishes it.
      this.queue.add(`c/${claim.metadata.namespace ?? ''}/${claim.metadata.name ?? ''}`);
      return;
    }
    if (claimVolume === pv.metadata.name) {
      await this.volumePhase(pv, 'Bound');
      return;
    }
    // The claim is bound to another volume.
    const anns = asMap(pv.metadata.annotations);
    if (anns[ANN_PROVISIONED_BY] !== undefined && asMap(pv.spec).persistentVolumeReclaimPolicy === 'Delete') {
      await this.release(pv);
      return;
    }
    await this.unbind(pv);
  }

  /** The claim is gone: Released (a Failed volume stays Failed), then the reclaim policy. */
  private async release(pv: KubeObject): Promise<void> {
    const phase = asMap(pv.status).phase;
    let volume = pv;
    if (phase !== 'Released' && phase !== 'Failed') volume = await this.volumePhase(pv, 'Released');
    const action = reclaimAction(volume);
    if (action.action === 'fail' && asMap(volume.status).phase !== 'Failed') {
      const failed = await this.volumePhase(volume, 'Failed', action.message);
      this.events.record(failed, 'Warning', action.reason, action.message);
    }
  }

  /** unbindVolume: a volume the controller bound loses its claimRef; one the user pre-bound keeps the claim's name. */
  private async unbind(pv: KubeObject): Promise<void> {
    const next = structuredClone(pv);
    const spec = asMap(next.spec);
    const anns = { ...(asMap(next.metadata.annotations) as Record<string, string>) };
    if (anns[ANN_BOUND_BY_CONTROLLER] !== undefined) {
      delete spec.claimRef;
      delete anns[ANN_BOUND_BY_CONTROLLER];
      if (Object.keys(anns).length) next.metadata.annotations = anns;
      else delete next.metadata.annotations;
    } else {
      const ref = { ...asMap(spec.claimRef) };
      delete ref.uid;
      delete ref.resourceVersion;
      spec.claimRef = ref;
    }
    next.spec = spec;
    const written = await this.writeVolume(next);
    await this.volumePhase(written, 'Available');
  }
}
