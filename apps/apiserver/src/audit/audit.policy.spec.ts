import { AuditPolicyError, evaluateAuditPolicy, parseAuditPolicy } from './audit.policy.js';
import type { AuditAttributes } from '../pipeline/audit.port.js';

const alice = { username: 'alice', groups: ['devs', 'system:authenticated'] };

function attrs(over: Partial<AuditAttributes> = {}): AuditAttributes {
  return {
    user: alice,
    verb: 'get',
    isResourceRequest: true,
    path: '/api/v1/namespaces/a/pods/p',
    apiGroup: '',
    resource: 'pods',
    subresource: '',
    namespace: 'a',
    name: 'p',
    ...over,
  };
}

const policy = (rules: string, extra = '') => parseAuditPolicy(`apiVersion: audit.k8s.io/v1\nkind: Policy\n${extra}rules:\n${rules}`);

describe('audit policy', () => {
  it('takes the first rule that matches, and level None when none does', () => {
    const p = policy(`
- level: None
  users: [system:kube-proxy]
- level: RequestResponse
  resources: [{ group: "", resources: [secrets] }]
- level: Metadata
  verbs: [get, list]
`);
    expect(evaluateAuditPolicy(p, attrs()).level).toBe('Metadata');
    expect(evaluateAuditPolicy(p, attrs({ resource: 'secrets' })).level).toBe('RequestResponse');
    expect(evaluateAuditPolicy(p, attrs({ user: { username: 'system:kube-proxy', groups: [] } })).level).toBe('None');
    expect(evaluateAuditPolicy(p, attrs({ verb: 'create' })).level).toBe('None');
  });

  it('matches groups, namespaces (cluster scope is the empty one) and resource names', () => {
    const p = policy(`
- level: Request
  userGroups: [devs]
  namespaces: [""]
- level: Metadata
  resources: [{ group: apps, resources: [deployments], resourceNames: [web] }]
`);
    expect(evaluateAuditPolicy(p, attrs({ namespace: '', resource: 'nodes' })).level).toBe('Request');
    expect(evaluateAuditPolicy(p, attrs({ user: { username: 'bob', groups: [] }, namespace: '' })).level).toBe('None');
    expect(evaluateAuditPolicy(p, attrs({ apiGroup: 'apps', resource: 'deployments', name: 'web' })).level).toBe('Metadata');
    expect(evaluateAuditPolicy(p, attrs({ apiGroup: 'apps', resource: 'deployments', name: 'db' })).level).toBe('None');
    // A request without a user (failed authentication) matches no rule that names users or groups.
    expect(evaluateAuditPolicy(p, attrs({ user: undefined, namespace: '' })).level).toBe('None');
  });

  it('matches subresources as resource/subresource, */subresource and resource/*', () => {
    const p = policy(`
- level: Request
  resources: [{ group: "", resources: ["pods/log"] }]
- level: Metadata
  resources: [{ group: "", resources: ["*/status"] }]
- level: RequestResponse
  resources: [{ group: "", resources: ["services/*"] }]
`);
    expect(evaluateAuditPolicy(p, attrs({ subresource: 'log' })).level).toBe('Request');
    expect(evaluateAuditPolicy(p, attrs({ subresource: 'status' })).level).toBe('Metadata');
    expect(evaluateAuditPolicy(p, attrs({ resource: 'services', subresource: 'proxy' })).level).toBe('RequestResponse');
    expect(evaluateAuditPolicy(p, attrs()).level).toBe('None');
  });

  it('matches non-resource URLs exactly or by a trailing wildcard, never resource requests', () => {
    const p = policy(`
- level: Metadata
  nonResourceURLs: ["/healthz*", /version]
`);
    const nr = (path: string) => attrs({ isResourceRequest: false, path, resource: '', namespace: '', name: '' });
    expect(evaluateAuditPolicy(p, nr('/healthz/etcd')).level).toBe('Metadata');
    expect(evaluateAuditPolicy(p, nr('/version')).level).toBe('Metadata');
    expect(evaluateAuditPolicy(p, nr('/versions')).level).toBe('None');
    expect(evaluateAuditPolicy(p, attrs({ path: '/healthz' })).level).toBe('None');
  });

  it('omits the policy stages together with the rule stages, and lets a rule override omitManagedFields', () => {
    const p = policy(
      `
- level: Metadata
  omitStages: [ResponseStarted]
  omitManagedFields: false
- level: Request
`,
      'omitStages: [RequestReceived]\nomitManagedFields: true\n',
    );
    const first = evaluateAuditPolicy(p, attrs());
    expect([...first.omitStages].sort()).toEqual(['RequestReceived', 'ResponseStarted']);
    expect(first.omitManagedFields).toBe(false);
    expect(evaluateAuditPolicy(p, attrs({ verb: 'list' })).omitManagedFields).toBe(false);
    const p2 = policy(`\n- level: Request\n`, 'omitManagedFields: true\n');
    expect(evaluateAuditPolicy(p2, attrs())).toMatchObject({ level: 'Request', omitManagedFields: true });
  });

  it('refuses a policy that breaks the rules, naming each field at fault', () => {
    const fault = (text: string): string => {
      let caught: unknown;
      try {
        parseAuditPolicy(text);
      } catch (e) {
        caught = e;
      }
      if (!(caught instanceof AuditPolicyError)) throw new Error(`not refused as a policy error: ${String(caught)}`);
      return caught.message;
    };
    expect(fault('apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules: [{level: None}]')).toMatch(/audit.k8s.io\/v1/);
    expect(fault('apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: []')).toBe('the policy has no rules');
    expect(fault('apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{}]')).toBe('rules[0].level: Required value');
    expect(fault('apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: Everything}]')).toMatch(/^rules\[0\]\.level: Unsupported value: "Everything"/);
    expect(fault('apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, nonResourceURLs: [healthz, "/a*b"]}]')).toBe(
      `rules[0].nonResourceURLs[0]: Invalid value: "healthz": non-resource URL rules must begin with a '/' character; ` +
        `rules[0].nonResourceURLs[1]: Invalid value: "/a*b": non-resource URL wildcards '*' must be the final character of the rule`,
    );
    expect(fault('apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, nonResourceURLs: ["/x"], namespaces: [a]}]')).toMatch(
      /rules\[0\]\.nonResourceURLs: Invalid value: rules cannot apply to both regular resources and non-resource URLs/,
    );
    expect(fault('apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, resources: [{group: "Apps/v1"}]}]')).toMatch(
      /rules\[0\]\.resources\[0\]\.group: Invalid value/,
    );
    expect(fault('apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, resources: [{resourceNames: [x]}]}]')).toMatch(
      /resourceNames: Invalid value: using resourceNames requires at least one resource/,
    );
    expect(fault('apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [Sometimes]\nrules: [{level: None}]')).toMatch(
      /^omitStages\[0\]: Invalid value: "Sometimes"/,
    );
    expect(fault('apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, user: [a]}]')).toBe('rules[0].user: unknown field');
    expect(fault('{')).toMatch(/does not parse/);
  });
});
