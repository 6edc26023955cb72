import fc from 'fast-check';
import { StatusError } from '../errors.js';
import { decodeMessage, decodeProtobuf, encodeProtobuf, type JsonObject, PROTOBUF_MAGIC } from './protobuf.codec.js';
import { kinds, messageOf } from './protobuf.fixtures.js';
import { numRuns as runs, unexpectedError } from '../property.fixtures.js';

const numRuns = runs(200);

const dnsLabel = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,20}[a-z0-9])?$/);
const text = fc.string({ maxLength: 30 });
// Protobuf has no empty map or list (Go omits both from JSON as well): the arbitraries make none.
const stringMap = fc.dictionary(fc.stringMatching(/^[a-zA-Z0-9._/-]{1,20}$/), text, { minKeys: 1, maxKeys: 5 });
const meta = fc.record(
  {
    name: dnsLabel,
    namespace: dnsLabel,
    labels: stringMap,
    annotations: stringMap,
    finalizers: fc.array(dnsLabel, { minLength: 1, maxLength: 3 }),
    generation: fc.integer({ min: 1, max: 2 ** 40 }),
  },
  { requiredKeys: ['name'] },
);

const configMap = fc
  .record({ metadata: meta, data: stringMap, immutable: fc.boolean() }, { requiredKeys: ['metadata'] })
  .map((o) => ({ apiVersion: 'v1', kind: 'ConfigMap', ...o }) as JsonObject);

const lease = fc
  .record(
    {
      metadata: meta,
      spec: fc.record(
        { holderIdentity: fc.string({ minLength: 1, maxLength: 20 }), leaseDurationSeconds: fc.integer({ min: 1, max: 2 ** 31 - 1 }) },
        { requiredKeys: [] },
      ),
    },
    { requiredKeys: ['metadata'] },
  )
  .map((o) => ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', ...o }) as JsonObject);

const role = fc
  .record({
    metadata: meta,
    rules: fc.array(
      fc.record({
        verbs: fc.array(dnsLabel, { minLength: 1, maxLength: 3 }),
        apiGroups: fc.array(fc.constantFrom('', 'apps', 'example.com'), { minLength: 1, maxLength: 2 }),
        resources: fc.array(dnsLabel, { minLength: 1, maxLength: 2 }),
      }),
      { minLength: 1, maxLength: 3 },
    ),
  })
  .map((o) => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', ...o }) as JsonObject);

describe('protobuf codec properties', () => {
  it('decodes what it encodes, for objects of served kinds', () => {
    fc.assert(
      fc.property(fc.oneof(configMap, lease, role), (obj) => {
        const back = decodeProtobuf(encodeProtobuf(obj, messageOf(obj)), kinds);
        expect(back.apiVersion).toBe(obj.apiVersion);
        expect(back.kind).toBe(obj.kind);
        expect(back.object).toEqual(obj);
      }),
      { numRuns },
    );
  });

  it('keeps a map key named __proto__ as an entry (a counterexample the property found)', () => {
    const obj = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: JSON.parse('{"name":"0","labels":{"__proto__":""}}') as JsonObject };
    const back = decodeProtobuf(encodeProtobuf(obj, messageOf(obj)), kinds);
    expect(Object.keys((back.object.metadata as JsonObject).labels as JsonObject)).toEqual(['__proto__']);
    expect(back.object).toEqual(obj);
  });

  it('answers arbitrary bytes, with or without the magic, with an object or a StatusError only', () => {
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 300 }),
      fc.uint8Array({ maxLength: 300 }).map((b) => Uint8Array.from([...PROTOBUF_MAGIC, ...b])),
    );
    fc.assert(
      fc.property(bytes, (b) => {
        expect(unexpectedError(() => decodeProtobuf(b, kinds), StatusError)).toBeUndefined();
      }),
      { numRuns },
    );
  });

  it('answers a mutated valid envelope with an object or a StatusError only', () => {
    const mutated = fc
      .tuple(fc.oneof(configMap, lease, role), fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 6 }), fc.nat())
      .map(([obj, flips, cut]) => {
        const b = Uint8Array.from(encodeProtobuf(obj, messageOf(obj)));
        for (const [at, v] of flips) b[at % b.length] = v;
        return b.subarray(0, b.length - (cut % 8));
      });
    fc.assert(
      fc.property(mutated, (b) => {
        expect(unexpectedError(() => decodeProtobuf(b, kinds), StatusError)).toBeUndefined();
      }),
      { numRuns },
    );
  });

  it('decodes arbitrary message bytes of a served kind to an object or a StatusError only', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('k8s.io.api.core.v1.ConfigMap', 'k8s.io.api.core.v1.Pod', 'k8s.io.api.rbac.v1.Role'),
        fc.uint8Array({ maxLength: 200 }),
        (name, b) => {
          expect(unexpectedError(() => decodeMessage(name, b, kinds), StatusError)).toBeUndefined();
        },
      ),
      { numRuns },
    );
  });
});
