import { breakdownRule, compactString, escalationMessage, ruleCovers, uncoveredRules } from './rbac.escalation.js';

describe('RBAC escalation checks', () => {
  it('breaks a rule down to one group, resource, verb and name each', () => {
    expect(breakdownRule({ apiGroups: ['', 'apps'], resources: ['pods'], verbs: ['get', 'list'] })).toHaveLength(4);
    expect(breakdownRule({ apiGroups: [''], resources: ['pods'], resourceNames: ['a', 'b'], verbs: ['get'] })).toEqual([
      { apiGroups: [''], resources: ['pods'], resourceNames: ['a'], verbs: ['get'] },
      { apiGroups: [''], resources: ['pods'], resourceNames: ['b'], verbs: ['get'] },
    ]);
    expect(breakdownRule({ nonResourceURLs: ['/a', '/b'], verbs: ['get'] })).toHaveLength(2);
  });

  it('covers with *, */subresource, URL prefixes and names', () => {
    expect(ruleCovers({ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }, { apiGroups: ['x'], resources: ['y/z'], verbs: ['bind'] })).toBe(true);
    expect(ruleCovers({ apiGroups: [''], resources: ['pods'], verbs: ['get'] }, { apiGroups: [''], resources: ['pods/log'], verbs: ['get'] })).toBe(false);
    expect(ruleCovers({ apiGroups: [''], resources: ['*/log'], verbs: ['get'] }, { apiGroups: [''], resources: ['pods/log'], verbs: ['get'] })).toBe(true);
    expect(ruleCovers({ nonResourceURLs: ['/api/*'], verbs: ['get'] }, { nonResourceURLs: ['/api/v1'], verbs: ['get'] })).toBe(true);
    const named = { apiGroups: [''], resources: ['pods'], resourceNames: ['a'], verbs: ['get'] };
    expect(ruleCovers(named, { apiGroups: [''], resources: ['pods'], resourceNames: ['a'], verbs: ['get'] })).toBe(true);
    expect(ruleCovers(named, { apiGroups: [''], resources: ['pods'], verbs: ['get'] })).toBe(false);
  });

  it("reports what is not held in kube's words", () => {
    const held = [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }];
    const missing = uncoveredRules(held, [{ apiGroups: [''], resources: ['configmaps', 'secrets'], verbs: ['get', 'list'] }]);
    expect(missing.map(compactString)).toEqual([
      '{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}',
      '{APIGroups:[""], Resources:["secrets"], Verbs:["list"]}',
    ]);
    expect(escalationMessage({ username: 'alice', groups: ['dev', 'system:authenticated'] }, missing)).toBe(
      'user "alice" (groups=["dev" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}',
    );
    expect(uncoveredRules(held, [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }])).toEqual([]);
  });
});
