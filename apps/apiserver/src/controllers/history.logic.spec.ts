import type { KubeObject } from '@app/apimachinery';
import { equalRevisions, newRevision, nextRevisionNumber, revisionName, sortRevisions, templateOfRevision, templatePatch } from './history.logic.js';

const set = (image: string): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata: { name: 'web', namespace: 'default', uid: 'u1' },
  spec: { template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image }] } } },
});

describe('controller revisions', () => {
  it('hold a patch restoring the template, named and labelled by its hash, owned by the workload', () => {
    const data = templatePatch(set('nginx:1'));
    expect(data).toEqual({
      spec: { template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx:1' }] }, $patch: 'replace' } },
    });
    const r = newRevision(set('nginx:1'), 'StatefulSet', data, 1);
    const hash = (r.metadata.labels as Record<string, string> | undefined)?.['controller-revision-hash'];
    expect(hash).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]+$/);
    expect(r.metadata.name).toBe(`web-${hash}`);
    expect(r.metadata.labels).toEqual({ app: 'web', 'controller-revision-hash': hash });
    expect(r.metadata.ownerReferences).toEqual([
      { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', uid: 'u1', controller: true, blockOwnerDeletion: true },
    ]);
    expect((r as { revision?: number }).revision).toBe(1);
    expect(templateOfRevision(r)).toEqual({ metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx:1' }] } });
    // Another template, or a collision count, is another name.
    expect(newRevision(set('nginx:2'), 'StatefulSet', templatePatch(set('nginx:2')), 2).metadata.name).not.toBe(r.metadata.name);
    expect(newRevision(set('nginx:1'), 'StatefulSet', data, 1, 1).metadata.name).not.toBe(r.metadata.name);
    expect(revisionName('x'.repeat(300), 'abc')).toHaveLength(227);
  });

  it('are found by their data, sorted by number and numbered one above the highest', () => {
    const a = newRevision(set('nginx:1'), 'StatefulSet', templatePatch(set('nginx:1')), 3);
    const b = newRevision(set('nginx:2'), 'StatefulSet', templatePatch(set('nginx:2')), 1);
    expect(equalRevisions([a, b], templatePatch(set('nginx:2')))).toEqual([b]);
    expect(sortRevisions([a, b])).toEqual([b, a]);
    expect(nextRevisionNumber([a, b])).toBe(4);
    expect(nextRevisionNumber([])).toBe(1);
  });
});
