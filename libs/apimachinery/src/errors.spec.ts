import { Errors, fieldErrorMessage, StatusError } from './errors.js';

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
