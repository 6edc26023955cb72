import type { KubeObject } from '@app/apimachinery';
import { awaitsFinalizer, podUsesClaim } from './storage-protection.controller.js';

const pod = (name: string, volumes: unknown[], phase?: string): KubeObject => ({
  metadata: { name },
  spec: { volumes },
  ...(phase ? { status: { phase } } : {}),
});

describe('storage protection: in use', () => {
  it('a running pod mounting the claim uses it; a finished one does not', () => {
    const p = pod('web', [{ name: 'data', persistentVolumeClaim: { claimName: 'db' } }]);
    expect(podUsesClaim(p, 'db')).toBe(true);
    expect(podUsesClaim(p, 'other')).toBe(false);
    expect(podUsesClaim(pod('web', [{ name: 'data', persistentVolumeClaim: { claimName: 'db' } }], 'Succeeded'), 'db')).toBe(false);
  });

  it('an ephemeral volume uses the claim named <pod>-<volume>', () => {
    expect(podUsesClaim(pod('web', [{ name: 'scratch', ephemeral: { volumeClaimTemplate: { spec: {} } } }]), 'web-scratch')).toBe(true);
  });

  it('acts only on terminating objects that still carry the finalizer', () => {
    const f = 'kubernetes.io/pvc-protection';
    expect(awaitsFinalizer({ metadata: { name: 'a', finalizers: [f] } }, f)).toBe(false);
    expect(awaitsFinalizer({ metadata: { name: 'a', finalizers: [f], deletionTimestamp: '2024-01-01T00:00:00Z' } }, f)).toBe(true);
    expect(awaitsFinalizer({ metadata: { name: 'a', finalizers: ['x'], deletionTimestamp: '2024-01-01T00:00:00Z' } }, f)).toBe(false);
  });
});
