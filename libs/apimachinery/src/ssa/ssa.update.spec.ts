import { applyIntent } from './ssa.apply.js';
import { configMapSchema, deploymentSchema } from './ssa.fixtures.js';
import {
  ANCIENT_CHANGES_MANAGER,
  decodeManagedFields,
  defaultFieldManager,
  fieldManagerFor,
  isResetManagedFields,
  ManagedFieldsError,
  type ManagedFieldsEntry,
  managerIdentifier,
  printManager,
  setManagedFields,
  validateApplyFieldManager,
} from './ssa.managed-fields.js';
import { trackUpdate } from './ssa.update.js';

type Obj = Record<string, unknown>;
const T0 = new Date('2024-05-01T10:00:00Z');
const T1 = new Date('2024-05-01T11:00:00Z');

function cm(data: Record<string, string>, metadata: Obj = {}): Obj {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default', ...metadata }, data };
}

function withMF(o: Obj, mf: ManagedFieldsEntry[]): Obj {
  return { ...o, metadata: { ...(o.metadata as Obj), managedFields: mf } };
}

function upd(old: Obj | undefined, next: Obj, manager: string, now = T1, extra: { subresource?: string; apiVersion?: string } = {}) {
  return trackUpdate({ old, new: next, manager, schema: configMapSchema, apiVersion: extra.apiVersion ?? 'v1', now, subresource: extra.subresource });
}

