import type { FieldError } from '@app/apimachinery';
import { crdSchemaErrors } from './crd.schema-checks.js';
import { validateCrd, validateCrdUpdate } from './crd.validation.js';

const errs = (s: unknown): string[] => crdSchemaErrors(s, 'x').map((e: FieldError) => `${e.field}: ${e.detail}`);
const root = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ type: 'object', properties, ...extra });

describe('CRD schema checks: keywords and node rules', () => {
  it('accepts what controller-gen writes: int-or-string, embedded resources, list and map types, defaults', () => {
    expect(
      errs(
        root({
          apiVersion: { type: 'string' },
          kind: { type: 'string' },
          metadata: { type: 'object' },
          spec: {
            type: 'object',
            description: 'the spec',
            required: ['port'],
            properties: {
              port: { anyOf: [{ type: 'integer' }, { type: 'string' }], 'x-kubernetes-int-or-string': true },
              maxSurge: { allOf: [{ anyOf: [{ type: 'integer' }, { type: 'string' }] }, { pattern: '^[0-9]+%?$' }], 'x-kubernetes-int-or-string': true },
              template: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
              ports: {
                type: 'array',
                'x-kubernetes-list-type': 'map',
                'x-kubernetes-list-map-keys': ['containerPort', 'protocol'],
                items: {
                  type: 'object',
                  required: ['containerPort'],
                  properties: { containerPort: { type: 'integer' }, protocol: { type: 'string', default: 'TCP' } },
                },
              },
              tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
              labels: { type: 'object', 'x-kubernetes-map-type': 'atomic', additionalProperties: { type: 'string' } },
              replicas: { type: 'integer', default: 1, minimum: 0 },
              mode: { type: 'string', default: 'a', enum: ['a', 'b'] },
              open: { type: 'object', additionalProperties: true, properties: { a: { type: 'string' } } },
              size: { type: 'object', default: { width: 1 }, properties: { width: { type: 'integer' } } },
            },
            allOf: [{ required: ['port'] }],
            oneOf: [{ properties: { replicas: { minimum: 1 } } }, { required: ['mode'] }],
          },
        }),
      ),
    ).toEqual([]);
  });

  it('refuses the JSON Schema keywords Kubernetes does not support', () => {
    expect(
      errs(
        root({
          a: { type: 'string', id: 'a' },
          b: { type: 'array', items: { type: 'string' }, additionalItems: false },
          c: { type: 'object', patternProperties: { '^x': { type: 'string' } } },
          d: { type: 'object', definitions: { e: { type: 'string' } } },
          f: { type: 'object', dependencies: { g: ['h'] } },
          i: { type: 'null' },
          j: { type: 'array', items: [{ type: 'string' }] },
          k: { type: 'array', items: { type: 'string' }, uniqueItems: true },
        }),
      ),
    ).toEqual([
      'x.properties[a].id: id is not supported',
      'x.properties[b].additionalItems: additionalItems is not supported',
      'x.properties[c].patternProperties: patternProperties is not supported',
      'x.properties[d].definitions: definitions is not supported',
      'x.properties[f].dependencies: dependencies is not supported',
      'x.properties[i].type: supported values: "array", "boolean", "integer", "number", "object", "string"',
      'x.properties[i].type: type cannot be set to null, use nullable as an alternative',
      'x.properties[j].items: items must be a schema object and not an array',
      'x.properties[k].uniqueItems: uniqueItems cannot be set to true since the runtime complexity becomes quadratic',
    ]);
    expect(errs(root({ a: { type: 'string' } }, { $schema: 'http://json-schema.org/draft-04/schema#' }))).toEqual([
      "x: OpenAPIV3Schema 'schema' is not supported",
    ]);
  });

  it('checks list types, list map keys and map types', () => {
    expect(
      errs(
        root({
          a: { type: 'string', 'x-kubernetes-list-type': 'set' },
          b: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'bag' },
          c: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'map' },
          d: {
            type: 'array',
            'x-kubernetes-list-type': 'map',
            'x-kubernetes-list-map-keys': ['name', 'sub', 'gone', 'name'],
            items: { type: 'object', required: ['name', 'sub'], properties: { name: { type: 'string' }, sub: { type: 'object' } } },
          },
          e: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-map-keys': ['x'] },
          f: { type: 'array', items: { type: 'object' }, 'x-kubernetes-list-type': 'set' },
          g: { type: 'array', items: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' }, 'x-kubernetes-list-type': 'set' },
          h: { type: 'string', 'x-kubernetes-map-type': 'atomic' },
          i: { type: 'object', 'x-kubernetes-map-type': 'partial' },
          j: {
            type: 'array',
            'x-kubernetes-list-type': 'map',
            'x-kubernetes-list-map-keys': ['name'],
            items: { type: 'object', nullable: true, properties: { name: { type: 'string', nullable: true } } },
          },
        }),
      ),
    ).toEqual([
      'x.properties[a].type: must be array if x-kubernetes-list-type is specified',
      'x.properties[b].x-kubernetes-list-type: supported values: "atomic", "set", "map"',
      'x.properties[c].x-kubernetes-list-map-keys: must not be empty if x-kubernetes-list-type is map',
      "x.properties[c].items.type: must be object if parent array's x-kubernetes-list-type is map",
      "x.properties[d].items.properties[sub].type: must be a scalar type if parent array's x-kubernetes-list-type is map",
      'x.properties[d].x-kubernetes-list-map-keys: entries must all be names of item properties',
      'x.properties[d].x-kubernetes-list-map-keys: must not contain duplicate entries',
      'x.properties[e].x-kubernetes-list-type: must be map if x-kubernetes-list-map-keys is non-empty',
      'x.properties[f].items.x-kubernetes-map-type: must be atomic as item of a list with x-kubernetes-list-type=set',
      'x.properties[g].items.x-kubernetes-list-type: must be atomic as item of a list with x-kubernetes-list-type=set',
      'x.properties[h].type: must be object if x-kubernetes-map-type is specified',
      'x.properties[i].x-kubernetes-map-type: supported values: "atomic", "granular"',
      'x.properties[j].items.nullable: cannot be nullable when x-kubernetes-list-type is map',
      'x.properties[j].items.properties[name].default: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property',
      'x.properties[j].items.properties[name].nullable: this property is in x-kubernetes-list-map-keys, so it cannot be nullable',
    ]);
  });

  it('checks defaults: valid for their schema, no unknown fields, none in the top-level metadata', () => {
    expect(
      errs(
        root({
          metadata: { type: 'object', default: { name: 'x' } },
          a: { type: 'integer', minimum: 1, default: 0 },
          b: { type: 'object', properties: { c: { type: 'string' } }, default: { c: 'ok', d: 1 } },
          e: { type: 'string', enum: ['p', 'q'], default: 'r' },
          f: { type: 'object', properties: { g: { type: 'string' } }, default: { g: 5 } },
          h: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, default: { any: 'thing' } },
        }),
      ),
    ).toEqual([
      'x.properties[metadata].default: must not be set in top-level metadata',
      'x.properties[a].default: x.properties[a].default in body should be greater than or equal to 1',
      'x.properties[b].default: must not have unknown fields',
      'x.properties[e].default: supported values: "p", "q"',
      'x.properties[f].default.g: x.properties[f].default.g in body must be of type string: "integer"',
    ]);
  });

  it('checks preserve-unknown-fields and embedded resources inside metadata', () => {
    expect(
      errs(
        root({
          a: { type: 'object', 'x-kubernetes-preserve-unknown-fields': false },
          r: {
            type: 'object',
            'x-kubernetes-embedded-resource': true,
            properties: { metadata: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true } },
          },
        }),
      ),
    ).toEqual([
      'x.properties[a].x-kubernetes-preserve-unknown-fields: must be true or undefined',
      'x.properties[r].properties[metadata].x-kubernetes-embedded-resource: must not be used inside of resource meta',
    ]);
  });
});

