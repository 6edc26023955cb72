import type { KubeObject } from '@app/apimachinery';
import { claimFor, ephemeralClaims } from './ephemeral-volume.controller.js';

const pod: KubeObject = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', namespace: 'ns', uid: 'pod-uid' },
  spec: {
    containers: [{ name: 'c', image: 'x' }],
    volumes: [
      { name: 'cfg', configMap: { name: 'x' } },
      {
        name: 'scratch',
        ephemeral: {
          volumeClaimTemplate: {
            metadata: { labels: { type: 'scratch' }, annotations: { note: 'a' } },
            spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: 'fast' },
          },
        },
      },
    ],
  },
};

describe('ephemeral volume claims', () => {
  it('names one claim per ephemeral volume <pod>-<volume>', () => {
    expect(ephemeralClaims(pod).map((c) => c.claim)).toEqual(['web-scratch']);
    expect(ephemeralClaims({ ...pod, spec: { containers: [] } })).toEqual([]);
  });

  it('makes the claim from the template, controlled by the pod', () => {
    const [{ claim, template }] = ephemeralClaims(pod) as [{ claim: string; template: Record<string, unknown> }];
    expect(claimFor(pod, claim, template)).toEqual({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: {
        name: 'web-scratch',
        namespace: 'ns',
        labels: { type: 'scratch' },
        annotations: { note: 'a' },
        ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'web', uid: 'pod-uid', controller: true, blockOwnerDeletion: true }],
      },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: 'fast' },
    });
  });
});
