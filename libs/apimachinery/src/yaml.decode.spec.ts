import { decodeYaml, decodeYamlDocuments, YamlDecodeError, yamlDuplicatesMessage } from './yaml.decode.js';

describe('decodeYaml (sigs.k8s.io/yaml semantics)', () => {
  it('decodes YAML 1.1 scalars like go-yaml v2', () => {
    const { value } = decodeYaml('a: yes\nb: off\nc: 0777\nd: 2001-12-14\ne: 1:20\nf: "01"\ng: 1_000\nh: ~\ni: 1.5\n');
    expect(value).toEqual({ a: true, b: false, c: 511, d: '2001-12-14', e: '1:20', f: '01', g: 1000, h: null, i: 1.5 });
  });

  it('supports merge keys and anchors', () => {
    expect(decodeYaml('base: &b {x: 1}\nderived:\n  <<: *b\n  z: 2\n').value).toEqual({ base: { x: 1 }, derived: { x: 1, z: 2 } });
    // go-yaml v2 resolves keys like values, and sigs.k8s.io/yaml prints bool keys as "true"/"false".
    expect(decodeYaml('y: 1\nno: 2\n').value).toEqual({ true: 1, false: 2 });
  });

  it('reports duplicate keys with line numbers; last wins', () => {
    const r = decodeYaml('metadata:\n  name: a\n  name: b\nspec:\n  items:\n  - k: 1\n    k: 2\n');
    expect(r.value).toEqual({ metadata: { name: 'b' }, spec: { items: [{ k: 2 }] } });
    expect(r.duplicates).toEqual([
      { path: 'metadata.name', key: 'name', line: 3 },
      { path: 'spec.items[0].k', key: 'k', line: 7 },
    ]);
    expect(yamlDuplicatesMessage(r.duplicates)).toBe('yaml: unmarshal errors:\n  line 3: key "name" already set in map\n  line 7: key "k" already set in map');
  });

  it('rejects unknown tags, collection keys, syntax errors', () => {
    expect(() => decodeYaml('a: !foo x')).toThrow(YamlDecodeError);
    expect(() => decodeYaml('? [1]\n: 2\n')).toThrow(/invalid map key/);
    const unterminated = (): unknown => decodeYaml('a: [1,\nb: c');
    expect(unterminated).toThrow(YamlDecodeError);
    expect(unterminated).toThrow(expect.objectContaining({ line: 2 }));
    expect(() => decodeYaml('a: .inf')).toThrow('json: unsupported value: +Inf');
  });

  it('bounds alias expansion (billion laughs)', () => {
    let text = 'a0: &a0 [x,x,x,x,x,x,x,x,x,x]\n';
    for (let i = 1; i < 9; i++)
      text += `a${i}: &a${i} [${Array(10)
        .fill(`*a${i - 1}`)
        .join(',')}]\n`;
    expect(() => decodeYaml(text)).toThrow(YamlDecodeError);
  });

  it('multi-document streams', () => {
    const docs = decodeYamlDocuments('---\na: 1\n---\n# only a comment\n---\nb: 2\n');
    expect(docs.map((d) => d.value)).toEqual([{ a: 1 }, { b: 2 }]);
    expect(decodeYaml('a: 1\n---\nb: 2\n').value).toEqual({ a: 1 });
    expect(decodeYaml('').value).toBeNull();
    expect(decodeYaml('{"json": [1, 2]}').value).toEqual({ json: [1, 2] });
  });
});
