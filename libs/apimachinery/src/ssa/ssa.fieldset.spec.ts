import { FieldSet, FieldsV1Error, canonicalElement, fieldElement, keyElement, pathToString, valueElement } from './ssa.fieldset.js';
import { toFieldSet } from './ssa.typed.js';
import { configMapSchema, deploymentSchema, unstructuredSchema, widgetSchema } from './ssa.fixtures.js';

const f = fieldElement;

describe('FieldSet FieldsV1 encoding', () => {
  it('encodes a ConfigMap applied by kubectl as Kubernetes does', () => {
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'default' }, data: { key: 'v' } };
    const set = toFieldSet(cm, configMapSchema, true);
    // apiVersion, kind, metadata.name/namespace are in the raw set; stripping happens in managed fields.
    expect(set.has([f('data'), f('key')])).toBe(true);
    expect(set.has([f('data')])).toBe(false);
    const { apiVersion: _a, kind: _k, metadata: _m, ...rest } = cm;
    expect(JSON.stringify(toFieldSet(rest, configMapSchema, true).toFieldsV1())).toBe('{"f:data":{"f:key":{}}}');
  });

  it('encodes Deployment containers with k:{"name":...} items and "." members', () => {
    const d = { spec: { template: { spec: { containers: [{ name: 'nginx', image: 'nginx:1.25' }] } } } };
    const json = JSON.stringify(toFieldSet(d, deploymentSchema, true).toFieldsV1());
    expect(json).toBe('{"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\\"name\\":\\"nginx\\"}":{".":{},"f:image":{},"f:name":{}}}}}}}');
  });

  it('sorts multi-field keys by field name inside k: and orders f: < k: < v: < i:', () => {
    const d = { spec: { template: { spec: { containers: [{ name: 'a', ports: [{ protocol: 'UDP', containerPort: 53 }] }] } } } };
    const set = toFieldSet(d, deploymentSchema, true);
    expect(
      set.has([f('spec'), f('template'), f('spec'), f('containers'), keyElement({ name: 'a' }), f('ports'), 'k:{"containerPort":53,"protocol":"UDP"}']),
    ).toBe(true);
    const mixed = FieldSet.of(['i:2'], ['v:"b"'], ['k:{"name":"x"}'], ['f:z'], ['v:1'], ['f:a'], ['v:true'], ['i:10']);
    expect(Object.keys(mixed.toFieldsV1())).toEqual(['f:a', 'f:z', 'k:{"name":"x"}', 'v:1', 'v:"b"', 'v:true', 'i:2', 'i:10']);
  });

  it('round-trips the structured-merge-diff golden serialization', () => {
    // From structured-merge-diff fieldpath/serialize_test.go (TestSerializeV1GoldenData, first example).
    const golden =
      '{"f:aaa":{},"f:aab":{},"f:aac":{},"f:aad":{},"f:aae":{},"f:aaf":{},"k:{\\"name\\":\\"first\\"}":{},"k:{\\"name\\":\\"second\\"}":{},"k:{\\"port\\":443,\\"protocol\\":\\"tcp\\"}":{},"k:{\\"port\\":443,\\"protocol\\":\\"udp\\"}":{},"v:1":{},"v:2":{},"v:3":{},"v:\\"aa\\"":{},"v:\\"ab\\"":{},"v:true":{},"i:1":{},"i:2":{},"i:3":{},"i:4":{}}';
    const set = FieldSet.fromFieldsV1(JSON.parse(golden));
    expect(JSON.stringify(set.toFieldsV1())).toBe(golden);
    expect(set.size()).toBe(20);
  });

  it('round-trips a kube-controller-manager style Deployment entry with "." members', () => {
    const fields = {
      'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
      'f:spec': {
        'f:replicas': {},
        'f:selector': {},
        'f:template': {
          'f:spec': {
            'f:containers': {
              'k:{"name":"nginx"}': {
                '.': {},
                'f:image': {},
                'f:name': {},
                'f:ports': { 'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {}, 'f:protocol': {} } },
              },
            },
          },
        },
      },
    };
    const set = FieldSet.fromFieldsV1(fields);
    expect(set.has([f('metadata'), f('labels')])).toBe(true);
    expect(set.has([f('metadata')])).toBe(false);
    expect(set.toFieldsV1()).toEqual(fields);
    expect(JSON.stringify(set.toFieldsV1())).toBe(JSON.stringify(fields));
  });

  it('canonicalizes k: and v: JSON when decoding so equal paths compare equal', () => {
    const a = FieldSet.fromFieldsV1({ 'k:{"protocol":"TCP","containerPort":80}': {} });
    const b = FieldSet.of(['k:{"containerPort":80,"protocol":"TCP"}']);
    expect(a.equals(b)).toBe(true);
    expect(canonicalElement('v: "x"')).toBe('v:"x"');
  });

  it('drops unknown element kinds and rejects malformed trees with a typed error', () => {
    expect(JSON.stringify(FieldSet.fromFieldsV1({ 'f:aaa': {}, 'r:aab': {} }).toFieldsV1())).toBe('{"f:aaa":{}}');
    expect(() => FieldSet.fromFieldsV1({ 'k:{bad': {} })).toThrow(FieldsV1Error);
    expect(() => FieldSet.fromFieldsV1({ 'f:a': 1 })).toThrow(FieldsV1Error);
    expect(() => FieldSet.fromFieldsV1([])).toThrow(FieldsV1Error);
    expect(() => FieldSet.fromFieldsV1({ 'i:x': {} })).toThrow(FieldsV1Error);
  });

  it('uses v: items for sets and makes undeclared keys members (unstructured)', () => {
    const w = { spec: { tags: ['b', 'a'] } };
    expect(toFieldSet(w, widgetSchema('granular'), true).toFieldsV1()).toEqual({ 'f:spec': { 'f:tags': { 'v:"a"': {}, 'v:"b"': {} } } });
    const u = { spec: { list: [1, 2], m: { x: 1 } } };
    expect(toFieldSet(u, unstructuredSchema, true).toFieldsV1()).toEqual({ 'f:spec': { '.': {}, 'f:list': {}, 'f:m': { '.': {}, 'f:x': {} } } });
  });
});