describe('field ownership of updates', () => {
  it('rule 4: a create owns every field it sets; added maps carry "." as in Kubernetes', () => {
    const mf = upd(undefined, cm({ a: '1' }, { labels: { app: 'x' } }), 'kubectl-create', T0);
    expect(mf).toEqual([
      {
        manager: 'kubectl-create',
        operation: 'Update',
        apiVersion: 'v1',
        time: '2024-05-01T10:00:00Z',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:data': { '.': {}, 'f:a': {} }, 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } } },
      },
    ]);
  });

  it('rule 4: an update takes only the fields it changes, extends its own entry and never conflicts', () => {
    const created = withMF(cm({ a: '1', b: '2' }), upd(undefined, cm({ a: '1', b: '2' }), 'creator', T0));
    const mf = upd(created, cm({ a: '1', b: 'B', c: '3' }), 'editor');
    const editor = mf.find((e) => e.manager === 'editor')!;
    expect(editor.fieldsV1).toEqual({ 'f:data': { 'f:b': {}, 'f:c': {} } });
    expect(mf.find((e) => e.manager === 'creator')!.fieldsV1).toEqual({ 'f:data': { '.': {}, 'f:a': {} } });
    const again = upd(withMF(cm({ a: '1', b: 'B', c: '3' }), mf), cm({ a: 'A', b: 'B', c: '3' }), 'editor', new Date('2024-05-02T00:00:00Z'));
    expect(again.find((e) => e.manager === 'editor')!.fieldsV1).toEqual({ 'f:data': { 'f:a': {}, 'f:b': {}, 'f:c': {} } });
    expect(again.find((e) => e.manager === 'editor')!.time).toBe('2024-05-02T00:00:00Z');
  });

  it('rule 4: removed fields leave every manager; an update that changes nothing keeps times', () => {
    const created = withMF(cm({ a: '1', b: '2' }), upd(undefined, cm({ a: '1', b: '2' }), 'creator', T0));
    const removed = upd(created, cm({ a: '1' }), 'editor');
    expect(removed).toHaveLength(1);
    expect(removed[0].fieldsV1).toEqual({ 'f:data': { '.': {}, 'f:a': {} } });
    const noop = upd(created, cm({ a: '1', b: '2' }, { resourceVersion: '7' }), 'editor');
    expect(noop).toEqual((created.metadata as Obj).managedFields);
  });

  it('rule 8: [{}] resets managedFields first; the writer then owns what the same request changes', () => {
    const applied = applyIntent({ intent: cm({ a: '1', b: '2' }), manager: 'applier', force: false, schema: configMapSchema, apiVersion: 'v1', now: T0 });
    const reset = upd(applied.object, withMF(cm({ a: '1', b: '2' }), [{}]), 'resetter');
    expect(reset).toEqual([]);
    const resetAndChange = upd(applied.object, withMF(cm({ a: '1', b: 'changed' }), [{}]), 'resetter');
    expect(resetAndChange).toEqual([
      {
        manager: 'resetter',
        operation: 'Update',
        apiVersion: 'v1',
        time: '2024-05-01T11:00:00Z',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:data': { 'f:b': {} } },
      },
    ]);
  });

  it('rule 8: an empty list alone does not reset; neither does an absent or undecodable list', () => {
    const applied = applyIntent({ intent: cm({ a: '1' }), manager: 'applier', force: false, schema: configMapSchema, apiVersion: 'v1', now: T0 });
    const stored = (applied.object.metadata as Obj).managedFields;
    expect(upd(applied.object, withMF(cm({ a: '1' }), []), 'x')).toEqual(stored);
    expect(upd(applied.object, cm({ a: '1' }), 'x')).toEqual(stored);
    expect(upd(applied.object, withMF(cm({ a: '1' }), [{ manager: 'bad', operation: 'Delete' } as unknown as ManagedFieldsEntry]), 'x')).toEqual(stored);
    expect(isResetManagedFields([{}])).toBe(true);
    expect(isResetManagedFields([])).toBe(false);
    expect(isResetManagedFields([{}, {}])).toBe(false);
    expect(isResetManagedFields(undefined)).toBe(false);
  });

  it('rule 8: a valid non-empty list sent by the client replaces the stored one', () => {
    const applied = applyIntent({ intent: cm({ a: '1' }), manager: 'applier', force: false, schema: configMapSchema, apiVersion: 'v1', now: T0 });
    const mine: ManagedFieldsEntry[] = [
      {
        manager: 'someone',
        operation: 'Update',
        apiVersion: 'v1',
        time: '2023-01-01T00:00:00Z',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:data': { 'f:a': {} } },
      },
    ];
    expect(upd(applied.object, withMF(cm({ a: '1' }), mine), 'x')).toEqual(mine);
    // Through a subresource the request's list is ignored (ignoreManagedFieldsFromRequestObject).
    expect(upd(applied.object, withMF(cm({ a: '1' }), mine), 'x', T1, { subresource: 'status' })).toEqual((applied.object.metadata as Obj).managedFields);
  });

  it('separates Update entries by subresource and apiVersion, Apply entries only by subresource', () => {
    const base = withMF(cm({ a: '1' }), upd(undefined, cm({ a: '1' }), 'm', T0));
    const viaStatus = upd(base, cm({ a: '2' }), 'm', T1, { subresource: 'status' });
    // The main-resource entry keeps what the status write did not take (the data map itself, `{}`).
    expect(viaStatus.map((e) => [e.manager, e.subresource, e.fieldsV1])).toEqual([
      ['m', undefined, { 'f:data': {} }],
      ['m', 'status', { 'f:data': { 'f:a': {} } }],
    ]);
    expect(managerIdentifier({ manager: 'm', operation: 'Update', apiVersion: 'v1' })).toBe('{"manager":"m","operation":"Update","apiVersion":"v1"}');
    expect(managerIdentifier({ manager: 'm', operation: 'Apply', apiVersion: 'v1' })).toBe('{"manager":"m","operation":"Apply"}');
    expect(printManager(managerIdentifier({ manager: 'm', operation: 'Update', apiVersion: 'apps/v1', subresource: 'status' }))).toBe(
      '"m" with subresource "status" using apps/v1',
    );
  });

  it('caps Update entries at 10, merging the oldest into ancient-changes', () => {
    let obj = withMF(cm({}), []);
    for (let i = 0; i < 12; i++) {
      const data = { ...(obj.data as Record<string, string>), [`k${i}`]: 'v' };
      const next = { ...obj, data };
      const mf = upd(obj, next, `m${String(i).padStart(2, '0')}`, new Date(Date.UTC(2024, 0, 1, 0, i)));
      obj = withMF(next, mf);
    }
    const mf = (obj.metadata as Obj).managedFields as ManagedFieldsEntry[];
    expect(mf.filter((e) => e.operation === 'Update')).toHaveLength(10);
    const ancient = mf.find((e) => e.manager === ANCIENT_CHANGES_MANAGER)!;
    expect(Object.keys(ancient.fieldsV1!['f:data'] as Obj).sort()).toEqual(['f:k0', 'f:k1', 'f:k2']);
    expect(mf.find((e) => e.manager === 'm00')).toBeUndefined();
  });

  it('sorts entries as Kubernetes does: Apply first, then by time, manager', () => {
    const a = applyIntent({ intent: cm({ a: '1' }), manager: 'zz-applier', force: false, schema: configMapSchema, apiVersion: 'v1', now: T1 });
    const mf = upd(a.object, cm({ a: '1', b: '2' }), 'aa-editor', T0);
    expect(mf.map((e) => `${e.operation}/${e.manager}`)).toEqual(['Apply/zz-applier', 'Update/aa-editor']);
  });

  it('uses the Deployment schema: a containers item added by an update is a member with its fields', () => {
    const d = (image: string) => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd' },
      spec: { template: { spec: { containers: [{ name: 'nginx', image }] } } },
    });
    const created = withMF(d('a'), trackUpdate({ new: d('a'), manager: 'c', schema: deploymentSchema, apiVersion: 'apps/v1', now: T0 }));
    const mf = trackUpdate({ old: created, new: d('b'), manager: 'kubectl-set', schema: deploymentSchema, apiVersion: 'apps/v1', now: T1 });
    expect(mf.find((e) => e.manager === 'kubectl-set')!.fieldsV1).toEqual({
      'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"nginx"}': { 'f:image': {} } } } } },
    });
    expect(JSON.stringify(mf.find((e) => e.manager === 'c')!.fieldsV1)).toContain('"k:{\\"name\\":\\"nginx\\"}":{".":{},"f:name":{}}');
  });
});

