import { AlwaysDenyAuthorizer, authorizerForModes, RbacPolicy, ruleResolverForModes } from '@app/authz';
import { AuthorizationPorts, attributesOf, fieldSelectorTerms, labelSelectorTerms, review, validateAttributes, validateSubjectSpec } from './access.review.js';
import { localSubjectAccessReviewKind, validateLocalSubjectAccessReview } from './localsubjectaccessreview/localsubjectaccessreview.kind.js';
import { selfSubjectAccessReviewKind } from './selfsubjectaccessreview/selfsubjectaccessreview.kind.js';
import { selfSubjectRulesReviewKind } from './selfsubjectrulesreview/selfsubjectrulesreview.kind.js';
import { subjectAccessReviewKind } from './subjectaccessreview/subjectaccessreview.kind.js';

const ctx = (username: string, groups: string[] = []) => ({ user: { username, groups }, dryRun: false, warnings: [], now: () => new Date() });
const sar = (spec: object) => ({ apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', metadata: {}, spec });

describe('access reviews', () => {
  const policy = new RbacPolicy();
  policy.set('Role', { metadata: { name: 'r', namespace: 'ns' }, rules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }] });
  policy.set('RoleBinding', { metadata: { name: 'rb', namespace: 'ns' }, roleRef: { kind: 'Role', name: 'r' }, subjects: [{ kind: 'User', name: 'bob' }] });
  const authz = authorizerForModes(['RBAC'], { rbac: policy });
  const pods = { resourceAttributes: { namespace: 'ns', verb: 'get', resource: 'pods' } };

  it('answers allowed from the authorizer, for the spec user of a SubjectAccessReview, system:masters included', async () => {
    expect((await review(authz, { username: 'bob', groups: [] }, sar(pods))).status).toEqual({
      allowed: true,
      reason: 'RBAC: allowed by RoleBinding "rb/ns" of Role "r" to User "bob"',
    });
    expect((await review(authz, { username: 'eve', groups: [] }, sar(pods))).status).toEqual({ allowed: false });
    expect((await review(authz, { username: 'eve', groups: ['system:masters'] }, sar({ nonResourceAttributes: { path: '/x', verb: 'get' } }))).status).toEqual({
      allowed: true,
    });
    const ports = new AuthorizationPorts();
    ports.authorizer = authz;
    const kind = subjectAccessReviewKind(ports);
    expect((await kind.rest!.create('', sar({ ...pods, user: 'bob' }), ctx('admin'))).status).toEqual({
      allowed: true,
      reason: 'RBAC: allowed by RoleBinding "rb/ns" of Role "r" to User "bob"',
    });
    expect((await kind.rest!.create('', sar({ ...pods, user: 'eve' }), ctx('bob'))).status).toEqual({ allowed: false });
  });

  it('SelfSubjectAccessReview asks for the requesting user; LocalSubjectAccessReview for the URL namespace only', async () => {
    const ports = new AuthorizationPorts();
    ports.authorizer = authz;
    const self = selfSubjectAccessReviewKind(ports);
    expect((await self.rest!.create('', sar(pods), ctx('bob'))).status).toEqual({
      allowed: true,
      reason: 'RBAC: allowed by RoleBinding "rb/ns" of Role "r" to User "bob"',
    });
    expect((await self.rest!.create('', sar(pods), ctx('eve'))).status).toEqual({ allowed: false });
    const local = localSubjectAccessReviewKind(ports);
    expect((await local.rest!.create('ns', sar({ ...pods, user: 'bob' }), ctx('admin'))).status).toMatchObject({ allowed: true });
    await expect(local.rest!.create('other', sar({ ...pods, user: 'bob' }), ctx('admin'))).rejects.toThrow(
      'spec.resourceAttributes.namespace must match namespace: other',
    );
  });

  it('reports a Deny as denied with its reason', async () => {
    expect((await review(new AlwaysDenyAuthorizer(), { username: 'a', groups: [] }, sar(pods))).status).toEqual({
      allowed: false,
      denied: true,
      reason: 'Everything is forbidden.',
    });
  });

  it('validates the spec with kube messages', () => {
    expect(validateAttributes({}).map((e) => e.detail)).toEqual(['exactly one of nonResourceAttributes or resourceAttributes must be specified']);
    expect(validateAttributes({ ...pods, nonResourceAttributes: { path: '/' } })[0].field).toBe('spec.nonResourceAttributes');
    expect(validateSubjectSpec(pods).map((e) => e.detail)).toEqual(['at least one of user or group must be specified']);
    const lsar = { ...sar({ ...pods, user: 'bob' }), metadata: { namespace: 'other' } };
    expect(validateLocalSubjectAccessReview(lsar).map((e) => `${e.field}: ${e.detail}`)).toEqual([
      'spec.resourceAttributes.namespace: must match metadata.namespace',
    ]);
  });

  it('takes a field selector as written or as terms, one of the two, for the authorizers to see', () => {
    const withSelectors = (fieldSelector: object, labelSelector?: object) => ({
      resourceAttributes: { verb: 'list', resource: 'pods', fieldSelector, ...(labelSelector ? { labelSelector } : {}) },
    });
    expect(validateAttributes(withSelectors({ rawSelector: 'spec.nodeName=n1', requirements: [{ key: 'a', operator: 'In', values: ['b'] }] }))).toEqual([
      {
        type: 'FieldValueInvalid',
        field: 'spec.resourceAttributes.fieldSelector.rawSelector',
        value: 'spec.nodeName=n1',
        detail: 'may not specified at the same time as requirements',
      },
    ]);
    expect(validateAttributes(withSelectors({ rawSelector: 'a=b' }, {})).map((e) => `${e.field}: ${e.detail}`)).toEqual([
      'spec.resourceAttributes.labelSelector.requirements: when spec.resourceAttributes.labelSelector is specified, requirements or rawSelector is required',
    ]);
    expect(fieldSelectorTerms({ rawSelector: 'spec.nodeName==n1,x!=y' })).toEqual([
      { field: 'spec.nodeName', operator: '==', value: 'n1' },
      { field: 'x', operator: '!=', value: 'y' },
    ]);
    expect(
      fieldSelectorTerms({
        requirements: [
          { key: 'spec.nodeName', operator: 'In', values: ['n1'] },
          { key: 'x', operator: 'NotIn', values: ['y'] },
        ],
      }),
    ).toEqual([
      { field: 'spec.nodeName', operator: '=', value: 'n1' },
      { field: 'x', operator: '!=', value: 'y' },
    ]);
    // What kube cannot turn into field requirements gives none.
    expect(fieldSelectorTerms({ requirements: [{ key: 'a', operator: 'In', values: ['1', '2'] }] })).toBeUndefined();
    expect(fieldSelectorTerms({ requirements: [{ key: 'a', operator: 'Exists' }] })).toBeUndefined();
    expect(fieldSelectorTerms({ rawSelector: 'no operator' })).toBeUndefined();
    expect(attributesOf({ username: 'u', groups: [] }, withSelectors({ rawSelector: 'spec.nodeName=n1' })).fieldSelector).toEqual([
      { field: 'spec.nodeName', operator: '=', value: 'n1' },
    ]);
  });

  it('takes a label selector as written or as terms, for the authorizers to see', () => {
    expect(labelSelectorTerms({ rawSelector: 'tier in (web,db),!legacy,app=x' })).toEqual([
      { key: 'app', operator: '=', values: ['x'] },
      { key: 'legacy', operator: '!', values: [] },
      { key: 'tier', operator: 'in', values: ['db', 'web'] },
    ]);
    expect(
      labelSelectorTerms({
        requirements: [
          { key: 'tier', operator: 'NotIn', values: ['db'] },
          { key: 'owner', operator: 'Exists' },
        ],
      }),
    ).toEqual([
      { key: 'owner', operator: 'exists', values: [] },
      { key: 'tier', operator: 'notin', values: ['db'] },
    ]);
    // What does not parse, or selects everything, gives none.
    expect(labelSelectorTerms({ rawSelector: 'a in (' })).toBeUndefined();
    expect(labelSelectorTerms({ requirements: [{ key: 'a', operator: 'Matches', values: ['x'] }] })).toBeUndefined();
    expect(labelSelectorTerms({ rawSelector: '' })).toBeUndefined();
    const attrs = attributesOf(
      { username: 'u', groups: [] },
      { resourceAttributes: { verb: 'list', resource: 'pods', labelSelector: { rawSelector: 'app=x' } } },
    );
    expect(attrs.labelSelector).toEqual([{ key: 'app', operator: '=', values: ['x'] }]);
  });

  it('SelfSubjectRulesReview lists the rules of the namespace and needs a namespace', async () => {
    const ports = new AuthorizationPorts();
    ports.rules = ruleResolverForModes(['RBAC'], { rbac: policy });
    const kind = selfSubjectRulesReviewKind(ports);
    const obj = { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', metadata: {}, spec: { namespace: 'ns' } };
    expect((await kind.rest!.create('', obj, ctx('bob'))).status).toEqual({
      resourceRules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }],
      nonResourceRules: [],
      incomplete: false,
    });
    await expect(kind.rest!.create('', { ...obj, spec: {} }, ctx('bob'))).rejects.toThrow('no namespace on request');
  });
});
