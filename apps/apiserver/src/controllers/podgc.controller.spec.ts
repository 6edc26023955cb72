import type { KubeObject } from '@app/apimachinery';
import { failedByPodGC, podsOnMissingNodes, terminatedToDelete } from './podgc.controller.js';

const pod = (name: string, created: string, phase: string, nodeName?: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'ns', uid: `uid-${name}`, creationTimestamp: created },
  spec: { containers: [], ...(nodeName ? { nodeName } : {}) },
  status: { phase, conditions: [{ type: 'Ready', status: 'False' }] },
});

describe('pod garbage collection', () => {
  it('deletes the oldest terminated pods beyond the threshold, and none with threshold 0', () => {
    const pods = [
      pod('new-done', '2026-01-03T00:00:00Z', 'Succeeded'),
      pod('running', '2026-01-01T00:00:00Z', 'Running'),
      pod('old-failed', '2026-01-01T00:00:00Z', 'Failed'),
      pod('mid-done', '2026-01-02T00:00:00Z', 'Succeeded'),
    ];
    expect(terminatedToDelete(pods, 1).map((p) => p.metadata.name)).toEqual(['old-failed', 'mid-done']);
    expect(terminatedToDelete(pods, 3)).toEqual([]);
    expect(terminatedToDelete(pods, 0)).toEqual([]);
  });

  it('finds the pods of nodes that do not exist, by node', () => {
    const pods = [pod('a', '', 'Running', 'gone'), pod('b', '', 'Running', 'here'), pod('c', '', 'Pending'), pod('d', '', 'Running', 'gone')];
    const missing = podsOnMissingNodes(pods, new Set(['here']));
    expect([...missing.keys()]).toEqual(['gone']);
    expect(missing.get('gone')!.map((p) => p.metadata.name)).toEqual(['a', 'd']);
  });

  it('marks a pod of a missing node Failed with the DisruptionTarget condition', () => {
    const marked = failedByPodGC(pod('a', '', 'Running', 'gone'), new Date('2026-01-01T00:00:00.500Z'));
    expect(marked.status).toEqual({
      phase: 'Failed',
      conditions: [
        { type: 'Ready', status: 'False' },
        {
          type: 'DisruptionTarget',
          status: 'True',
          reason: 'DeletionByPodGC',
          message: 'PodGC: node no longer exists',
          lastTransitionTime: '2026-01-01T00:00:00Z',
        },
      ],
    });
  });
});
