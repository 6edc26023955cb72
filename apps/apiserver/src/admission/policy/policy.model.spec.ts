import { describe, expect, it } from '@jest/globals';
import type { AuthorizationAttributes, Authorizer } from '@app/authz';
import { celAuthorizer } from '../../cel/cel.authz.js';
import { bindingOf, compilePolicyExpression, evaluatePolicy, policyOf, reasonCode, type PolicyInput } from './policy.model.js';

type Obj = Record<string, unknown>;

/** Alice may get anything in namespace team and read /healthz; a webhook-like answer for `watch`. */
const asked: AuthorizationAttributes[] = [];
const authorizer: Authorizer = {
  authorize(a) {
    asked.push(a);
    if (a.verb === 'watch') return Promise.resolve({ decision: 'Allow' });
    if (a.verb === 'fail') throw new Error('authorizer out of reach');
    if (a.isResourceRequest && a.verb === 'get' && a.namespace === 'team' && a.user.username === 'alice') return { decision: 'Allow', reason: 'team reader' };
    if (!a.isResourceRequest && a.path === '/healthz') return { decision: 'Allow' };
    return { decision: 'NoOpinion', reason: `no rule for ${a.user.username}` };
  },
};
const alice = celAuthorizer(
  authorizer,
  { username: 'alice', groups: ['dev'] },
  { group: 'apps', resource: 'deployments', subresource: '', namespace: 'team', name: 'd' },
);

const policy = (spec: Obj) => policyOf({ metadata: { name: 'p' }, spec: { matchConstraints: { resourceRules: [] }, ...spec } });
const input = (object: Obj, extra: Partial<PolicyInput> = {}): PolicyInput => ({
  object,
  oldObject: null,
  request: { operation: 'CREATE', userInfo: { username: 'alice' } },
  params: null,
  namespaceObject: { metadata: { name: 'team', labels: { tier: 'gold' } } },
  authorizer: alice,
  ...extra,
});
const deployment = (replicas: number, labels: Obj = {}) => ({ metadata: { name: 'd', labels }, spec: { replicas } });