describe('CRD schema checks: structural rules', () => {
  it('value validations only restrict: no types, generics, extensions or CEL rules under allOf, anyOf, oneOf and not', () => {
    expect(
      errs(
        root({
          a: {
            type: 'object',
            properties: { b: { type: 'string' }, c: { type: 'integer' } },
            allOf: [
              { properties: { b: { type: 'string', description: 'd', 'x-kubernetes-validations': [{ rule: 'self != ""' }] } } },
              { 'x-kubernetes-preserve-unknown-fields': true, nullable: true, default: {}, title: 't' },
            ],
            anyOf: [{ additionalProperties: { type: 'string' } }, { 'x-kubernetes-list-type': 'atomic' }],
            oneOf: [{ 'x-kubernetes-map-type': 'atomic', externalDocs: { url: 'u' } }],
            not: { properties: { metadata: { maxProperties: 1 } }, 'x-kubernetes-int-or-string': true, 'x-kubernetes-embedded-resource': true },
          },
        }),
      ),
    ).toEqual([
      'x.properties[a].allOf[0].properties[b].description: must be empty to be structural',
      'x.properties[a].allOf[0].properties[b].type: must be empty to be structural',
      'x.properties[a].allOf[0].properties[b].x-kubernetes-validations: must be empty to be structural',
      'x.properties[a].allOf[1].default: must be undefined to be structural',
      'x.properties[a].allOf[1].nullable: must be false to be structural',
      'x.properties[a].allOf[1].title: must be empty to be structural',
      'x.properties[a].allOf[1].x-kubernetes-preserve-unknown-fields: must be false to be structural',
      'x.properties[a].anyOf[0].additionalProperties: must be undefined to be structural',
      'x.properties[a].anyOf[1].x-kubernetes-list-type: must be undefined to be structural',
      'x.properties[a].not.properties[metadata]: must not be specified in a nested context',
      'x.properties[a].not.x-kubernetes-embedded-resource: must be false to be structural',
      'x.properties[a].not.x-kubernetes-int-or-string: must be false to be structural',
      'x.properties[a].oneOf[0].externalDocs: must be undefined to be structural',
      'x.properties[a].oneOf[0].x-kubernetes-map-type: must be undefined to be structural',
      // The node checks look under the junctors too.
      'x.properties[a].oneOf[0].type: must be object if x-kubernetes-map-type is specified',
      'x.properties[a].anyOf[1].type: must be array if x-kubernetes-list-type is specified',
    ]);
  });

  it('what a value validation at the root names must be declared by the structural part', () => {
    expect(
      errs(
        root(
          { spec: { type: 'object', properties: { a: { type: 'string' } } } },
          { anyOf: [{ properties: { spec: { properties: { a: { minLength: 1 }, b: { minLength: 1 } } } } }, { properties: { status: {} } }] },
        ),
      ),
    ).toEqual([
      'x.properties[spec].properties[b]: because it is defined in x.anyOf[0].properties[spec].properties[b]',
      'x.properties[status]: because it is defined in x.anyOf[1].properties[status]',
    ]);
  });

  it('types, the root, metadata and embedded resources', () => {
    const withProps = (extra: Record<string, unknown>) => ({
      type: 'object',
      ...extra,
      properties: {
        apiVersion: { type: 'integer' },
        metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 10 }, labels: { type: 'object' } } },
        list: { type: 'array', items: { description: 'no type' } },
        e1: { 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
        e2: { type: 'object', 'x-kubernetes-embedded-resource': true },
        e3: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true, additionalProperties: { type: 'string' } },
        e4: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { kind: { type: 'integer' }, metadata: { type: 'string' } } },
        ios: { 'x-kubernetes-int-or-string': true, 'x-kubernetes-preserve-unknown-fields': true },
      },
    });
    expect(errs(withProps({}))).toEqual([
      'x.properties[apiVersion].type: must be string',
      'x.properties[e1].type: must be object if x-kubernetes-embedded-resource is true',
      'x.properties[e2].properties: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields',
      'x.properties[e3].additionalProperties: must not be used if x-kubernetes-embedded-resource is set',
      'x.properties[e4].properties[kind].type: must be string',
      'x.properties[e4].properties[metadata].type: must be object',
      'x.properties[ios].x-kubernetes-preserve-unknown-fields: must be false if x-kubernetes-int-or-string is true',
      'x.properties[list].items.type: must not be empty for specified array items',
      'x.properties[metadata]: must not specify anything other than name and generateName, but metadata is implicitly specified',
    ]);
    expect(errs({ type: 'object', additionalProperties: { type: 'string' } })).toEqual(['x.additionalProperties: must not be used at the root']);
    // metadata restricting name and generateName only is fine.
    expect(errs(root({ metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 10 }, generateName: { type: 'string' } } } }))).toEqual([]);
  });
});

