import fc from 'fast-check';
import { StatusError } from './errors.js';
import { parseFieldSelector } from './fields.selector.js';
import { parseLabelSelector } from './labels.selector.js';
import { numRuns as runs, settle, unexpectedError } from './property.fixtures.js';

const numRuns = runs(300);

const labelKey = fc
  .tuple(
    fc.option(fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,8}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,8}[a-z0-9])?)?$/), { nil: undefined }),
    fc.stringMatching(/^[A-Za-z0-9]([A-Za-z0-9_.-]{0,10}[A-Za-z0-9])?$/),
  )
  .map(([p, n]) => (p ? `${p}/${n}` : n));
const labelValue = fc.stringMatching(/^([A-Za-z0-9]([A-Za-z0-9_.-]{0,10}[A-Za-z0-9])?)?$/);
const requirement = fc.oneof(
  fc.tuple(labelKey, fc.constantFrom('=', '==', '!='), labelValue).map(([k, op, v]) => `${k}${op}${v}`),
  fc
    .tuple(labelKey, fc.constantFrom(' in ', ' notin '), fc.array(labelValue, { minLength: 1, maxLength: 3 }))
    .map(([k, op, vs]) => `${k}${op}(${vs.join(',')})`),
  labelKey,
  labelKey.map((k) => `!${k}`),
  fc.tuple(labelKey, fc.constantFrom('>', '<'), fc.integer({ min: 0, max: 1000 })).map(([k, op, n]) => `${k}${op}${n}`),
);
const labelSelector = fc.array(requirement, { minLength: 1, maxLength: 4 }).map((rs) => rs.join(','));
const labels = fc.dictionary(labelKey, labelValue, { maxKeys: 4, noNullPrototype: true });

/** A 400 StatusError, or anything else thrown (which fails the property). */
class BadRequest extends StatusError {
  static override [Symbol.hasInstance](e: unknown): boolean {
    return e instanceof StatusError && e.code === 400;
  }
}

const noise = fc.oneof(
  fc.string(),
  fc
    .array(fc.constantFrom('a', 'b/c', '=', '==', '!=', '!', ' in ', ' notin ', '(', ')', ',', ' ', '>', '<', '1', '\\', '\\,', '.', '-', 'é'), {
      maxLength: 12,
    })
    .map((xs) => xs.join('')),
);

describe('label selector properties', () => {
  it('parses its own printed form to the same selector (print is a fixed point) that selects the same labels', () => {
    fc.assert(
      fc.property(labelSelector, labels, (text, ls) => {
        // The generator is looser than the grammar (`in (,,)` is refused, as by Kubernetes).
        const r = settle(() => parseLabelSelector(text));
        expect('value' in r || r.error instanceof BadRequest).toBe(true);
        if (!('value' in r)) return;
        const sel = r.value;
        const again = parseLabelSelector(sel.toString());
        expect(again.toString()).toBe(sel.toString());
        expect(again.matches(ls)).toBe(sel.matches(ls));
      }),
      { numRuns },
    );
  });

  it('answers arbitrary text with a selector or a 400 StatusError only', () => {
    fc.assert(
      fc.property(noise, (t) => expect(unexpectedError(() => parseLabelSelector(t).toString(), BadRequest)).toBeUndefined()),
      { numRuns },
    );
  });
});

describe('field selector properties', () => {
  const field = fc.constantFrom('metadata.name', 'metadata.namespace', 'spec.nodeName', 'status.phase', 'a');
  const value = fc.string({ maxLength: 8 });
  const fieldSelector = fc.array(fc.tuple(field, fc.constantFrom('=', '==', '!='), value), { minLength: 1, maxLength: 4 });

  it('parses its own printed form to the same requirements, escaped values included', () => {
    fc.assert(
      fc.property(fieldSelector, (reqs) => {
        const sel = parseFieldSelector(reqs.map(([f, op, v]) => `${f}${op}${v.replace(/[\\,=]/g, (c) => `\\${c}`)}`).join(','));
        const again = parseFieldSelector(sel.toString());
        // The printer spells `==` as `=`, its equal.
        // Terms are kept sorted by their text, so a respelled one may move: compare as multisets.
        const norm = (rs: readonly { field: string; operator: string; value: string }[]): string[] =>
          rs.map((r) => JSON.stringify([r.field, r.operator === '==' ? '=' : r.operator, r.value])).sort();
        expect(norm(again.requirements())).toEqual(norm(sel.requirements()));
        expect(parseFieldSelector(again.toString()).toString()).toBe(again.toString());
        expect(new Set(sel.requirements().map((r) => r.value))).toEqual(new Set(reqs.map(([, , v]) => v)));
      }),
      { numRuns },
    );
  });

  it('answers arbitrary text with a selector or a 400 StatusError only', () => {
    fc.assert(
      fc.property(noise, (t) => expect(unexpectedError(() => parseFieldSelector(t).toString(), BadRequest)).toBeUndefined()),
      { numRuns },
    );
  });
});
