import type { AuthorizationAttributes } from './authorizer.port.js';
import { authorizerForModes } from './authorizer.modes.js';
import { NodeAuthorizer, nodeIdentity, type NodeGraph, type NodeGraphKind } from './node.authorizer.js';
import { ruleResolverForModes } from './rules.resolver.js';

/** A graph where node n1 reaches exactly the objects listed. */
const reached = new Set([
  'secret:ns/s1',
  'configmap:ns/c1',
  'persistentvolumeclaim:ns/claim',
  'persistentvolume:/pv1',
  'serviceaccount:ns/sa1',
  'volumeattachment:/va1',
  'pod:ns/p1',
]);
const graph: NodeGraph = {
  isSynced: () => true,
  reaches: (node: string, kind: NodeGraphKind, ns: string, name: string) => node === 'n1' && reached.has(`${kind}:${ns}/${name}`),
};
const n1 = { username: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] };
const attrs = (over: Partial<AuthorizationAttributes>, user = n1): AuthorizationAttributes => ({
  user,
  verb: 'get',
  isResourceRequest: true,
  path: '',
  apiGroup: '',
  apiVersion: 'v1',
  resource: 'secrets',
  subresource: '',
  namespace: 'ns',
  name: 's1',
  ...over,
});
const authz = new NodeAuthorizer(graph);
const decide = (over: Partial<AuthorizationAttributes>, user = n1) => authz.authorize(attrs(over, user));