describe('managed fields helpers', () => {
  it('rule 5: the default field manager is the user agent up to its first "/"', () => {
    expect(defaultFieldManager('kubectl/v1.30.0 (linux/amd64) kubernetes/7c48c2b')).toBe('kubectl');
    expect(defaultFieldManager('Go-http-client/2.0')).toBe('Go-http-client');
    expect(defaultFieldManager('a\u0007b')).toBe('ab');
    expect(defaultFieldManager('x'.repeat(300))).toHaveLength(128);
    expect(fieldManagerFor('explicit', 'kubectl/v1')).toBe('explicit');
    expect(fieldManagerFor(undefined, 'kubectl/v1')).toBe('kubectl');
  });

  it('rule 1: an apply without fieldManager is 422 on PatchOptions', () => {
    const e = validateApplyFieldManager(undefined)!;
    expect(e.code).toBe(422);
    expect(e.message).toBe('PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch');
    expect(validateApplyFieldManager('kubectl')).toBeUndefined();
  });

  it('rejects undecodable entries with the Kubernetes messages', () => {
    expect(() => decodeManagedFields([{ operation: 'Delete', apiVersion: 'v1', fieldsType: 'FieldsV1' }])).toThrow('operation must be `Apply` or `Update`');
    expect(() => decodeManagedFields([{ operation: 'Apply', fieldsType: 'FieldsV1' }])).toThrow('apiVersion must not be empty');
    expect(() => decodeManagedFields([{ operation: 'Apply', apiVersion: 'v1' }])).toThrow('missing fieldsType in managed fields entry 0');
    expect(() => decodeManagedFields([{ operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV2' }])).toThrow(ManagedFieldsError);
    expect(() => decodeManagedFields('nope')).toThrow(ManagedFieldsError);
  });

  it('setManagedFields removes the field when there are no entries', () => {
    const o = cm({}, { managedFields: [{}] });
    setManagedFields(o, []);
    expect('managedFields' in (o.metadata as Obj)).toBe(false);
  });
});
