import { describe, expect, it } from '@jest/globals';
import { bindingOf, compilePolicyExpression, evaluatePolicy, policyOf, reasonCode, type PolicyInput } from './policy.model.js';

type Obj = Record<string, unknown>;

const policy = (spec: Obj) => policyOf({ metadata: { name: 'p' }, spec: { matchConstraints: { resourceRules: [] }, ...spec } });
const input = (object: Obj, extra: Partial<PolicyInput> = {}): PolicyInput => ({
  object,
  oldObject: null,
  request: { operation: 'CREATE', userInfo: { username: 'alice' } },
  params: null,
  namespaceObject: { metadata: { name: 'team', labels: { tier: 'gold' } } },
  ...extra,
});
const deployment = (replicas: number, labels: Obj = {}) => ({ metadata: { name: 'd', labels }, spec: { replicas } });

describe('ValidatingAdmissionPolicy evaluation', () => {
  it('passes when every validation is true and reports each false one with its message and reason', () => {
    const p = policy({
      validations: [
        { expression: 'object.spec.replicas <= 5' },
        { expression: 'object.spec.replicas > 0', message: 'at least one replica' },
        { expression: 'object.spec.replicas != 3', messageExpression: "'three (' + string(object.spec.replicas) + ') is not allowed'", reason: 'Forbidden' },
      ],
    });
    expect(evaluatePolicy(p, input(deployment(2))).failures).toEqual([]);
    expect(evaluatePolicy(p, input(deployment(7))).failures).toEqual([
      { message: 'failed expression: object.spec.replicas <= 5', reason: 'Invalid', index: 0 },
    ]);
    expect(evaluatePolicy(p, input(deployment(0))).failures).toEqual([{ message: 'at least one replica', reason: 'Invalid', index: 1 }]);
    expect(evaluatePolicy(p, input(deployment(3))).failures).toEqual([{ message: 'three (3) is not allowed', reason: 'Forbidden', index: 2 }]);
  });

  it('sees params, the request, the namespace and variables (each evaluated once, in order)', () => {
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
    expect(evaluatePolicy(p, input(deployment(6), { params })).failures).toEqual([]);
    expect(evaluatePolicy(p, input(deployment(7), { params })).failures.map((f) => f.message)).toEqual([
      'failed expression: object.spec.replicas <= variables.twice',
    ]);
  });

  it('skips the policy when a match condition is false, and applies the failure policy to errors', () => {
    const p = policy({
      matchConditions: [{ name: 'labelled', expression: 'has(object.metadata.labels.team)' }],
      validations: [{ expression: 'object.spec.missing > 1' }],
    });
    expect(evaluatePolicy(p, input(deployment(1))).matched).toBe(false);
    expect(evaluatePolicy(p, input(deployment(1, { team: 'a' }))).failures).toEqual([
      { message: "expression 'object.spec.missing > 1' resulted in error: no such key: missing", reason: 'Invalid', index: 0 },
    ]);
    const ignore = policy({ failurePolicy: 'Ignore', validations: [{ expression: 'object.spec.missing > 1' }] });
    expect(evaluatePolicy(ignore, input(deployment(1))).failures).toEqual([]);
  });

  it('gives audit annotations under the policy name', () => {
    const p = policy({ auditAnnotations: [{ key: 'replicas', valueExpression: "'set to ' + string(object.spec.replicas)" }] });
    expect(evaluatePolicy(p, input(deployment(5))).annotations).toEqual({ 'p/replicas': 'set to 5' });
  });

  it('compiles with kube’s errors, reads bindings and maps reasons to codes', () => {
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
