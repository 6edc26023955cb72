/**
 * The GenericStore contract: the order of every hook a write runs through (strategy, admission,
 * machinery, storage), for each verb, pinned against a recording in-memory Storage. The order
 * is kube-apiserver's (write.pipeline.ts): schema defaults, mutating admission, prepare,
 * validation, validating admission, canonicalize, storage.
 */
import { StatusError, type KubeObject } from '@app/apimachinery';
import type { Admission, AdmissionAttributes } from './admission.port.js';
import { GenericStore, MAX_NAME_GENERATION_CREATE_ATTEMPTS } from './generic.store.js';
import { objectKey } from './kind.registry.js';
import type { KindDeclaration, RequestContext, Strategy } from './kind.types.js';
import { FakeStorage, recordingMachinery } from './storage.fake.js';
import { finalizeSubresource, statusSubresource } from './subresource.strategies.js';

const schema = {
  type: 'object',
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    spec: {
      type: 'object',
      properties: { size: { type: 'integer', default: 1 }, finalizers: { type: 'array', items: { type: 'string' } } },
    },
    status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
  },
} as KindDeclaration['schema'];

let log: string[];
let storage: FakeStorage;

/** A strategy that records each hook; prepareForCreate clears status as Kubernetes strategies do. */
function recordingStrategy(): Strategy {
  return {
    prepareForCreate: (o) => {
      log.push('strategy.prepareForCreate');
      delete o.status;
    },
    prepareForUpdate: () => void log.push('strategy.prepareForUpdate'),
    validate: () => (log.push('strategy.validate'), []),
    validateUpdate: () => (log.push('strategy.validateUpdate'), []),
    canonicalize: () => void log.push('strategy.canonicalize'),
    validateDelete: () => void log.push('strategy.validateDelete'),
    prepareForDelete: undefined,
  };
}

/** Admission that records both phases; the mutating phase sets a label and a status. */
const admission: Admission = {
  admit: async (a: AdmissionAttributes) => {
    log.push(`admission.admit ${a.operation}${a.subresource ? '/' + a.subresource : ''}`);
    if (a.object) {
      a.object.metadata.labels = { ...(a.object.metadata.labels as object), admitted: 'yes' };
      a.object.status = { byAdmission: true };
    }
  },
  validate: async (a: AdmissionAttributes) => void log.push(`admission.validate ${a.operation}${a.subresource ? '/' + a.subresource : ''}`),
};

const WIDGET = (): KindDeclaration => ({
  group: 'example.com',
  version: 'v1',
  kind: 'Widget',
  plural: 'widgets',
  singular: 'widget',
  namespaced: true,
  schema,
  strategy: recordingStrategy(),
  subresources: { status: statusSubresource(), finalize: finalizeSubresource() },
});

const ctx = (dryRun = false): RequestContext => ({ user: { username: 'u', groups: [] }, dryRun, warnings: [], now: () => new Date('2026-01-02T03:04:05Z') });
const store = (decl: KindDeclaration = WIDGET()) => new GenericStore(decl, { storage, machinery: recordingMachinery(log), admission });
const widget = (name: string, extra: Partial<KubeObject> = {}): KubeObject => ({
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata: { name },
  spec: {},
  ...extra,
});

/** The pipeline steps of a create, in kube-apiserver's order. */
const CREATE_PIPELINE = [
  'machinery.applyDefaults',
  'admission.admit CREATE',
  'strategy.prepareForCreate',
  'machinery.validateObjectMetaCreate',
  'machinery.validateSchema',
  'strategy.validate',
  'admission.validate CREATE',
  'strategy.canonicalize',
];

const UPDATE_PIPELINE = [
  'machinery.applyDefaults',
  'admission.admit UPDATE',
  'strategy.prepareForUpdate',
  'machinery.validateObjectMetaUpdate',
  'machinery.validateSchema',
  'strategy.validateUpdate',
  'admission.validate UPDATE',
  'strategy.canonicalize',
];

beforeEach(() => {
  log = [];
  storage = new FakeStorage(log);
});

/** Creates `name` and clears the log. */
async function seed(s: GenericStore, name: string, extra: Partial<KubeObject> = {}): Promise<KubeObject> {
  const o = await s.create('ns', widget(name, extra), { ctx: ctx(), fieldValidation: 'Strict' });
  log.length = 0;
  return o;
}