describe('FieldSet operations', () => {
  const a = FieldSet.of([f('a'), f('x')], [f('a'), f('y')], [f('b')]);
  const b = FieldSet.of([f('a'), f('y')], [f('c')]);

  it('union, intersection, difference', () => {
    expect([...a.union(b).paths()].map(pathToString)).toEqual(['.a.x', '.a.y', '.b', '.c']);
    expect([...a.intersection(b).paths()].map(pathToString)).toEqual(['.a.y']);
    expect([...a.difference(b).paths()].map(pathToString)).toEqual(['.a.x', '.b']);
  });

  it('difference keeps descendants of removed members; recursiveDifference drops them', () => {
    const s = FieldSet.of([f('status')], [f('status'), f('replicas')], [f('spec')]);
    const ignore = FieldSet.of([f('status')]);
    expect([...s.difference(ignore).paths()].map(pathToString)).toEqual(['.spec', '.status.replicas']);
    expect([...s.recursiveDifference(ignore).paths()].map(pathToString)).toEqual(['.spec']);
  });

  it('does not mutate its operands', () => {
    const before = JSON.stringify(a.toFieldsV1());
    a.union(b);
    a.difference(b);
    a.intersection(b);
    expect(JSON.stringify(a.toFieldsV1())).toBe(before);
    expect(FieldSet.empty().isEmpty()).toBe(true);
    expect(a.intersection(FieldSet.of([f('zzz')])).isEmpty()).toBe(true);
  });

  it('unionAll: the union of a chain of unions, its operands unchanged, in one pass over many sets', () => {
    const c = FieldSet.of([f('a')], [f('a'), f('x'), f('deep')], [f('d')]);
    const inputs = [a, b, c, a, FieldSet.empty()];
    const before = inputs.map((s) => JSON.stringify(s.toFieldsV1()));
    const chained = inputs.reduce((acc, s) => acc.union(s));
    expect(FieldSet.unionAll(inputs).toFieldsV1()).toEqual(chained.toFieldsV1());
    expect(FieldSet.unionAll(inputs).toFieldsV1()).toEqual({
      'f:a': { '.': {}, 'f:x': { '.': {}, 'f:deep': {} }, 'f:y': {} },
      'f:b': {},
      'f:c': {},
      'f:d': {},
    });
    // Merging into a shared subtree copies it first: the operands are as they were.
    expect(inputs.map((s) => JSON.stringify(s.toFieldsV1()))).toEqual(before);
    expect(FieldSet.unionAll([]).isEmpty()).toBe(true);
    // 100,000 sets, each one more label: a chain of unions would copy the labels n times.
    const n = 100_000;
    const many = Array.from({ length: n }, (_, i) => FieldSet.of([f('metadata'), f('labels'), f(`l${i}`)]));
    const all = FieldSet.unionAll(many);
    expect(all.size()).toBe(n);
    expect(all.has([f('metadata'), f('labels'), f(`l${n - 1}`)])).toBe(true);
    expect(many[0]!.size()).toBe(1);
  });

  it('reads one element spelled many ways as one, merged in one pass', () => {
    expect(
      FieldSet.fromFieldsV1({ 'f:a': { 'v:1': { 'f:x': {} }, 'v:1.0': { '.': {}, 'f:y': {} }, 'v:2': {}, 'v:1e0': { 'f:x': { 'f:z': {} } } } }).toFieldsV1(),
    ).toEqual({
      'f:a': { 'v:1': { '.': {}, 'f:x': { '.': {}, 'f:z': {} }, 'f:y': {} }, 'v:2': {} },
    });
    // 100,000 spellings of one value (each letter plain or as a unicode escape), each with its own child.
    const n = 100_000;
    const fields: Record<string, unknown> = {};
    for (let i = 0; i < n; i++)
      fields[
        `v:"${[...i.toString(2).padStart(17, '0')].map((b, j) => (b === '1' ? `\\u00${(0x61 + j).toString(16)}` : String.fromCharCode(0x61 + j))).join('')}"`
      ] = { [`f:c${i}`]: {} };
    const set = FieldSet.fromFieldsV1({ 'f:list': fields });
    expect(Object.keys((set.toFieldsV1() as { 'f:list': object })['f:list'])).toEqual(['v:"abcdefghijklmnopq"']);
    expect(set.size()).toBe(n);
  });

  it('prints paths as Kubernetes conflict messages do', () => {
    expect(pathToString([f('spec'), f('template'), f('spec'), f('containers'), keyElement({ name: 'nginx' }), f('image')])).toBe(
      '.spec.template.spec.containers[name="nginx"].image',
    );
    expect(pathToString([f('metadata'), f('finalizers'), valueElement('a/b')])).toBe('.metadata.finalizers[="a/b"]');
    expect(pathToString(['k:{"containerPort":80,"protocol":"TCP"}'])).toBe('[containerPort=80,protocol="TCP"]');
    expect(pathToString([f('args'), 'i:3'])).toBe('.args[3]');
  });
});
