/**
 * Decoding of resource.Quantity fields as their Go decoder does: a string or a JSON number is
 * parsed as a quantity and kept in its canonical string form, which is what the apiserver stores
 * and returns (`cpu: 0.5` and `cpu: "0.5"` become `"500m"`, `memory: "1.5Gi"` becomes
 * `"1536Mi"`); one that does not parse fails with Kubernetes' message. A number is read through
 * JavaScript's spelling of it, so `1e9` is stored as `"1G"` where Go, which keeps the literal's
 * notation, stores `"1e9"`.
 */
import { canonicalQuantity } from '../quantity.js';
import { wrappedSchemaName } from './schema.names.js';
import { resolveSchema } from './schema.resolve.js';
import { SubtreePredicate } from './schema.subtree.js';
import type { JSONSchemaProps } from './schema.types.js';

/** resource.Quantity's definition name. */
export const QUANTITY_SCHEMA_NAME = 'io.k8s.apimachinery.pkg.api.resource.Quantity';

/** Whether a (possibly wrapped) schema is resource.Quantity. */
const isQuantity = (s: JSONSchemaProps): boolean => wrappedSchemaName(s) === QUANTITY_SCHEMA_NAME;

/** Subtrees holding a Quantity field somewhere. */
const withQuantities = new SubtreePredicate(isQuantity);

/**
 * Rewrites every Quantity field of `obj` that `schema` declares and that holds a string or a
 * number into its canonical string, in place. Throws QuantityParseError for one that is no
 * quantity; values of other types are left for the decode check (schema.decode-check.ts). A
 * field already canonical is not written: an object read from storage passes through unchanged.
 */
export function decodeQuantities(obj: unknown, schema: JSONSchemaProps): void {
  if (obj === null || typeof obj !== 'object' || !withQuantities.has(schema)) return;
  const s = resolveSchema(schema);
  const fix = (v: unknown, prop: JSONSchemaProps): unknown => {
    // Go trims spaces around the literal before parsing it.
    if (isQuantity(prop)) return typeof v === 'number' || typeof v === 'string' ? canonicalQuantity(String(v).trim()) : v;
    decodeQuantities(v, prop);
    return v;
  };
  if (Array.isArray(obj)) {
    if (s.items) {
      for (let i = 0; i < obj.length; i++) {
        const v = fix(obj[i], s.items);
        if (v !== obj[i]) obj[i] = v;
      }
    }
    return;
  }
  const o = obj as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    const prop = s.properties?.[k] ?? (typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined);
    if (!prop) continue;
    const v = fix(o[k], prop);
    if (v !== o[k]) o[k] = v;
  }
}
