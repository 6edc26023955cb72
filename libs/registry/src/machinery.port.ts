/**
 * The pure API-machinery functions the generic store needs (schema validation, selectors,
 * patches, metadata rules). The store depends on this port, not on their modules, so it can be
 * tested with the real implementations wired in one place (apps/apiserver) and each side can
 * change independently.
 */
import type { FieldError } from '@app/apimachinery';
import type { JSONSchemaProps } from '@app/apimachinery';

/** A parsed label selector. */
export interface LabelMatcher {
  empty(): boolean;
  matches(labels: Record<string, string>): boolean;
}

/** A parsed field selector. */
export interface FieldMatcher {
  empty(): boolean;
  /** Field names referenced (to reject unsupported ones). */
  fields(): string[];
  matches(get: (field: string) => string | undefined): boolean;
  /** The value an `=`/`==` term requires of `field`, if there is one. */
  requiresExactMatch(field: string): string | undefined;
}

/** The machinery functions; every function is pure apart from `generateName`'s randomness. */
export interface Machinery {
  validateSchema(obj: unknown, schema: JSONSchemaProps): FieldError[];
  /**
   * What the kind's Go type cannot hold in `obj` (a field of the wrong type, bytes that are not
   * base64, a time that does not parse), as Go's decoder words it; undefined when it decodes.
   */
  decodeProblem(obj: unknown, schema: JSONSchemaProps, kind: string): string | undefined;
  /** Paths of fields the schema does not know, e.g. `spec.foo`. */
  findUnknownFields(obj: unknown, schema: JSONSchemaProps): string[];
  /** Drops fields the schema does not know (in place). */
  prune(obj: unknown, schema: JSONSchemaProps): void;
  /** Sets schema defaults where absent (in place). */
  applyDefaults(obj: unknown, schema: JSONSchemaProps): void;
  /**
   * `pathSegmentNames`: the kind's names follow path.IsValidPathSegmentName instead of DNS
   * subdomain. `generic`: the rules of objects outside kube-apiserver's own types (custom
   * resources and their definitions): an unqualified finalizer name need not be a standard one.
   */
  validateObjectMetaCreate(meta: Record<string, unknown>, namespaced: boolean, pathSegmentNames?: boolean, generic?: boolean): FieldError[];
  validateObjectMetaUpdate(meta: Record<string, unknown>, old: Record<string, unknown>, generic?: boolean): FieldError[];
  /** `base` + 5 random characters, truncated to stay a valid name. */
  generateName(base: string): string;
  parseLabelSelector(s: string): LabelMatcher;
  parseFieldSelector(s: string): FieldMatcher;
  mergePatch(target: unknown, patch: unknown): unknown;
  jsonPatch(target: unknown, ops: unknown): unknown;
  strategicMergePatch(target: unknown, patch: unknown, schema: JSONSchemaProps): unknown;
}
