import type { KubeObject } from '@app/apimachinery';
import {
  claimBoundTo,
  claimWithPhase,
  findBestMatch,
  isVolumeBoundToClaim,
  reclaimAction,
  volumeBoundTo,
  volumeMismatch,
  volumeWithPhase,
} from './persistentvolume.logic.js';

type Obj = Record<string, unknown>;

const pv = (name: string, size: string, spec: Obj = {}, meta: Obj = {}, phase = 'Available'): KubeObject => ({
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: { name, uid: `uid-${name}`, ...meta },
  spec: { capacity: { storage: size }, accessModes: ['ReadWriteOnce'], hostPath: { path: `/data/${name}` }, ...spec },
  status: { phase },
});

const claim = (spec: Obj = {}, meta: Obj = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: { name: 'data', namespace: 'app', uid: 'claim-uid', resourceVersion: '42', ...meta },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, ...spec },
  status: { phase: 'Pending' },
});

describe('which volume a claim gets', () => {
  it('the smallest Available volume of its class with enough storage and its access modes', () => {
    const volumes = [
      pv('big', '10Gi'),
      pv('small', '500Mi'),
      pv('fits', '2Gi'),
      pv('exact', '1Gi', {}, {}, 'Released'),
      pv('rwx', '1Gi', { accessModes: ['ReadWriteMany'] }),
      pv('classy', '1Gi', { storageClassName: 'fast' }),
      pv('taken', '1Gi', { claimRef: { namespace: 'app', name: 'other', uid: 'x' } }),
      pv('going', '1Gi', {}, { deletionTimestamp: '2026-01-01T00:00:00Z' }),
      pv('block', '1Gi', { volumeMode: 'Block' }),
    ];
    expect(findBestMatch(claim(), volumes, false)?.metadata.name).toBe('fits');
    expect(findBestMatch(claim({ storageClassName: 'fast' }), volumes, false)?.metadata.name).toBe('classy');
    expect(findBestMatch(claim({ accessModes: ['ReadWriteMany'] }), volumes, false)?.metadata.name).toBe('rwx');
    expect(findBestMatch(claim({ volumeMode: 'Block' }), volumes, false)?.metadata.name).toBe('block');
    expect(findBestMatch(claim({ resources: { requests: { storage: '20Gi' } } }), volumes, false)).toBeUndefined();
  });

  it('prefers volumes with fewer access modes, honours the selector, and takes a volume reserved for it first', () => {
    const both = pv('both', '1Gi', { accessModes: ['ReadWriteOnce', 'ReadOnlyMany'] });
    const one = pv('one', '5Gi');
    expect(findBestMatch(claim(), [both, one], false)?.metadata.name).toBe('one');
    const labelled = pv('labelled', '5Gi', {}, { labels: { tier: 'gold' } });
    expect(findBestMatch(claim({ selector: { matchLabels: { tier: 'gold' } } }), [one, labelled], false)?.metadata.name).toBe('labelled');
    expect(findBestMatch(claim({ selector: { matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }] } }), [labelled], false)).toBeUndefined();
    const reserved = pv('reserved', '8Gi', { claimRef: { namespace: 'app', name: 'data' } }, {}, 'Available');
    expect(findBestMatch(claim(), [one, reserved], false)?.metadata.name).toBe('reserved');
    // Waiting for a consumer: only a reserved volume is taken.
    expect(findBestMatch(claim(), [one], true)).toBeUndefined();
    expect(findBestMatch(claim(), [one, reserved], true)?.metadata.name).toBe('reserved');
    expect(isVolumeBoundToClaim(pv('r', '1Gi', { claimRef: { namespace: 'app', name: 'data', uid: 'another' } }), claim())).toBe(false);
  });

  it('says why a requested volume does not fit', () => {
    expect(volumeMismatch(pv('v', '500Mi'), claim())).toBe('requested PV is too small');
    expect(volumeMismatch(pv('v', '1Gi', { storageClassName: 'fast' }), claim())).toBe('storageClassName does not match');
    expect(volumeMismatch(pv('v', '1Gi', { volumeMode: 'Block' }), claim())).toBe('incompatible volumeMode');
    expect(volumeMismatch(pv('v', '1Gi', { accessModes: ['ReadOnlyMany'] }), claim())).toBe('incompatible accessMode');
    expect(volumeMismatch(pv('v', '1Gi'), claim())).toBeUndefined();
  });
});

