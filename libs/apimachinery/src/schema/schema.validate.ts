/**
 * Structural validation of a JSON value against an OpenAPI v3 structural schema, producing
 * Kubernetes field errors.
 *
 * Messages follow what kube-apiserver returns for custom resources (kube-openapi's validator as
 * converted by apiextensions-apiserver), e.g.
 *   `spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"`
 *   `spec.mode: Unsupported value: "x": supported values: "a", "b"`
 *   `spec.name: Required value`
 * and are used for built-in kinds too so errors read the same everywhere. Field paths are
 * field.Path strings (`data[key]`, `spec.containers[0].name`).
 *
 * Validation never mutates and never throws on bad input: every problem is a FieldError. Call it
 * after pruning and defaulting (Kubernetes order: decode -> prune -> default -> validate).
 */
import { RE2JS } from 're2js';
import { GoValue, type FieldError } from '../errors.js';
import { canonicalJson } from '../json.canonical.js';
import type { JSONSchemaProps } from './schema.types.js';
import { childPath, indexPath, isPlainObject, keyPath } from './schema.path.js';
import { resolveSchema, SchemaResolutionError, type SchemaDefinitions } from './schema.resolve.js';
import { ObjectMetaSchema } from './meta.schemas.js';

/** Options of `validateSchema`. */
export interface ValidateOptions {
  /** Definitions for `$ref`s, when the schema uses them. */
  definitions?: SchemaDefinitions;
  /**
   * Treat the value as a whole API object (apiVersion, kind, metadata implied, as for a custom
   * resource root). Defaults to true when `basePath` is empty.
   */
  root?: boolean;
}

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;
// 2^63 is exactly representable as a double; any double >= it is out of int64 range.
const INT64_LIMIT = 9223372036854775808;

/** The JSON type name of a value as kube-openapi reports it (integer vs number, null). */
export function jsonTypeName(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return 'array';
  switch (typeof v) {
    case 'string':
      return 'string';
    case 'boolean':
      return 'boolean';
    case 'number':
      return Number.isInteger(v) ? 'integer' : 'number';
    case 'object':
      return 'object';
    default:
      return typeof v;
  }
}

// RFC 3339 date-time (Kubernetes metav1.Time / MicroTime and the `date-time` format): full date,
// `T` (any case), time with optional fraction, `Z` or a numeric offset.
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))$/;
// Standard base64 with padding, as Go's base64.StdEncoding decodes `[]byte` fields.
export const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Whether `s` is an RFC 3339 date-time, as the `date-time` format and metav1.Time take it. */
export function validDateTime(s: string): boolean {
  const m = DATE_TIME.exec(s);
  if (!m) return false;
  const [y, mo, d, h, mi, sec] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number);
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || sec > 60) return false;
  const daysInMonth = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  if (d > daysInMonth) return false;
  if (m[9] !== undefined && (Number(m[9]) > 23 || Number(m[10]) > 59)) return false;
  return true;
}

/** Whether `s` is a full date (`2024-02-29`), as the `date` format takes it. */
export function validDate(s: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(s) && validDateTime(`${s}T00:00:00Z`);
}

/** Checks a string against a known `format`; unknown formats pass, as in Kubernetes. */
function formatOk(format: string, s: string): boolean {
  switch (format) {
    case 'byte':
      return BASE64.test(s);
    case 'date-time':
      return validDateTime(s);
    case 'date':
      return validDate(s);
    default:
      return true;
  }
}

/** A compiled schema pattern: whether it matches somewhere in a string. */
export interface SchemaPattern {
  test(s: string): boolean;
}

const regexCache = new Map<string, SchemaPattern | null>();

/**
 * A schema `pattern` compiled as Kubernetes evaluates it: Go's RE2 syntax (flag groups such as
 * `(?i)` and `(?i:...)`, `(?P<name>...)`, `\A`, `\z`, the ungreedy flag), matched anywhere in the
 * value, on `re2js`. RE2 runs in time linear in the value, so no pattern of a definition
 * and no value of an object can keep a request busy (a backtracking JavaScript RegExp can take
 * minutes on a pattern such as `(a+)+$`). Null when the pattern does not compile.
 */
