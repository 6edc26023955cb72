import { StatusError } from './errors.js';
import type { JSONSchemaProps } from './schema/schema.types.js';
import { applyStrategicMergePatch, goFormat } from './patch.strategic.js';

type J = Record<string, unknown>;

// A Pod-shaped schema with the extensions kube-openapi publishes (core/v1 struct tags).
const container: JSONSchemaProps = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    image: { type: 'string' },
    args: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'atomic' },
    ports: {
      type: 'array',
      items: { type: 'object', properties: { containerPort: { type: 'integer' }, protocol: { type: 'string' } } },
      'x-kubernetes-patch-strategy': 'merge',
      'x-kubernetes-patch-merge-key': 'containerPort',
    },
    env: {
      type: 'array',
      items: { type: 'object', properties: { name: { type: 'string' }, value: { type: 'string' } } },
      'x-kubernetes-patch-strategy': 'merge',
      'x-kubernetes-patch-merge-key': 'name',
    },
  },
};
const refs: Record<string, JSONSchemaProps> = { '#/components/schemas/Container': container };
const pod: JSONSchemaProps = {
  type: 'object',
  properties: {
    metadata: {
      type: 'object',
      properties: {
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        annotations: { type: 'object', additionalProperties: { type: 'string' } },
        finalizers: { type: 'array', items: { type: 'string' }, 'x-kubernetes-patch-strategy': 'merge' },
      },
    },
    spec: {
      type: 'object',
      properties: {
        containers: {
          type: 'array',
          items: { allOf: [{ $ref: '#/components/schemas/Container' }], default: {} },
          'x-kubernetes-patch-strategy': 'merge',
          'x-kubernetes-patch-merge-key': 'name',
        },
        volumes: {
          type: 'array',
          items: { type: 'object', properties: { name: { type: 'string' }, hostPath: { type: 'object' }, emptyDir: { type: 'object' } } },
          'x-kubernetes-patch-strategy': 'merge,retainKeys',
          'x-kubernetes-patch-merge-key': 'name',
        },
        nodeSelector: { type: 'object', additionalProperties: { type: 'string' } },
        tolerations: { type: 'array', items: { type: 'object' } },
      },
    },
  },
};
const resolveRef = (r: string): JSONSchemaProps | undefined => refs[r];
const smp = (o: J, p: J, s: JSONSchemaProps | undefined = pod): J => applyStrategicMergePatch(o, p, s, { resolveRef });

function fail(o: J, p: J, s: JSONSchemaProps | undefined = pod): StatusError {
  try {
    smp(o, p, s);
  } catch (e) {
    expect(e).toBeInstanceOf(StatusError);
    return e as StatusError;
  }
  throw new Error('expected failure');
}

const LAST = 'kubectl.kubernetes.io/last-applied-configuration';