describe('what a binding writes', () => {
  it("sets the volume's claimRef, marked bound by the controller unless the user reserved it", () => {
    const bound = volumeBoundTo(pv('v', '1Gi'), claim())!;
    expect(bound.spec).toMatchObject({
      claimRef: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: 'app', name: 'data', uid: 'claim-uid', resourceVersion: '42' },
    });
    expect(bound.metadata.annotations).toEqual({ 'pv.kubernetes.io/bound-by-controller': 'yes' });
    expect(volumeBoundTo(bound, claim())).toBeUndefined();
    const reserved = volumeBoundTo(pv('v', '1Gi', { claimRef: { namespace: 'app', name: 'data' } }), claim())!;
    expect((reserved.spec as Obj).claimRef).toMatchObject({ uid: 'claim-uid' });
    expect(reserved.metadata.annotations).toBeUndefined();
  });

  it("sets the claim's volumeName and annotations, then its status from the volume", () => {
    const volume = pv('v', '2Gi', { accessModes: ['ReadWriteOnce', 'ReadOnlyMany'] });
    const bound = claimBoundTo(claim(), volume)!;
    expect((bound.spec as Obj).volumeName).toBe('v');
    expect(bound.metadata.annotations).toEqual({ 'pv.kubernetes.io/bind-completed': 'yes', 'pv.kubernetes.io/bound-by-controller': 'yes' });
    expect(claimBoundTo(bound, volume)).toBeUndefined();
    // A claim that named its volume is not marked as bound by the controller.
    expect(claimBoundTo(claim({ volumeName: 'v' }), volume)!.metadata.annotations).toEqual({ 'pv.kubernetes.io/bind-completed': 'yes' });
    const status = claimWithPhase(bound, 'Bound', volume)!;
    expect(status.status).toEqual({ phase: 'Bound', accessModes: ['ReadWriteOnce', 'ReadOnlyMany'], capacity: { storage: '2Gi' } });
    expect(claimWithPhase(status, 'Bound', volume)).toBeUndefined();
    expect(claimWithPhase(status, 'Lost', undefined)!.status).toEqual({ phase: 'Lost' });
  });

  it('changes a volume phase only when it differs, with a message for failures', () => {
    expect(volumeWithPhase(pv('v', '1Gi'), 'Available')).toBeUndefined();
    expect(volumeWithPhase(pv('v', '1Gi'), 'Failed', 'why')!.status).toEqual({ phase: 'Failed', message: 'why' });
    const failed = { ...pv('v', '1Gi'), status: { phase: 'Failed', message: 'why' } };
    expect(volumeWithPhase(failed, 'Available')!.status).toEqual({ phase: 'Available' });
  });
});

describe('reclaiming', () => {
  it('keeps Retain volumes and those an external provisioner deletes; fails Delete without one and Recycle', () => {
    expect(reclaimAction(pv('v', '1Gi', { persistentVolumeReclaimPolicy: 'Retain' }))).toEqual({ action: 'keep' });
    expect(
      reclaimAction(pv('v', '1Gi', { persistentVolumeReclaimPolicy: 'Delete' }, { annotations: { 'pv.kubernetes.io/provisioned-by': 'csi.example' } })),
    ).toEqual({
      action: 'keep',
    });
    expect(reclaimAction(pv('v', '1Gi', { persistentVolumeReclaimPolicy: 'Delete' }))).toEqual({
      action: 'fail',
      reason: 'VolumeFailedDelete',
      message: 'error getting deleter volume plugin for volume "v": no deletable volume plugin matched',
    });
    expect(reclaimAction(pv('v', '1Gi', { persistentVolumeReclaimPolicy: 'Recycle' }))).toMatchObject({ action: 'fail', reason: 'VolumeFailedRecycle' });
  });
});
