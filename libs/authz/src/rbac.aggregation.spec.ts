import { aggregatedRules, sameRules } from './rbac.aggregation.js';
import type { RbacObject } from './rbac.policy.js';

const cr = (name: string, labels: Record<string, string>, rules: RbacObject['rules'], selectorLabel?: string): RbacObject => ({
  metadata: { name, labels },
  rules,
  ...(selectorLabel ? { aggregationRule: { clusterRoleSelectors: [{ matchLabels: { [selectorLabel]: 'true' } }] } } : {}),
});

describe('ClusterRole aggregation', () => {
  it('unions the rules of the selected roles by name, each distinct rule once, never its own', () => {
    const pods = { verbs: ['get'], apiGroups: [''], resources: ['pods'] };
    const cms = { verbs: ['get'], apiGroups: [''], resources: ['configmaps'] };
    const view = cr('view', { 'agg-edit': 'true' }, [], 'agg-view');
    const roles = [view, cr('z-extra', { 'agg-view': 'true' }, [cms, pods]), cr('a-base', { 'agg-view': 'true' }, [pods]), cr('other', {}, [{ verbs: ['*'] }])];
    expect(aggregatedRules(view, roles)).toEqual([pods, cms]);
    expect(aggregatedRules(roles[1], roles)).toBeUndefined();
    expect(aggregatedRules(cr('none', {}, null, 'nothing-has-this'), roles)).toEqual([]);
  });

  it('compares rule lists treating absent and empty lists alike', () => {
    expect(sameRules(null, [])).toBe(true);
    expect(sameRules([{ verbs: ['get'], resourceNames: [] }], [{ verbs: ['get'] }])).toBe(true);
    expect(sameRules([{ verbs: ['get'] }], [{ verbs: ['list'] }])).toBe(false);
  });
});
