import type { KubeObject } from '@app/apimachinery';
import { podRefs, volumeRefs } from './node-graph.watcher.js';

describe('node graph projections', () => {
  it('collects every Secret, ConfigMap and claim a pod bound to a node refers to, and its service account', () => {
    const pod: KubeObject = {
      metadata: { name: 'web', namespace: 'ns' },
      spec: {
        nodeName: 'n1',
        imagePullSecrets: [{ name: 'pull' }],
        initContainers: [{ name: 'i', env: [{ name: 'A', valueFrom: { secretKeyRef: { name: 'env-secret', key: 'k' } } }] }],
        containers: [{ name: 'c', envFrom: [{ configMapRef: { name: 'env-cm' } }, { secretRef: { name: 'envfrom-secret' } }] }],
        ephemeralContainers: [{ name: 'e', env: [{ name: 'B', valueFrom: { configMapKeyRef: { name: 'debug-cm', key: 'k' } } }] }],
        volumes: [
          { name: 's', secret: { secretName: 'vol-secret' } },
          { name: 'c', configMap: { name: 'vol-cm' } },
          { name: 'p', projected: { sources: [{ secret: { name: 'proj-secret' } }, { configMap: { name: 'proj-cm' } }] } },
          { name: 'csi', csi: { driver: 'd', nodePublishSecretRef: { name: 'csi-secret' } } },
          { name: 'rbd', rbd: { monitors: [], image: 'i', secretRef: { name: 'rbd-secret' } } },
          { name: 'data', persistentVolumeClaim: { claimName: 'claim' } },
          { name: 'scratch', ephemeral: { volumeClaimTemplate: { spec: {} } } },
        ],
      },
    };
    const refs = podRefs(pod)!;
    expect([...refs.secrets].sort()).toEqual(['csi-secret', 'env-secret', 'envfrom-secret', 'proj-secret', 'pull', 'rbd-secret', 'vol-secret']);
    expect([...refs.configMaps].sort()).toEqual(['debug-cm', 'env-cm', 'proj-cm', 'vol-cm']);
    expect([...refs.claims].sort()).toEqual(['claim', 'web-scratch']);
    expect(refs).toMatchObject({ node: 'n1', serviceAccount: 'default' });
    // A pod no node runs yet reaches nothing.
    expect(podRefs({ metadata: { name: 'p' }, spec: { containers: [] } })).toBeUndefined();
  });

  it("takes a volume's claim and the Secrets its source names, in the claim's namespace unless given", () => {
    const refs = volumeRefs({
      metadata: { name: 'pv1' },
      spec: {
        claimRef: { namespace: 'ns', name: 'claim' },
        csi: { driver: 'd', volumeHandle: 'h', nodeStageSecretRef: { name: 'stage', namespace: 'storage' }, nodePublishSecretRef: { name: 'publish' } },
      },
    });
    expect(refs.claim).toEqual({ namespace: 'ns', name: 'claim' });
    expect([...refs.secrets].sort()).toEqual(['ns/publish', 'storage/stage']);
    expect(volumeRefs({ metadata: { name: 'pv2' }, spec: { hostPath: { path: '/x' } } })).toEqual({ secrets: new Set() });
  });
});
