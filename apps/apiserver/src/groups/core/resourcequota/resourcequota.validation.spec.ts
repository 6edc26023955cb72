import { fieldErrorMessage } from '@app/apimachinery';
import { quotaColumn } from './resourcequota.kind.js';
import { validateResourceQuotaSpec, validateResourceQuotaUpdate } from './resourcequota.validation.js';

const errs = (spec: Record<string, unknown>) => validateResourceQuotaSpec(spec).map(fieldErrorMessage);

describe('ResourceQuota validation', () => {
  it('accepts standard, object-count, storage-class and extended names', () => {
    expect(
      errs({
        hard: {
          pods: '10',
          'requests.cpu': '2',
          'limits.memory': '1Gi',
          'count/deployments.apps': '3',
          'gold.storageclass.storage.k8s.io/requests.storage': '5Gi',
          'requests.nvidia.com/gpu': '1',
        },
      }),
    ).toEqual([]);
  });

  it('refuses unknown names, negative and fractional counts', () => {
    expect(errs({ hard: { foo: '1' } })).toEqual(['spec.hard[foo]: Invalid value: "foo": must be a standard resource type or fully qualified']);
    expect(errs({ hard: { storage: '1' } })).toEqual(['spec.hard[storage]: Invalid value: "storage": must be a standard resource for quota']);
    expect(errs({ hard: { 'requests.cpu': '-1' } })).toEqual(['spec.hard[requests.cpu]: Invalid value: "-1": must be greater than or equal to 0']);
    expect(errs({ hard: { pods: '1500m' } })).toEqual(['spec.hard[pods]: Invalid value: "1500m": must be an integer']);
  });

  it('checks scopes against each other and the limited resources', () => {
    expect(errs({ hard: { pods: '1' }, scopes: ['Foo'] })).toEqual(['spec.scopes: Invalid value: []core.ResourceQuotaScope{"Foo"}: unsupported scope']);
    expect(errs({ hard: { 'requests.cpu': '1' }, scopes: ['BestEffort'] })).toEqual([
      'spec.scopes: Invalid value: []core.ResourceQuotaScope{"BestEffort"}: unsupported scope applied to resource',
    ]);
    expect(errs({ hard: { pods: '1' }, scopes: ['BestEffort', 'NotBestEffort'] })).toEqual([
      'spec.scopes: Invalid value: []core.ResourceQuotaScope{"BestEffort", "NotBestEffort"}: conflicting scopes',
    ]);
  });

  it('checks scope selector operators and values', () => {
    const sel = (e: Record<string, unknown>) => errs({ hard: { pods: '1' }, scopeSelector: { matchExpressions: [e] } });
    expect(sel({ scopeName: 'PriorityClass', operator: 'In' })).toEqual([
      "spec.scopeSelector.matchExpressions.values: Required value: must be at least one value when `operator` is 'In' or 'NotIn' for scope selector",
    ]);
    expect(sel({ scopeName: 'BestEffort', operator: 'In', values: ['x'] })).toEqual([
      'spec.scopeSelector.matchExpressions.operator: Invalid value: "In": must be \'Exist\' only operator when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort and ResourceQuotaScopeNotBestEffort',
    ]);
    expect(sel({ scopeName: 'PriorityClass', operator: 'Gt', values: ['1'] })).toEqual([
      'spec.scopeSelector.matchExpressions.operator: Invalid value: "Gt": not a valid selector operator',
    ]);
    // Values and the selector print as Go prints them.
    expect(sel({ scopeName: 'PriorityClass', operator: 'Exists', values: ['a'] })).toEqual([
      "spec.scopeSelector.matchExpressions.values: Invalid value: []string{\"a\"}: must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector",
    ]);
    expect(errs({ hard: { 'requests.storage': '1Gi' }, scopeSelector: { matchExpressions: [{ scopeName: 'BestEffort', operator: 'Exists' }] } })).toEqual([
      'spec.scopeSelector.matchExpressions: Invalid value: core.ScopeSelector{MatchExpressions:[]core.ScopedResourceSelectorRequirement{core.ScopedResourceSelectorRequirement{ScopeName:"BestEffort", Operator:"Exists", Values:[]string(nil)}}}: unsupported scope applied to resource',
    ]);
    expect(validateResourceQuotaUpdate({ hard: { pods: '1' } }, { hard: { pods: '1' }, scopes: ['BestEffort'] }).map(fieldErrorMessage)).toEqual([
      'spec.scopes: Invalid value: []core.ResourceQuotaScope(nil): field is immutable',
    ]);
  });

  it('keeps scopes immutable', () => {
    expect(
      validateResourceQuotaUpdate({ hard: { pods: '1' }, scopes: ['NotBestEffort'] }, { hard: { pods: '1' }, scopes: ['BestEffort'] }).map(fieldErrorMessage),
    ).toEqual(['spec.scopes: Invalid value: []core.ResourceQuotaScope{"NotBestEffort"}: field is immutable']);
  });
});

describe("kubectl's columns", () => {
  it('lists used/hard of limits.* under LIMIT and the rest under REQUEST, sorted', () => {
    const rq = {
      metadata: {},
      status: { hard: { pods: '2', 'requests.cpu': '1', 'limits.cpu': '2', 'count/configmaps': '3' }, used: { pods: '1', 'count/configmaps': '1' } },
    };
    expect(quotaColumn(rq, false)).toBe('count/configmaps: 1/3, pods: 1/2, requests.cpu: 0/1');
    expect(quotaColumn(rq, true)).toBe('limits.cpu: 0/2');
  });
});
