import { Errors, fieldErrorMessage, goLabelSelector, goMap, goSlice, goStruct, StatusError } from './errors.js';

describe('Status errors (k8s.io/apimachinery/pkg/api/errors)', () => {
  it('renders NotFound and AlreadyExists with the qualified resource', () => {
    expect(Errors.notFound({ group: '', resource: 'configmaps' }, 'x').toStatus()).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'configmaps "x" not found',
      reason: 'NotFound',
      details: { name: 'x', group: '', kind: 'configmaps' },
      code: 404,
    });
    expect(Errors.alreadyExists({ group: 'apps', resource: 'deployments' }, 'd').message).toBe('deployments.apps "d" already exists');
  });
  it('aggregates field errors of Invalid into one message and one cause each', () => {
    const e = Errors.invalid('', 'ConfigMap', 'c', [
      { type: 'FieldValueInvalid', field: 'metadata.name', value: 'Bad', detail: 'must be lowercase' },
      { type: 'FieldValueRequired', field: 'data', detail: '' },
    ]);
    expect(e.code).toBe(422);
    expect(e.message).toBe('ConfigMap "c" is invalid: [metadata.name: Invalid value: "Bad": must be lowercase, data: Required value]');
    expect(e.details?.causes).toEqual([
      { reason: 'FieldValueInvalid', message: 'Invalid value: "Bad": must be lowercase', field: 'metadata.name' },
      { reason: 'FieldValueRequired', message: 'Required value', field: 'data' },
    ]);
  });
  it('formats single field errors like field.Error', () => {
    expect(fieldErrorMessage({ type: 'FieldValueNotSupported', field: 'spec.x', value: 'a', detail: 'supported values: "b"' })).toBe(
      'spec.x: Unsupported value: "a": supported values: "b"',
    );
    expect(fieldErrorMessage({ type: 'FieldValueForbidden', field: 'immutable', detail: 'field is immutable' })).toBe(
      'immutable: Forbidden: field is immutable',
    );
  });
  it('prints slices, maps and structs as field.Error prints Go values (%#v)', () => {
    const invalid = (value: unknown) => fieldErrorMessage({ type: 'FieldValueInvalid', field: 'f', value, detail: 'd' });
    expect(invalid(goSlice(['a', 'b"c']))).toBe('f: Invalid value: []string{"a", "b\\"c"}: d');
    expect(invalid(goSlice([], '[]core.ResourceQuotaScope'))).toBe('f: Invalid value: []core.ResourceQuotaScope{}: d');
    expect(invalid(goSlice(undefined))).toBe('f: Invalid value: []string(nil): d');
    expect(invalid(goSlice([80, 443], '[]int32'))).toBe('f: Invalid value: []int32{80, 443}: d');
    // Keys sorted, no space after the colon, as Go's fmt prints a map.
    expect(invalid(goMap({ b: '2', a: '1' }))).toBe('f: Invalid value: map[string]string{"a":"1", "b":"2"}: d');
    expect(invalid(goMap(undefined))).toBe('f: Invalid value: map[string]string(nil): d');
    expect(
      invalid(
        goStruct('rbac.RoleRef', [
          ['APIGroup', 'g'],
          ['Kind', 'Role'],
          ['Name', undefined],
        ]),
      ),
    ).toBe('f: Invalid value: rbac.RoleRef{APIGroup:"g", Kind:"Role", Name:""}: d');
    expect(invalid(goLabelSelector({ matchExpressions: [{ key: 'k', operator: 'In', values: ['v'] }] }))).toBe(
      'f: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement{Key:"k", Operator:"In", Values:[]string{"v"}}}}: d',
    );
    // The Status cause carries the same text.
    const e = Errors.invalid('', 'RoleBinding', 'b', [
      { type: 'FieldValueInvalid', field: 'roleRef', value: goStruct('rbac.RoleRef', [['Name', 'x']]), detail: 'cannot change roleRef' },
    ]);
    expect(e.details?.causes?.[0]?.message).toBe('Invalid value: rbac.RoleRef{Name:"x"}: cannot change roleRef');
  });
  it('carries Retry-After for 504 Too large resource version and 429', () => {
    const e = Errors.tooLargeResourceVersion(100, 7, 2);
    expect(e.code).toBe(504);
    expect(e.message).toContain('Too large resource version');
    expect(e.headers).toEqual({ 'Retry-After': '2' });
    expect(e.toStatus().details?.retryAfterSeconds).toBe(2);
    expect(Errors.tooManyRequests('slow down').code).toBe(429);
  });
  it('omits empty details and is an Error', () => {
    const e = Errors.badRequest('nope');
    expect(e).toBeInstanceOf(Error);
    expect(e).toBeInstanceOf(StatusError);
    expect(e.toStatus().details).toBeUndefined();
  });
});
