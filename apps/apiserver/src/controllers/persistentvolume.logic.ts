/**
 * The pure part of the PersistentVolume controller (kube-controller-manager's
 * pkg/controller/volume/persistentvolume, the "persistentvolume-binder"): which volume a claim
 * gets, the objects a binding writes, and what becomes of a volume whose claim goes away.
 *
 * Rules, as in kube:
 *  - a claim without `spec.volumeName` takes the smallest Available, unclaimed volume of its
 *    storage class (an absent class is ""), with at least its requested storage, every access mode
 *    it asks for (volumes with fewer access modes first), its volume mode, and labels its
 *    selector selects; a volume reserved for it by name (`claimRef` without uid) wins over all;
 *    volumes being deleted are never taken. Claims of a class with volumeBindingMode
 *    WaitForFirstConsumer wait for a scheduler's `volume.kubernetes.io/selected-node`, and only
 *    a volume reserved for them is taken before;
 *  - binding writes the volume's `claimRef` (with `pv.kubernetes.io/bound-by-controller` when the
 *    controller chose the volume), its phase Bound, the claim's `volumeName` (with
 *    `pv.kubernetes.io/bind-completed`, and bound-by-controller when the controller chose the
 *    volume), and the claim's phase Bound with the volume's access modes and capacity;
 *  - a volume without `claimRef`, or reserved by name only, is Available; one whose claim is gone
 *    (or replaced by another of the same name) is Released, then its reclaim policy applies:
 *    Retain keeps it, Delete leaves it to its external provisioner (or fails it when none
 *    provisioned it: there is no in-tree deleter here), Recycle fails (no recycler).
 */
import { labelSelectorFromStruct, parseQuantity, type KubeObject, type LabelSelectorStruct } from '@app/apimachinery';
import { asMap } from '../groups/core/core.helpers.js';
import { BETA_STORAGE_CLASS_ANNOTATION, claimClass } from '../groups/storage/storageclass/storageclass.kind.js';

type Obj = Record<string, unknown>;

export const ANN_BIND_COMPLETED = 'pv.kubernetes.io/bind-completed';
export const ANN_BOUND_BY_CONTROLLER = 'pv.kubernetes.io/bound-by-controller';
export const ANN_PROVISIONED_BY = 'pv.kubernetes.io/provisioned-by';
export const ANN_MIGRATED_TO = 'pv.kubernetes.io/migrated-to';
export const ANN_STORAGE_PROVISIONER = 'volume.kubernetes.io/storage-provisioner';
export const ANN_BETA_STORAGE_PROVISIONER = 'volume.beta.kubernetes.io/storage-provisioner';
export const ANN_SELECTED_NODE = 'volume.kubernetes.io/selected-node';

const annotations = (o: KubeObject): Record<string, string> => asMap(o.metadata.annotations) as Record<string, string>;
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/** GetPersistentVolumeClass: the beta annotation, else spec.storageClassName, else "". */
export function volumeClass(pv: KubeObject): string {
  const beta = annotations(pv)[BETA_STORAGE_CLASS_ANNOTATION];
  if (typeof beta === 'string') return beta;
  const c = asMap(pv.spec).storageClassName;
  return typeof c === 'string' ? c : '';
}

/** The volume's claimRef, when it has one. */
export function claimRefOf(pv: KubeObject): Obj | undefined {
  const ref = asMap(pv.spec).claimRef;
  return ref && typeof ref === 'object' ? (ref as Obj) : undefined;
}

/** IsVolumeBoundToClaim: the volume's claimRef names the claim, with its uid or none. */
export function isVolumeBoundToClaim(pv: KubeObject, claim: KubeObject): boolean {
  const ref = claimRefOf(pv);
  if (!ref || ref.name !== claim.metadata.name || (ref.namespace ?? '') !== (claim.metadata.namespace ?? '')) return false;
  return !ref.uid || ref.uid === claim.metadata.uid;
}

const volumeMode = (spec: unknown): string => String(asMap(spec).volumeMode ?? 'Filesystem');

function storageOf(v: unknown): ReturnType<typeof parseQuantity> | undefined {
  try {
    return v === undefined ? undefined : parseQuantity(String(v));
  } catch {
    return undefined;
  }
}