describe('CRD schema checks in the definition', () => {
  const crd = (schema: unknown) => ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema } }],
    },
  });
  const messages = (list: FieldError[]) => list.map((e) => `${e.field}: ${e.detail}`);
  const ruleInAllOf = root({ spec: { type: 'object', properties: { a: { type: 'string' } }, allOf: [{ 'x-kubernetes-validations': [{ rule: 'true' }] }] } });

  it('a create meets every check, and CEL rules are not compiled while the schema is refused', () => {
    expect(messages(validateCrd(crd(ruleInAllOf)))).toEqual([
      'spec.validation.openAPIV3Schema.properties[spec].allOf[0].x-kubernetes-validations: must be empty to be structural',
    ]);
  });

  it("names a schema every version shares once, at spec.validation, and otherwise each version's own", () => {
    const bad = root({ a: { type: 'array', items: { type: 'string' }, uniqueItems: true } });
    const two = (s0: unknown, s1: unknown) => {
      const c = crd(s0);
      c.spec.versions = [
        { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: s0 } },
        { name: 'v2', served: true, storage: false, schema: { openAPIV3Schema: s1 } },
      ];
      return messages(validateCrd(c));
    };
    expect(two(bad, bad)).toEqual([
      'spec.validation.openAPIV3Schema.properties[a].uniqueItems: uniqueItems cannot be set to true since the runtime complexity becomes quadratic',
    ]);
    expect(two(root({}), bad)).toEqual([
      'spec.versions[1].schema.openAPIV3Schema.properties[a].uniqueItems: uniqueItems cannot be set to true since the runtime complexity becomes quadratic',
    ]);
  });

  it('an update is not refused for what the stored definition already had, only for what it adds', () => {
    const old = crd(ruleInAllOf);
    expect(validateCrdUpdate(crd(ruleInAllOf), old)).toEqual([]);
    const worse = root({
      spec: {
        type: 'object',
        properties: { a: { type: 'string' }, b: { type: 'array', items: { type: 'string' }, uniqueItems: true } },
        allOf: [{ 'x-kubernetes-validations': [{ rule: 'true' }] }],
      },
    });
    expect(messages(validateCrdUpdate(crd(worse), old))).toEqual([
      'spec.validation.openAPIV3Schema.properties[spec].properties[b].uniqueItems: uniqueItems cannot be set to true since the runtime complexity becomes quadratic',
    ]);
  });
});
