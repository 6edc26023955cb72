/**
 * StorageObjectInUseProtection (conventions.md admission table; kube's
 * plugin/pkg/admission/storage/storageobjectinuseprotection): a new PersistentVolumeClaim gets
 * the finalizer kubernetes.io/pvc-protection and a new PersistentVolume kubernetes.io/pv-protection,
 * so deleting one that is in use only marks it Terminating; the storage-protection controller
 * removes the finalizer once the object is no longer in use.
 */
import { Injectable } from '@nestjs/common';
import type { Admission, AdmissionAttributes } from '@app/registry';
import { AdmissionPlugin } from './admission.plugin.js';

/** The finalizer of claims in use by pods. */
export const PVC_PROTECTION_FINALIZER = 'kubernetes.io/pvc-protection';
/** The finalizer of volumes bound to claims. */
export const PV_PROTECTION_FINALIZER = 'kubernetes.io/pv-protection';

/** The finalizer this plugin adds to objects of `attrs`' kind, or undefined for other kinds. */
export function protectionFinalizerFor(group: string, kind: string): string | undefined {
  if (group !== '') return undefined;
  if (kind === 'PersistentVolumeClaim') return PVC_PROTECTION_FINALIZER;
  if (kind === 'PersistentVolume') return PV_PROTECTION_FINALIZER;
  return undefined;
}

/** The plugin: mutating on create of claims and volumes. */
@AdmissionPlugin({ name: 'StorageObjectInUseProtection', order: 900 })
@Injectable()
export class StorageObjectInUseProtectionPlugin implements Admission {
  async admit(attrs: AdmissionAttributes): Promise<void> {
    if (attrs.operation !== 'CREATE' || attrs.subresource !== '' || !attrs.object) return;
    const finalizer = protectionFinalizerFor(attrs.decl.group, attrs.decl.kind);
    if (!finalizer) return;
    const meta = attrs.object.metadata;
    const list = Array.isArray(meta.finalizers) ? (meta.finalizers as string[]) : [];
    if (!list.includes(finalizer)) meta.finalizers = [...list, finalizer];
  }

  async validate(): Promise<void> {}
}