const requested = (claim: KubeObject) => storageOf(asMap(asMap(asMap(claim.spec).resources).requests).storage);
const capacity = (pv: KubeObject) => storageOf(asMap(asMap(pv.spec).capacity).storage);

/** checkVolumeSatisfyClaim: why the volume cannot serve the claim, undefined when it can. */
export function volumeMismatch(pv: KubeObject, claim: KubeObject): string | undefined {
  const want = requested(claim);
  const have = capacity(pv);
  if (want && (!have || have.cmp(want) < 0)) return 'requested PV is too small';
  if (volumeClass(pv) !== claimClass(claim)) return 'storageClassName does not match';
  if (volumeMode(pv.spec) !== volumeMode(claim.spec)) return 'incompatible volumeMode';
  const modes = strings(asMap(pv.spec).accessModes);
  if (!strings(asMap(claim.spec).accessModes).every((m) => modes.includes(m))) return 'incompatible accessMode';
  return undefined;
}

/**
 * findBestMatchForClaim: the volume reserved for the claim, else (unless binding waits for a
 * consumer) the smallest fitting Available one, among the volumes with the fewest access modes
 * that hold the claim's.
 */
export function findBestMatch(claim: KubeObject, volumes: KubeObject[], delayBinding: boolean): KubeObject | undefined {
  const wantModes = strings(asMap(claim.spec).accessModes);
  const want = requested(claim);
  const selectorStruct = asMap(claim.spec).selector;
  let selector: ReturnType<typeof labelSelectorFromStruct> | undefined;
  try {
    selector = selectorStruct ? labelSelectorFromStruct(selectorStruct as LabelSelectorStruct) : undefined;
  } catch {
    return undefined; // a selector that does not parse selects nothing
  }
  const fitting = volumes.filter((pv) => {
    const modes = strings(asMap(pv.spec).accessModes);
    return !pv.metadata.deletionTimestamp && wantModes.every((m) => modes.includes(m)) && volumeMode(pv.spec) === volumeMode(claim.spec);
  });
  // kube's index looks at the volumes by their set of access modes, the smallest sets first.
  const bySetSize = new Map<number, KubeObject[]>();
  for (const pv of fitting) {
    const n = new Set(strings(asMap(pv.spec).accessModes)).size;
    bySetSize.set(n, [...(bySetSize.get(n) ?? []), pv]);
  }
  for (const n of [...bySetSize.keys()].sort((a, b) => a - b)) {
    let best: KubeObject | undefined;
    for (const pv of bySetSize.get(n)!) {
      if (isVolumeBoundToClaim(pv, claim)) return pv;
      if (delayBinding) continue;
      if (asMap(pv.status).phase !== 'Available' || claimRefOf(pv)) continue;
      if (selector && !selector.matches(asMap(pv.metadata.labels) as Record<string, string>)) continue;
      if (volumeClass(pv) !== claimClass(claim)) continue;
      const have = capacity(pv);
      if (!have || (want && have.cmp(want) < 0)) continue;
      const bestCap = best ? capacity(best) : undefined;
      if (!best || (bestCap && have.cmp(bestCap) < 0)) best = pv;
    }
    if (best) return best;
  }
  return undefined;
}

/** A claimRef to the claim (reference.GetReference). */
export function claimRefTo(claim: KubeObject): Obj {
  return {
    kind: 'PersistentVolumeClaim',
    namespace: claim.metadata.namespace,
    name: claim.metadata.name,
    uid: claim.metadata.uid,
    apiVersion: 'v1',
    resourceVersion: claim.metadata.resourceVersion,
  };
}

