import type { AdmissionAttributes, KindDeclaration } from '@app/registry';
import { StorageObjectInUseProtectionPlugin } from './storage-protection.provider.js';

const attrs = (kind: string, operation: AdmissionAttributes['operation'], finalizers?: string[], subresource = ''): AdmissionAttributes => ({
  operation,
  decl: { group: '', kind } as KindDeclaration,
  namespace: 'default',
  name: 'x',
  subresource,
  object: { metadata: { name: 'x', ...(finalizers ? { finalizers } : {}) } },
  ctx: { user: { username: 'u', groups: [] }, dryRun: false, warnings: [], now: () => new Date() },
});

describe('StorageObjectInUseProtection', () => {
  const plugin = new StorageObjectInUseProtectionPlugin();

  it('adds kubernetes.io/pvc-protection to a new claim and kubernetes.io/pv-protection to a new volume, once', async () => {
    const pvc = attrs('PersistentVolumeClaim', 'CREATE', ['example.com/keep']);
    await plugin.admit(pvc);
    expect(pvc.object!.metadata.finalizers).toEqual(['example.com/keep', 'kubernetes.io/pvc-protection']);
    const pv = attrs('PersistentVolume', 'CREATE', ['kubernetes.io/pv-protection']);
    await plugin.admit(pv);
    expect(pv.object!.metadata.finalizers).toEqual(['kubernetes.io/pv-protection']);
  });

  it('leaves updates, subresources and other kinds alone', async () => {
    for (const a of [attrs('PersistentVolumeClaim', 'UPDATE'), attrs('PersistentVolume', 'CREATE', undefined, 'status'), attrs('ConfigMap', 'CREATE')]) {
      await plugin.admit(a);
      expect(a.object!.metadata.finalizers).toBeUndefined();
    }
  });
});
