/**
 * Unknown-field detection (fieldValidation, KEP-2885). A field is unknown when the schema does
 * not declare it and nothing above it preserves unknown fields. Paths use Kubernetes' wording
 * in strict decoding errors and warnings: `unknown field "spec.foo"`,
 * `unknown field "spec.containers[0].bar"`.
 *
 * The walk is shared with `prune`, which removes exactly the fields reported here (plus nulls
 * in non-nullable fields), so Warn/Ignore store what Strict would have accepted.
 */
import type { JSONSchemaProps } from './schema.types.js';
import { childPath, indexPath, isPlainObject, keyPath } from './schema.path.js';
import { resolveSchema, type SchemaDefinitions } from './schema.resolve.js';
import { ObjectMetaSchema } from './meta.schemas.js';

/** Options shared by `findUnknownFields` and `prune`. */
export interface UnknownFieldOptions {
  definitions?: SchemaDefinitions;
  /**
   * The value is a whole API object: `apiVersion` and `kind` are always known and `metadata`
   * is checked against ObjectMeta when the schema does not declare it (as for custom resources,
   * whose schemas usually omit them). Default true.
   */
  root?: boolean;
}

/** True when the schema accepts any value below it (no structure declared at all). */
function isAny(s: JSONSchemaProps): boolean {
  return (
    s.type === undefined && s.properties === undefined && s.items === undefined && s.additionalProperties === undefined && !s['x-kubernetes-embedded-resource']
  );
}

/**
 * Walks `v` along `schema`, calling `onUnknown(path, parent, key)` for each unknown field; when
 * `dropNulls` is set, null values of non-nullable declared fields are deleted (apiextensions
 * prunes them before defaulting).
 * @internal shared by schema.unknown and schema.prune.
 */
export function walkUnknown(
  v: unknown,
  raw: JSONSchemaProps,
  path: string,
  embedded: boolean,
  defs: SchemaDefinitions | undefined,
  onUnknown: (path: string, parent: Record<string, unknown>, key: string) => void,
  dropNulls: boolean,
): void {
  let s: JSONSchemaProps;
  try {
    s = resolveSchema(raw, defs);
  } catch {
    return; // an unresolvable schema is reported by validation, not here
  }
  if (Array.isArray(v)) {
    if (s.items) for (let i = 0; i < v.length; i++) walkUnknown(v[i], s.items, indexPath(path, i), false, defs, onUnknown, dropNulls);
    return;
  }
  if (!isPlainObject(v) || isAny(s)) return;
  const isEmbedded = embedded || s['x-kubernetes-embedded-resource'] === true;
  const preserve = s['x-kubernetes-preserve-unknown-fields'] === true || s.additionalProperties === true;
  const props = s.properties ?? {};
  for (const k of Object.keys(v)) {
    const val = v[k];
    const p = props[k];
    if (p) {
      if (val === null && dropNulls) {
        let nullable: boolean;
        try {
          nullable = resolveSchema(p, defs).nullable === true;
        } catch {
          nullable = true;
        }
        if (!nullable) {
          delete v[k];
          continue;
        }
      }
      walkUnknown(val, p, childPath(path, k), false, defs, onUnknown, dropNulls);
    } else if (isEmbedded && (k === 'apiVersion' || k === 'kind')) {
      continue;
    } else if (isEmbedded && k === 'metadata') {
      walkUnknown(val, ObjectMetaSchema, childPath(path, k), false, defs, onUnknown, dropNulls);
    } else if (typeof s.additionalProperties === 'object') {
      walkUnknown(val, s.additionalProperties, keyPath(path, k), false, defs, onUnknown, dropNulls);
    } else if (!preserve) {
      onUnknown(childPath(path, k), v, k);
    }
  }
}

/**
 * Paths of the fields of `obj` that `schema` does not know, in document order, without
 * modifying `obj`. Below an unknown field nothing more is reported (its whole subtree is
 * unknown), as in kube-apiserver.
 */
export function findUnknownFields(obj: unknown, schema: JSONSchemaProps, opts: UnknownFieldOptions = {}): string[] {
  const out: string[] = [];
  walkUnknown(obj, schema, '', opts.root ?? true, opts.definitions, (p) => out.push(p), false);
  return out;
}

/**
 * Deletes every null value of a declared, non-nullable field of `obj`, in place: what decoding
 * into a Go type does with JSON null (the field keeps its zero value, so it is as if absent).
 * Built-in kinds accept `"resources": null` or `"data": null` this way, as kube-apiserver does.
 */
export function dropNullFields(obj: unknown, schema: JSONSchemaProps, opts: UnknownFieldOptions = {}): void {
  walkUnknown(obj, schema, '', opts.root ?? true, opts.definitions, () => undefined, true);
}

/**
 * The message of the 400 BadRequest for fieldValidation=Strict, as kube-apiserver words it:
 * `strict decoding error: unknown field "spec.foo", unknown field "bar"`.
 */
export function strictDecodingErrorMessage(paths: readonly string[]): string {
  return `strict decoding error: ${paths.map((p) => `unknown field ${JSON.stringify(p)}`).join(', ')}`;
}

/** The warnings (one per field) for fieldValidation=Warn: `unknown field "spec.foo"`. */
export function unknownFieldWarnings(paths: readonly string[]): string[] {
  return paths.map((p) => `unknown field ${JSON.stringify(p)}`);
}