describe('NodeAuthorizer', () => {
  it('knows a node by its group and user name prefix', () => {
    expect(nodeIdentity(n1)).toBe('n1');
    expect(nodeIdentity({ username: 'system:node:n1', groups: [] })).toBeUndefined();
    expect(nodeIdentity({ username: 'alice', groups: ['system:nodes'] })).toBeUndefined();
    expect(nodeIdentity({ username: 'system:node:', groups: ['system:nodes'] })).toBe('');
    expect(decide({}, { username: 'alice', groups: [] })).toEqual({ decision: 'NoOpinion' });
    expect(decide({}, { username: 'system:node:', groups: ['system:nodes'] })).toEqual({
      decision: 'NoOpinion',
      reason: 'unknown node for user "system:node:"',
    });
  });

  it('lets a node read the Secrets and ConfigMaps its pods use, and no others', () => {
    expect(decide({}).decision).toBe('Allow');
    expect(decide({ verb: 'watch' }).decision).toBe('Allow');
    expect(decide({ resource: 'configmaps', name: 'c1', verb: 'list' }).decision).toBe('Allow');
    expect(decide({ name: 's2' })).toEqual({ decision: 'NoOpinion', reason: "no relationship found between node 'n1' and this object" });
    expect(decide({}, { username: 'system:node:n2', groups: ['system:nodes'] }).decision).toBe('NoOpinion');
    // A list of the whole collection names nothing.
    expect(decide({ verb: 'list', name: '' })).toEqual({ decision: 'NoOpinion', reason: 'No Object name found' });
    expect(decide({ verb: 'update' })).toEqual({ decision: 'NoOpinion', reason: 'can only read resources of this type' });
    expect(decide({ namespace: '' })).toEqual({ decision: 'NoOpinion', reason: 'can only read namespaced object of this type' });
  });

  it('lets a node get its claims and volumes, update a claim status, and create tokens of its service accounts', () => {
    expect(decide({ resource: 'persistentvolumeclaims', name: 'claim' }).decision).toBe('Allow');
    expect(decide({ resource: 'persistentvolumeclaims', name: 'claim', verb: 'list' }).reason).toBe('can only get individual resources of this type');
    expect(decide({ resource: 'persistentvolumeclaims', name: 'claim', verb: 'patch', subresource: 'status' }).decision).toBe('Allow');
    expect(decide({ resource: 'persistentvolumes', namespace: '', name: 'pv1' }).decision).toBe('Allow');
    expect(decide({ apiGroup: 'storage.k8s.io', resource: 'volumeattachments', namespace: '', name: 'va1' }).decision).toBe('Allow');
    expect(decide({ resource: 'serviceaccounts', subresource: 'token', verb: 'create', name: 'sa1' }).decision).toBe('Allow');
    expect(decide({ resource: 'serviceaccounts', subresource: 'token', verb: 'create', name: 'other' }).decision).toBe('NoOpinion');
    expect(decide({ resource: 'serviceaccounts', verb: 'get', name: 'sa1' }).reason).toBe('can only create tokens for individual service accounts');
  });

  it('keeps a node to its own Lease and CSINode', () => {
    const lease = (verb: string, name: string, namespace = 'kube-node-lease') =>
      decide({ apiGroup: 'coordination.k8s.io', resource: 'leases', verb, name, namespace });
    expect(lease('update', 'n1').decision).toBe('Allow');
    expect(lease('create', '').decision).toBe('Allow');
    expect(lease('update', 'n2').reason).toBe('can only access node lease with the same name as the requesting node');
    expect(lease('get', 'n1', 'default').reason).toBe('can only access leases in the "kube-node-lease" system namespace');
    expect(lease('list', '').reason).toBe('can only get, create, update, patch, or delete a node lease');
    const csi = (verb: string, name: string) => decide({ apiGroup: 'storage.k8s.io', resource: 'csinodes', verb, name, namespace: '' });
    expect(csi('patch', 'n1').decision).toBe('Allow');
    expect(csi('delete', 'n2').reason).toBe('can only access CSINode with the same name as the requesting node');
  });

  it('lets a node read only its own Node, and its pods by name or by a spec.nodeName selector', () => {
    const node = (verb: string, name: string, subresource = '') => decide({ resource: 'nodes', verb, name, subresource, namespace: '' });
    expect(node('get', 'n1').decision).toBe('Allow');
    expect(node('watch', 'n1').decision).toBe('Allow');
    expect(node('list', '')).toEqual({ decision: 'NoOpinion', reason: "node 'n1' cannot read all nodes, only its own Node object" });
    expect(node('get', 'n2')).toEqual({ decision: 'NoOpinion', reason: "node 'n1' cannot read 'n2', only its own Node object" });
    expect(node('patch', 'n1', 'status').decision).toBe('Allow');
    expect(node('create', '').decision).toBe('Allow');
    expect(node('delete', 'n1')).toEqual({ decision: 'NoOpinion' });

    const pods = (over: Partial<AuthorizationAttributes>) => decide({ resource: 'pods', name: '', ...over });
    const selector = (value: string, operator = '=') => [{ field: 'spec.nodeName', operator, value }];
    expect(pods({ verb: 'list', namespace: '' })).toEqual({ decision: 'NoOpinion', reason: 'can only list/watch pods with spec.nodeName field selector' });
    expect(pods({ verb: 'watch', namespace: '', fieldSelector: selector('n1') }).decision).toBe('Allow');
    expect(pods({ verb: 'list', fieldSelector: selector('n1', '==') }).decision).toBe('Allow');
    expect(pods({ verb: 'list', fieldSelector: selector('n2') }).reason).toBe('can only list/watch pods with spec.nodeName field selector');
    expect(pods({ verb: 'list', fieldSelector: selector('n1', '!=') }).reason).toBe('can only list/watch pods with spec.nodeName field selector');
    expect(pods({ verb: 'get', name: 'p1' }).decision).toBe('Allow');
    expect(pods({ verb: 'list', name: 'p1' }).decision).toBe('Allow');
    expect(pods({ verb: 'get', name: 'p2' })).toEqual({ decision: 'NoOpinion', reason: "no relationship found between node 'n1' and this object" });
    expect(pods({ verb: 'create' }).decision).toBe('Allow');
    expect(pods({ verb: 'patch', name: 'p2', subresource: 'status' }).decision).toBe('Allow');
    expect(pods({ verb: 'create', name: 'p2', subresource: 'eviction' }).decision).toBe('Allow');
    expect(pods({ verb: 'update', name: 'p1' })).toEqual({ decision: 'NoOpinion' });
  });

  it("decides other requests of a node by the system:node role's rules", () => {
    expect(decide({ resource: 'services', verb: 'list', name: '' }).decision).toBe('Allow');
    expect(decide({ apiGroup: 'authentication.k8s.io', resource: 'tokenreviews', verb: 'create', namespace: '', name: '' }).decision).toBe('Allow');
    expect(decide({ resource: 'namespaces', verb: 'delete', namespace: '', name: 'ns' })).toEqual({ decision: 'NoOpinion' });
  });

  it('reaches nothing before the graph is loaded', () => {
    const cold = new NodeAuthorizer({ isSynced: () => false, reaches: () => true });
    expect(cold.authorize(attrs({})).decision).toBe('NoOpinion');
  });

  it('is the Node mode of --authorization-mode, with kube rule resolution', () => {
    const union = authorizerForModes(['Node', 'RBAC'], { nodeGraph: graph, rbac: { bindingsFor: () => [], roleRules: () => undefined } as never });
    expect(union.authorize(attrs({}))).toEqual({ decision: 'Allow' });
    const rules = ruleResolverForModes(['Node']);
    expect(rules.rulesFor(n1, 'ns')).toEqual({
      resourceRules: [],
      nonResourceRules: [],
      incomplete: true,
      errors: ['node authorizer does not support user rule resolution'],
    });
    expect(rules.rulesFor({ username: 'alice', groups: [] }, 'ns').incomplete).toBe(false);
  });
});
