import { humanDuration, toTable } from './table.js';
import type { KindDeclaration } from './kind.types.js';

describe('humanDuration (Kubernetes HumanDuration)', () => {
  it.each([
    [0, '0s'],
    [-1500, '0s'],
    [-5000, '<invalid>'],
    [45_000, '45s'],
    [119_000, '119s'],
    [200_000, '3m20s'],
    [300_000, '5m'],
    [3_600_000, '60m'],
    [4 * 3_600_000 + 60_000 * 5, '4h5m'],
    [10 * 3_600_000, '10h'],
    [50 * 3_600_000, '2d2h'],
    [30 * 86_400_000, '30d'],
    [(365 * 3 + 10) * 86_400_000, '3y10d'],
  ])('%d ms -> %s', (ms, s) => expect(humanDuration(ms)).toBe(s));
});

describe('toTable', () => {
  const decl = { group: '', version: 'v1', kind: 'ConfigMap', plural: 'configmaps', singular: 'configmap', namespaced: true, schema: {} } as KindDeclaration;
  const obj = { metadata: { name: 'a', creationTimestamp: '2024-01-01T00:00:00Z', resourceVersion: '5' } };
  it('uses Name and Created At by default, with PartialObjectMetadata rows', () => {
    const t = toTable(decl, [obj], { now: new Date('2024-01-01T00:01:00Z') });
    expect(t.columnDefinitions.map((c) => c.name)).toEqual(['Name', 'Created At']);
    expect(t.rows[0].cells).toEqual(['a', '2024-01-01T00:00:00Z']);
    expect(t.rows[0].object).toEqual({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata });
  });
  it('adds declared columns then Age', () => {
    const d = { ...decl, tableColumns: [{ name: 'Data', type: 'integer' as const, priority: 0, cell: () => 2 }] };
    const t = toTable(d, [obj], { now: new Date('2024-01-01T00:01:00Z'), includeObject: 'None' });
    expect(t.columnDefinitions.map((c) => c.name)).toEqual(['Name', 'Data', 'Age']);
    expect(t.rows[0]).toEqual({ cells: ['a', 2, '60s'] });
  });
  it('prints the Name cell a kind declares (a default StorageClass)', () => {
    const d = { ...decl, nameCell: (o: { metadata: { name?: string } }) => `${o.metadata.name} (default)` };
    const t = toTable(d, [obj], { now: new Date('2024-01-01T00:01:00Z'), includeObject: 'None' });
    expect(t.rows[0]).toEqual({ cells: ['a (default)', '2024-01-01T00:00:00Z'] });
  });
});