describe('ValidatingAdmissionPolicy evaluation', () => {
  it('passes when every validation is true and reports each false one with its message and reason', async () => {
    const p = policy({
      validations: [
        { expression: 'object.spec.replicas <= 5' },
        { expression: 'object.spec.replicas > 0', message: 'at least one replica' },
        { expression: 'object.spec.replicas != 3', messageExpression: "'three (' + string(object.spec.replicas) + ') is not allowed'", reason: 'Forbidden' },
      ],
    });
    expect((await evaluatePolicy(p, input(deployment(2)))).failures).toEqual([]);
    expect((await evaluatePolicy(p, input(deployment(7)))).failures).toEqual([
      { message: 'failed expression: object.spec.replicas <= 5', reason: 'Invalid', index: 0 },
    ]);
    expect((await evaluatePolicy(p, input(deployment(0)))).failures).toEqual([{ message: 'at least one replica', reason: 'Invalid', index: 1 }]);
    expect((await evaluatePolicy(p, input(deployment(3)))).failures).toEqual([{ message: 'three (3) is not allowed', reason: 'Forbidden', index: 2 }]);
  });

  it('sees params, the request, the namespace and variables (each evaluated once, in order)', async () => {
    const p = policy({
      variables: [
        { name: 'limit', expression: 'int(params.data.max)' },
        { name: 'twice', expression: 'variables.limit * 2' },
      ],
      validations: [
        { expression: 'object.spec.replicas <= variables.twice' },
        { expression: "request.userInfo.username == 'alice' && namespaceObject.metadata.labels.tier == 'gold'" },
      ],
    });
    const params = { data: { max: '3' } };
    expect((await evaluatePolicy(p, input(deployment(6), { params }))).failures).toEqual([]);
    expect((await evaluatePolicy(p, input(deployment(7), { params }))).failures.map((f) => f.message)).toEqual([
      'failed expression: object.spec.replicas <= variables.twice',
    ]);
  });

  it('skips the policy when a match condition is false, and applies the failure policy to errors', async () => {
    const p = policy({
      matchConditions: [{ name: 'labelled', expression: 'has(object.metadata.labels.team)' }],
      validations: [{ expression: 'object.spec.missing > 1' }],
    });
    expect((await evaluatePolicy(p, input(deployment(1)))).matched).toBe(false);
    expect((await evaluatePolicy(p, input(deployment(1, { team: 'a' })))).failures).toEqual([
      { message: "expression 'object.spec.missing > 1' resulted in error: no such key: missing", reason: 'Invalid', index: 0 },
    ]);
    const ignore = policy({ failurePolicy: 'Ignore', validations: [{ expression: 'object.spec.missing > 1' }] });
    expect((await evaluatePolicy(ignore, input(deployment(1)))).failures).toEqual([]);
  });

  it('gives audit annotations under the policy name', async () => {
    const p = policy({ auditAnnotations: [{ key: 'replicas', valueExpression: "'set to ' + string(object.spec.replicas)" }] });
    expect((await evaluatePolicy(p, input(deployment(5)))).annotations).toEqual({ 'p/replicas': 'set to 5' });
  });

  it('asks the authorizer for the requesting user, a service account, paths and the request resource', async () => {
    const p = policy({
      variables: [{ name: 'canGet', expression: "authorizer.group('').resource('configmaps').namespace('team').check('get').allowed()" }],
      validations: [
        { expression: 'variables.canGet' },
        { expression: "authorizer.path('/healthz').check('get').allowed() && !authorizer.path('/metrics').check('get').allowed()" },
        { expression: "authorizer.requestResource.check('get').allowed()", message: 'request resource' },
        {
          expression:
            "authorizer.group('').resource('pods').subresource('log').namespace('team').name('p').fieldSelector('spec.nodeName=n1').labelSelector('app in (web),!legacy').check('watch').allowed()",
        },
        {
          expression: "authorizer.serviceAccount('team', 'builder').group('').resource('secrets').namespace('team').check('get').allowed()",
          messageExpression: "authorizer.serviceAccount('team', 'builder').group('').resource('secrets').check('get').reason()",
        },
        {
          expression: "!authorizer.group('').resource('secrets').check('fail').errored()",
          messageExpression: "authorizer.group('').resource('secrets').check('fail').error()",
        },
        { expression: "authorizer.group('').resource(' ').check('get').allowed()" },
      ],
    });
    asked.length = 0;
    expect((await evaluatePolicy(p, input(deployment(1)))).failures).toEqual([
      { message: 'no rule for system:serviceaccount:team:builder', reason: 'Invalid', index: 4 },
      { message: 'authorizer out of reach', reason: 'Invalid', index: 5 },
      {
        message: "expression 'authorizer.group('').resource(' ').check('get').allowed()' resulted in error: resource must not be empty",
        reason: 'Invalid',
        index: 6,
      },
    ]);
    expect(asked.find((a) => a.resource === 'deployments')).toMatchObject({ apiGroup: 'apps', namespace: 'team', name: 'd', verb: 'get', apiVersion: '*' });
    expect(asked.find((a) => a.subresource === 'log')).toMatchObject({
      name: 'p',
      fieldSelector: [{ field: 'spec.nodeName', operator: '=', value: 'n1' }],
      labelSelector: [
        { key: 'app', operator: 'in', values: ['web'] },
        { key: 'legacy', operator: '!', values: [] },
      ],
    });
    expect(asked.find((a) => a.resource === 'secrets')?.user).toEqual({
      username: 'system:serviceaccount:team:builder',
      groups: ['system:serviceaccounts', 'system:serviceaccounts:team'],
    });
    const other = celAuthorizer(authorizer, { username: 'bob', groups: [] });
    expect((await evaluatePolicy(p, input(deployment(1), { authorizer: other }))).failures[0]).toEqual({
      message: 'failed expression: variables.canGet',
      reason: 'Invalid',
      index: 0,
    });
    expect(compilePolicyExpression("authorizer.serviceAccount('Bad_NS', 'x').group('').resource('a').check('get').allowed()", 'bool').error).toBeUndefined();
    expect(compilePolicyExpression("authorizer.group('').check('get')", 'bool').error).toMatch(/^compilation failed: ERROR: <input>:1:\d+: /);
  });

  it('compiles with kube’s errors, reads bindings and maps reasons to codes', async () => {
    expect(compilePolicyExpression('object.spec.replicas <', 'bool').error).toMatch(/^compilation failed: ERROR: <input>:1:\d+: /);
    expect(compilePolicyExpression("'x'", 'bool').error).toBe('must evaluate to bool');
    expect(compilePolicyExpression('undeclared > 1', 'bool').error).toMatch(/^compilation failed: ERROR: <input>:1:1: /);
    const b = bindingOf({
      metadata: { name: 'b' },
      spec: { policyName: 'p', validationActions: ['Warn'], paramRef: { selector: { matchLabels: { a: 'b' } }, parameterNotFoundAction: 'Allow' } },
    });
    expect(b.paramRef?.notFound).toBe('Allow');
    expect(b.paramRef?.selector?.matches({ a: 'b' })).toBe(true);
    expect([reasonCode('Invalid'), reasonCode('Forbidden'), reasonCode('Unauthorized'), reasonCode('RequestEntityTooLarge')]).toEqual([422, 403, 401, 413]);
  });
});
