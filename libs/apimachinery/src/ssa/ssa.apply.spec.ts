import { StatusError } from '../errors.js';
import { applyIntent, type ApplyInput } from './ssa.apply.js';
import { FieldSet } from './ssa.fieldset.js';
import { configMapSchema, deploymentSchema, unstructuredSchema, widgetSchema } from './ssa.fixtures.js';
import type { ManagedFieldsEntry } from './ssa.managed-fields.js';
import { trackUpdate } from './ssa.update.js';

type Obj = Record<string, unknown>;
const T0 = new Date('2024-05-01T10:00:00.123Z');
const T1 = new Date('2024-05-01T11:00:00Z');

function cm(data: Record<string, string> | undefined, extra: Obj = {}): Obj {
  const o: Obj = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default', ...((extra.metadata as Obj) ?? {}) } };
  if (data) o.data = data;
  return o;
}

function apply(live: Obj | undefined, intent: Obj, manager: string, opts: Partial<ApplyInput> = {}) {
  return applyIntent({ live, intent, manager, force: false, schema: configMapSchema, apiVersion: 'v1', now: T0, ...opts });
}

function entry(obj: Obj, manager: string, operation = 'Apply'): ManagedFieldsEntry | undefined {
  const mf = (obj.metadata as Obj).managedFields as ManagedFieldsEntry[] | undefined;
  return mf?.find((e) => e.manager === manager && e.operation === operation);
}

function catchStatus(fn: () => unknown): StatusError {
  try {
    fn();
  } catch (e) {
    if (e instanceof StatusError) return e;
    throw e;
  }
  throw new Error('expected a StatusError');
}

/** A stored object as the store would have it after a create by `kubectl-client-side-apply` (an Update). */
function createdByUpdate(obj: Obj, manager: string, schema = configMapSchema, apiVersion = 'v1'): Obj {
  const mf = trackUpdate({ new: obj, manager, schema, apiVersion, now: T0 });
  return { ...obj, metadata: { ...(obj.metadata as Obj), uid: 'u1', resourceVersion: '5', managedFields: mf } };
}

