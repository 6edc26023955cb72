import type { KubeObject } from '@app/apimachinery';
import { failedByPodGC, podGcView, podsOnMissingNodes, terminatedToDelete, terminatingOnOutOfServiceNodes } from './podgc.controller.js';

const pod = (name: string, created: string, phase: string, nodeName?: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'ns', uid: `uid-${name}`, creationTimestamp: created },
  spec: { containers: [], ...(nodeName ? { nodeName } : {}) },
  status: { phase, conditions: [{ type: 'Ready', status: 'False' }] },
});

describe('pod garbage collection', () => {
  it('keeps of each pod only what its rules read, and only pods terminated, bound or terminating', () => {
    const full = (extra: Record<string, unknown>): KubeObject =>
      ({
        metadata: { namespace: 'ns', name: 'p', uid: 'u', creationTimestamp: '2026-01-01T00:00:00Z', labels: { a: 'b' }, ...(extra.metadata as object) },
        spec: { containers: [{ name: 'c', image: 'i' }], ...(extra.spec as object) },
        status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }], ...(extra.status as object) },
      }) as KubeObject;
    expect(podGcView(full({}))).toBeUndefined();
    expect(podGcView(full({ spec: { nodeName: 'n1' } }))).toEqual({
      metadata: { namespace: 'ns', name: 'p', uid: 'u', creationTimestamp: '2026-01-01T00:00:00Z' },
      spec: { nodeName: 'n1' },
      status: { phase: 'Running' },
    });
    expect(podGcView(full({ status: { phase: 'Failed', reason: 'Evicted' } }))?.status).toEqual({ phase: 'Failed', reason: 'Evicted' });
    expect(podGcView(full({ metadata: { deletionTimestamp: '2026-01-01T00:01:00Z' } }))?.metadata.deletionTimestamp).toBe('2026-01-01T00:01:00Z');
  });

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

  it('marks a pod it deletes for another reason Failed without a condition', () => {
    expect(failedByPodGC(pod('a', '', 'Running', 'n'), new Date(), false).status).toEqual({
      phase: 'Failed',
      conditions: [{ type: 'Ready', status: 'False' }],
    });
  });

  it('deletes evicted pods before other terminated ones, then the oldest first', () => {
    const evicted = { ...pod('evicted', '2026-01-05T00:00:00Z', 'Failed'), status: { phase: 'Failed', reason: 'Evicted' } };
    const pods = [pod('old-done', '2026-01-01T00:00:00Z', 'Succeeded'), evicted, pod('mid-failed', '2026-01-02T00:00:00Z', 'Failed')];
    expect(terminatedToDelete(pods, 1).map((p) => p.metadata.name)).toEqual(['evicted', 'old-done']);
  });

  it('finds the terminating pods of nodes that are not Ready and tainted out of service', () => {
    const node = (name: string, ready: string | undefined, taint: boolean): KubeObject => ({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name },
      spec: taint ? { taints: [{ key: 'node.kubernetes.io/out-of-service', value: 'nodeshutdown', effect: 'NoExecute' }] } : {},
      status: ready ? { conditions: [{ type: 'Ready', status: ready }] } : {},
    });
    const terminating = (name: string, nodeName: string): KubeObject => {
      const p = pod(name, '', 'Running', nodeName);
      return { ...p, metadata: { ...p.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } };
    };
    const nodes = [node('down', 'Unknown', true), node('silent', undefined, true), node('ready', 'True', true), node('untainted', 'False', false)];
    const pods = [
      terminating('a', 'down'),
      pod('b', '', 'Running', 'down'),
      terminating('c', 'silent'),
      terminating('d', 'ready'),
      terminating('e', 'untainted'),
      terminating('f', 'missing'),
    ];
    expect(terminatingOnOutOfServiceNodes(pods, nodes).map((p) => p.metadata.name)).toEqual(['a', 'c']);
  });
});
