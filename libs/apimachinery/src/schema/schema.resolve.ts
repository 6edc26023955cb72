/**
 * Resolution of references and field wrappers, shared by every engine walker.
 *
 * Two shapes point at another schema: `$ref` (resolved through an optional definitions map,
 * by the name after the last `/`, so both `#/definitions/X` and `#/components/schemas/X` work)
 * and the field wrapper `{allOf: [shared], description, ...}` built by `fieldOf`. In both cases
 * the siblings (description, default, nullable) override the target's, which is how a field can
 * default or document a shared type differently.
 */
import type { JSONSchemaProps } from './schema.types.js';

/** Named schemas that `$ref`s may point at, keyed by definition name. */
export type SchemaDefinitions = Readonly<Record<string, JSONSchemaProps>>;

/** Thrown for a `$ref` that names no definition or a reference cycle: a server bug, not bad input. */
export class SchemaResolutionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SchemaResolutionError';
  }
}

const merged = new WeakMap<JSONSchemaProps, JSONSchemaProps>();

function isWrapper(s: JSONSchemaProps): boolean {
  return (
    s.allOf !== undefined &&
    s.allOf.length === 1 &&
    s.type === undefined &&
    s.properties === undefined &&
    s.items === undefined &&
    s.additionalProperties === undefined
  );
}

/**
 * The effective schema of `s` after following `$ref`s and single-element `allOf` wrappers.
 * Pure; memoized per wrapper object when no definitions map is involved.
 */
export function resolveSchema(s: JSONSchemaProps, defs?: SchemaDefinitions): JSONSchemaProps {
  let cur = s;
  for (let hops = 0; ; hops++) {
    if (hops > 64) throw new SchemaResolutionError('schema reference chain too long (cycle?)');
    if (cur.$ref !== undefined) {
      const name = cur.$ref.slice(cur.$ref.lastIndexOf('/') + 1);
      const target = defs?.[name];
      if (!target) throw new SchemaResolutionError(`unresolvable schema reference ${JSON.stringify(cur.$ref)}`);
      const { $ref: _ignored, ...siblings } = cur;
      cur = { ...target, ...siblings };
      continue;
    }
    if (isWrapper(cur)) {
      const hit = defs ? undefined : merged.get(cur);
      if (hit) {
        cur = hit;
        continue;
      }
      const { allOf, ...siblings } = cur;
      const inner = resolveSchema(allOf![0], defs);
      const out = { ...inner, ...siblings };
      if (!defs) merged.set(cur, out);
      cur = out;
      continue;
    }
    return cur;
  }
}
