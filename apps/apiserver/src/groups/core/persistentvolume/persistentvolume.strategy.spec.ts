import { fieldErrorMessage, type KubeObject } from '@app/apimachinery';
import type { RequestContext } from '@app/registry';
import { accessModesShort, persistentVolumeStatusSubresource, persistentVolumeStrategy } from './persistentvolume.strategy.js';

const ctx: RequestContext = { user: { username: 'u', groups: [] }, dryRun: false, warnings: [], now: () => new Date('2024-01-02T03:04:05.678Z') };
const pv = (spec: Record<string, unknown>): KubeObject => ({ metadata: { name: 'v' }, spec });
const ok = { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/data' } };
const errs = (spec: Record<string, unknown>) => persistentVolumeStrategy.validate!(pv(spec), ctx).map(fieldErrorMessage);

describe('PersistentVolume strategy', () => {
  it('accepts a volume with capacity, access modes and one source', () => {
    expect(errs(ok)).toEqual([]);
  });

  it('requires access modes and capacity, with known values only', () => {
    expect(errs({ ...ok, accessModes: undefined })).toEqual(['spec.accessModes: Required value']);
    expect(errs({ ...ok, accessModes: ['ReadWriteSometimes'] })).toEqual([
      'spec.accessModes: Unsupported value: "ReadWriteSometimes": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"',
    ]);
    expect(errs({ ...ok, accessModes: ['ReadWriteOncePod', 'ReadOnlyMany'] })).toEqual([
      'spec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes',
    ]);
    expect(errs({ ...ok, capacity: undefined })).toEqual(['spec.capacity: Required value']);
    expect(errs({ ...ok, capacity: { storage: '1Gi', cpu: '1' } })).toEqual(['spec.capacity: Unsupported value: "cpu": supported values: "storage"']);
    expect(errs({ ...ok, capacity: { storage: '0' } })).toEqual(['spec.capacity[storage]: Invalid value: "0": must be greater than zero']);
  });

  it('checks reclaim policy, class name, volume mode and node affinity', () => {
    expect(errs({ ...ok, persistentVolumeReclaimPolicy: 'Keep' })).toEqual([
      'spec.persistentVolumeReclaimPolicy: Unsupported value: "Keep": supported values: "Delete", "Recycle", "Retain"',
    ]);
    expect(errs({ ...ok, storageClassName: 'Fast_Disks' })[0]).toMatch(/^spec\.storageClassName: Invalid value: "Fast_Disks": a lowercase RFC 1123 subdomain/);
    expect(errs({ ...ok, volumeMode: 'Raw' })).toEqual(['spec.volumeMode: Unsupported value: "Raw": supported values: "Block", "Filesystem"']);
    expect(errs({ ...ok, nodeAffinity: {} })).toEqual(['spec.nodeAffinity.required: Required value: must specify required node constraints']);
    expect(errs({ ...ok, nodeAffinity: { required: { nodeSelectorTerms: [] } } })).toEqual([
      'spec.nodeAffinity.required.nodeSelectorTerms: Required value: must have at least one node selector term',
    ]);
    expect(errs({ capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], local: { path: '/mnt/disk' } })).toEqual([
      'spec.nodeAffinity: Required value: Local volume requires node affinity',
    ]);
  });

  it('keeps the source, the volume mode and a set node affinity on update', () => {
    const old = pv({ ...ok, volumeMode: 'Filesystem' });
    expect(persistentVolumeStrategy.validateUpdate!(pv({ ...ok, volumeMode: 'Filesystem', capacity: { storage: '2Gi' } }), old, ctx)).toEqual([]);
    const changed = persistentVolumeStrategy.validateUpdate!(pv({ ...ok, hostPath: { path: '/other' }, volumeMode: 'Block' }), old, ctx).map(fieldErrorMessage);
    expect(changed).toEqual([
      'spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation',
      'spec.volumeMode: Invalid value: "Block": field is immutable',
    ]);
  });

  it('starts Pending on create, whatever status was sent', () => {
    const o = pv(ok);
    o.status = { phase: 'Bound' };
    persistentVolumeStrategy.prepareForCreate!(o, ctx);
    expect(o.status).toEqual({ phase: 'Pending', lastPhaseTransitionTime: '2024-01-02T03:04:05Z' });
  });

  it('stamps lastPhaseTransitionTime when /status changes the phase, and keeps it otherwise', () => {
    const stored: KubeObject = { ...pv(ok), status: { phase: 'Pending', lastPhaseTransitionTime: '2024-01-01T00:00:00Z' } };
    const write = (status: Record<string, unknown>) => {
      const o: KubeObject = { ...pv({ ...ok, capacity: { storage: '9Gi' } }), status };
      persistentVolumeStatusSubresource.strategy!.prepareForUpdate(o, stored, ctx);
      return o;
    };
    const available = write({ phase: 'Available' });
    expect(available.status).toEqual({ phase: 'Available', lastPhaseTransitionTime: '2024-01-02T03:04:05Z' });
    // Only status changes through /status.
    expect(available.spec).toEqual(ok);
    expect(write({ phase: 'Available', lastPhaseTransitionTime: '2023-05-05T00:00:00Z' }).status).toMatchObject({
      lastPhaseTransitionTime: '2023-05-05T00:00:00Z',
    });
    expect(write({ phase: 'Pending', message: 'x' }).status).toEqual({ phase: 'Pending', message: 'x', lastPhaseTransitionTime: '2024-01-01T00:00:00Z' });
  });

  it('prints access modes as kubectl does', () => {
    expect(accessModesShort(['ReadWriteMany', 'ReadWriteOnce'])).toBe('RWO,RWX');
  });
});
