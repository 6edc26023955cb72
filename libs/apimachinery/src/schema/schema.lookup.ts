/**
 * Schema navigation and merge topology, for strategic merge patch and server-side apply.
 *
 * Topology follows the Kubernetes API conventions on merge markers: `x-kubernetes-list-type`
 * (atomic | set | map) with `x-kubernetes-list-map-keys`; when the list type is absent,
 * `x-kubernetes-patch-strategy: merge` is read as a map keyed by `x-kubernetes-patch-merge-key`
 * (or a set for a scalar list with no key, which is how strategic merge treats e.g.
 * `finalizers`); otherwise lists are atomic. `x-kubernetes-map-type` marks maps and structs
 * atomic or granular (default granular).
 */
import type { JSONSchemaProps } from './schema.types.js';
import { resolveSchema, type SchemaDefinitions } from './schema.resolve.js';

/** One step of a path: a property or map key (string) or a list index (number). */
export type SchemaPathElement = string | number;

/**
 * The schema of the value at `path` below `schema`, following properties, map values
 * (`additionalProperties`) and list items. Undefined when the path leaves the declared schema
 * (unknown field, or a subtree that only preserves unknown fields). The result is resolved.
 */
export function schemaAt(schema: JSONSchemaProps, path: readonly SchemaPathElement[], defs?: SchemaDefinitions): JSONSchemaProps | undefined {
  let cur: JSONSchemaProps | undefined = safeResolve(schema, defs);
  for (const el of path) {
    if (!cur) return undefined;
    let next: JSONSchemaProps | undefined;
    if (typeof el === 'number') next = cur.items;
    else next = cur.properties?.[el] ?? (typeof cur.additionalProperties === 'object' ? cur.additionalProperties : undefined);
    cur = next ? safeResolve(next, defs) : undefined;
  }
  return cur;
}

function safeResolve(s: JSONSchemaProps, defs?: SchemaDefinitions): JSONSchemaProps | undefined {
  try {
    return resolveSchema(s, defs);
  } catch {
    return undefined;
  }
}

/** How a list merges. `keys` is non-empty only for `map`. */
export interface ListMergeInfo {
  listType: 'atomic' | 'set' | 'map';
  keys: string[];
}

/** Strategic-merge-patch metadata of a field (from the x-kubernetes-patch-* extensions). */
export interface PatchMeta {
  /** Strategies listed in x-kubernetes-patch-strategy, e.g. ['merge', 'retainKeys']. */
  strategies: string[];
  mergeKey?: string;
}

/** The x-kubernetes-patch-strategy / patch-merge-key of `schema` (resolved first). */
export function patchMeta(schema: JSONSchemaProps, defs?: SchemaDefinitions): PatchMeta {
  const s = safeResolve(schema, defs) ?? schema;
  const raw = s['x-kubernetes-patch-strategy'];
  const strategies = raw
    ? raw
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean)
    : [];
  const mergeKey = s['x-kubernetes-patch-merge-key'];
  return mergeKey ? { strategies, mergeKey } : { strategies };
}

/** How the list described by `schema` merges (see the module comment for the rules). */
export function listMergeInfo(schema: JSONSchemaProps, defs?: SchemaDefinitions): ListMergeInfo {
  const s = safeResolve(schema, defs) ?? schema;
  const lt = s['x-kubernetes-list-type'];
  if (lt === 'map') return { listType: 'map', keys: [...(s['x-kubernetes-list-map-keys'] ?? [])] };
  if (lt === 'set' || lt === 'atomic') return { listType: lt, keys: [] };
  const pm = patchMeta(s, defs);
  if (pm.strategies.includes('merge')) {
    if (pm.mergeKey) return { listType: 'map', keys: [pm.mergeKey] };
    const items = s.items ? safeResolve(s.items, defs) : undefined;
    if (!items || (items.type !== 'object' && items.properties === undefined)) return { listType: 'set', keys: [] };
  }
  return { listType: 'atomic', keys: [] };
}

/** Whether a map or struct merges field by field (`granular`, the default) or as a whole. */
export function mapMergeType(schema: JSONSchemaProps, defs?: SchemaDefinitions): 'atomic' | 'granular' {
  const s = safeResolve(schema, defs) ?? schema;
  return s['x-kubernetes-map-type'] === 'atomic' ? 'atomic' : 'granular';
}
