/**
 * Whether anything below a schema node matters to a walker (a `default` for defaulting, a Time
 * field for time decoding), memoized per schema object: walkers skip the subtrees where nothing
 * can happen, so a kind with a large schema (PersistentVolume's twenty-odd volume sources) pays
 * per request only for the parts that carry defaults or times.
 */
import type { JSONSchemaProps } from './schema.types.js';
import { resolveSchema } from './schema.resolve.js';

/** A memoized "does this subtree contain a node matching `test`" over schemas without `$ref`s. */
export class SubtreePredicate {
  private readonly memo = new WeakMap<JSONSchemaProps, boolean>();
  private readonly active = new Set<JSONSchemaProps>();

  /** `test` sees each node as written and as resolved (wrappers merged, for `default`). */
  constructor(private readonly test: (node: JSONSchemaProps) => boolean) {}

  /** True when `s` or any schema below it (properties, items, map values, allOf/anyOf/oneOf) matches. */
  has(s: JSONSchemaProps): boolean {
    const hit = this.memo.get(s);
    if (hit !== undefined) return hit;
    if (this.active.has(s)) return false; // a recursive schema: its other paths decide
    this.active.add(s);
    let r: JSONSchemaProps;
    try {
      r = resolveSchema(s);
    } catch {
      this.active.delete(s);
      return true; // unresolvable: let the walker meet it and decide
    }
    const children: JSONSchemaProps[] = [
      ...Object.values(r.properties ?? {}),
      ...(r.items ? [r.items] : []),
      ...(typeof r.additionalProperties === 'object' ? [r.additionalProperties] : []),
      ...(r.allOf ?? []),
      ...(r.anyOf ?? []),
      ...(r.oneOf ?? []),
    ];
    const out = this.test(s) || this.test(r) || children.some((c) => this.has(c));
    this.active.delete(s);
    this.memo.set(s, out);
    return out;
  }
}
