import fc from 'fast-check';
import { StatusError } from '../errors.js';
import { applyIntent } from './ssa.apply.js';
import { configMapSchema, deploymentSchema } from './ssa.fixtures.js';
import { numRuns as runs, settle } from '../property.fixtures.js';

const numRuns = runs(100);

type Obj = Record<string, unknown>;
const T0 = new Date('2024-05-01T10:00:00Z');
const T1 = new Date('2024-05-01T11:00:00Z');

const key = fc.stringMatching(/^[a-z][a-z0-9.-]{0,6}$/);
// Maps may be empty: an intent of `data: {}` after one that set keys empties the map the applier
// owned, and the same apply again must change nothing.
const stringMap = fc.dictionary(key, fc.string({ maxLength: 5 }), { minKeys: 0, maxKeys: 4, noNullPrototype: true });
const manager = fc.constantFrom('kubectl', 'helm', 'controller');

const configMap = fc.record({ data: stringMap, labels: stringMap }, { requiredKeys: [] }).map(({ data, labels }) => {
  const o: Obj = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default', ...(labels ? { labels } : {}) } };
  if (data) o.data = data;
  return o;
});

const container = fc.record(
  {
    name: fc.constantFrom('web', 'side', 'init'),
    image: fc.constantFrom('nginx', 'busybox:1', 'redis'),
    args: fc.array(fc.string({ maxLength: 4 }), { minLength: 1, maxLength: 2 }),
  },
  { requiredKeys: ['name'] },
);
const deployment = fc
  .record(
    { replicas: fc.integer({ min: 0, max: 5 }), containers: fc.uniqueArray(container, { selector: (c) => c.name, minLength: 1, maxLength: 3 }) },
    { requiredKeys: ['replicas'] },
  )
  .map(({ replicas, containers }) => {
    const spec: Obj = {};
    if (replicas !== undefined) spec.replicas = replicas;
    if (containers !== undefined) spec.template = { spec: { containers } };
    return { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd', namespace: 'default' }, spec } as Obj;
  });

const cases = fc.oneof(
  fc.record({ schema: fc.constant(configMapSchema), apiVersion: fc.constant('v1'), first: configMap, intent: configMap }),
  fc.record({ schema: fc.constant(deploymentSchema), apiVersion: fc.constant('apps/v1'), first: deployment, intent: deployment }),
);

describe('server-side apply properties', () => {
  it('applying the same intent twice changes nothing the second time', () => {
    fc.assert(
      fc.property(cases, manager, manager, fc.boolean(), ({ schema, apiVersion, first, intent }, other, m, force) => {
        // The live object: created by an apply of another manager, so ownership is shared.
        const live = applyIntent({ intent: first, manager: other, force: false, schema, apiVersion, now: T0 }).object;
        // A conflict with the other manager's fields (409) is a correct answer to a first apply.
        const r = settle(() => applyIntent({ live, intent, manager: m, force, schema, apiVersion, now: T0 }));
        expect('value' in r || (r.error instanceof StatusError && r.error.code === 409)).toBe(true);
        if (!('value' in r)) return;
        const once = r.value;
        const twice = applyIntent({ live: once.object, intent, manager: m, force, schema, apiVersion, now: T1 });
        expect(twice.changed).toBe(false);
        expect(twice.object).toEqual(once.object);
      }),
      { numRuns },
    );
  });

  it('a create by apply holds the intent and is applied again without a change', () => {
    fc.assert(
      fc.property(cases, manager, ({ schema, apiVersion, intent }, m) => {
        const created = applyIntent({ intent, manager: m, force: false, schema, apiVersion, now: T0 });
        expect(created.changed).toBe(true);
        const again = applyIntent({ live: created.object, intent, manager: m, force: false, schema, apiVersion, now: T1 });
        expect(again.changed).toBe(false);
        expect(again.object).toEqual(created.object);
      }),
      { numRuns },
    );
  });
});
