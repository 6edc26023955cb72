import { StatusError } from './errors.js';
import { applyJsonPatch, JSON_PATCH_MAX_COPY_BYTES, MAX_JSON_PATCH_OPERATIONS } from './patch.json.js';

function fail(doc: unknown, ops: unknown): StatusError {
  try {
    applyJsonPatch(doc, ops);
  } catch (e) {
    expect(e).toBeInstanceOf(StatusError);
    return e as StatusError;
  }
  throw new Error('expected failure');
}

describe('JSON patch (RFC 6902) with kube-apiserver errors', () => {
  const doc = { metadata: { name: 'x', labels: { a: '1' } }, spec: { list: [1, 2, 3] } };

  it('applies all six operations in order', () => {
    const out = applyJsonPatch(doc, [
      { op: 'add', path: '/metadata/labels/b', value: '2' },
      { op: 'remove', path: '/metadata/labels/a' },
      { op: 'replace', path: '/spec/list/0', value: 9 },
      { op: 'add', path: '/spec/list/-', value: 4 },
      { op: 'move', from: '/spec/list/1', path: '/spec/moved' },
      { op: 'copy', from: '/metadata/name', path: '/metadata/copy' },
      { op: 'test', path: '/spec/moved', value: 2 },
      { op: 'add', path: '/metadata/labels/x~1y', value: 'z' },
    ]);
    expect(out).toEqual({ metadata: { name: 'x', labels: { b: '2', 'x/y': 'z' }, copy: 'x' }, spec: { list: [9, 3, 4], moved: 2 } });
    expect(doc.metadata.labels).toEqual({ a: '1' }); // input untouched
  });

  it('a failed test op is 422 with the generic message and the cause', () => {
    const e = fail(doc, [{ op: 'test', path: '/metadata/name', value: 'y' }]);
    expect(e.code).toBe(422);
    expect(e.reason).toBe('Invalid');
    expect(e.message).toBe('the server rejected our request due to an error in our request');
    expect(e.toStatus().details).toEqual({ causes: [{ reason: 'UnexpectedServerResponse', message: 'testing value /metadata/name failed: test failed' }] });
  });

  it('missing paths are 422 with evanphx wording', () => {
    expect(fail(doc, [{ op: 'remove', path: '/spec/nodeSelector' }]).details?.causes?.[0].message).toBe(
      'remove operation does not apply: doc is missing path: "/spec/nodeSelector": missing value',
    );
    expect(fail(doc, [{ op: 'add', path: '/a/b', value: 1 }]).details?.causes?.[0].message).toBe(
      'add operation does not apply: doc is missing path: "/a/b": missing value',
    );
    expect(fail(doc, [{ op: 'replace', path: '/nope', value: 1 }]).details?.causes?.[0].message).toBe(
      'replace operation does not apply: doc is missing key: /nope: missing value',
    );
    expect(fail(doc, [{ op: 'frob', path: '/a' }]).details?.causes?.[0].message).toBe('Unexpected kind: frob');
    expect(fail(doc, [{ op: 'add', path: '/spec/list/9', value: 1 }]).code).toBe(422);
    expect(fail(doc, [{ op: 'add', path: '/__proto__/polluted', value: 1 }]).code).toBe(422);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('moves and copies without copying the document per operation: 10,000 moves in a document of 100,000 items', () => {
    const items = Array.from({ length: 100_000 }, (_, i) => ({ name: `item-${i}`, value: i }));
    const big = { metadata: { name: 'x' }, spec: { items, a: 'v' } };
    const moves = Array.from({ length: MAX_JSON_PATCH_OPERATIONS }, (_, i) =>
      i % 2 === 0 ? { op: 'move', from: '/spec/a', path: '/spec/b' } : { op: 'move', from: '/spec/b', path: '/spec/a' },
    );
    const out = applyJsonPatch(big, moves) as typeof big;
    expect(out.spec.a).toBe('v');
    expect(out.spec.items).toEqual(items);
    // `from` is still checked in the document, before and after other operations.
    expect(fail(big, [{ op: 'copy', from: '/spec/nope', path: '/spec/c' }]).details?.causes?.[0].message).toBe(
      'copy operation does not apply: doc is missing from path: /spec/nope: missing value',
    );
    expect(
      fail(big, [
        { op: 'remove', path: '/spec/a' },
        { op: 'move', from: '/spec/a', path: '/spec/c' },
      ]).details?.causes?.[0].message,
    ).toBe('move operation does not apply: doc is missing from path: /spec/a: missing value');
    expect(fail(big, [{ op: 'move', from: '/spec/items/x', path: '/spec/c' }]).details?.causes?.[0].message).toBe(
      'move operation does not apply: doc is missing from path: /spec/items/x: missing value',
    );
    expect(fail(big, [{ op: 'move', from: '/spec/a', path: '/spec/items/x' }]).details?.causes?.[0].message).toBe(
      'Unable to access invalid index: x: invalid index referenced',
    );
    expect(fail(big, [{ op: 'copy', from: '/spec/a', path: '/__proto__/polluted' }]).code).toBe(422);
  });

  it('bounds what copies add to the document: copying it into itself 40 times is refused, not 2^40 times its size', () => {
    const big = { data: 'x'.repeat(1000) };
    const doubling = Array.from({ length: 40 }, (_, i) => ({ op: 'copy', from: '', path: `/c${i}` }));
    const e = fail(big, doubling);
    expect(e.code).toBe(422);
    const message = (e.toStatus().details as { causes: { message: string }[] }).causes[0]!.message;
    expect(message).toMatch(
      new RegExp(`^Unable to complete the copy, the accumulated size increase of copy is \\d+, exceeding the limit ${JSON_PATCH_MAX_COPY_BYTES}$`),
    );
    // Copies within the bound apply: 12 doublings of a 1 KB document.
    const out = applyJsonPatch(big, doubling.slice(0, 11)) as Record<string, unknown>;
    expect(Object.keys(out)).toHaveLength(12);
  });

  it('is atomic: a later failure leaves no partial result', () => {
    const input = { a: 1 };
    fail(input, [
      { op: 'replace', path: '/a', value: 2 },
      { op: 'test', path: '/a', value: 3 },
    ]);
    expect(input).toEqual({ a: 1 });
  });

  it('malformed bodies are 400, too many operations 413', () => {
    const e = fail(doc, { op: 'add' });
    expect(e.code).toBe(400);
    expect(e.message).toBe('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
    expect(fail(doc, [1]).code).toBe(400);
    const many = Array.from({ length: MAX_JSON_PATCH_OPERATIONS + 1 }, () => ({ op: 'test', path: '/metadata/name', value: 'x' }));
    const big = fail(doc, many);
    expect(big.code).toBe(413);
    expect(big.message).toBe('The allowed maximum operations in a JSON patch is 10000, got 10001');
  });
});