describe('server-side apply', () => {
  it('rule 1: managedFields in the applied object is 400 "metadata.managedFields must be nil"', () => {
    const e = catchStatus(() => apply(undefined, cm({ a: '1' }, { metadata: { managedFields: [] } }), 'm'));
    expect(e.code).toBe(400);
    expect(e.reason).toBe('BadRequest');
    expect(e.message).toBe('metadata.managedFields must be nil');
    // An explicit null is the same as absent (Go: GetManagedFields() == nil).
    expect(() => apply(undefined, cm({ a: '1' }, { metadata: { managedFields: null } }), 'm')).not.toThrow();
  });

  it('rule 1: an intent of another apiVersion is 400 with the Kubernetes wording', () => {
    const e = catchStatus(() =>
      applyIntent({
        intent: { apiVersion: 'apps/v1beta1', kind: 'Deployment', metadata: { name: 'd' } },
        manager: 'm',
        force: false,
        schema: deploymentSchema,
        apiVersion: 'apps/v1',
        now: T0,
      }),
    );
    expect(e.code).toBe(400);
    expect(e.message).toBe('Incorrect version specified in apply patch. Specified patch version: apps/v1beta1, expected: apps/v1');
  });

  it('rule 1/6: a map-list item without its key field is 400', () => {
    const d = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { template: { spec: { containers: [{ image: 'x' }] } } } };
    const e = catchStatus(() => applyIntent({ intent: d, manager: 'm', force: false, schema: deploymentSchema, apiVersion: 'apps/v1', now: T0 }));
    expect(e.code).toBe(400);
    expect(e.message).toContain('.spec.template.spec.containers: element 0: associative list with keys has an element that omits key field "name"');
    const dup = { ...d, spec: { template: { spec: { containers: [{ name: 'a' }, { name: 'a' }] } } } };
    expect(
      catchStatus(() => applyIntent({ intent: dup, manager: 'm', force: false, schema: deploymentSchema, apiVersion: 'apps/v1', now: T0 })).message,
    ).toContain('duplicate entries for key [name="a"]');
  });

  it('rule 9: create via apply (no live object) records one Apply entry without name/namespace', () => {
    const r = apply(undefined, cm({ key: 'v' }, { metadata: { labels: { app: 'x' } } }), 'kubectl');
    expect(r.changed).toBe(true);
    expect(r.object.data).toEqual({ key: 'v' });
    expect(r.managedFields).toEqual([
      {
        manager: 'kubectl',
        operation: 'Apply',
        apiVersion: 'v1',
        time: '2024-05-01T10:00:00Z',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:data': { 'f:key': {} }, 'f:metadata': { 'f:labels': { 'f:app': {} } } },
      },
    ]);
    expect((r.object.metadata as Obj).managedFields).toEqual(r.managedFields);
  });

  it('rule 2: merges the intent into the live object; the intent wins for duplicated values', () => {
    const live = createdByUpdate(cm({ a: '1', b: '2' }), 'editor');
    const r = apply(live, cm({ b: 'two', c: '3' }), 'applier', { force: true });
    expect(r.object.data).toEqual({ a: '1', b: 'two', c: '3' });
    expect((r.object.metadata as Obj).uid).toBe('u1');
  });

  it('rule 2/3: fields the manager applied before and no longer applies are removed', () => {
    const first = apply(undefined, cm({ a: '1', b: '2' }, { metadata: { labels: { x: 'y' } } }), 'applier');
    const second = apply(first.object, cm({ a: '1' }), 'applier', { now: T1 });
    expect(second.object.data).toEqual({ a: '1' });
    expect((second.object.metadata as Obj).labels).toBeUndefined();
    expect(entry(second.object, 'applier')!.fieldsV1).toEqual({ 'f:data': { 'f:a': {} } });
    expect(entry(second.object, 'applier')!.time).toBe('2024-05-01T11:00:00Z');
  });

  it('rule 2/3: an intent of an empty map empties the map it owned and is idempotent', () => {
    const first = apply(undefined, cm({ a: '1', b: '2' }), 'm').object;
    const emptied = apply(first, { ...cm(undefined), data: {} }, 'm', { now: T1 });
    expect(emptied.object.data).toEqual({});
    expect(emptied.changed).toBe(true);
    const again = apply(emptied.object, { ...cm(undefined), data: {} }, 'm', { now: T1 });
    expect(again.changed).toBe(false);
    expect(again.object).toEqual(emptied.object);
  });

  it('rule 2/3: a field dropped from the intent stays when another manager owns it', () => {
    const first = apply(undefined, cm({ a: '1', b: '2' }), 'one');
    const shared = apply(first.object, cm({ b: '2' }), 'two');
    const dropped = apply(shared.object, cm({ a: '1' }), 'one');
    expect(dropped.object.data).toEqual({ a: '1', b: '2' });
    expect(entry(dropped.object, 'one')!.fieldsV1).toEqual({ 'f:data': { 'f:a': {} } });
    expect(entry(dropped.object, 'two')!.fieldsV1).toEqual({ 'f:data': { 'f:b': {} } });
  });

  it('rule 3: managers that set the same value share ownership, without conflict', () => {
    const first = apply(undefined, cm({ key: 'v' }), 'one');
    const second = apply(first.object, cm({ key: 'v' }), 'two');
    expect(entry(second.object, 'one')!.fieldsV1).toEqual({ 'f:data': { 'f:key': {} } });
    expect(entry(second.object, 'two')!.fieldsV1).toEqual({ 'f:data': { 'f:key': {} } });
    expect(second.changed).toBe(false);
    // Later changes of the shared field by either applier conflict with the other.
    const e = catchStatus(() => apply(second.object, cm({ key: 'w' }), 'one'));
    expect(e.message).toBe('Apply failed with 1 conflict: conflict with "two": .data.key');
  });

  it('rule 4: changing a field owned by another manager is a 409 worded as Kubernetes words it', () => {
    const live = createdByUpdate(cm({ key: 'v' }), 'kubectl-client-side-apply');
    const e = catchStatus(() => apply(live, cm({ key: 'changed' }), 'kubectl'));
    expect(e.code).toBe(409);
    expect(e.reason).toBe('Conflict');
    expect(e.message).toBe('Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using v1: .data.key');
    expect(e.toStatus().details).toEqual({
      causes: [{ reason: 'FieldManagerConflict', message: 'conflict with "kubectl-client-side-apply" using v1', field: '.data.key' }],
    });
  });

  it('rule 4: several conflicts are grouped by manager, sorted', () => {
    let live = apply(undefined, cm({ a: '1', b: '2' }), 'zeta').object;
    live = {
      ...live,
      metadata: {
        ...(live.metadata as Obj),
        managedFields: [
          ...((live.metadata as Obj).managedFields as ManagedFieldsEntry[]),
          {
            manager: 'alpha',
            operation: 'Update',
            apiVersion: 'v1',
            time: '2024-01-01T00:00:00Z',
            fieldsType: 'FieldsV1',
            fieldsV1: { 'f:data': { 'f:a': {} } },
          },
        ],
      },
    };
    const e = catchStatus(() => apply(live, cm({ a: 'x', b: 'y' }), 'me'));
    expect(e.message).toBe('Apply failed with 3 conflicts: conflicts with "alpha" using v1:\n- .data.a\nconflicts with "zeta":\n- .data.a\n- .data.b');
    expect(e.toStatus().details!.causes).toHaveLength(3);
  });

  it('rule 4: force=true moves ownership: the field leaves the other manager', () => {
    const live = createdByUpdate(cm({ key: 'v', other: 'o' }), 'kubectl-client-side-apply');
    const r = apply(live, cm({ key: 'changed' }), 'kubectl', { force: true });
    expect(r.object.data).toEqual({ key: 'changed', other: 'o' });
    expect(entry(r.object, 'kubectl')!.fieldsV1).toEqual({ 'f:data': { 'f:key': {} } });
    expect(entry(r.object, 'kubectl-client-side-apply', 'Update')!.fieldsV1).toEqual({ 'f:data': { '.': {}, 'f:other': {} } });
  });

  it('rule 4: removing the field from the intent drops ownership and keeps the value', () => {
    const live = createdByUpdate(cm({ key: 'v' }), 'editor');
    const mine = apply(live, cm({ key: 'v', mine: '1' }), 'me');
    const r = apply(mine.object, cm({ mine: '1' }), 'me');
    expect(r.object.data).toEqual({ key: 'v', mine: '1' });
    expect(entry(r.object, 'me')!.fieldsV1).toEqual({ 'f:data': { 'f:mine': {} } });
    expect(entry(r.object, 'editor', 'Update')!.fieldsV1).toEqual({ 'f:data': { '.': {}, 'f:key': {} } });
  });

  it('rule 4: Update operations never conflict and take ownership from appliers', () => {
    const applied = apply(undefined, cm({ key: 'v' }), 'applier');
    const edited: Obj = { ...applied.object, data: { key: 'edited' } };
    const mf = trackUpdate({ old: applied.object, new: edited, manager: 'kubectl-edit', schema: configMapSchema, apiVersion: 'v1', now: T1 });
    expect(mf.find((e) => e.manager === 'applier')).toBeUndefined();
    expect(mf).toEqual([
      {
        manager: 'kubectl-edit',
        operation: 'Update',
        apiVersion: 'v1',
        time: '2024-05-01T11:00:00Z',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:data': { 'f:key': {} } },
      },
    ]);
    // The applier now conflicts with the editor when it re-applies its old value.
    const e = catchStatus(() => apply({ ...edited, metadata: { ...(edited.metadata as Obj), managedFields: mf } }, cm({ key: 'v' }), 'applier'));
    expect(e.message).toBe('Apply failed with 1 conflict: conflict with "kubectl-edit" using v1: .data.key');
  });

  it("rule 4: a manager's own Update entry is a different manager for conflicts", () => {
    const live = createdByUpdate(cm({ key: 'v' }), 'tool');
    const e = catchStatus(() => apply(live, cm({ key: 'w' }), 'tool'));
    expect(e.message).toBe('Apply failed with 1 conflict: conflict with "tool" using v1: .data.key');
  });

  it('rule 3: metadata name, namespace, uid, resourceVersion, apiVersion and kind are never owned', () => {
    const r = apply(undefined, cm({ a: '1' }, { metadata: { uid: 'x', resourceVersion: '9', generation: 3, creationTimestamp: '2024-01-01T00:00:00Z' } }), 'm');
    expect(r.managedFields[0].fieldsV1).toEqual({ 'f:data': { 'f:a': {} } });
    // An intent that sets nothing else owns nothing: no entry at all.
    const bare = apply(undefined, cm(undefined), 'm');
    expect(bare.managedFields).toEqual([]);
    expect((bare.object.metadata as Obj).managedFields).toBeUndefined();
  });

  it('rule 6: listType=map merges items by key and keeps items applied by others', () => {
    const base = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' } };
    const opts = { schema: deploymentSchema, apiVersion: 'apps/v1' };
    const a = apply(undefined, { ...base, spec: { template: { spec: { containers: [{ name: 'nginx', image: 'nginx:1' }] } } } }, 'a', opts);
    expect(entry(a.object, 'a')!.fieldsV1).toEqual({
      'f:spec': { 'f:template': { 'f:spec': { 'f:containers': { 'k:{"name":"nginx"}': { '.': {}, 'f:image': {}, 'f:name': {} } } } } },
    });
    const b = apply(a.object, { ...base, spec: { template: { spec: { containers: [{ name: 'sidecar', image: 'envoy' }] } } } }, 'b', opts);
    const containers = (((b.object.spec as Obj).template as Obj).spec as Obj).containers;
    expect(containers).toEqual([
      { name: 'nginx', image: 'nginx:1' },
      { name: 'sidecar', image: 'envoy' },
    ]);
    // b drops its sidecar: only b's item goes.
    const c = apply(b.object, { ...base }, 'b', opts);
    expect((((c.object.spec as Obj).template as Obj).spec as Obj).containers).toEqual([{ name: 'nginx', image: 'nginx:1' }]);
    expect(entry(c.object, 'b')).toBeUndefined();
  });

  it('rule 6: list item order follows structured-merge-diff (config order, live-only items in place)', () => {
    const opts = { schema: deploymentSchema, apiVersion: 'apps/v1' };
    const d = (names: string[]) => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd' },
      spec: { template: { spec: { containers: names.map((name) => ({ name })) } } },
    });
    const live = apply(undefined, d(['a', 'b', 'c']), 'x', opts).object;
    const r = apply(live, d(['c', 'a']), 'y', opts);
    expect(((((r.object.spec as Obj).template as Obj).spec as Obj).containers as Obj[]).map((c) => c.name)).toEqual(['b', 'c', 'a']);
    const r2 = apply(live, d(['z', 'b']), 'y', opts);
    expect(((((r2.object.spec as Obj).template as Obj).spec as Obj).containers as Obj[]).map((c) => c.name)).toEqual(['a', 'z', 'b', 'c']);
  });

  it('never crashes on malformed live data: unkeyable live lists are treated as atomic', () => {
    const opts = { schema: deploymentSchema, apiVersion: 'apps/v1' };
    const live = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd', managedFields: 'garbage' },
      spec: { template: { spec: { containers: [{ image: 'no-name' }, { name: 'dup' }, { name: 'dup' }] } } },
    };
    const r = apply(
      live,
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { template: { spec: { containers: [{ name: 'ok' }] } } } },
      'm',
      opts,
    );
    expect((((r.object.spec as Obj).template as Obj).spec as Obj).containers).toEqual([{ name: 'ok' }]);
    expect(() =>
      trackUpdate({ old: live, new: { ...live, spec: 'scalar now' }, manager: 'm', schema: deploymentSchema, apiVersion: 'apps/v1', now: T0 }),
    ).not.toThrow();
    expect(catchStatus(() => apply(undefined, [] as unknown as Obj, 'm')).code).toBe(400);
    const setOfObjects = { apiVersion: 'ex.io/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { tags: [{ no: 1 }] } };
    expect(catchStatus(() => apply(undefined, setOfObjects, 'm', { schema: widgetSchema('granular'), apiVersion: 'ex.io/v1' })).code).toBe(400);
  });

  it('rule 6: listType=map with several keys, sorted in k:, and key defaults from the schema', () => {
    const intent = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd' },
      spec: { template: { spec: { containers: [{ name: 'c', ports: [{ containerPort: 53, protocol: 'UDP' }, { containerPort: 53 }] }] } } },
    };
    const r = applyIntent({ intent, manager: 'm', force: false, schema: deploymentSchema, apiVersion: 'apps/v1', now: T0 });
    const ports = ((((r.managedFields[0].fieldsV1 as Obj)['f:spec'] as Obj)['f:template'] as Obj)['f:spec'] as Obj)['f:containers'] as Obj;
    expect(Object.keys((ports['k:{"name":"c"}'] as Obj)['f:ports'] as Obj)).toEqual([
      'k:{"containerPort":53,"protocol":"TCP"}',
      'k:{"containerPort":53,"protocol":"UDP"}',
    ]);
  });

  it('rule 6: patchMergeKey is read as listType=map when listType is absent', () => {
    const base = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' } };
    const opts = { schema: deploymentSchema, apiVersion: 'apps/v1' };
    const withEnv = (env: Obj[]) => ({ ...base, spec: { template: { spec: { containers: [{ name: 'c', env }] } } } });
    const a = apply(undefined, withEnv([{ name: 'A', value: '1' }]), 'a', opts);
    const b = apply(a.object, withEnv([{ name: 'B', value: '2' }]), 'b', opts);
    const env = ((((b.object.spec as Obj).template as Obj).spec as Obj).containers as Obj[])[0].env;
    expect(env).toEqual([
      { name: 'A', value: '1' },
      { name: 'B', value: '2' },
    ]);
  });

  it('rule 6: listType=atomic replaces the whole list and is owned as one leaf', () => {
    const base = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' } };
    const opts = { schema: deploymentSchema, apiVersion: 'apps/v1' };
    const withArgs = (args: string[]) => ({ ...base, spec: { template: { spec: { containers: [{ name: 'c', args }] } } } });
    const a = apply(undefined, withArgs(['x', 'y']), 'a', opts);
    const c = (entry(a.object, 'a')!.fieldsV1 as Obj)['f:spec'] as Obj;
    expect(JSON.stringify(c)).toContain('"f:args":{}');
    const e = catchStatus(() => apply(a.object, withArgs(['x', 'y', 'z']), 'b', opts));
    expect(e.message).toBe('Apply failed with 1 conflict: conflict with "a": .spec.template.spec.containers[name="c"].args');
    const forced = apply(a.object, withArgs(['z']), 'b', { ...opts, force: true });
    expect(((((forced.object.spec as Obj).template as Obj).spec as Obj).containers as Obj[])[0].args).toEqual(['z']);
  });

  it("rule 6: listType=set merges by value (union) and removes only the applier's values", () => {
    const opts = { schema: widgetSchema('granular'), apiVersion: 'ex.io/v1' };
    const w = (tags: string[]) => ({ apiVersion: 'ex.io/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { tags } });
    const a = apply(undefined, w(['a', 'b']), 'a', opts);
    const b = apply(a.object, w(['b', 'c']), 'b', opts);
    expect((b.object.spec as Obj).tags).toEqual(['a', 'b', 'c']);
    const a2 = apply(b.object, w([]), 'a', opts);
    // 'a' is gone, 'b' is still owned by manager b.
    expect((a2.object.spec as Obj).tags).toEqual(['b', 'c']);
  });

  it('rule 6: x-kubernetes-map-type atomic (mapType/structType) is replaced whole and owned as a leaf', () => {
    const base = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' } };
    const opts = { schema: deploymentSchema, apiVersion: 'apps/v1' };
    const a = apply(undefined, { ...base, spec: { selector: { matchLabels: { app: 'x', tier: 'web' } } } }, 'a', opts);
    expect(entry(a.object, 'a')!.fieldsV1).toEqual({ 'f:spec': { 'f:selector': {} } });
    const b = apply(a.object, { ...base, spec: { selector: { matchLabels: { app: 'y' } } } }, 'b', { ...opts, force: true });
    expect((b.object.spec as Obj).selector).toEqual({ matchLabels: { app: 'y' } });
  });

  it('rule 6: unstructured objects (no schema) merge keys as fields and treat lists as atomic', () => {
    const opts = { schema: unstructuredSchema, apiVersion: 'ex.io/v1' };
    const u = (spec: Obj) => ({ apiVersion: 'ex.io/v1', kind: 'Thing', metadata: { name: 't' }, spec });
    const a = apply(undefined, u({ list: [1, 2], m: { x: 1 } }), 'a', opts);
    expect(entry(a.object, 'a')!.fieldsV1).toEqual({ 'f:spec': { '.': {}, 'f:list': {}, 'f:m': { '.': {}, 'f:x': {} } } });
    const b = apply(a.object, u({ list: [3], m: { y: 2 } }), 'b', { ...opts, force: true });
    expect(b.object.spec).toEqual({ list: [3], m: { x: 1, y: 2 } });
  });

  it('rule 7: with an atomic struct, the owner of the whole value owns its elements: later edits conflict', () => {
    const opts = { schema: widgetSchema('atomic'), apiVersion: 'ex.io/v1' };
    const w = (config: Obj) => ({ apiVersion: 'ex.io/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { config } });
    const a = apply(undefined, w({ a: 1, b: 2 }), 'a', opts);
    expect(entry(a.object, 'a')!.fieldsV1).toEqual({ 'f:spec': { 'f:config': {} } });
    const e = catchStatus(() => apply(a.object, w({ a: 1, b: 3 }), 'b', opts));
    expect(e.message).toBe('Apply failed with 1 conflict: conflict with "a": .spec.config');
  });

  it('rule 7: switching atomic -> granular loses element owners: element edits no longer conflict', () => {
    const w = (config: Obj) => ({ apiVersion: 'ex.io/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { config } });
    const a = apply(undefined, w({ a: 1, b: 2 }), 'a', { schema: widgetSchema('atomic'), apiVersion: 'ex.io/v1' });
    const b = apply(a.object, w({ b: 3 }), 'b', { schema: widgetSchema('granular'), apiVersion: 'ex.io/v1' });
    expect((b.object.spec as Obj).config).toEqual({ a: 1, b: 3 });
    expect(entry(b.object, 'b')!.fieldsV1).toEqual({ 'f:spec': { 'f:config': { 'f:b': {} } } });
  });

  it('rule 9: a controller applies a partial intent without resourceVersion and forces on conflict', () => {
    const live = createdByUpdate(cm({ key: 'v', keep: 'k' }), 'human');
    // No resourceVersion in the intent, no read first: only the fields the controller cares about.
    const r = applyIntent({ live, intent: cm({ key: 'desired' }), manager: 'my-controller', force: true, schema: configMapSchema, apiVersion: 'v1', now: T1 });
    expect(r.object.data).toEqual({ key: 'desired', keep: 'k' });
    expect((r.object.metadata as Obj).resourceVersion).toBe('5');
    // Re-applying the same intent is a no-op that keeps the entry's time.
    const again = applyIntent({
      live: r.object,
      intent: cm({ key: 'desired' }),
      manager: 'my-controller',
      force: true,
      schema: configMapSchema,
      apiVersion: 'v1',
      now: new Date('2024-06-01T00:00:00Z'),
    });
    expect(again.changed).toBe(false);
    expect(entry(again.object, 'my-controller')!.time).toBe('2024-05-01T11:00:00Z');
  });

  it('ignoredFields (reset fields such as status) are neither owned nor conflicting', () => {
    const base = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' } };
    const opts = { schema: deploymentSchema, apiVersion: 'apps/v1', ignoredFields: FieldSet.of(['f:status']) };
    const r = apply(undefined, { ...base, spec: { replicas: 2 }, status: { replicas: 5 } }, 'a', opts);
    expect(entry(r.object, 'a')!.fieldsV1).toEqual({ 'f:spec': { 'f:replicas': {} } });
  });

  it('does not mutate its inputs', () => {
    const live = createdByUpdate(cm({ key: 'v' }), 'editor');
    const intent = cm({ key: 'w', x: '1' });
    const snapLive = JSON.stringify(live);
    const snapIntent = JSON.stringify(intent);
    apply(live, intent, 'me', { force: true });
    expect(JSON.stringify(live)).toBe(snapLive);
    expect(JSON.stringify(intent)).toBe(snapIntent);
  });
});