describe('GenericStore hook order', () => {
  it('create: decode checks, defaults, mutating admission, prepare, validation, validating admission, canonicalize, storage', async () => {
    const obj = await store().create('ns', widget('a'), { ctx: ctx(), fieldValidation: 'Strict' });
    expect(log).toEqual(['machinery.decodeProblem', 'machinery.findUnknownFields', ...CREATE_PIPELINE, 'storage.create', 'storage.commit']);
    expect(obj.spec).toEqual({ size: 1 });
    expect(obj.metadata.uid).toEqual(expect.any(String));
  });

  it('create: mutating admission runs before the strategy prepares the object', async () => {
    const obj = await store().create('ns', widget('a'), { ctx: ctx(), fieldValidation: 'Strict' });
    expect(log.indexOf('admission.admit CREATE')).toBeLessThan(log.indexOf('strategy.prepareForCreate'));
    // prepareForCreate clears status: had admission run after it, the status it set would be stored.
    expect(obj.status).toBeUndefined();
    expect(obj.metadata.labels).toEqual({ admitted: 'yes' });
  });

  it('create: generateName is resolved after admission, with the system metadata', async () => {
    const obj = await store().create('ns', { ...widget(''), metadata: { generateName: 'w-' } }, { ctx: ctx(), fieldValidation: 'Strict' });
    expect(log.indexOf('machinery.generateName')).toBeGreaterThan(log.indexOf('admission.admit CREATE'));
    expect(log.indexOf('machinery.generateName')).toBeLessThan(log.indexOf('strategy.prepareForCreate'));
    expect(obj.metadata.name).toMatch(/^w-.{5}$/);
  });

  it('create: a generated name that is taken is generated again, up to eight attempts, then AlreadyExists', async () => {
    await store().create('ns', widget('w-aaaaa'), { ctx: ctx(), fieldValidation: 'Strict' });
    await store().create('ns', widget('w-bbbbb'), { ctx: ctx(), fieldValidation: 'Strict' });
    const names = ['w-aaaaa', 'w-bbbbb', 'w-ccccc'];
    const machinery = { ...recordingMachinery(log), generateName: () => names.shift() ?? 'w-aaaaa' };
    const validated: Array<{ name: string; uid: unknown }> = [];
    const watching: Admission = { ...admission, validate: async (a) => void validated.push({ name: a.name, uid: a.object?.metadata.uid }) };
    // A strategy that derives labels from the name and uid it is prepared under, keeping a value
    // already set (as a Job's selector does).
    const strategy = recordingStrategy();
    const prepare = strategy.prepareForCreate!;
    strategy.prepareForCreate = (o, c) => {
      prepare(o, c);
      o.metadata.labels = {
        'prepared-as': String(o.metadata.name),
        'prepared-uid': String(o.metadata.uid),
        ...(o.metadata.labels as Record<string, string> | undefined),
      };
    };
    const s = new GenericStore({ ...WIDGET(), strategy }, { storage, machinery, admission: watching });
    log.length = 0;
    const obj = await s.create('ns', { ...widget(''), metadata: { generateName: 'w-' } }, { ctx: ctx(), fieldValidation: 'Strict' });
    expect(obj.metadata.name).toBe('w-ccccc');
    // Mutating admission ran once; each attempt started again from its result, prepared under
    // its own name and uid, then validated and shown to validating admission, as kube's store
    // runs BeforeCreate and its createValidation per attempt.
    expect(log.filter((l) => l === 'admission.admit CREATE')).toHaveLength(1);
    expect(log.filter((l) => l === 'strategy.prepareForCreate')).toHaveLength(3);
    expect(obj.metadata.labels).toEqual({ admitted: 'yes', 'prepared-as': 'w-ccccc', 'prepared-uid': obj.metadata.uid });
    expect(log.filter((l) => l === 'strategy.validate')).toHaveLength(3);
    expect(validated.map((v) => v.name)).toEqual(['w-aaaaa', 'w-bbbbb', 'w-ccccc']);
    expect(new Set(validated.map((v) => v.uid)).size).toBe(3);
    expect(obj.metadata.uid).toBe(validated[2]!.uid);
    expect(log.filter((l) => l === 'storage.create')).toHaveLength(3);
    let tries = 0;
    const always = new GenericStore(WIDGET(), {
      storage,
      machinery: { ...recordingMachinery(log), generateName: () => (tries++, 'w-aaaaa') },
      admission,
    });
    await expect(always.create('ns', { ...widget(''), metadata: { generateName: 'w-' } }, { ctx: ctx(), fieldValidation: 'Strict' })).rejects.toMatchObject({
      code: 409,
      reason: 'AlreadyExists',
    });
    expect(tries).toBe(MAX_NAME_GENERATION_CREATE_ATTEMPTS);
    // A name the client chose is never replaced.
    await expect(store().create('ns', widget('w-aaaaa'), { ctx: ctx(), fieldValidation: 'Strict' })).rejects.toMatchObject({ code: 409 });
  });

  it('update (PUT): inside guaranteedUpdate, the same pipeline with the update hooks', async () => {
    const s = store();
    const cur = await seed(s, 'a');
    const res = await s.update('ns', 'a', { ...cur, spec: { size: 3 } }, { ctx: ctx(), fieldValidation: 'Strict' });
    expect(log).toEqual(['machinery.decodeProblem', 'machinery.findUnknownFields', 'storage.guaranteedUpdate', ...UPDATE_PIPELINE, 'storage.commit']);
    expect(res.object.spec).toEqual({ size: 3 });
    expect(res.object.metadata.generation).toBe(2);
  });

  it('update: mutating admission runs before prepareForUpdate, which keeps the stored status', async () => {
    const s = store();
    const cur = await seed(s, 'a');
    const res = await s.update('ns', 'a', { ...cur, status: { fromClient: true } }, { ctx: ctx(), fieldValidation: 'Strict' });
    expect(log.indexOf('admission.admit UPDATE')).toBeLessThan(log.indexOf('strategy.prepareForUpdate'));
    // The kind has /status: the main resource keeps the stored status, even against admission.
    expect(res.object.status).toBeUndefined();
  });

  it('patch: the patch is applied and field-validated, then the update pipeline', async () => {
    const s = store();
    await seed(s, 'a');
    const obj = await s.patch('ns', 'a', 'merge-patch', { spec: { size: 5 } }, { ctx: ctx(), fieldValidation: 'Strict' });
    expect(log).toEqual([
      'storage.guaranteedUpdate',
      'machinery.mergePatch',
      'machinery.decodeProblem',
      'machinery.findUnknownFields',
      ...UPDATE_PIPELINE,
      'storage.commit',
    ]);
    expect(obj.spec).toEqual({ size: 5 });
  });

  it('apply: the merged intent goes through the update pipeline (and the create pipeline when absent)', async () => {
    const s = store();
    const created = await s.apply('ns', 'b', widget('b', { spec: { size: 2 } }), {
      ctx: ctx(),
      fieldValidation: 'Strict',
      fieldManagerParam: 'me',
      force: false,
    });
    expect(created.created).toBe(true);
    expect(log).toEqual([
      'machinery.findUnknownFields',
      'storage.get',
      'machinery.decodeProblem',
      'machinery.findUnknownFields',
      ...CREATE_PIPELINE,
      'storage.create',
      'storage.commit',
    ]);
    log.length = 0;
    const updated = await s.apply('ns', 'b', widget('b', { spec: { size: 4 } }), {
      ctx: ctx(),
      fieldValidation: 'Strict',
      fieldManagerParam: 'me',
      force: false,
    });
    expect(log).toEqual(['machinery.findUnknownFields', 'storage.get', 'storage.guaranteedUpdate', ...UPDATE_PIPELINE, 'storage.commit']);
    expect(updated.object.spec).toEqual({ size: 4 });
    expect((updated.object.metadata.managedFields as Array<{ manager: string; operation: string }>).map((m) => [m.manager, m.operation])).toEqual([
      ['me', 'Apply'],
    ]);
  });

  it('status subresource: the status strategy replaces prepareForUpdate and changes only status (+labels)', async () => {
    const s = store();
    const cur = await seed(s, 'a', { spec: { size: 2 } });
    const res = await s.update(
      'ns',
      'a',
      { ...cur, spec: { size: 9 }, status: { ready: true } },
      { ctx: ctx(), fieldValidation: 'Strict', subresource: 'status' },
    );
    expect(log).toEqual([
      'machinery.decodeProblem',
      'machinery.findUnknownFields',
      'storage.guaranteedUpdate',
      'machinery.applyDefaults',
      'admission.admit UPDATE/status',
      'machinery.validateObjectMetaUpdate',
      'machinery.validateSchema',
      'strategy.validateUpdate',
      'admission.validate UPDATE/status',
      'strategy.canonicalize',
      'storage.commit',
    ]);
    expect(res.object.spec).toEqual({ size: 2 });
    // Admission ran first: its status and label are what the status strategy kept.
    expect(res.object.status).toEqual({ byAdmission: true });
    expect(res.object.metadata.labels).toEqual({ admitted: 'yes' });
    expect(res.object.metadata.generation).toBe(1);
  });

  it('finalize subresource: only spec.finalizers changes', async () => {
    const s = store();
    const cur = await seed(s, 'a', { spec: { size: 2, finalizers: ['x', 'y'] } });
    const res = await s.update('ns', 'a', { ...cur, spec: { size: 7, finalizers: ['y'] } }, { ctx: ctx(), fieldValidation: 'Strict', subresource: 'finalize' });
    expect(res.object.spec).toEqual({ size: 2, finalizers: ['y'] });
    expect(log).not.toContain('strategy.prepareForUpdate');
  });

  it('an undeclared subresource is 404', async () => {
    const s = store();
    const cur = await seed(s, 'a');
    await expect(s.update('ns', 'a', cur, { ctx: ctx(), fieldValidation: 'Strict', subresource: 'scale' })).rejects.toMatchObject({ code: 404 });
  });

  it('delete, immediate: strategy check, validating admission, then storage delete', async () => {
    const s = store();
    await seed(s, 'a');
    const res = await s.delete('ns', 'a', {}, ctx());
    expect(log).toEqual(['storage.get', 'strategy.validateDelete', 'admission.validate DELETE', 'storage.delete']);
    expect(res.deleted).toBe(true);
    expect(storage.data.size).toBe(0);
  });

  it('delete, graceful: finalizers make it Terminating through guaranteedUpdate and prepareForDelete', async () => {
    const decl = WIDGET();
    decl.strategy!.prepareForDelete = (o) => {
      log.push('strategy.prepareForDelete');
      o.status = { phase: 'Terminating' };
    };
    const s = store(decl);
    await seed(s, 'a', { metadata: { name: 'a', finalizers: ['example.com/hold'] } });
    const res = await s.delete('ns', 'a', {}, ctx());
    expect(log).toEqual([
      'storage.get',
      'strategy.validateDelete',
      'admission.validate DELETE',
      'storage.guaranteedUpdate',
      'strategy.prepareForDelete',
      'storage.commit',
    ]);
    expect(res.deleted).toBe(false);
    expect(res.object?.metadata.deletionTimestamp).toBe('2026-01-02T03:04:05Z');
    expect(res.object?.status).toEqual({ phase: 'Terminating' });
    // Removing the last finalizer removes the object.
    log.length = 0;
    const cur = await s.get('ns', 'a');
    await s.update('ns', 'a', { ...cur, metadata: { ...cur.metadata, finalizers: [] } }, { ctx: ctx(), fieldValidation: 'Strict' });
    expect(log.slice(-2)).toEqual(['storage.commit', 'storage.delete']);
    await expect(s.get('ns', 'a')).rejects.toMatchObject({ code: 404 });
  });

  it('delete: 200,000 finalizers compared with those the delete leaves in one pass', async () => {
    const s = store();
    const finalizers = Array.from({ length: 200_000 }, (_, i) => `example.com/f${i}`);
    await seed(s, 'a', { metadata: { name: 'a', finalizers } });
    const res = await s.delete('ns', 'a', {}, ctx());
    expect(res.deleted).toBe(false);
    expect(res.object?.metadata.finalizers).toEqual(finalizers);
    await seed(s, 'b', { metadata: { name: 'b', finalizers } });
    const orphaned = await s.delete('ns', 'b', { propagationPolicy: 'Orphan' }, ctx());
    expect(orphaned.object?.metadata.finalizers).toEqual([...finalizers, 'orphan']);
  });

  it('dry run: the whole pipeline runs, storage is asked with dryRun and keeps nothing', async () => {
    const s = store();
    const obj = await s.create('ns', widget('a'), { ctx: ctx(true), fieldValidation: 'Strict' });
    expect(log).toEqual(['machinery.decodeProblem', 'machinery.findUnknownFields', ...CREATE_PIPELINE, 'storage.create dryRun']);
    expect(obj.metadata.uid).toEqual(expect.any(String));
    expect(storage.data.size).toBe(0);
    const cur = await seed(s, 'b');
    await s.update('ns', 'b', { ...cur, spec: { size: 8 } }, { ctx: ctx(true), fieldValidation: 'Strict' });
    expect(log).toEqual(['machinery.decodeProblem', 'machinery.findUnknownFields', 'storage.guaranteedUpdate dryRun', ...UPDATE_PIPELINE]);
    log.length = 0;
    await s.delete('ns', 'b', {}, ctx(true));
    expect(log).toEqual(['storage.get', 'strategy.validateDelete', 'admission.validate DELETE', 'storage.delete dryRun']);
    expect((await s.get('ns', 'b')).spec).toEqual({ size: 1 });
  });

  it('a failing validation stops before validating admission and storage', async () => {
    const decl = WIDGET();
    decl.strategy!.validate = () => (log.push('strategy.validate'), [{ type: 'FieldValueRequired', field: 'spec.size', detail: 'needed' }]);
    await expect(store(decl).create('ns', widget('a'), { ctx: ctx(), fieldValidation: 'Strict' })).rejects.toMatchObject({ code: 422 });
    expect(log.at(-1)).toBe('strategy.validate');
  });
});

