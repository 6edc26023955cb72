/**
 * Two default admission plugins of kube-apiserver's about a claim's StorageClass:
 *
 * - DefaultStorageClass (plugin/pkg/admission/storage/storageclass/setdefault): a new
 *   PersistentVolumeClaim that names no class (no `spec.storageClassName`, no
 *   `volume.beta.kubernetes.io/storage-class` annotation; an empty name is a choice) gets the
 *   default class: the one annotated `storageclass.kubernetes.io/is-default-class: "true"` (or the
 *   beta key), the newest when several are, then the first by name.
 * - PersistentVolumeClaimResize (plugin/pkg/admission/storage/persistentvolume/resize): a claim's
 *   storage request may grow only when the claim is Bound and its class, unchanged, has
 *   `allowVolumeExpansion: true`.
 */
import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { Errors, parseQuantity, type KubeObject } from '@app/apimachinery';
import type { Admission, AdmissionAttributes } from '@app/registry';
import type { Storage } from '@app/storage';
import { asMap } from '../groups/core/core.helpers.js';
import { claimClass, claimHasClass, defaultStorageClass, storageClassKind } from '../groups/storage/storageclass/storageclass.kind.js';
import { STORAGE } from '../tokens.js';
import { AdmissionLister } from './admission.lister.js';
import { AdmissionPlugin } from './admission.plugin.js';

type Obj = Record<string, unknown>;

const isClaim = (attrs: AdmissionAttributes): boolean =>
  attrs.subresource === '' && attrs.decl.group === '' && attrs.decl.kind === 'PersistentVolumeClaim' && attrs.object !== undefined;

const storageRequest = (pvc: KubeObject | undefined) => {
  const raw = asMap(asMap(asMap(pvc?.spec).resources).requests).storage;
  try {
    return parseQuantity(raw === undefined ? '0' : String(raw));
  } catch {
    return parseQuantity('0');
  }
};

/**
 * Why growing `pvc` from `old` is refused, given its class (undefined: not found), or undefined
 * when it is not growing or may grow.
 */
export function resizeRefusal(pvc: KubeObject, old: KubeObject, cls: KubeObject | undefined): string | undefined {
  if (storageRequest(pvc).cmp(storageRequest(old)) <= 0) return undefined;
  if (asMap(old.status).phase !== 'Bound') return 'Only bound persistent volume claims can be expanded';
  const name = claimClass(pvc);
  const allowed = name !== '' && name === claimClass(old) && cls?.allowVolumeExpansion === true;
  return allowed ? undefined : 'only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize';
}

/** DefaultStorageClass (mutating, on claim creation). */
@AdmissionPlugin({ name: 'DefaultStorageClass', order: 800 })
@Injectable()
export class DefaultStorageClassPlugin implements Admission, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly classes: AdmissionLister;

  constructor(@Inject(STORAGE) storage: Storage) {
    this.classes = new AdmissionLister(storage, storageClassKind, 'storageclasses for DefaultStorageClass');
  }

  onApplicationBootstrap(): void {
    this.classes.start();
  }

  onApplicationShutdown(): void {
    this.classes.stop();
  }

  async admit(attrs: AdmissionAttributes): Promise<void> {
    if (attrs.operation !== 'CREATE' || !isClaim(attrs) || claimHasClass(attrs.object!)) return;
    const def = defaultStorageClass(await this.classes.list(''));
    if (def) ((attrs.object!.spec ??= {}) as Obj).storageClassName = def.metadata.name;
  }

  async validate(): Promise<void> {}
}

/** PersistentVolumeClaimResize (validating, on claim update). */
@AdmissionPlugin({ name: 'PersistentVolumeClaimResize', order: 1_800 })
@Injectable()
export class PersistentVolumeClaimResizePlugin implements Admission, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly classes: AdmissionLister;

  constructor(@Inject(STORAGE) storage: Storage) {
    this.classes = new AdmissionLister(storage, storageClassKind, 'storageclasses for PersistentVolumeClaimResize');
  }

  onApplicationBootstrap(): void {
    this.classes.start();
  }

  onApplicationShutdown(): void {
    this.classes.stop();
  }

  async admit(): Promise<void> {}

  async validate(attrs: AdmissionAttributes): Promise<void> {
    if (attrs.operation !== 'UPDATE' || !isClaim(attrs) || !attrs.oldObject) return;
    const pvc = attrs.object!;
    if (storageRequest(pvc).cmp(storageRequest(attrs.oldObject)) <= 0) return;
    const name = claimClass(pvc);
    const cls = name ? await this.classes.get('', name) : undefined;
    const refused = resizeRefusal(pvc, attrs.oldObject, cls);
    if (refused) throw Errors.forbidden({ group: '', resource: 'persistentvolumeclaims' }, attrs.name, refused);
  }
}