/** getBindVolumeToClaim: the volume with its claimRef set to the claim; undefined when it already is. */
export function volumeBoundTo(pv: KubeObject, claim: KubeObject): KubeObject | undefined {
  const setByController = !isVolumeBoundToClaim(pv, claim);
  const ref = claimRefOf(pv);
  let dirty = false;
  const next = structuredClone(pv);
  const spec = asMap(next.spec);
  if (!ref || ref.name !== claim.metadata.name || ref.namespace !== claim.metadata.namespace || ref.uid !== claim.metadata.uid) {
    spec.claimRef = claimRefTo(claim);
    next.spec = spec;
    dirty = true;
  }
  if (setByController && !(ANN_BOUND_BY_CONTROLLER in annotations(pv))) {
    next.metadata.annotations = { ...annotations(pv), [ANN_BOUND_BY_CONTROLLER]: 'yes' };
    dirty = true;
  }
  return dirty ? next : undefined;
}

/** bindClaimToVolume: the claim with volumeName and the binding annotations; undefined when it has them. */
export function claimBoundTo(claim: KubeObject, pv: KubeObject): KubeObject | undefined {
  const spec = asMap(claim.spec);
  const anns = { ...annotations(claim) };
  let dirty = false;
  const next = structuredClone(claim);
  if (spec.volumeName !== pv.metadata.name) {
    next.spec = { ...asMap(next.spec), volumeName: pv.metadata.name };
    if (!(ANN_BOUND_BY_CONTROLLER in anns)) anns[ANN_BOUND_BY_CONTROLLER] = 'yes';
    dirty = true;
  }
  if (anns[ANN_BIND_COMPLETED] !== 'yes') {
    anns[ANN_BIND_COMPLETED] = 'yes';
    dirty = true;
  }
  next.metadata.annotations = anns;
  return dirty ? next : undefined;
}

/** updateClaimStatus: the claim's status in `phase` (with the volume's modes and capacity, or none); undefined when it is so already. */
export function claimWithPhase(claim: KubeObject, phase: string, pv: KubeObject | undefined): KubeObject | undefined {
  const status = { ...asMap(claim.status) };
  let dirty = false;
  if (status.phase !== phase) {
    status.phase = phase;
    dirty = true;
  }
  if (!pv) {
    for (const f of ['accessModes', 'capacity']) {
      if (status[f] !== undefined) {
        delete status[f];
        dirty = true;
      }
    }
  } else {
    const modes = strings(asMap(pv.spec).accessModes);
    if (JSON.stringify(strings(status.accessModes)) !== JSON.stringify(modes) || status.accessModes === undefined) {
      status.accessModes = modes;
      dirty = true;
    }
    const have = storageOf(asMap(status.capacity).storage);
    const cap = capacity(pv);
    if (!have || !cap || have.cmp(cap) !== 0) {
      status.capacity = structuredClone(asMap(pv.spec).capacity);
      dirty = true;
    }
  }
  return dirty ? { ...claim, status } : undefined;
}

/** updateVolumePhase: the volume in `phase` with `message`; undefined when it is in that phase already. */
export function volumeWithPhase(pv: KubeObject, phase: string, message = ''): KubeObject | undefined {
  if (asMap(pv.status).phase === phase) return undefined;
  const status: Obj = { ...asMap(pv.status), phase };
  if (message) status.message = message;
  else delete status.message;
  return { ...pv, status };
}

/** Whether binding of the claim waits for a consumer (its class's volumeBindingMode). */
export function isDelayBinding(storageClass: KubeObject | undefined): boolean {
  return storageClass?.volumeBindingMode === 'WaitForFirstConsumer';
}

/** What the reclaim policy of a Released volume does here. */
export function reclaimAction(pv: KubeObject): { action: 'keep' } | { action: 'fail'; reason: string; message: string } {
  const policy = asMap(pv.spec).persistentVolumeReclaimPolicy ?? 'Retain';
  if (policy === 'Recycle') return { action: 'fail', reason: 'VolumeFailedRecycle', message: 'No recycler plugin found for the volume!' };
  if (policy === 'Delete') {
    const anns = annotations(pv);
    // An external provisioner deletes what it provisioned.
    if (anns[ANN_PROVISIONED_BY] || anns[ANN_MIGRATED_TO]) return { action: 'keep' };
    return {
      action: 'fail',
      reason: 'VolumeFailedDelete',
      message: `error getting deleter volume plugin for volume "${pv.metadata.name ?? ''}": no deletable volume plugin matched`,
    };
  }
  return { action: 'keep' };
}