describe('reads narrowed by metadata.name', () => {
  /** Records the `key` option of every storage list. */
  function recordReads(): { keys: Array<string | undefined> } {
    const seen = { keys: [] as Array<string | undefined> };
    const list = storage.list.bind(storage);
    storage.list = (p, o) => (seen.keys.push(o.key), list(p, o));
    return seen;
  }

  it('a field selector requiring one metadata.name in a namespace reads that key alone; the selector still filters', async () => {
    const s = store();
    for (const n of ['a', 'a-1', 'b']) await seed(s, n);
    const seen = recordReads();
    const one = await s.list('ns', { fieldSelector: 'metadata.name=a' });
    expect(one.items.map((o) => o.metadata.name)).toEqual(['a']);
    expect((await s.list('ns', { fieldSelector: 'metadata.name==a,metadata.namespace=other' })).items).toEqual([]);
    expect((await s.list('ns', { fieldSelector: 'metadata.name=zz' })).items).toEqual([]);
    const key = objectKey(WIDGET(), 'ns', 'a');
    expect(seen.keys).toEqual([key, key, objectKey(WIDGET(), 'ns', 'zz')]);
  });

  it('walks the collection when the name is not pinned to one key: !=, an empty name, all namespaces', async () => {
    const s = store();
    for (const n of ['a', 'b']) await seed(s, n);
    const seen = recordReads();
    expect((await s.list('ns', { fieldSelector: 'metadata.name!=a' })).items.map((o) => o.metadata.name)).toEqual(['b']);
    expect((await s.list('ns', { fieldSelector: 'metadata.name=' })).items).toEqual([]);
    expect((await s.list('', { fieldSelector: 'metadata.name=a' })).items.map((o) => o.metadata.name)).toEqual(['a']);
    expect(seen.keys).toEqual([undefined, undefined, undefined]);
    expect(s.singleName('', 'metadata.name=a')).toBeUndefined();
    expect(s.singleName('ns', 'metadata.name=a')).toBe('a');
  });

  it('a cluster-scoped kind narrows without a namespace', async () => {
    const decl = { ...WIDGET(), namespaced: false };
    const s = store(decl);
    await s.create('', widget('c'), { ctx: ctx(), fieldValidation: 'Strict' });
    const seen = recordReads();
    expect((await s.list('', { fieldSelector: 'metadata.name=c' })).items.map((o) => o.metadata.name)).toEqual(['c']);
    expect(seen.keys).toEqual([objectKey(decl, '', 'c')]);
  });
});

