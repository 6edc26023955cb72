/**
 * What Go's JSON decoder would refuse in a stored object of a built-in kind. kube-apiserver
 * decodes every value it reads from etcd into the kind's Go type; a value of the wrong JSON type
 * (`"data": 5` in a ConfigMap), a `[]byte` field that is not base64, or a Time that does not
 * parse fails that decoding, and the object is then "not decodable" (a corrupt object, like a
 * value that is not JSON at all). Values get there only around the API (the etcd API, a tool on
 * the external etcd): every write through the API is decoded the same way first.
 *
 * Only types are looked at, as a decoder does: unknown fields are ignored, `null` decodes to the
 * zero value, and nothing that validation checks (patterns, enums, required fields) is judged.
 * The check is compiled once per schema object and costs about a walk of the object.
 *
 * Messages are Go's: `json: cannot unmarshal number into Go struct field ConfigMap.data of type
 * map[string]string` (the innermost struct's type name, then the path of field names from the
 * object's root, without map keys or list indices), `illegal base64 data at input byte 3`, and
 * for times the `parsing time ...` error of schema.times.ts.
 */
import { QUANTITY_FORMAT_ERROR } from '../quantity.js';
import { ObjectMetaSchema } from './meta.schemas.js';
import { wrappedSchemaName } from './schema.names.js';
import { QUANTITY_SCHEMA_NAME } from './schema.quantities.js';
import { resolveSchema } from './schema.resolve.js';
import { decodeTime, TimeDecodeError, timeKind } from './schema.times.js';
import { BASE64 } from './schema.validate.js';
import type { JSONSchemaProps } from './schema.types.js';

/**
 * A problem found below some value: Go's message is built from it once the walk is back at the
 * root, so a walk that finds nothing builds no field paths. `fields` holds the field names from
 * the problem up (reversed); `struct` is set by the innermost struct holding the failing field.
 */
interface Problem {
  message?: string;
  value: string;
  type: string;
  fields: string[];
  struct?: string;
}

/** A compiled check: the first problem in `v`, or undefined. */
type DecodeCheck = (v: unknown) => Problem | undefined;

const compiled = new WeakMap<JSONSchemaProps, DecodeCheck>();
const rootChecks = new WeakMap<JSONSchemaProps, DecodeCheck>();

/** The first thing Go's decoder refuses in `obj`, an object of kind `kind` whose schema is `schema`. */
export function decodeProblem(obj: unknown, schema: JSONSchemaProps, kind: string): string | undefined {
  const p = checkOf(schema, true)(obj);
  if (!p) return undefined;
  if (p.message !== undefined) return p.message;
  return `json: cannot unmarshal ${p.value} into Go struct field ${p.struct ?? kind}.${p.fields.reverse().join('.')} of type ${p.type}`;
}

function checkOf(raw: JSONSchemaProps, root = false): DecodeCheck {
  const memo = root ? rootChecks : compiled;
  const hit = memo.get(raw);
  if (hit) return hit;
  let impl: DecodeCheck | undefined;
  // Lazy, so recursive schemas compile.
  const lazy: DecodeCheck = (v) => (impl ??= build(raw, root))(v);
  memo.set(raw, lazy);
  return lazy;
}

/** Go's name of the type a schema describes: `v1.ObjectMeta`, `map[string]string`, `[]v1.Container`. */
function goType(raw: JSONSchemaProps, depth = 0): string {
  const named = wrappedSchemaName(raw);
  if (named) {
    const parts = named.split('.');
    return parts.length >= 2 ? `${parts.at(-2)}.${parts.at(-1)}` : named;
  }
  let s: JSONSchemaProps;
  try {
    s = resolveSchema(raw);
  } catch {
    return 'interface {}';
  }
  if (s['x-kubernetes-int-or-string'] === true || s.format === 'int-or-string') return 'intstr.IntOrString';
  if (depth > 4) return 'interface {}';
  switch (s.type) {
    case 'string':
      return s.format === 'byte' ? '[]uint8' : 'string';
    case 'integer':
      return s.format === 'int32' ? 'int32' : 'int64';
    case 'number':
      return 'float64';
    case 'boolean':
      return 'bool';
    case 'array':
      return `[]${s.items ? goType(s.items, depth + 1) : 'interface {}'}`;
    case 'object':
      if (!s.properties && typeof s.additionalProperties === 'object') return `map[string]${goType(s.additionalProperties, depth + 1)}`;
      return s.properties ? 'struct' : 'map[string]interface {}';
    default:
      return 'interface {}';
  }
}

/** Go's word for the JSON value it met. */
function jsonKind(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  switch (typeof v) {
    case 'number':
      return 'number';
    case 'boolean':
      return 'bool';
    case 'string':
      return 'string';
    default:
      return 'object';
  }
}

// 2^63, exactly representable as a double: any double >= it is out of int64's range.
const INT64_LIMIT = 9223372036854775808;

