import fc from 'fast-check';
import { StatusError } from './errors.js';
import { applyJsonPatch } from './patch.json.js';
import { applyMergePatch, isJsonObject } from './patch.merge.js';
import { applyStrategicMergePatch } from './patch.strategic.js';
import { numRuns as runs, unexpectedError } from './property.fixtures.js';

const numRuns = runs(200);

// Bodies come from JSON.parse: objects have the usual prototype (noNullPrototype).
const key = fc.constantFrom('a', 'b', 'c', 'name', 'spec', '$patch', '$retainKeys', '$setElementOrder/a', '$deleteFromPrimitiveList/a', 'x/y', '~');
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.string({ maxLength: 4 }),
    tie('array'),
    tie('object'),
  ),
  array: fc.array(tie('value'), { maxLength: 3 }),
  object: fc.dictionary(key, tie('value'), { maxKeys: 4, noNullPrototype: true }),
})).value;
const object = fc.dictionary(key, json, { maxKeys: 4, noNullPrototype: true });
/** Objects without nulls: the documents a merge patch is computed against. */
const noNulls = (v: unknown): boolean => v !== null && (!isJsonObject(v) || Object.values(v).every(noNulls)) && (!Array.isArray(v) || v.every(noNulls));

/** A merge patch that turns `from` into `to` (RFC 7386's inverse for null-free documents). */
function diff(from: Record<string, unknown>, to: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(from)) if (!(k in to)) out[k] = null;
  for (const [k, v] of Object.entries(to)) {
    if (isJsonObject(v) && isJsonObject(from[k])) out[k] = diff(from[k] as Record<string, unknown>, v);
    else if (JSON.stringify(v) !== JSON.stringify(from[k])) out[k] = v;
  }
  return out;
}

describe('merge patch properties', () => {
  it('an empty patch is the identity on objects, and a patch applied twice equals it applied once', () => {
    fc.assert(
      fc.property(object, object, (target, patch) => {
        expect(applyMergePatch(target, {})).toEqual(target);
        const once = applyMergePatch(target, patch);
        expect(applyMergePatch(once, patch)).toEqual(once);
      }),
      { numRuns },
    );
  });

  it('the diff of two null-free documents, applied to the first, gives the second', () => {
    fc.assert(
      fc.property(object.filter(noNulls), object.filter(noNulls), (a, b) => {
        expect(applyMergePatch(a, diff(a, b))).toEqual(b);
      }),
      { numRuns },
    );
  });

  it('does not mutate its arguments', () => {
    fc.assert(
      fc.property(object, object, (target, patch) => {
        const [t, p] = [structuredClone(target), structuredClone(patch)];
        applyMergePatch(target, patch);
        expect([target, patch]).toEqual([t, p]);
      }),
      { numRuns },
    );
  });
});

describe('JSON patch properties', () => {
  it('removing what was added gives the document back', () => {
    fc.assert(
      fc.property(object, fc.string({ minLength: 1, maxLength: 5 }), json, (doc, k, v) => {
        fc.pre(!(k in doc) && k !== '__proto__');
        const path = `/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`;
        const added = applyJsonPatch(doc, [{ op: 'add', path, value: v }]);
        expect((added as Record<string, unknown>)[k]).toEqual(v);
        expect(applyJsonPatch(added, [{ op: 'remove', path }])).toEqual(doc);
      }),
      { numRuns },
    );
  });

  it('test of a present value passes and leaves the document as it was', () => {
    fc.assert(
      fc.property(
        object.filter((o) => Object.keys(o).length > 0),
        (doc) => {
          const k = Object.keys(doc)[0]!;
          const path = `/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`;
          expect(applyJsonPatch(doc, [{ op: 'test', path, value: doc[k] }])).toEqual(doc);
        },
      ),
      { numRuns },
    );
  });

  it('answers arbitrary operations with a document or a StatusError only', () => {
    const op = fc.record(
      {
        op: fc.oneof(fc.constantFrom('add', 'remove', 'replace', 'move', 'copy', 'test'), json),
        path: fc.oneof(fc.constantFrom('', '/', '/a', '/a/0', '/a/-', '/__proto__/x', '/constructor/prototype', '/a/b/c'), json),
        from: fc.oneof(fc.constantFrom('/a', '/b', '/__proto__'), json),
        value: json,
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(json, fc.oneof(fc.array(op, { maxLength: 4 }), json), (doc, ops) =>
        expect(unexpectedError(() => applyJsonPatch(doc, ops), StatusError)).toBeUndefined(),
      ),
      { numRuns },
    );
    expect(({} as Record<string, unknown>).x).toBeUndefined(); // no prototype was polluted
  });
});

describe('strategic merge patch properties', () => {
  it('without a schema, agrees with a merge patch for patches without directives', () => {
    const plainKey = fc.constantFrom('a', 'b', 'c', 'name');
    const plain = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small' }, fc.boolean(), fc.integer(), fc.string({ maxLength: 4 }), fc.array(fc.integer(), { maxLength: 3 }), tie('object')),
      object: fc.dictionary(plainKey, tie('value'), { maxKeys: 3, noNullPrototype: true }),
    })).object as fc.Arbitrary<Record<string, unknown>>;
    fc.assert(
      fc.property(plain, plain, (original, patch) => {
        expect(applyStrategicMergePatch(original, patch, undefined)).toEqual(applyMergePatch(original, patch));
      }),
      { numRuns },
    );
  });

  it('answers arbitrary patches and directives with an object or a StatusError only', () => {
    const schema = fc.constantFrom(undefined, {
      type: 'object',
      properties: {
        a: {
          type: 'array',
          items: { type: 'object', properties: { name: { type: 'string' } } },
          'x-kubernetes-patch-strategy': 'merge',
          'x-kubernetes-patch-merge-key': 'name',
        },
        b: { type: 'array', items: { type: 'string' }, 'x-kubernetes-patch-strategy': 'merge' },
        c: { type: 'object', 'x-kubernetes-patch-strategy': 'retainKeys' },
      },
    } as never);
    fc.assert(
      fc.property(object, object, schema, (original, patch, s) =>
        expect(unexpectedError(() => applyStrategicMergePatch(original, patch, s), StatusError)).toBeUndefined(),
      ),
      { numRuns },
    );
  });
});
