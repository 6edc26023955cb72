/**
 * What a CustomResourceDefinition's `openAPIV3Schema` must satisfy before the definition is
 * accepted, after kube's apiextensions validation: the OpenAPI checks made on every node (the
 * keywords Kubernetes does not support, `uniqueItems`, list and map types, defaults that
 * validate and hold no unknown fields), and the structural-schema rules (a type on every node,
 * value validations under `allOf`/`anyOf`/`oneOf`/`not` that only restrict what the structural
 * part declares, no CEL rules there, the root's `metadata` limited to `name` and
 * `generateName`, embedded resources shaped as objects).
 *
 * Errors come as kube gives them: the structural ones sorted, then the node checks in schema
 * order. The structural rules are checked only when the schema has none of the unsupported
 * keywords (kube cannot build a structural schema from such a schema, and the node checks
 * already name them).
 */
import { compileSchemaPattern, goSlice, prune, validateSchema, type FieldError, type JSONSchemaProps } from '@app/apimachinery';
import { isDeepStrictEqual } from 'node:util';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);
const asObj = (v: unknown): Obj => (isObj(v) ? v : {});
const present = (v: unknown): boolean => v !== undefined && v !== null;

const SCHEMA_TYPES = ['array', 'boolean', 'integer', 'number', 'object', 'string'];
const META_FIELDS = new Set(['apiVersion', 'kind', 'metadata']);
/** Keywords of JSON Schema that a structural schema cannot hold (kube's NewStructural refuses them). */
const UNSUPPORTED = ['id', '$schema', '$ref', 'patternProperties', 'dependencies', 'additionalItems', 'definitions'] as const;

/** Every error of a version's schema at `path` (`spec.versions[i].schema.openAPIV3Schema`). */
export function crdSchemaErrors(schema: unknown, path: string): FieldError[] {
  if (!isObj(schema)) return [{ type: 'FieldValueInvalid', field: path, value: schema, detail: 'must be a JSON schema object' }];
  const structural: FieldError[] = [];
  const unsupported = unsupportedKeyword(schema);
  if (!unsupported) {
    structuralInvariants(schema, 'root', path, structural);
    valueValidationCompleteness(schema, schema, path, path, structural);
    structural.sort(byText);
  }
  const nodes: FieldError[] = [];
  nodeChecks(schema, path, { root: true, insideMeta: false, defaults: true, noDefaultsReason: '' }, nodes);
  // What only the structural conversion refuses (`$schema`) is reported when nothing else is.
  if (unsupported && !nodes.length) return [{ type: 'FieldValueInvalid', field: path, value: '', detail: `OpenAPIV3Schema '${unsupported}' is not supported` }];
  return [...structural, ...nodes];
}

const byText = (a: FieldError, b: FieldError): number => {
  const x = `${a.field}\0${a.type}\0${a.detail}`;
  const y = `${b.field}\0${b.type}\0${b.detail}`;
  return x < y ? -1 : x > y ? 1 : 0;
};

/**
 * The first keyword anywhere in `s` that keeps kube from building a structural schema of it (an
 * array of items counts as `items`), or undefined when there is none.
 */