describe('strategic merge patch', () => {
  const live: J = {
    metadata: { name: 'p', labels: { a: '1', b: '2' }, annotations: { [LAST]: '{"old":true}' }, finalizers: ['f1', 'f2'] },
    spec: {
      containers: [
        { name: 'a', image: 'a:1', env: [{ name: 'X', value: '1' }], args: ['--x'] },
        { name: 'b', image: 'b:1' },
        { name: 'sidecar', image: 's:1' },
      ],
      tolerations: [{ key: 't1' }],
    },
  };

  it('merges maps and deletes keys set to null', () => {
    const out = smp(live, { metadata: { labels: { a: null, c: '3' } } });
    expect((out.metadata as J).labels).toEqual({ b: '2', c: '3' });
  });

  it('kubectl client-side apply: $setElementOrder + last-applied annotation, server-added items kept', () => {
    const patch = {
      metadata: { annotations: { [LAST]: '{"new":true}' } },
      spec: { '$setElementOrder/containers': [{ name: 'b' }, { name: 'a' }], containers: [{ name: 'b', image: 'b:2' }] },
    };
    const out = smp(live, patch);
    expect((out.metadata as J).annotations).toEqual({ [LAST]: '{"new":true}' });
    const cs = (out.spec as J).containers as J[];
    expect(cs.map((c) => c.name)).toEqual(['b', 'a', 'sidecar']);
    expect(cs[0]).toEqual({ name: 'b', image: 'b:2' });
    expect(cs[1].env).toEqual([{ name: 'X', value: '1' }]); // untouched item kept whole
    expect(JSON.stringify(out)).not.toContain('$setElementOrder');
    expect(live.spec).toEqual(structuredClone(live.spec)); // input not mutated
    expect(((live.spec as J).containers as J[])[1].image).toBe('b:1');
  });

  it('kubectl apply removing a container sends $patch: delete', () => {
    const out = smp(live, { spec: { '$setElementOrder/containers': [{ name: 'a' }], containers: [{ $patch: 'delete', name: 'b' }] } });
    expect(((out.spec as J).containers as J[]).map((c) => c.name)).toEqual(['a', 'sidecar']);
  });

  it('merges long lists by key in one pass: 100,000 containers reordered, patched and half deleted', () => {
    const n = 100_000;
    const big: J = { spec: { containers: Array.from({ length: n }, (_, i) => ({ name: `c${i}`, image: 'x:1' })) } };
    const kept = Array.from({ length: n / 2 }, (_, i) => `c${n - 1 - 2 * i}`); // the odd ones, last first
    const patch = {
      spec: {
        '$setElementOrder/containers': kept.map((name) => ({ name })),
        containers: [{ name: 'c5', image: 'x:2' }, ...Array.from({ length: n / 2 }, (_, i) => ({ $patch: 'delete', name: `c${2 * i}` }))],
      },
    };
    const cs = (smp(big, patch).spec as J).containers as J[];
    expect(cs.map((c) => c.name)).toEqual(kept);
    expect(cs.find((c) => c.name === 'c5')).toEqual({ name: 'c5', image: 'x:2' });
    expect(cs.filter((c) => c.image === 'x:2')).toHaveLength(1);
  });

  it('merges nested lists by their own merge key through $ref/allOf', () => {
    const out = smp(live, {
      spec: {
        containers: [
          {
            name: 'a',
            env: [
              { name: 'Y', value: '2' },
              { name: 'X', value: '9' },
            ],
          },
        ],
      },
    });
    const a = ((out.spec as J).containers as J[])[0];
    expect(a.env).toEqual([
      { name: 'Y', value: '2' },
      { name: 'X', value: '9' },
    ]);
    expect(a.image).toBe('a:1');
  });

  it('new merge-list items are appended after server items; atomic lists are replaced', () => {
    const out = smp(live, {
      spec: {
        containers: [
          { name: 'c', image: 'c:1', args: ['--y'] },
          { name: 'a', args: ['--z'] },
        ],
      },
    });
    const cs = (out.spec as J).containers as J[];
    expect(cs.map((c) => c.name)).toEqual(['c', 'a', 'b', 'sidecar']);
    expect(cs[1].args).toEqual(['--z']);
    // tolerations has no patch strategy: replaced
    expect(smp(live, { spec: { tolerations: [{ key: 't2' }] } }).spec).toMatchObject({ tolerations: [{ key: 't2' }] });
  });

  it('primitive merge lists: union, $deleteFromPrimitiveList, $setElementOrder', () => {
    expect((smp(live, { metadata: { finalizers: ['f3', 'f1'] } }).metadata as J).finalizers).toEqual(['f3', 'f1', 'f2']);
    expect((smp(live, { metadata: { '$deleteFromPrimitiveList/finalizers': ['f1'] } }).metadata as J).finalizers).toEqual(['f2']);
    const ordered = smp(live, { metadata: { '$setElementOrder/finalizers': ['f2', 'f1'] } });
    expect((ordered.metadata as J).finalizers).toEqual(['f2', 'f1']);
    expect((smp(live, { metadata: { '$deleteFromPrimitiveList/nothere': ['x'] } }).metadata as J).nothere).toBeUndefined();
  });

  it('$patch: replace and delete on maps, replace in lists', () => {
    expect((smp(live, { metadata: { labels: { $patch: 'replace', z: '1' } } }).metadata as J).labels).toEqual({ z: '1' });
    expect((smp(live, { metadata: { labels: { $patch: 'delete' } } }).metadata as J).labels).toEqual({});
    const out = smp(live, { spec: { containers: [{ name: 'only', image: 'o' }, { $patch: 'replace' }] } });
    expect((out.spec as J).containers).toEqual([{ name: 'only', image: 'o' }]);
  });

  it('$retainKeys clears fields not listed (volume source switch)', () => {
    const o = { spec: { volumes: [{ name: 'v', hostPath: { path: '/x' } }] } };
    const out = smp(o, { spec: { volumes: [{ name: 'v', emptyDir: {}, $retainKeys: ['emptyDir', 'name'] }] } });
    expect((out.spec as J).volumes).toEqual([{ name: 'v', emptyDir: {} }]);
    const e = fail(o, { spec: { volumes: [{ name: 'v', emptyDir: {}, $retainKeys: ['name'] }] } });
    expect(e.code).toBe(422);
    expect(e.details?.causes?.[0].message).toBe("patch content doesn't match retainKeys list");
    expect(fail(o, { spec: { volumes: [{ name: 'v', $retainKeys: 'name' }] } }).code).toBe(400);
  });

  it('fields the original lacks get directives and nulls stripped', () => {
    const out = smp(
      {},
      { spec: { '$setElementOrder/containers': [{ name: 'a' }], containers: [{ name: 'a', image: null, env: [{ name: 'E', value: 'v' }] }] } },
    );
    expect(out).toEqual({ spec: { containers: [{ name: 'a', env: [{ name: 'E', value: 'v' }] }] } });
  });

  it('without a schema (unstructured) maps merge and lists are replaced', () => {
    const out = smp({ a: { x: 1, y: [1, 2] } }, { a: { y: [3], z: null } }, undefined);
    expect(out).toEqual({ a: { x: 1, y: [3] } });
  });

  it('x-kubernetes-list-type map/set is the fallback for CRD schemas', () => {
    const crd: JSONSchemaProps = {
      type: 'object',
      properties: {
        items: { type: 'array', items: { type: 'object' }, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['id'] },
        tags: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
        atomic: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'atomic' },
      },
    };
    const out = smp(
      {
        items: [
          { id: 1, v: 'a' },
          { id: 2, v: 'b' },
        ],
        tags: ['x'],
        atomic: ['p'],
      },
      { items: [{ id: 2, v: 'B' }], tags: ['y'], atomic: ['q'] },
      crd,
    );
    expect(out).toEqual({
      items: [
        { id: 1, v: 'a' },
        { id: 2, v: 'B' },
      ],
      tags: ['y', 'x'],
      atomic: ['q'],
    }); // patch items first, as mergeSortedSlice orders them
  });

  it('errors map to the status kube-apiserver returns', () => {
    const noKey = fail(live, { spec: { containers: [{ image: 'x' }] } });
    expect(noKey.code).toBe(500);
    expect(noKey.message).toBe('map: map[image:x] does not contain declared merge key: name');
    const lol = fail({ spec: { containers: [] } }, { spec: { containers: [[1]] } });
    expect(lol.code).toBe(422);
    expect(lol.details?.causes?.[0].message).toBe('lists of lists are not supported');
    expect(fail(live, { metadata: { $patch: 'frob' } }).message).toBe('unknown patch type: frob in map: map[$patch:frob]');
    expect(fail(live, { spec: { containers: [{ name: 'a', $patch: 'merge' }] } }).message).toBe('merging lists cannot yet be specified in the patch');
    expect(fail(live, { metadata: { '$setElementOrder/finalizers': 'x' } }).code).toBe(400);
  });

  it('goFormat renders like Go %v', () => {
    expect(goFormat({ b: [1, 'x'], a: { c: null } })).toBe('map[a:map[c:<nil>] b:[1 x]]');
  });
});