describe('REST-only kinds', () => {
  /** A toy review API: never stored; the answer is the request with a status. */
  const REVIEW = (): KindDeclaration => ({
    group: 'example.com',
    version: 'v1',
    kind: 'EchoReview',
    plural: 'echoreviews',
    singular: 'echoreview',
    namespaced: false,
    schema,
    strategy: recordingStrategy(),
    rest: {
      create: async (_ns, obj) => {
        log.push('rest.create');
        return { ...obj, status: { echoed: obj.spec } };
      },
    },
  });

  it('create runs the same pipeline, then the REST handler instead of storage', async () => {
    const s = store(REVIEW());
    const res = await s.create(
      '',
      { apiVersion: 'example.com/v1', kind: 'EchoReview', metadata: {}, spec: { size: 4 } },
      { ctx: ctx(), fieldValidation: 'Strict' },
    );
    expect(log).toEqual([
      'machinery.decodeProblem',
      'machinery.findUnknownFields',
      'machinery.applyDefaults',
      'admission.admit CREATE',
      'strategy.prepareForCreate',
      'machinery.validateSchema',
      'strategy.validate',
      'admission.validate CREATE',
      'strategy.canonicalize',
      'rest.create',
    ]);
    expect(res.status).toEqual({ echoed: { size: 4 } });
    expect(res.metadata.uid).toBeUndefined();
    expect(storage.data.size).toBe(0);
  });

  it('serves no stored verbs', async () => {
    const s = store(REVIEW());
    await expect(s.get('', 'x')).rejects.toBeInstanceOf(StatusError);
    await expect(s.list('', {})).rejects.toMatchObject({ code: 405 });
    expect(log.filter((l) => l.startsWith('storage.'))).toEqual([]);
  });
});