function unsupportedKeyword(s: unknown): string | undefined {
  if (!isObj(s)) return undefined;
  for (const k of UNSUPPORTED) {
    const v = s[k];
    if (v === undefined || v === null || v === '') continue;
    if (isObj(v) && Object.keys(v).length === 0 && k !== 'additionalItems') continue;
    return k === '$schema' ? 'schema' : k;
  }
  if (Array.isArray(s.items)) return 'items';
  const subs: unknown[] = [s.items, s.not, ...Object.values(asObj(s.properties))];
  if (isObj(s.additionalProperties)) subs.push(s.additionalProperties);
  for (const k of ['allOf', 'anyOf', 'oneOf'] as const) if (Array.isArray(s[k])) subs.push(...(s[k] as unknown[]));
  for (const sub of subs) {
    const found = unsupportedKeyword(sub);
    if (found) return found;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Node checks (kube's validateCustomResourceDefinitionOpenAPISchema and its standard validator)

interface NodeContext {
  root: boolean;
  /** Under the apiVersion, kind or metadata of the root or of an embedded resource. */
  insideMeta: boolean;
  defaults: boolean;
  noDefaultsReason: string;
}

function nodeChecks(s: unknown, path: string, ctx: NodeContext, out: FieldError[]): void {
  if (!isObj(s)) {
    if (s !== undefined && s !== null && typeof s !== 'boolean')
      out.push({ type: 'FieldValueInvalid', field: path, value: s, detail: 'must be a JSON schema object' });
    return;
  }
  standardChecks(s, path, ctx, out);
  if (s.uniqueItems === true)
    out.push({
      type: 'FieldValueForbidden',
      field: `${path}.uniqueItems`,
      detail: 'uniqueItems cannot be set to true since the runtime complexity becomes quadratic',
    });
  const props = isObj(s.properties) ? s.properties : {};
  const ap = s.additionalProperties;
  if (ap !== undefined && ap !== null) {
    if (Object.keys(props).length > 0 && (ap === false || isObj(ap)))
      out.push({ type: 'FieldValueForbidden', field: `${path}.additionalProperties`, detail: 'additionalProperties and properties are mutual exclusive' });
    const sub = ctx.insideMeta
      ? { ...ctx, root: false, defaults: false, noDefaultsReason: 'inside additionalProperties applying to object metadata' }
      : { ...ctx, root: false };
    nodeChecks(ap, `${path}.additionalProperties`, sub, out);
  }
  const embedded = s['x-kubernetes-embedded-resource'] === true;
  for (const [k, v] of Object.entries(props)) {
    let sub: NodeContext = { ...ctx, root: false };
    if ((ctx.root || embedded) && META_FIELDS.has(k)) {
      sub = { ...sub, insideMeta: true };
      if (ctx.root) sub = { ...sub, defaults: false, noDefaultsReason: `in top-level ${k}` };
    }
    nodeChecks(v, `${path}.properties[${k}]`, sub, out);
  }
  const nested: NodeContext = { ...ctx, root: false };
  nodeChecks(s.not, `${path}.not`, nested, out);
  for (const k of ['allOf', 'oneOf', 'anyOf'] as const)
    if (Array.isArray(s[k])) (s[k] as unknown[]).forEach((x, i) => nodeChecks(x, `${path}.${k}[${i}]`, nested, out));
  if (!Array.isArray(s.items)) nodeChecks(s.items, `${path}.items`, nested, out);

  if (s['x-kubernetes-preserve-unknown-fields'] === false)
    out.push({ type: 'FieldValueInvalid', field: `${path}.x-kubernetes-preserve-unknown-fields`, value: false, detail: 'must be true or undefined' });
  listTypeChecks(s, path, out);
  mapTypeChecks(s, path, out);
  const keys = s['x-kubernetes-list-map-keys'];
  if (Array.isArray(keys) && keys.length > 0) {
    const lt = s['x-kubernetes-list-type'];
    if (lt === undefined || lt === null)
      out.push({ type: 'FieldValueRequired', field: `${path}.x-kubernetes-list-type`, detail: 'must be map if x-kubernetes-list-map-keys is non-empty' });
    else if (lt !== 'map')
      out.push({
        type: 'FieldValueInvalid',
        field: `${path}.x-kubernetes-list-type`,
        value: lt,
        detail: 'must be map if x-kubernetes-list-map-keys is non-empty',
      });
  }
  mapListKeyChecks(s, path, out);
}

function standardChecks(s: Obj, path: string, ctx: NodeContext, out: FieldError[]): void {
  const type = s.type;
  if (type !== undefined && type !== '' && (typeof type !== 'string' || !SCHEMA_TYPES.includes(type)))
    out.push({
      type: 'FieldValueNotSupported',
      field: `${path}.type`,
      value: type,
      detail: `supported values: ${SCHEMA_TYPES.map((t) => `"${t}"`).join(', ')}`,
    });
  if (present(s.default)) {
    if (!ctx.defaults)
      out.push({ type: 'FieldValueForbidden', field: `${path}.default`, detail: `must not be set${ctx.noDefaultsReason ? ` ${ctx.noDefaultsReason}` : ''}` });
    else if (!unsupportedKeyword(s)) defaultChecks(s, path, ctx, out);
  }
  if (typeof s.id === 'string' && s.id !== '') out.push({ type: 'FieldValueForbidden', field: `${path}.id`, detail: 'id is not supported' });
  if (present(s.additionalItems)) out.push({ type: 'FieldValueForbidden', field: `${path}.additionalItems`, detail: 'additionalItems is not supported' });
  if (isObj(s.patternProperties) && Object.keys(s.patternProperties).length > 0)
    out.push({ type: 'FieldValueForbidden', field: `${path}.patternProperties`, detail: 'patternProperties is not supported' });
  if (isObj(s.definitions) && Object.keys(s.definitions).length > 0)
    out.push({ type: 'FieldValueForbidden', field: `${path}.definitions`, detail: 'definitions is not supported' });
  if (present(s.dependencies)) out.push({ type: 'FieldValueForbidden', field: `${path}.dependencies`, detail: 'dependencies is not supported' });
  if (present(s.$ref)) out.push({ type: 'FieldValueForbidden', field: `${path}.$ref`, detail: '$ref is not supported' });
  if (type === 'null') out.push({ type: 'FieldValueForbidden', field: `${path}.type`, detail: 'type cannot be set to null, use nullable as an alternative' });
  if (Array.isArray(s.items) && s.items.length > 0)
    out.push({ type: 'FieldValueForbidden', field: `${path}.items`, detail: 'items must be a schema object and not an array' });
  if (ctx.insideMeta && s['x-kubernetes-embedded-resource'] === true)
    out.push({ type: 'FieldValueForbidden', field: `${path}.x-kubernetes-embedded-resource`, detail: 'must not be used inside of resource meta' });
  if (typeof s.pattern === 'string' ? compileSchemaPattern(s.pattern) === null : s.pattern !== undefined)
    out.push({ type: 'FieldValueInvalid', field: `${path}.pattern`, value: s.pattern, detail: 'must be a valid regular expression' });
}

/** A default holds only fields the schema declares (outside object metadata) and validates against it. */
function defaultChecks(s: Obj, path: string, ctx: NodeContext, out: FieldError[]): void {
  const schema = s as JSONSchemaProps;
  const embedded = s['x-kubernetes-embedded-resource'] === true;
  if (!ctx.insideMeta) {
    const clone: unknown = JSON.parse(JSON.stringify(s.default));
    prune(clone, schema, { root: embedded });
    if (!isDeepStrictEqual(clone, s.default)) {
      out.push({ type: 'FieldValueInvalid', field: `${path}.default`, value: s.default, detail: 'must not have unknown fields' });
      return;
    }
  }
  out.push(...validateSchema(s.default, schema, `${path}.default`, { root: embedded }));
}

function listTypeChecks(s: Obj, path: string, out: FieldError[]): void {
  const lt = s['x-kubernetes-list-type'];
  if (lt === undefined || lt === null) return;
  if (s.type !== 'array') {
    if (s.type === undefined || s.type === '')
      out.push({ type: 'FieldValueRequired', field: `${path}.type`, detail: 'must be array if x-kubernetes-list-type is specified' });
    else out.push({ type: 'FieldValueInvalid', field: `${path}.type`, value: s.type, detail: 'must be array if x-kubernetes-list-type is specified' });
  }
  const items = isObj(s.items) ? s.items : undefined;
  if (s.type === 'array' && lt === 'set' && items) {
    const itemList = items['x-kubernetes-list-type'];
    const itemMap = items['x-kubernetes-map-type'];
    if (items.type === 'array' && itemList !== undefined && itemList !== 'atomic')
      out.push({
        type: 'FieldValueInvalid',
        field: `${path}.items.x-kubernetes-list-type`,
        value: itemList,
        detail: 'must be atomic as item of a list with x-kubernetes-list-type=set',
      });
    if (items.type === 'object' && itemMap !== 'atomic')
      out.push({
        type: 'FieldValueInvalid',
        field: `${path}.items.x-kubernetes-map-type`,
        value: itemMap ?? null,
        detail: 'must be atomic as item of a list with x-kubernetes-list-type=set',
      });
  }
  if (lt !== 'atomic' && lt !== 'set' && lt !== 'map') {
    out.push({ type: 'FieldValueNotSupported', field: `${path}.x-kubernetes-list-type`, value: lt, detail: 'supported values: "atomic", "set", "map"' });
    return;
  }
  if (lt !== 'map') return;
  const keys = Array.isArray(s['x-kubernetes-list-map-keys']) ? (s['x-kubernetes-list-map-keys'] as unknown[]) : [];
  if (keys.length === 0)
    out.push({ type: 'FieldValueRequired', field: `${path}.x-kubernetes-list-map-keys`, detail: 'must not be empty if x-kubernetes-list-type is map' });
  if (s.items === undefined || s.items === null) {
    out.push({ type: 'FieldValueRequired', field: `${path}.items`, detail: 'must have a schema if x-kubernetes-list-type is map' });
    return;
  }
  if (!items) {
    out.push({ type: 'FieldValueInvalid', field: `${path}.items`, value: s.items, detail: 'must only have a single schema if x-kubernetes-list-type is map' });
    return;
  }
  if (items.type !== 'object') {
    out.push({
      type: 'FieldValueInvalid',
      field: `${path}.items.type`,
      value: items.type ?? '',
      detail: "must be object if parent array's x-kubernetes-list-type is map",
    });
    return;
  }
  const props = asObj(items.properties);
  const seen = new Set<unknown>();
  for (const k of keys) {
    const p = typeof k === 'string' && Object.hasOwn(props, k) ? asObj(props[k]) : undefined;
    if (!p)
      out.push({
        type: 'FieldValueInvalid',
        field: `${path}.x-kubernetes-list-map-keys`,
        value: goSlice(keys),
        detail: 'entries must all be names of item properties',
      });
    else if (p.type === 'array' || p.type === 'object')
      out.push({
        type: 'FieldValueInvalid',
        field: `${path}.items.properties[${String(k)}].type`,
        value: items.type,
        detail: "must be a scalar type if parent array's x-kubernetes-list-type is map",
      });
    if (seen.has(k))
      out.push({ type: 'FieldValueInvalid', field: `${path}.x-kubernetes-list-map-keys`, value: goSlice(keys), detail: 'must not contain duplicate entries' });
    seen.add(k);
  }
}

function mapTypeChecks(s: Obj, path: string, out: FieldError[]): void {
  const mt = s['x-kubernetes-map-type'];
  if (mt === undefined || mt === null) return;
  if (s.type !== 'object') {
    if (s.type === undefined || s.type === '')
      out.push({ type: 'FieldValueRequired', field: `${path}.type`, detail: 'must be object if x-kubernetes-map-type is specified' });
    else out.push({ type: 'FieldValueInvalid', field: `${path}.type`, value: s.type, detail: 'must be object if x-kubernetes-map-type is specified' });
  }
  if (mt !== 'atomic' && mt !== 'granular')
    out.push({ type: 'FieldValueNotSupported', field: `${path}.x-kubernetes-map-type`, value: mt, detail: 'supported values: "atomic", "granular"' });
}

/** The items of set and map lists are never null, and the keys of a map list are required or defaulted, never null. */
function mapListKeyChecks(s: Obj, path: string, out: FieldError[]): void {
  const lt = s['x-kubernetes-list-type'];
  const items = s.items;
  if ((lt !== 'set' && lt !== 'map') || !isObj(items)) return;
  if (items.nullable === true)
    out.push({ type: 'FieldValueForbidden', field: `${path}.items.nullable`, detail: `cannot be nullable when x-kubernetes-list-type is ${lt}` });
  if (lt !== 'map') return;
  const required = new Set(Array.isArray(items.required) ? items.required : []);
  const props = asObj(items.properties);
  for (const k of Array.isArray(s['x-kubernetes-list-map-keys']) ? (s['x-kubernetes-list-map-keys'] as unknown[]) : []) {
    if (typeof k !== 'string' || !Object.hasOwn(props, k)) continue;
    const p = asObj(props[k]);
    if (!required.has(k) && !present(p.default))
      out.push({
        type: 'FieldValueRequired',
        field: `${path}.items.properties[${k}].default`,
        detail: 'this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property',
      });
    if (p.nullable === true)
      out.push({
        type: 'FieldValueForbidden',
        field: `${path}.items.properties[${k}].nullable`,
        detail: 'this property is in x-kubernetes-list-map-keys, so it cannot be nullable',
      });
  }
}

// ---------------------------------------------------------------------------------------------
// Structural invariants (kube's ValidateStructural)

type Level = 'root' | 'item' | 'field';

function structuralInvariants(s: unknown, level: Level, path: string, out: FieldError[]): void {
  if (!isObj(s)) return;
  if (s.type === 'array' && !present(s.items)) out.push({ type: 'FieldValueRequired', field: `${path}.items`, detail: 'must be specified' });
  structuralInvariants(s.items, 'item', `${path}.items`, out);
  const props = asObj(s.properties);
  for (const [k, v] of Object.entries(props)) structuralInvariants(v, 'field', `${path}.properties[${k}]`, out);
  const ap = s.additionalProperties;
  if (present(ap)) {
    if (level === 'root') out.push({ type: 'FieldValueForbidden', field: `${path}.additionalProperties`, detail: 'must not be used at the root' });
    if (isObj(ap)) structuralInvariants(ap, 'field', `${path}.additionalProperties`, out);
  }
  const intOrString = s['x-kubernetes-int-or-string'] === true;
  const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
  const embedded = s['x-kubernetes-embedded-resource'] === true;
  if (intOrString && preserve)
    out.push({
      type: 'FieldValueInvalid',
      field: `${path}.x-kubernetes-preserve-unknown-fields`,
      value: true,
      detail: 'must be false if x-kubernetes-int-or-string is true',
    });
  if (intOrString && embedded)
    out.push({
      type: 'FieldValueInvalid',
      field: `${path}.x-kubernetes-embedded-resource`,
      value: true,
      detail: 'must be false if x-kubernetes-int-or-string is true',
    });

  valueValidation(s, isIntOrStringAnyOf(s), isIntOrStringAllOf(s), path, out);

  const typeless = s.type === undefined || s.type === '';
  if (embedded && s.type !== 'object') {
    if (typeless) out.push({ type: 'FieldValueRequired', field: `${path}.type`, detail: 'must be object if x-kubernetes-embedded-resource is true' });
    else out.push({ type: 'FieldValueInvalid', field: `${path}.type`, value: s.type, detail: 'must be object if x-kubernetes-embedded-resource is true' });
  } else if (typeless && !intOrString && !preserve) {
    const detail =
      level === 'root'
        ? 'must not be empty at the root'
        : level === 'item'
          ? 'must not be empty for specified array items'
          : 'must not be empty for specified object fields';
    out.push({ type: 'FieldValueRequired', field: `${path}.type`, detail });
  }
  if (embedded && present(ap))
    out.push({ type: 'FieldValueForbidden', field: `${path}.additionalProperties`, detail: 'must not be used if x-kubernetes-embedded-resource is set' });
  if (level === 'root' && !typeless && s.type !== 'object')
    out.push({ type: 'FieldValueInvalid', field: `${path}.type`, value: s.type, detail: 'must be object at the root' });

  const checkMeta = level === 'root' || embedded;
  for (const k of ['kind', 'apiVersion']) {
    if (!checkMeta || !Object.hasOwn(props, k)) continue;
    const t = asObj(props[k]).type;
    if (t !== 'string') out.push({ type: 'FieldValueInvalid', field: `${path}.properties[${k}].type`, value: t ?? '', detail: 'must be string' });
  }
  if (Object.hasOwn(props, 'metadata')) {
    const meta = asObj(props.metadata);
    const mp = `${path}.properties[metadata]`;
    if (checkMeta && meta.type !== 'object') out.push({ type: 'FieldValueInvalid', field: `${mp}.type`, value: meta.type ?? '', detail: 'must be object' });
    if (level === 'root' && !onlyNameAndGenerateName(meta))
      out.push({
        type: 'FieldValueForbidden',
        field: mp,
        detail: 'must not specify anything other than name and generateName, but metadata is implicitly specified',
      });
  }
  if (embedded && !preserve && Object.keys(props).length === 0)
    out.push({
      type: 'FieldValueRequired',
      field: `${path}.properties`,
      detail: 'must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields',
    });
}

/** The root's metadata schema may restrict name and generateName, and say nothing else (its type and default aside). */
function onlyNameAndGenerateName(meta: Obj): boolean {
  for (const [k, v] of Object.entries(meta)) {
    if (k === 'type' || k === 'default' || k === 'externalDocs' || k === 'example') continue;
    if (k === 'properties') {
      const names = Object.keys(asObj(v));
      if (names.every((n) => n === 'name' || n === 'generateName')) continue;
      return false;
    }
    if (isZero(v)) continue;
    return false;
  }
  return true;
}

/** A value Go would leave at its zero value when decoding (so it does not count as specified). */
function isZero(v: unknown): boolean {
  if (v === undefined || v === null || v === false || v === '' || v === 0) return true;
  if (Array.isArray(v)) return v.length === 0;
  return isObj(v) && Object.keys(v).length === 0;
}

const INT_OR_STRING_ANY_OF = [{ type: 'integer' }, { type: 'string' }];
const isIntOrStringAnyOf = (s: Obj): boolean => Array.isArray(s.anyOf) && isDeepStrictEqual(s.anyOf, INT_OR_STRING_ANY_OF);
const isIntOrStringAllOf = (s: Obj): boolean => Array.isArray(s.allOf) && s.allOf.length >= 1 && isIntOrStringAnyOf(asObj(s.allOf[0]));

/** The value validations of `v` (its allOf, anyOf, oneOf, not). Rules under anyOf, oneOf and not are refused even where allOf would allow them. */
function valueValidation(v: Obj, skipAnyOf: boolean, skipFirstAllOfAnyOf: boolean, path: string, out: FieldError[]): void {
  if (!skipAnyOf && Array.isArray(v.anyOf)) v.anyOf.forEach((x, i) => nestedValueValidation(x, false, `${path}.anyOf[${i}]`, out));
  if (Array.isArray(v.allOf)) v.allOf.forEach((x, i) => nestedValueValidation(x, skipFirstAllOfAnyOf && i === 0, `${path}.allOf[${i}]`, out));
  if (Array.isArray(v.oneOf)) v.oneOf.forEach((x, i) => nestedValueValidation(x, false, `${path}.oneOf[${i}]`, out));
  if (present(v.not)) nestedValueValidation(v.not, false, `${path}.not`, out);
}

const NESTED_FORBIDDEN: readonly (readonly [string, (v: unknown) => boolean, string])[] = [
  ['type', (v) => typeof v === 'string' && v !== '', 'must be empty to be structural'],
  ['additionalProperties', present, 'must be undefined to be structural'],
  ['default', present, 'must be undefined to be structural'],
  ['title', (v) => typeof v === 'string' && v !== '', 'must be empty to be structural'],
  ['description', (v) => typeof v === 'string' && v !== '', 'must be empty to be structural'],
  ['nullable', (v) => v === true, 'must be false to be structural'],
  ['externalDocs', present, 'must be undefined to be structural'],
  ['x-kubernetes-preserve-unknown-fields', (v) => v === true, 'must be false to be structural'],
  ['x-kubernetes-embedded-resource', (v) => v === true, 'must be false to be structural'],
  ['x-kubernetes-int-or-string', (v) => v === true, 'must be false to be structural'],
  ['x-kubernetes-list-map-keys', (v) => Array.isArray(v) && v.length > 0, 'must be empty to be structural'],
  ['x-kubernetes-list-type', present, 'must be undefined to be structural'],
  ['x-kubernetes-map-type', present, 'must be undefined to be structural'],
  ['x-kubernetes-validations', (v) => Array.isArray(v) && v.length > 0, 'must be empty to be structural'],
];

/** A schema under a logic junctor: it may only restrict values, never declare structure or carry generics and extensions. */
function nestedValueValidation(n: unknown, skipAnyOf: boolean, path: string, out: FieldError[]): void {
  if (!isObj(n)) return;
  valueValidation(n, skipAnyOf, false, path, out);
  if (present(n.items)) nestedValueValidation(n.items, false, `${path}.items`, out);
  const props = asObj(n.properties);
  for (const [k, v] of Object.entries(props)) nestedValueValidation(v, false, `${path}.properties[${k}]`, out);
  for (const [key, set, detail] of NESTED_FORBIDDEN) if (set(n[key])) out.push({ type: 'FieldValueForbidden', field: `${path}.${key}`, detail });
  if (Object.hasOwn(props, 'metadata'))
    out.push({ type: 'FieldValueForbidden', field: `${path}.properties[metadata]`, detail: 'must not be specified in a nested context' });
}

/**
 * Every field and array a value validation of the root names is declared by the structural part
 * too (kube checks the root's value validations only, through their whole nesting).
 */
function valueValidationCompleteness(v: Obj, s: Obj | undefined, sPath: string, vPath: string, out: FieldError[]): void {
  if (present(v.not)) nestedCompleteness(v.not, s, sPath, `${vPath}.not`, out);
  for (const k of ['allOf', 'anyOf', 'oneOf'] as const)
    if (Array.isArray(v[k])) (v[k] as unknown[]).forEach((x, i) => nestedCompleteness(x, s, sPath, `${vPath}.${k}[${i}]`, out));
}

function nestedCompleteness(n: unknown, s: Obj | undefined, sPath: string, vPath: string, out: FieldError[]): void {
  if (!isObj(n)) return;
  if (!s) {
    out.push({ type: 'FieldValueRequired', field: sPath, detail: `because it is defined in ${vPath}` });
    return;
  }
  valueValidationCompleteness(n, s, sPath, vPath, out);
  if (present(n.items)) nestedCompleteness(n.items, isObj(s.items) ? s.items : undefined, `${sPath}.items`, `${vPath}.items`, out);
  const sProps = asObj(s.properties);
  for (const [k, v] of Object.entries(asObj(n.properties))) {
    if (!Object.hasOwn(sProps, k))
      out.push({ type: 'FieldValueRequired', field: `${sPath}.properties[${k}]`, detail: `because it is defined in ${vPath}.properties[${k}]` });
    else nestedCompleteness(v, asObj(sProps[k]), `${sPath}.properties[${k}]`, `${vPath}.properties[${k}]`, out);
  }
}
