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
});
