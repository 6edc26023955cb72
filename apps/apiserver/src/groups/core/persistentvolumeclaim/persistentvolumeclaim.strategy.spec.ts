import { fieldErrorMessage, type KubeObject } from '@app/apimachinery';
import type { RequestContext } from '@app/registry';
import { persistentVolumeClaimStrategy } from './persistentvolumeclaim.strategy.js';

const ctx: RequestContext = { user: { username: 'u', groups: [] }, dryRun: false, warnings: [], now: () => new Date() };
const pvc = (spec: Record<string, unknown>, status?: Record<string, unknown>): KubeObject => ({
  metadata: { name: 'c', namespace: 'default' },
  spec,
  ...(status ? { status } : {}),
});
const ok = { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } };
const errs = (spec: Record<string, unknown>) => persistentVolumeClaimStrategy.validate!(pvc(spec), ctx).map(fieldErrorMessage);

describe('PersistentVolumeClaim strategy', () => {
  it('accepts a claim with access modes and a storage request', () => {
    expect(errs(ok)).toEqual([]);
  });

  it('requires an access mode and a positive storage request', () => {
    expect(errs({ ...ok, accessModes: [] })).toEqual(['spec.accessModes: Required value: at least 1 access mode is required']);
    expect(errs({ ...ok, resources: {} })).toEqual(['spec.resources[storage]: Required value']);
    expect(errs({ ...ok, resources: { requests: { storage: '0' } } })).toEqual(['spec.resources[storage]: Invalid value: "0": must be greater than zero']);
  });

  it('checks data sources: kind and name, and dataSource equal to dataSourceRef', () => {
    expect(errs({ ...ok, dataSource: { name: 'x' } })).toEqual(['spec.dataSource.kind: Required value']);
    expect(errs({ ...ok, dataSource: { kind: 'ConfigMap', name: 'x' } })).toEqual([
      'spec.dataSource: Invalid value: "ConfigMap": must be \'PersistentVolumeClaim\' when referencing the default apiGroup',
    ]);
    expect(errs({ ...ok, dataSource: { kind: 'PersistentVolumeClaim', name: 'a' }, dataSourceRef: { kind: 'PersistentVolumeClaim', name: 'b' } })[0]).toMatch(
      /^spec\.dataSource: Invalid value: .*: must match dataSourceRef$/,
    );
  });

  it('allows only requests to change, on a bound claim, and never below the capacity', () => {
    const bound = pvc({ ...ok, volumeName: 'pv1' }, { capacity: { storage: '1Gi' } });
    expect(persistentVolumeClaimStrategy.validateUpdate!(pvc({ ...ok, volumeName: 'pv1', resources: { requests: { storage: '2Gi' } } }), bound, ctx)).toEqual(
      [],
    );
    const shrink = persistentVolumeClaimStrategy.validateUpdate!(pvc({ ...ok, volumeName: 'pv1', resources: { requests: { storage: '500Mi' } } }), bound, ctx);
    expect(shrink.map(fieldErrorMessage)).toEqual(['spec.resources.requests.storage: Forbidden: field can not be less than status.capacity']);
    const modes = persistentVolumeClaimStrategy.validateUpdate!(pvc({ ...ok, volumeName: 'pv1', accessModes: ['ReadOnlyMany'] }), bound, ctx);
    expect(modes.map(fieldErrorMessage)).toEqual([
      'spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims',
    ]);
  });

  it('takes a request below the capacity as it is, and lets it shrink only to above the capacity', () => {
    // A 1Gi request bound to a 5Gi volume: other updates (finalizers, labels) pass.
    const big = pvc({ ...ok, volumeName: 'pv1' }, { capacity: { storage: '5Gi' } });
    expect(persistentVolumeClaimStrategy.validateUpdate!(pvc({ ...ok, volumeName: 'pv1' }), big, ctx)).toEqual([]);
    const grown = pvc({ ...ok, volumeName: 'pv1', resources: { requests: { storage: '4Gi' } } }, { capacity: { storage: '2Gi' } });
    const shrinkAbove = persistentVolumeClaimStrategy.validateUpdate!(
      pvc({ ...ok, volumeName: 'pv1', resources: { requests: { storage: '3Gi' } } }),
      grown,
      ctx,
    );
    expect(shrinkAbove).toEqual([]);
    const shrinkTo = persistentVolumeClaimStrategy.validateUpdate!(pvc({ ...ok, volumeName: 'pv1', resources: { requests: { storage: '2Gi' } } }), grown, ctx);
    expect(shrinkTo.map(fieldErrorMessage)).toEqual(['spec.resources.requests.storage: Forbidden: field can not be less than status.capacity']);
  });

  it('lets an unbound claim get its volumeName once, and nothing else', () => {
    const unbound = pvc(ok);
    expect(persistentVolumeClaimStrategy.validateUpdate!(pvc({ ...ok, volumeName: 'pv1' }), unbound, ctx)).toEqual([]);
    const other = persistentVolumeClaimStrategy.validateUpdate!(pvc({ ...ok, volumeName: 'pv1', accessModes: ['ReadOnlyMany'] }), unbound, ctx);
    expect(other.map(fieldErrorMessage)).toEqual([
      'spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims',
    ]);
    const rebind = persistentVolumeClaimStrategy.validateUpdate!(pvc({ ...ok, volumeName: 'pv2' }), pvc({ ...ok, volumeName: 'pv1' }), ctx);
    expect(rebind).toHaveLength(1);
  });

  it('lets an unbound claim that chose no class get one, and never change a class it has', () => {
    const update = (spec: Record<string, unknown>, old: KubeObject) => persistentVolumeClaimStrategy.validateUpdate!(pvc(spec), old, ctx).length;
    expect(update({ ...ok, storageClassName: 'fast' }, pvc(ok))).toBe(0);
    // '' is a choice, as is another name; an empty name is not a class.
    expect(update({ ...ok, storageClassName: 'fast' }, pvc({ ...ok, storageClassName: '' }))).toBe(1);
    expect(update({ ...ok, storageClassName: 'slow' }, pvc({ ...ok, storageClassName: 'fast' }))).toBe(1);
    expect(update({ ...ok, storageClassName: '' }, pvc(ok))).toBe(1);
    // The beta annotation's name may be copied into the spec, no other.
    const annotated: KubeObject = {
      ...pvc(ok),
      metadata: { name: 'c', namespace: 'default', annotations: { 'volume.beta.kubernetes.io/storage-class': 'fast' } },
    };
    const withSpec = (name: string): KubeObject => ({ ...annotated, spec: { ...ok, storageClassName: name } });
    expect(persistentVolumeClaimStrategy.validateUpdate!(withSpec('fast'), annotated, ctx)).toEqual([]);
    expect(persistentVolumeClaimStrategy.validateUpdate!(withSpec('slow'), annotated, ctx)).toHaveLength(1);
    // A bound claim keeps what it has.
    expect(update({ ...ok, volumeName: 'pv1', storageClassName: 'fast' }, pvc({ ...ok, volumeName: 'pv1' }))).toBe(1);
  });
});
