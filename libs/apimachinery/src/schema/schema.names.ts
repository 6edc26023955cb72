/**
 * Names of shared sub-schemas. Schemas are plain inlined JS objects (the engine never needs a
 * definitions map); a shared sub-schema such as ObjectMeta is one JS object used in many places.
 * The OpenAPI publisher needs a definition name for it (`io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta`)
 * so it can emit `$ref`s exactly where Kubernetes does: this module records those names by
 * object identity.
 */
import type { JSONSchemaProps } from './schema.types.js';

const names = new WeakMap<JSONSchemaProps, string>();

/**
 * Registers `schema` under the OpenAPI definition `name` and returns the same object. The name
 * must be the Kubernetes one (Go package path reversed, e.g. `io.k8s.api.core.v1.ConfigMap`),
 * because clients such as kubectl match documents by it. Registering an object twice keeps the
 * first name.
 */
export function defineSchema<T extends JSONSchemaProps>(name: string, schema: T): T {
  if (!names.has(schema)) names.set(schema, name);
  return schema;
}

/** The definition name registered for this exact object, if any. */
export function schemaName(schema: JSONSchemaProps): string | undefined {
  return names.get(schema);
}

/** The name registered for a schema or for the shared schema a field wraps (`fieldOf`), if any. */
export function wrappedSchemaName(schema: JSONSchemaProps): string | undefined {
  let cur: JSONSchemaProps | undefined = schema;
  for (let hops = 0; cur && hops < 8; hops++) {
    const n = names.get(cur);
    if (n) return n;
    cur = cur.allOf?.length === 1 ? cur.allOf[0] : undefined;
  }
  return undefined;
}

/**
 * A field that uses a shared (named) schema but carries its own description or default, as a
 * Go struct field documents its type differently from the type itself. It is the OpenAPI v3
 * idiom Kubernetes publishes (`allOf: [{$ref}]` with a description beside) and the engine
 * resolves it by merging the siblings over the shared schema (see `resolveSchema`).
 */
export function fieldOf(shared: JSONSchemaProps, extra: Omit<JSONSchemaProps, 'allOf'>): JSONSchemaProps {
  return { ...extra, allOf: [shared] };
}
