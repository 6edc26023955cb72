import type { KubeObject } from '@app/apimachinery';
import { claimClass, claimHasClass, defaultStorageClass } from '../groups/storage/storageclass/storageclass.kind.js';
import { resizeRefusal } from './storage-class.provider.js';

const sc = (name: string, created: string, extra: Record<string, unknown> = {}, isDefault = true): KubeObject => ({
  metadata: { name, creationTimestamp: created, ...(isDefault ? { annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } } : {}) },
  provisioner: 'p',
  ...extra,
});
const claim = (spec: Record<string, unknown>, extra: Record<string, unknown> = {}): KubeObject => ({ metadata: { name: 'c', ...extra }, spec });

describe('DefaultStorageClass and PersistentVolumeClaimResize admission', () => {
  it('picks the newest default class, then the first by name', () => {
    expect(defaultStorageClass([sc('plain', '2026-01-03T00:00:00Z', {}, false)])).toBeUndefined();
    expect(defaultStorageClass([sc('old', '2026-01-01T00:00:00Z'), sc('new', '2026-01-02T00:00:00Z')])?.metadata.name).toBe('new');
    expect(defaultStorageClass([sc('b', '2026-01-01T00:00:00Z'), sc('a', '2026-01-01T00:00:00Z')])?.metadata.name).toBe('a');
    const beta: KubeObject = { metadata: { name: 'beta', annotations: { 'storageclass.beta.kubernetes.io/is-default-class': 'true' } } };
    expect(defaultStorageClass([beta])?.metadata.name).toBe('beta');
  });

  it("reads a claim's class from the beta annotation first; an empty name is a choice", () => {
    expect(claimHasClass(claim({}))).toBe(false);
    expect(claimHasClass(claim({ storageClassName: '' }))).toBe(true);
    expect(claimHasClass(claim({}, { annotations: { 'volume.beta.kubernetes.io/storage-class': 'x' } }))).toBe(true);
    expect(claimClass(claim({ storageClassName: 'a' }, { annotations: { 'volume.beta.kubernetes.io/storage-class': 'b' } }))).toBe('b');
    expect(claimClass(claim({}))).toBe('');
  });

  it('lets a claim grow only when bound and its class allows expansion', () => {
    const old = { ...claim({ storageClassName: 'g', resources: { requests: { storage: '1Gi' } } }), status: { phase: 'Bound' } };
    const grown = claim({ storageClassName: 'g', resources: { requests: { storage: '2Gi' } } });
    const growing = sc('g', '2026-01-01T00:00:00Z', { allowVolumeExpansion: true }, false);
    expect(resizeRefusal(grown, old, growing)).toBeUndefined();
    const refusal = 'only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize';
    expect(resizeRefusal(grown, old, sc('g', '2026-01-01T00:00:00Z', {}, false))).toBe(refusal);
    expect(resizeRefusal(grown, old, undefined)).toBe(refusal);
    expect(resizeRefusal(grown, { ...old, status: { phase: 'Pending' } }, growing)).toBe('Only bound persistent volume claims can be expanded');
    // Shrinking or keeping the size is not this plugin's to judge.
    expect(resizeRefusal(claim({ storageClassName: 'g', resources: { requests: { storage: '1Gi' } } }), old, undefined)).toBeUndefined();
  });
});
