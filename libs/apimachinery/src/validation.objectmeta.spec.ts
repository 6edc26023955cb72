import { Errors, fieldErrorMessage } from './errors.js';
import { nameIsDNSLabel } from './validation.names.js';
import { validateObjectMetaCreate, validateObjectMetaUpdate, type ObjectMetaLike } from './validation.objectmeta.js';

const fields = (errs: { field: string }[]): string[] => errs.map((e) => e.field);

describe('validateObjectMetaCreate (apimachinery/pkg/api/validation/objectmeta.go)', () => {
  it('accepts a valid namespaced object', () => {
    expect(validateObjectMetaCreate({ name: 'web-1', namespace: 'default', labels: { app: 'web' } }, { namespaced: true })).toEqual([]);
  });

  it('name is required unless generated, and checked by the kind rule', () => {
    const errs = validateObjectMetaCreate({ namespace: 'ns' }, { namespaced: true });
    expect(errs).toEqual([{ type: 'FieldValueRequired', field: 'metadata.name', detail: 'name or generateName is required' }]);
    const bad = validateObjectMetaCreate({ name: 'Web', namespace: 'ns' }, { namespaced: true });
    expect(Errors.invalid('', 'ConfigMap', 'Web', bad).message).toBe(
      `ConfigMap "Web" is invalid: metadata.name: Invalid value: "Web": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
    );
    expect(fields(validateObjectMetaCreate({ name: 'a.b' }, { namespaced: false, nameValidator: nameIsDNSLabel }))).toEqual(['metadata.name']);
    expect(fields(validateObjectMetaCreate({ name: 'x-abcde', generateName: 'x-' }, { namespaced: false }))).toEqual([]);
    expect(fields(validateObjectMetaCreate({ name: 'x', generateName: 'X_' }, { namespaced: false }))).toEqual(['metadata.generateName']);
  });

  it('namespace required or forbidden by scope', () => {
    expect(validateObjectMetaCreate({ name: 'a' }, { namespaced: true })).toEqual([{ type: 'FieldValueRequired', field: 'metadata.namespace', detail: '' }]);
    const f = validateObjectMetaCreate({ name: 'a', namespace: 'x' }, { namespaced: false });
    expect(f.map(fieldErrorMessage)).toEqual(['metadata.namespace: Forbidden: not allowed on this type']);
    expect(fields(validateObjectMetaCreate({ name: 'a', namespace: 'a.b' }, { namespaced: true }))).toEqual(['metadata.namespace']);
  });

  it('labels and annotations', () => {
    const errs = validateObjectMetaCreate(
      { name: 'a', labels: { 'bad key!': 'v', ok: '-bad' }, annotations: { 'Example.COM/Key': 'x' } },
      { namespaced: false },
    );
    expect(fields(errs)).toEqual(['metadata.labels', 'metadata.labels']);
    const big = validateObjectMetaCreate({ name: 'a', annotations: { k: 'x'.repeat(256 * 1024) } }, { namespaced: false });
    expect(big.map(fieldErrorMessage)).toEqual(['metadata.annotations: Too long: may not be more than 262144 bytes']);
    expect(validateObjectMetaCreate({ name: 'a', annotations: { k: 'x'.repeat(256 * 1024 - 1) } }, { namespaced: false })).toEqual([]);
  });

  it('owner references', () => {
    const errs = validateObjectMetaCreate(
      {
        name: 'a',
        ownerReferences: [
          { apiVersion: 'apps/', kind: '', name: 'n', uid: 'u', controller: true },
          { apiVersion: 'v1', kind: 'Event', name: 'e', uid: 'u2', controller: true },
        ],
      },
      { namespaced: false },
    );
    expect(errs.map((e) => `${e.field}: ${e.detail}`)).toEqual([
      'metadata.ownerReferences.apiVersion: version must not be empty',
      'metadata.ownerReferences.kind: kind must not be empty',
      'metadata.ownerReferences: /v1, Kind=Event is disallowed from being an owner',
      'metadata.ownerReferences: Only one reference can have Controller set to true. Found "true" in references for /n and Event/e',
    ]);
  });

  it('finalizers', () => {
    expect(fields(validateObjectMetaCreate({ name: 'a', finalizers: ['example.com/f', 'orphan'] }, { namespaced: false }))).toEqual([]);
    expect(validateObjectMetaCreate({ name: 'a', finalizers: ['orphan', 'foregroundDeletion'] }, { namespaced: false })[0].detail).toBe(
      'finalizer orphan and foregroundDeletion cannot be both set',
    );
    expect(fields(validateObjectMetaCreate({ name: 'a', finalizers: ['a b'] }, { namespaced: false }))).toEqual(['metadata.finalizers']);
    const kube = validateObjectMetaCreate({ name: 'a', finalizers: ['custom'] }, { namespaced: false, kubeFinalizers: true });
    expect(kube.map(fieldErrorMessage)).toEqual([
      'metadata.finalizers[0]: Invalid value: "custom": name is neither a standard finalizer name nor is it fully qualified',
    ]);
  });

  it('generation and managedFields', () => {
    const errs = validateObjectMetaCreate(
      { name: 'a', generation: -1, managedFields: [{ manager: 'm', operation: 'Patch', fieldsType: 'FieldsV2' }] },
      { namespaced: false },
    );
    expect(errs.map((e) => `${e.field}: ${e.detail}`)).toEqual([
      'metadata.generation: must be greater than or equal to 0',
      'metadata.managedFields[0].operation: must be `Apply` or `Update`',
      'metadata.managedFields[0].fieldsType: must be `FieldsV1`',
    ]);
  });

  it('survives garbage input without throwing', () => {
    expect(() =>
      validateObjectMetaCreate({ name: 'a', labels: 5, annotations: [], finalizers: 'x', ownerReferences: {} } as unknown as ObjectMetaLike, {
        namespaced: false,
      }),
    ).not.toThrow();
  });
});

describe('validateObjectMetaUpdate', () => {
  const old: ObjectMetaLike = {
    name: 'a',
    namespace: 'ns',
    uid: 'u1',
    resourceVersion: '5',
    generation: 2,
    creationTimestamp: '2024-01-01T00:00:00Z',
    generateName: 'a-',
  };

  it('accepts label changes and a changed generateName', () => {
    expect(validateObjectMetaUpdate({ ...old, labels: { x: 'y' }, generateName: 'b-' }, old)).toEqual([]);
  });

  it('immutable fields', () => {
    const errs = validateObjectMetaUpdate({ ...old, name: 'b', namespace: 'other', uid: 'u2', creationTimestamp: '2025-01-01T00:00:00Z' }, old);
    expect(errs.map(fieldErrorMessage)).toEqual([
      'metadata.name: Invalid value: "b": field is immutable',
      'metadata.namespace: Invalid value: "other": field is immutable',
      'metadata.uid: Invalid value: "u2": field is immutable',
      'metadata.creationTimestamp: Invalid value: "2025-01-01T00:00:00Z": field is immutable',
    ]);
  });

  it('resourceVersion required, generation not decremented', () => {
    const errs = validateObjectMetaUpdate({ ...old, resourceVersion: '', generation: 1 }, old);
    expect(fields(errs)).toEqual(['metadata.resourceVersion', 'metadata.generation']);
  });

  it('no new finalizers while deleting', () => {
    const deleting = { ...old, deletionTimestamp: '2024-02-01T00:00:00Z', finalizers: ['a/x'] };
    expect(validateObjectMetaUpdate({ ...deleting, finalizers: [] }, deleting)).toEqual([]);
    const errs = validateObjectMetaUpdate({ ...deleting, finalizers: ['a/x', 'b/y'] }, deleting);
    expect(errs.map(fieldErrorMessage)).toEqual([
      'metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"b/y"}',
    ]);
  });
});
