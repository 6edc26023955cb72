import type { KubeObject } from '@app/apimachinery';
import { dedupOwnerReferences } from './write.pipeline.js';

const ref = (uid: string, name = 'o') => ({ apiVersion: 'v1', kind: 'ConfigMap', name, uid });

describe('dedupOwnerReferences (kube dedupOwnerReferencesAndAddWarning)', () => {
  it('drops an entry equal to an earlier one with the same uid and warns with its uid', () => {
    const obj: KubeObject = { metadata: { name: 'a', ownerReferences: [ref('u1'), ref('u2'), ref('u1')] } };
    const warnings: string[] = [];
    dedupOwnerReferences(obj, warnings, false);
    expect(obj.metadata.ownerReferences).toEqual([ref('u1'), ref('u2')]);
    expect(warnings).toEqual([
      '.metadata.ownerReferences contains duplicate entries; API server dedups owner references in 1.20+, and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: u1',
    ]);
  });

  it('keeps entries that share a uid but differ, and words the warning after admission differently', () => {
    const obj: KubeObject = { metadata: { name: 'a', ownerReferences: [ref('u1', 'x'), ref('u1', 'y'), ref('u1', 'y')] } };
    const warnings: string[] = [];
    dedupOwnerReferences(obj, warnings, true);
    expect(obj.metadata.ownerReferences).toEqual([ref('u1', 'x'), ref('u1', 'y')]);
    expect(warnings[0]).toMatch(/^\.metadata\.ownerReferences contains duplicate entries after mutating admission happens; /);
  });

  it('finds repeats in one pass: 100,000 entries, half of one uid, repeats far from their first', () => {
    const n = 100_000;
    // Distinct uids, then as many entries sharing one uid (names differ), then a repeat of each
    // kind with its keys in another order.
    const refs: unknown[] = [
      ...Array.from({ length: n / 2 }, (_, i) => ref(`u${i}`)),
      ...Array.from({ length: n / 2 }, (_, i) => ref('same', `n${i}`)),
      { uid: 'u0', name: 'o', kind: 'ConfigMap', apiVersion: 'v1' },
      { uid: 'same', name: 'n7', kind: 'ConfigMap', apiVersion: 'v1' },
    ];
    const obj: KubeObject = { metadata: { name: 'a', ownerReferences: refs } };
    const warnings: string[] = [];
    dedupOwnerReferences(obj, warnings, false);
    expect(obj.metadata.ownerReferences).toEqual(refs.slice(0, n));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/duplicate UID\(s\) observed: u0, same$/);
  });

  it('tells -0 from 0 and an undefined field from an absent one, as isDeepStrictEqual does', () => {
    const refs = [
      { ...ref('u1'), blockOwnerDeletion: undefined, n: 0 },
      { ...ref('u1'), n: 0 },
      { ...ref('u1'), blockOwnerDeletion: undefined, n: -0 },
      { ...ref('u1'), n: 0 },
    ];
    const obj = { metadata: { name: 'a', ownerReferences: refs } } as unknown as KubeObject;
    dedupOwnerReferences(obj, [], false);
    const kept = obj.metadata.ownerReferences as unknown[];
    expect(kept).toHaveLength(3);
    kept.forEach((r, i) => expect(r).toBe(refs[i]));
  });
});
