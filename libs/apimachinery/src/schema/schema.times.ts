/**
 * Decoding of metav1.Time and metav1.MicroTime fields, as their Go JSON decoders do: a Time is
 * parsed as RFC 3339 (a fraction is accepted and dropped) and written back in UTC with second
 * precision; a MicroTime must carry exactly six fractional digits
 * (`2006-01-02T15:04:05.000000Z07:00`) and is written back in UTC, microseconds kept. A value
 * that does not parse is a decoding error (the handler's 400 "cannot be handled as"), never a
 * validation error, because kube-apiserver fails to decode the body before anything validates it.
 */
import { schemaName } from './schema.names.js';
import { resolveSchema } from './schema.resolve.js';
import { SubtreePredicate } from './schema.subtree.js';
import type { JSONSchemaProps } from './schema.types.js';

const TIME = 'io.k8s.apimachinery.pkg.apis.meta.v1.Time';
const MICRO_TIME = 'io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime';
const TIME_LAYOUT = '2006-01-02T15:04:05Z07:00';
const MICRO_LAYOUT = '2006-01-02T15:04:05.000000Z07:00';

const RFC3339 = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const RFC3339_MICRO = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})\.(\d{6})(Z|[+-]\d{2}:\d{2})$/;

/** A time field that does not decode; `message` is Go's `parsing time ...` error. */
export class TimeDecodeError extends Error {
  constructor(
    message: string,
    /** JSON path of the field, e.g. `.spec.renewTime`. */
    readonly path: string,
  ) {
    super(message);
    this.name = 'TimeDecodeError';
  }
}

/** Which time type a (possibly wrapped) schema is, if any. */
export function timeKind(s: JSONSchemaProps): 'Time' | 'MicroTime' | undefined {
  let cur: JSONSchemaProps | undefined = s;
  for (let hops = 0; cur && hops < 8; hops++) {
    const name = schemaName(cur);
    if (name === TIME) return 'Time';
    if (name === MICRO_TIME) return 'MicroTime';
    cur = cur.allOf?.length === 1 ? cur.allOf[0] : undefined;
  }
  return undefined;
}

/** UTC seconds form of `base` (no fraction) in `zone`, or undefined when it is no real time. */
function utcSeconds(base: string, zone: string): string | undefined {
  const ms = Date.parse(`${base}${zone}`);
  if (Number.isNaN(ms)) return undefined;
  // Date.parse rolls 2024-02-30 over to March; Go refuses a day out of range.
  const [y, mo, d] = base.slice(0, 10).split('-').map(Number);
  if (mo < 1 || mo > 12 || d < 1 || d > new Date(Date.UTC(y, mo, 0)).getUTCDate()) return undefined;
  return new Date(ms).toISOString().slice(0, 19);
}

/** The stored form of a time value, or throws TimeDecodeError. */
export function decodeTime(kind: 'Time' | 'MicroTime', v: unknown, path: string): unknown {
  if (v === null || v === undefined) return v;
  const layout = kind === 'Time' ? TIME_LAYOUT : MICRO_LAYOUT;
  if (typeof v !== 'string') throw new TimeDecodeError(`json: cannot unmarshal ${typeof v} into Go value of type string`, path);
  if (kind === 'Time') {
    const m = RFC3339.exec(v);
    const utc = m && utcSeconds(m[1], m[2]);
    if (!utc) throw new TimeDecodeError(`parsing time ${JSON.stringify(v)} as "${layout}": cannot parse ${JSON.stringify(v)} as "${layout}"`, path);
    return `${utc}Z`;
  }
  const m = RFC3339_MICRO.exec(v);
  const utc = m && utcSeconds(m[1], m[3]);
  if (!m || !utc) throw new TimeDecodeError(`parsing time ${JSON.stringify(v)} as "${layout}": cannot parse ${JSON.stringify(v)} as "${layout}"`, path);
  return `${utc}.${m[2]}Z`;
}

/** Subtrees holding a Time or MicroTime field somewhere. */
const withTimes = new SubtreePredicate((s) => timeKind(s) !== undefined);

/**
 * Rewrites every Time and MicroTime field of `obj` that `schema` declares into its stored form,
 * in place. Throws TimeDecodeError for the first value that does not decode. A field already in
 * its stored form is not written: an object read from storage (a controller's shared copy) passes
 * through unchanged.
 */
export function decodeTimes(obj: unknown, schema: JSONSchemaProps, path = ''): void {
  if (obj === null || typeof obj !== 'object' || !withTimes.has(schema)) return;
  const s = resolveSchema(schema);
  if (Array.isArray(obj)) {
    if (!s.items) return;
    const item = s.items;
    const kind = timeKind(item);
    obj.forEach((v, i) => {
      if (!kind) decodeTimes(v, item, `${path}[${i}]`);
      else {
        const t = decodeTime(kind, v, `${path}[${i}]`);
        if (t !== v) obj[i] = t;
      }
    });
    return;
  }
  const o = obj as Record<string, unknown>;
  for (const [k, v] of Object.entries(o)) {
    const prop = s.properties?.[k] ?? (typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined);
    if (!prop) continue;
    const kind = timeKind(prop);
    if (!kind) decodeTimes(v, prop, `${path}.${k}`);
    else {
      const t = decodeTime(kind, v, `${path}.${k}`);
      if (t !== v) o[k] = t;
    }
  }
}

/** `d` as metav1.Time writes it: RFC 3339 in UTC, whole seconds (`2026-01-02T03:04:05Z`). */
export function formatMetaTime(d: Date): string {
  return d.toISOString().replace(/\.\d+Z$/, 'Z');
}
