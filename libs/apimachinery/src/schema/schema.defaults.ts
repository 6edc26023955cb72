/**
 * Defaulting from schema `default` values (apiextensions structural defaulting): walking the
 * object along its schema, every declared property that is absent, or null while not nullable,
 * gets a deep copy of its `default`; the walk then descends into the (possibly just defaulted)
 * value, so defaults nested inside a default apply too. List items and map values are defaulted
 * through `items` / `additionalProperties`. Runs after pruning, before validation.
 */
import type { JSONSchemaProps } from './schema.types.js';
import { isPlainObject } from './schema.path.js';
import { resolveSchema, type SchemaDefinitions } from './schema.resolve.js';
import { SubtreePredicate } from './schema.subtree.js';

/** Subtrees with a `default` somewhere (schemas without `$ref`s; others are always walked). */
const withDefaults = new SubtreePredicate((s) => s.default !== undefined);

/** Options of `applyDefaults`. */
export interface DefaultOptions {
  definitions?: SchemaDefinitions;
}

function resolved(s: JSONSchemaProps, defs: SchemaDefinitions | undefined): JSONSchemaProps | undefined {
  try {
    return resolveSchema(s, defs);
  } catch {
    return undefined;
  }
}

/** Whether `schema` declares a `default` anywhere (schemas without `$ref`s; with them, true). */
export function hasDefaults(schema: JSONSchemaProps): boolean {
  return withDefaults.has(schema);
}

/** Fills in defaults in place; returns `obj` for chaining. Never replaces a present value. */
export function applyDefaults<T>(obj: T, schema: JSONSchemaProps, opts: DefaultOptions = {}): T {
  walk(obj, schema, opts.definitions);
  return obj;
}

function walk(v: unknown, raw: JSONSchemaProps, defs: SchemaDefinitions | undefined): void {
  if (v === null || typeof v !== 'object' || (!defs && !withDefaults.has(raw))) return;
  const s = resolved(raw, defs);
  if (!s) return;
  if (Array.isArray(v)) {
    if (s.items) for (const item of v) walk(item, s.items, defs);
    return;
  }
  if (!isPlainObject(v)) return;
  const props = s.properties ?? {};
  for (const [k, p] of Object.entries(props)) {
    const ps = resolved(p, defs);
    if (!ps || ps.default === undefined) continue;
    if (v[k] === undefined || (v[k] === null && !ps.nullable)) v[k] = structuredClone(ps.default);
  }
  for (const [k, val] of Object.entries(v)) {
    const p = props[k];
    if (p) walk(val, p, defs);
    else if (typeof s.additionalProperties === 'object') walk(val, s.additionalProperties, defs);
  }
}
