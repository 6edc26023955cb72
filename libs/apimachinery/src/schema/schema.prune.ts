/**
 * Pruning: removes what the schema does not declare before an object is stored, as
 * kube-apiserver does for custom resources and as Go decoding does implicitly for built-in
 * kinds (unknown JSON fields are simply not decoded). Subtrees under
 * `x-kubernetes-preserve-unknown-fields` (and `additionalProperties: true`) are kept; null
 * values of declared non-nullable fields are dropped (apiextensions: "null values for fields
 * that are not nullable are pruned before defaulting").
 *
 * Use: for fieldValidation=Strict, call `findUnknownFields` first and reject if any; in every
 * mode then call `prune` (for Warn, its return value gives the warnings).
 */
import type { JSONSchemaProps } from './schema.types.js';
import { walkUnknown, type UnknownFieldOptions } from './schema.unknown.js';

/**
 * Deletes unknown fields from `obj` in place and returns their paths (the same paths
 * `findUnknownFields` reports). Nulls dropped from non-nullable fields are not reported.
 */
export function prune(obj: unknown, schema: JSONSchemaProps, opts: UnknownFieldOptions = {}): string[] {
  const removed: string[] = [];
  walkUnknown(
    obj,
    schema,
    '',
    opts.root ?? true,
    opts.definitions,
    (p, parent, key) => {
      removed.push(p);
      delete parent[key];
    },
    true,
  );
  return removed;
}