export function compileSchemaPattern(pattern: string): SchemaPattern | null {
  let re = regexCache.get(pattern);
  if (re === undefined) {
    try {
      re = RE2JS.compile(pattern);
    } catch {
      re = null;
    }
    regexCache.set(pattern, re);
  }
  return re;
}

const compile = compileSchemaPattern;

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isPlainObject(a) && isPlainObject(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

/**
 * The duplicates of a `set` list (whole items) or a `map` list (the items' key fields), each
 * reported at its index with the value it repeats: one pass, whatever the list's length (a
 * request is bounded by its size, not its item count, so pairwise comparison would let one
 * write hold the event loop for minutes).
 */
function listDuplicates(v: readonly unknown[], listType: unknown, keys: readonly string[], path: string, errs: FieldError[]): void {
  if (listType !== 'set' && listType !== 'map') return;
  const seen = new Set<string>();
  v.forEach((item, i) => {
    let value: unknown = item;
    if (listType === 'map') {
      if (!isPlainObject(item)) return;
      const k: Record<string, unknown> = {};
      for (const key of keys) if (item[key] !== undefined) k[key] = item[key];
      value = k;
    }
    const text = canonicalJson(value);
    if (!seen.has(text)) seen.add(text);
    // A map list's repeat is named by its key fields, as Go prints the map of them.
    else
      errs.push({
        type: 'FieldValueDuplicate',
        field: indexPath(path, i),
        value: listType === 'map' ? goKeyMap(value as Record<string, unknown>) : value,
        detail: '',
      });
  });
}

/** The key fields of a map list's item as Go's %#v prints a map[string]interface{} (keys sorted). */
function goKeyMap(keys: Record<string, unknown>): GoValue {
  const fields = Object.keys(keys)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${typeof keys[k] === 'string' ? JSON.stringify(keys[k]) : String(keys[k])}`);
  return new GoValue(`map[string]interface {}{${fields.join(', ')}}`);
}

function quoteList(values: readonly unknown[]): string {
  return values.map((v) => JSON.stringify(v)).join(', ');
}

class Validator {
  readonly errs: FieldError[] = [];
  constructor(private readonly defs: SchemaDefinitions | undefined) {}

  private name(path: string): string {
    return path || '<root>';
  }

  private typeError(path: string, expected: string, v: unknown): void {
    const actual = jsonTypeName(v);
    this.errs.push({
      type: 'FieldValueTypeInvalid',
      field: path,
      value: actual,
      detail: `${this.name(path)} in body must be of type ${expected}: ${JSON.stringify(actual)}`,
    });
  }

  private invalid(path: string, v: unknown, detail: string): void {
    this.errs.push({ type: 'FieldValueInvalid', field: path, value: v, detail: `${this.name(path)} in body ${detail}` });
  }

  value(v: unknown, raw: JSONSchemaProps, path: string, asObjectRoot: boolean): void {
    let s: JSONSchemaProps;
    try {
      s = resolveSchema(raw, this.defs);
    } catch (e) {
      this.errs.push({ type: 'InternalError', field: path, detail: e instanceof SchemaResolutionError ? e.message : String(e) });
      return;
    }
    if (v === null || v === undefined) {
      // A structural schema admits null only where it says nullable (apiextensions rule).
      if (!s.nullable && (s.type !== undefined || s['x-kubernetes-int-or-string'])) this.typeError(path, s.type ?? 'integer,string', v);
      return;
    }
    if (s['x-kubernetes-int-or-string'] || s.format === 'int-or-string') {
      if (!(typeof v === 'string' || (typeof v === 'number' && Number.isInteger(v)))) this.typeError(path, 'integer,string', v);
      this.composition(v, s, path);
      return;
    }
    if (s.type !== undefined && !this.typeMatches(v, s.type)) {
      this.typeError(path, s.type, v);
      return;
    }
    if (s.enum && !s.enum.some((e) => deepEqual(e, v))) {
      this.errs.push({ type: 'FieldValueNotSupported', field: path, value: v, detail: `supported values: ${quoteList(s.enum)}` });
    }
    if (typeof v === 'string') this.string(v, s, path);
    else if (typeof v === 'number') this.number(v, s, path);
    else if (Array.isArray(v)) this.array(v, s, path);
    else if (isPlainObject(v)) this.object(v, s, path, asObjectRoot);
    this.composition(v, s, path);
  }

  private typeMatches(v: unknown, type: NonNullable<JSONSchemaProps['type']>): boolean {
    switch (type) {
      case 'object':
        return isPlainObject(v);
      case 'array':
        return Array.isArray(v);
      case 'string':
        return typeof v === 'string';
      case 'boolean':
        return typeof v === 'boolean';
      case 'integer':
        return typeof v === 'number' && Number.isInteger(v);
      case 'number':
        return typeof v === 'number' && Number.isFinite(v);
      default:
        return false;
    }
  }

  private string(v: string, s: JSONSchemaProps, path: string): void {
    if (s.format && !formatOk(s.format, v)) {
      this.errs.push({
        type: 'FieldValueInvalid',
        field: path,
        value: v,
        detail: `${this.name(path)} in body must be of type ${s.format}: ${JSON.stringify(v)}`,
      });
    }
    if (s.maxLength !== undefined || s.minLength !== undefined) {
      // kube-openapi counts characters (runes), not UTF-16 units.
      const len = [...v].length;
      if (s.maxLength !== undefined && len > s.maxLength) {
        this.errs.push({ type: 'FieldValueTooLong', field: path, value: v, detail: `may not be more than ${s.maxLength} bytes` });
      }
      if (s.minLength !== undefined && len < s.minLength) this.invalid(path, v, `should be at least ${s.minLength} chars long`);
    }
    if (s.pattern !== undefined) {
      const re = compile(s.pattern);
      if (re === null) this.errs.push({ type: 'InternalError', field: path, detail: `invalid pattern ${JSON.stringify(s.pattern)} in schema` });
      else if (!re.test(v)) this.invalid(path, v, `should match '${s.pattern}'`);
    }
  }

  private number(v: number, s: JSONSchemaProps, path: string): void {
    if (s.format === 'int32' && (v < INT32_MIN || v > INT32_MAX)) this.invalid(path, v, `must be of type int32: ${JSON.stringify(String(v))}`);
    if (s.format === 'int64' && (v >= INT64_LIMIT || v < -INT64_LIMIT)) this.invalid(path, v, `must be of type int64: ${JSON.stringify(String(v))}`);
    if (s.minimum !== undefined && v < s.minimum) this.invalid(path, v, `should be greater than or equal to ${s.minimum}`);
    if (s.maximum !== undefined && v > s.maximum) this.invalid(path, v, `should be less than or equal to ${s.maximum}`);
  }

  private array(v: unknown[], s: JSONSchemaProps, path: string): void {
    if (s.maxItems !== undefined && v.length > s.maxItems) {
      this.errs.push({ type: 'FieldValueTooMany', field: path, value: v.length, detail: `${v.length}: must have at most ${s.maxItems} items` });
    }
    if (s.minItems !== undefined && v.length < s.minItems) this.invalid(path, v, `should have at least ${s.minItems} items`);
    if (s.items) for (let i = 0; i < v.length; i++) this.value(v[i], s.items, indexPath(path, i), false);
    listDuplicates(v, s['x-kubernetes-list-type'], s['x-kubernetes-list-map-keys'] ?? [], path, this.errs);
  }

  private object(v: Record<string, unknown>, s: JSONSchemaProps, path: string, asObjectRoot: boolean): void {
    const props = s.properties ?? {};
    for (const r of checkedRequired(s)) {
      if (v[r] === undefined) this.errs.push({ type: 'FieldValueRequired', field: childPath(path, r), detail: '' });
    }
    const embedded = asObjectRoot || s['x-kubernetes-embedded-resource'] === true;
    if (embedded && path !== '') {
      // Embedded objects must say what they are (apiextensions ValidateEmbeddedResource).
      for (const k of ['apiVersion', 'kind']) {
        if (v[k] === undefined || v[k] === '') this.errs.push({ type: 'FieldValueRequired', field: childPath(path, k), detail: 'must not be empty' });
      }
    }
    for (const [k, val] of Object.entries(v)) {
      const p = props[k];
      if (p) this.value(val, p, childPath(path, k), false);
      else if (embedded && (k === 'apiVersion' || k === 'kind')) {
        if (typeof val !== 'string' && val !== undefined) this.typeError(childPath(path, k), 'string', val);
      } else if (embedded && k === 'metadata') this.value(val, ObjectMetaSchema, childPath(path, k), false);
      else if (typeof s.additionalProperties === 'object') this.value(val, s.additionalProperties, keyPath(path, k), false);
    }
  }

  private composition(v: unknown, s: JSONSchemaProps, path: string): void {
    // Beyond the single-element wrapper (resolved away above), allOf/anyOf/oneOf are value
    // validations that apply at the same path.
    for (const sub of s.allOf ?? []) this.value(v, sub, path, false);
    const passes = (sub: JSONSchemaProps): boolean => {
      const inner = new Validator(this.defs);
      inner.value(v, sub, path, false);
      return inner.errs.length === 0;
    };
    if (s.anyOf && !s.anyOf.some(passes)) this.invalid(path, v, 'must match at least one schema in anyOf');
    if (s.oneOf && s.oneOf.filter(passes).length !== 1) this.invalid(path, v, 'must validate one and only one schema (oneOf)');
  }
}

// ---------------------------------------------------------------------------------------------
// Compiled validation. A schema without a definitions map is turned, once per schema object, into
// a tree of closures with everything the interpreter above decides per value (resolution of
// wrappers, the type test, regexes, required lists, property lookups, list-type keys) decided at
// compile time. A kind's schema is compiled on its first write; every later request only runs the
// closures. Messages and order are the interpreter's (the same spec covers both).

/** A compiled check: appends the problems of `v` at `path` to `errs`. */
type Check = (v: unknown, path: string, errs: FieldError[], asObjectRoot: boolean) => void;

const compiledChecks = new WeakMap<JSONSchemaProps, Check>();
const name = (path: string): string => path || '<root>';

function typeErr(errs: FieldError[], path: string, expected: string, v: unknown): void {
  const actual = jsonTypeName(v);
  errs.push({
    type: 'FieldValueTypeInvalid',
    field: path,
    value: actual,
    detail: `${name(path)} in body must be of type ${expected}: ${JSON.stringify(actual)}`,
  });
}

function invalidErr(errs: FieldError[], path: string, v: unknown, detail: string): void {
  errs.push({ type: 'FieldValueInvalid', field: path, value: v, detail: `${name(path)} in body ${detail}` });
}

const TYPE_TESTS: Record<NonNullable<JSONSchemaProps['type']>, (v: unknown) => boolean> = {
  object: isPlainObject,
  array: Array.isArray,
  string: (v) => typeof v === 'string',
  boolean: (v) => typeof v === 'boolean',
  integer: (v) => typeof v === 'number' && Number.isInteger(v),
  number: (v) => typeof v === 'number' && Number.isFinite(v),
};

/** The compiled check of `raw` (memoized per schema object; recursion-safe). */
export function compileSchemaCheck(raw: JSONSchemaProps): Check {
  const hit = compiledChecks.get(raw);
  if (hit) return hit;
  let impl: Check | undefined;
  const lazy: Check = (v, path, errs, root) => (impl ??= buildCheck(raw))(v, path, errs, root);
  compiledChecks.set(raw, lazy);
  return lazy;
}

function buildCheck(raw: JSONSchemaProps): Check {
  let s: JSONSchemaProps;
  try {
    s = resolveSchema(raw);
  } catch (e) {
    const detail = e instanceof SchemaResolutionError ? e.message : String(e);
    return (_v, path, errs) => errs.push({ type: 'InternalError', field: path, detail });
  }
  const parts: Check[] = [];
  const nullFails = !s.nullable && (s.type !== undefined || s['x-kubernetes-int-or-string'] === true);
  const nullType = s.type ?? 'integer,string';
  const intOrString = s['x-kubernetes-int-or-string'] === true || s.format === 'int-or-string';
  const typeTest = s.type !== undefined ? TYPE_TESTS[s.type] : undefined;
  if (s.enum) {
    const values = s.enum;
    const detail = `supported values: ${quoteList(values)}`;
    parts.push((v, path, errs) => {
      if (!values.some((e) => deepEqual(e, v))) errs.push({ type: 'FieldValueNotSupported', field: path, value: v, detail });
    });
  }
  const str = compileString(s);
  const num = compileNumber(s);
  const arr = compileArray(s);
  const obj = compileObject(s);
  const comp = compileComposition(s);
  return (v, path, errs, root) => {
    if (v === null || v === undefined) {
      if (nullFails) typeErr(errs, path, nullType, v);
      return;
    }
    if (intOrString) {
      if (!(typeof v === 'string' || (typeof v === 'number' && Number.isInteger(v)))) typeErr(errs, path, 'integer,string', v);
      comp?.(v, path, errs, false);
      return;
    }
    if (typeTest && !typeTest(v)) {
      typeErr(errs, path, s.type!, v);
      return;
    }
    for (const p of parts) p(v, path, errs, false);
    if (typeof v === 'string') str?.(v, path, errs, false);
    else if (typeof v === 'number') num?.(v, path, errs, false);
    else if (Array.isArray(v)) arr?.(v, path, errs, false);
    else if (isPlainObject(v)) obj(v, path, errs, root);
    comp?.(v, path, errs, false);
  };
}

function compileString(s: JSONSchemaProps): Check | undefined {
  const checks: Array<(v: string, path: string, errs: FieldError[]) => void> = [];
  const format = s.format;
  if (format && ['byte', 'date-time', 'date'].includes(format)) {
    checks.push((v, path, errs) => {
      if (!formatOk(format, v))
        errs.push({ type: 'FieldValueInvalid', field: path, value: v, detail: `${name(path)} in body must be of type ${format}: ${JSON.stringify(v)}` });
    });
  }
  const { maxLength, minLength, pattern } = s;
  if (maxLength !== undefined || minLength !== undefined) {
    checks.push((v, path, errs) => {
      const len = [...v].length;
      if (maxLength !== undefined && len > maxLength)
        errs.push({ type: 'FieldValueTooLong', field: path, value: v, detail: `may not be more than ${maxLength} bytes` });
      if (minLength !== undefined && len < minLength) invalidErr(errs, path, v, `should be at least ${minLength} chars long`);
    });
  }
  if (pattern !== undefined) {
    const re = compile(pattern);
    checks.push((v, path, errs) => {
      if (re === null) errs.push({ type: 'InternalError', field: path, detail: `invalid pattern ${JSON.stringify(pattern)} in schema` });
      else if (!re.test(v)) invalidErr(errs, path, v, `should match '${pattern}'`);
    });
  }
  return checks.length ? (v, path, errs) => checks.forEach((c) => c(v as string, path, errs)) : undefined;
}

function compileNumber(s: JSONSchemaProps): Check | undefined {
  const { format, minimum, maximum } = s;
  if (format !== 'int32' && format !== 'int64' && minimum === undefined && maximum === undefined) return undefined;
  return (raw, path, errs) => {
    const v = raw as number;
    if (format === 'int32' && (v < INT32_MIN || v > INT32_MAX)) invalidErr(errs, path, v, `must be of type int32: ${JSON.stringify(String(v))}`);
    if (format === 'int64' && (v >= INT64_LIMIT || v < -INT64_LIMIT)) invalidErr(errs, path, v, `must be of type int64: ${JSON.stringify(String(v))}`);
    if (minimum !== undefined && v < minimum) invalidErr(errs, path, v, `should be greater than or equal to ${minimum}`);
    if (maximum !== undefined && v > maximum) invalidErr(errs, path, v, `should be less than or equal to ${maximum}`);
  };
}

function compileArray(s: JSONSchemaProps): Check | undefined {
  const { maxItems, minItems } = s;
  const item = s.items ? compileSchemaCheck(s.items) : undefined;
  const listType = s['x-kubernetes-list-type'];
  const keys = s['x-kubernetes-list-map-keys'] ?? [];
  if (maxItems === undefined && minItems === undefined && !item && listType !== 'set' && listType !== 'map') return undefined;
  return (raw, path, errs) => {
    const v = raw as unknown[];
    if (maxItems !== undefined && v.length > maxItems)
      errs.push({ type: 'FieldValueTooMany', field: path, value: v.length, detail: `${v.length}: must have at most ${maxItems} items` });
    if (minItems !== undefined && v.length < minItems) invalidErr(errs, path, v, `should have at least ${minItems} items`);
    if (item) for (let i = 0; i < v.length; i++) item(v[i], indexPath(path, i), errs, false);
    listDuplicates(v, listType, keys, path, errs);
  };
}

function compileObject(s: JSONSchemaProps): Check {
  const props = new Map(Object.entries(s.properties ?? {}).map(([k, p]) => [k, compileSchemaCheck(p)] as const));
  const required = checkedRequired(s);
  const embeddedSchema = s['x-kubernetes-embedded-resource'] === true;
  const additional = typeof s.additionalProperties === 'object' ? compileSchemaCheck(s.additionalProperties) : undefined;
  const meta = compileSchemaCheck(ObjectMetaSchema);
  return (raw, path, errs, asObjectRoot) => {
    const v = raw as Record<string, unknown>;
    for (const r of required) if (v[r] === undefined) errs.push({ type: 'FieldValueRequired', field: childPath(path, r), detail: '' });
    const embedded = asObjectRoot || embeddedSchema;
    if (embedded && path !== '') {
      for (const k of ['apiVersion', 'kind']) {
        if (v[k] === undefined || v[k] === '') errs.push({ type: 'FieldValueRequired', field: childPath(path, k), detail: 'must not be empty' });
      }
    }
    for (const k in v) {
      if (!Object.hasOwn(v, k)) continue;
      const val = v[k];
      const p = props.get(k);
      if (p) p(val, childPath(path, k), errs, false);
      else if (embedded && (k === 'apiVersion' || k === 'kind')) {
        if (typeof val !== 'string' && val !== undefined) typeErr(errs, childPath(path, k), 'string', val);
      } else if (embedded && k === 'metadata') meta(val, childPath(path, k), errs, false);
      else if (additional) additional(val, keyPath(path, k), errs, false);
    }
  };
}

function compileComposition(s: JSONSchemaProps): Check | undefined {
  const all = (s.allOf ?? []).map(compileSchemaCheck);
  const any = s.anyOf?.map(compileSchemaCheck);
  const one = s.oneOf?.map(compileSchemaCheck);
  if (!all.length && !any && !one) return undefined;
  const passes = (c: Check, v: unknown, path: string): boolean => {
    const inner: FieldError[] = [];
    c(v, path, inner, false);
    return inner.length === 0;
  };
  return (v, path, errs) => {
    for (const c of all) c(v, path, errs, false);
    if (any && !any.some((c) => passes(c, v, path))) invalidErr(errs, path, v, 'must match at least one schema in anyOf');
    if (one && one.filter((c) => passes(c, v, path)).length !== 1) invalidErr(errs, path, v, 'must validate one and only one schema (oneOf)');
  };
}

/**
 * Validates `obj` against `schema`; returns every problem found (empty when valid). `basePath`
 * prefixes the reported field paths (e.g. `spec` when validating only a spec). Without a
 * definitions map the schema is compiled once (compileSchemaCheck) and reused by every call;
 * with one (schemas holding `$ref`s) it is interpreted.
 */
export function validateSchema(obj: unknown, schema: JSONSchemaProps, basePath = '', opts: ValidateOptions = {}): FieldError[] {
  const root = opts.root ?? basePath === '';
  if (!opts.definitions) {
    const errs: FieldError[] = [];
    compileSchemaCheck(schema)(obj, basePath, errs, root);
    return errs;
  }
  const v = new Validator(opts.definitions);
  v.value(obj, schema, basePath, root);
  return v.errs;
}

/** The schema's required fields that validation checks (`x-kapi-required-unchecked` left out). */
function checkedRequired(s: JSONSchemaProps): string[] {
  const unchecked = s['x-kapi-required-unchecked'];
  const required = s.required ?? [];
  return unchecked?.length ? required.filter((r) => !unchecked.includes(r)) : required;
}
