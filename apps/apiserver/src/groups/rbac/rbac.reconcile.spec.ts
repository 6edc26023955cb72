import type { KubeObject } from '@app/apimachinery';
import { reconcileBinding, reconcileRole } from './rbac.reconcile.js';

const role = (rules: unknown[], meta: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'ClusterRole',
  metadata: { name: 'r', ...meta },
  rules,
});
const binding = (subjects: unknown[], meta: Record<string, unknown> = {}, roleName = 'r'): KubeObject => ({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'ClusterRoleBinding',
  metadata: { name: 'b', ...meta },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: roleName },
  subjects,
});

describe('bootstrap policy reconciliation', () => {
  const wanted = role([{ apiGroups: [''], resources: ['pods', 'services'], verbs: ['get', 'list'] }], {
    labels: { 'kubernetes.io/bootstrapping': 'rbac-defaults' },
    annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'true' },
  });

  it('adds the rules a role lacks, broken down, after its own, and the missing labels and annotations', () => {
    const existing = role([{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] }], { labels: { mine: 'x' } });
    expect(reconcileRole(existing, wanted)).toEqual({
      update: {
        ...existing,
        metadata: {
          name: 'r',
          labels: { mine: 'x', 'kubernetes.io/bootstrapping': 'rbac-defaults' },
          annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'true' },
        },
        rules: [
          { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] },
          { apiGroups: [''], resources: ['services'], verbs: ['get'] },
          { apiGroups: [''], resources: ['services'], verbs: ['list'] },
        ],
      },
    });
  });

  it('changes nothing when the role covers the policy, or is annotated autoupdate=false', () => {
    const covering = role([{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }], { labels: wanted.metadata.labels, annotations: wanted.metadata.annotations });
    expect(reconcileRole(covering, wanted)).toBeUndefined();
    expect(reconcileRole(role([], { annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'false' } }), wanted)).toBeUndefined();
  });

  it('adds missing aggregation selectors and leaves the rules of an aggregated role to the controller', () => {
    const sel = (k: string) => ({ matchLabels: { [k]: 'true' } });
    const want = { ...role([]), aggregationRule: { clusterRoleSelectors: [sel('a'), sel('b')] } };
    const existing = { ...role([{ apiGroups: [''], resources: ['x'], verbs: ['get'] }]), aggregationRule: { clusterRoleSelectors: [sel('a')] } };
    expect(reconcileRole(existing, want)).toEqual({ update: { ...existing, aggregationRule: { clusterRoleSelectors: [sel('a'), sel('b')] } } });
  });

  it('adds the subjects a binding lacks, keeps the others, recreates one with another roleRef, and leaves one with autoupdate=false', () => {
    const want = binding([{ kind: 'Group', name: 'system:authenticated', apiGroup: 'rbac.authorization.k8s.io' }]);
    const mine = { kind: 'User', name: 'alice', apiGroup: 'rbac.authorization.k8s.io' };
    expect(reconcileBinding(binding([mine]), want)).toEqual({
      update: expect.objectContaining({ subjects: [mine, { kind: 'Group', name: 'system:authenticated', apiGroup: 'rbac.authorization.k8s.io' }] }),
    });
    expect(reconcileBinding(binding([{ kind: 'Group', name: 'system:authenticated', apiGroup: 'rbac.authorization.k8s.io' }]), want)).toBeUndefined();
    expect(reconcileBinding(binding([mine], {}, 'other'), want)).toEqual({ recreate: want });
    // The policy may leave the roleRef's apiGroup to its default.
    const roleRefDefaulted = { ...want, roleRef: { kind: 'ClusterRole', name: 'r' } };
    expect(
      reconcileBinding(binding([{ kind: 'Group', name: 'system:authenticated', apiGroup: 'rbac.authorization.k8s.io' }]), roleRefDefaulted),
    ).toBeUndefined();
    expect(reconcileBinding(binding([]), { ...want, roleRef: { kind: 'Role', name: 'r' } })).toEqual({
      recreate: { ...want, roleRef: { kind: 'Role', name: 'r' } },
    });
    expect(reconcileBinding(binding([], { annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'false' } }), want)).toBeUndefined();
    expect(reconcileBinding(binding([], { annotations: { 'rbac.authorization.kubernetes.io/autoupdate': 'false' } }, 'other'), want)).toBeUndefined();
  });
});