const typeProblem = (value: string, type: string): Problem => ({ value, type, fields: [] });
/** A problem whose message is not Go's type error (base64, times, quantities). */
const messageProblem = (message: string): Problem => ({ message, value: '', type: '', fields: [] });

/** Go's base64 decoder's error: the first byte outside the alphabet, or the end. */
function base64Problem(s: string): Problem | undefined {
  if (BASE64.test(s)) return undefined;
  const i = s.search(/[^A-Za-z0-9+/=]/);
  return messageProblem(`illegal base64 data at input byte ${i < 0 ? s.length : i}`);
}

// The form every Time the API writes has (UTC, seconds), on a day every month has: such a value
// decodes, and the full parse is left for the others.
const PLAIN_TIME = /^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|1\d|2[0-8])T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\dZ$/;

function build(raw: JSONSchemaProps, root: boolean): DecodeCheck {
  const time = timeKind(raw);
  if (time) {
    return (v) => {
      if (time === 'Time' && typeof v === 'string' && PLAIN_TIME.test(v)) return undefined;
      try {
        decodeTime(time, v, '');
        return undefined;
      } catch (e) {
        if (e instanceof TimeDecodeError) return messageProblem(e.message);
        throw e;
      }
    };
  }
  let s: JSONSchemaProps;
  try {
    s = resolveSchema(raw);
  } catch {
    return () => undefined;
  }
  const type = goType(raw);
  const named = wrappedSchemaName(raw);
  // The struct name Go reports for fields of this object, when it is a named type.
  const structName = named ? named.slice(named.lastIndexOf('.') + 1) : undefined;
  const allOf = (s.allOf ?? []).map((p) => checkOf(p));
  // resource.Quantity takes a string or any JSON number (its UnmarshalJSON parses the literal);
  // anything else fails with its format error, without a field path.
  const quantity = named === QUANTITY_SCHEMA_NAME;
  const intOrString = !quantity && (s['x-kubernetes-int-or-string'] === true || s.format === 'int-or-string');
  const items = s.items ? checkOf(s.items) : undefined;
  const props = new Map(Object.entries(s.properties ?? {}).map(([k, p]) => [k, checkOf(p)] as const));
  if (root && !props.has('metadata')) props.set('metadata', checkOf(ObjectMetaSchema));
  const additional = typeof s.additionalProperties === 'object' ? checkOf(s.additionalProperties) : undefined;
  const byte = s.type === 'string' && s.format === 'byte';
  const int32 = s.format === 'int32';
  const walks = s.type === 'object' || (s.type === undefined && (props.size > 0 || additional !== undefined));

  const own = (v: unknown): Problem | undefined => {
    if (quantity) {
      return typeof v === 'string' || typeof v === 'number' ? undefined : messageProblem(QUANTITY_FORMAT_ERROR);
    }
    if (intOrString) {
      // IntOrString's UnmarshalJSON decodes anything but a string into its int32.
      if (typeof v === 'string') return undefined;
      if (typeof v === 'number') return Number.isInteger(v) && v >= -2147483648 && v <= 2147483647 ? undefined : typeProblem(`number ${v}`, 'int32');
      return typeProblem(jsonKind(v), 'int32');
    }
    switch (s.type) {
      case 'string':
        if (typeof v !== 'string') return typeProblem(jsonKind(v), type);
        return byte ? base64Problem(v) : undefined;
      case 'boolean':
        return typeof v === 'boolean' ? undefined : typeProblem(jsonKind(v), type);
      case 'number':
        return typeof v === 'number' ? undefined : typeProblem(jsonKind(v), type);
      case 'integer':
        if (typeof v !== 'number') return typeProblem(jsonKind(v), type);
        if (!Number.isInteger(v) || (int32 ? v < -2147483648 || v > 2147483647 : v < -INT64_LIMIT || v >= INT64_LIMIT)) return typeProblem(`number ${v}`, type);
        return undefined;
      case 'array': {
        if (!Array.isArray(v)) return typeProblem(jsonKind(v), type);
        if (!items) return undefined;
        for (const item of v) {
          if (item === null || item === undefined) continue;
          const p = items(item);
          if (p) return p;
        }
        return undefined;
      }
      default: {
        if (!walks) return undefined;
        if (typeof v !== 'object' || Array.isArray(v)) return typeProblem(jsonKind(v), type);
        const o = v as Record<string, unknown>;
        for (const k in o) {
          const val = o[k];
          if (val === null || val === undefined) continue;
          const p = props.get(k);
          if (p) {
            const problem = p(val);
            if (problem) {
              problem.fields.push(k);
              problem.struct ??= structName;
              return problem;
            }
          } else if (additional) {
            // A map's values: Go names the map field, not the key.
            const problem = additional(val);
            if (problem) return problem;
          }
        }
        return undefined;
      }
    }
  };
  if (!allOf.length) return (v) => (v === null || v === undefined ? undefined : own(v));
  return (v) => {
    if (v === null || v === undefined) return undefined;
    const p = own(v);
    if (p) return p;
    for (const c of allOf) {
      const q = c(v);
      if (q) return q;
    }
    return undefined;
  };
}