describe('multi-version kinds', () => {
  // v1 has spec.size (a number); v2, the storage version, spec.replicas (a string).
  const convert = (o: KubeObject, to: string): KubeObject => {
    const from = o.apiVersion?.split('/')[1];
    if (from === to) return o;
    const spec = { ...(o.spec as Record<string, unknown>) };
    if (to === 'v2') {
      spec.replicas = String(spec.size ?? 0);
      delete spec.size;
    } else {
      spec.size = Number(spec.replicas ?? 0);
      delete spec.replicas;
    }
    return { ...o, apiVersion: `example.com/${to}`, spec };
  };
  const v2schema = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } as KindDeclaration['schema'];
  const decl = (version: string): KindDeclaration => ({
    group: 'example.com',
    version,
    kind: 'Gadget',
    plural: 'gadgets',
    singular: 'gadget',
    namespaced: true,
    schema: version === 'v1' ? schema : v2schema,
    conversion: { storageVersion: 'v2', convert },
  });

  it('stores at the storage version and serves each version its own shape, round trip included', async () => {
    const v1 = store(decl('v1'));
    const v2 = store(decl('v2'));
    const created = await v1.create(
      'ns',
      { apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name: 'g' }, spec: { size: 3 } },
      { ctx: ctx(), fieldValidation: 'Strict' },
    );
    expect(created).toMatchObject({ apiVersion: 'example.com/v1', spec: { size: 3 } });
    const raw = storage.data.get(objectKey(decl('v1'), 'ns', 'g'))!.obj;
    expect(raw).toMatchObject({ apiVersion: 'example.com/v2', spec: { replicas: '3' } });
    expect(await v2.get('ns', 'g')).toMatchObject({ apiVersion: 'example.com/v2', spec: { replicas: '3' } });
    // An update through v2 reads back through v1, and the other way round.
    const g2 = await v2.get('ns', 'g');
    await v2.update('ns', 'g', { ...g2, spec: { replicas: '5' } }, { ctx: ctx(), fieldValidation: 'Strict' });
    const g1 = await v1.get('ns', 'g');
    expect(g1).toMatchObject({ apiVersion: 'example.com/v1', spec: { size: 5 } });
    await v1.patch('ns', 'g', 'merge-patch', { spec: { size: 6 } }, { ctx: ctx(), fieldValidation: 'Strict' });
    expect((await v2.list('ns', {})).items.map((o) => o.spec)).toEqual([{ replicas: '6' }]);
    expect(storage.data.get(objectKey(decl('v1'), 'ns', 'g'))!.obj.apiVersion).toBe('example.com/v2');
  });
});
