/**
 * Field paths written the way Kubernetes' field.Path renders them (k8s.io/apimachinery
 * pkg/util/validation/field/path.go): struct fields joined by `.`, list indexes as `[0]`, map
 * keys in brackets without quotes (`data[app.properties]`), so `metadata.labels[app]` and
 * `spec.containers[0].name`.
 */

/** `base.name` (or `name` at the root). */
export function childPath(base: string, name: string): string {
  return base ? `${base}.${name}` : name;
}

/** `base[i]` for a list element. */
export function indexPath(base: string, i: number): string {
  return `${base}[${i}]`;
}

/** `base[key]` for a map entry. */
export function keyPath(base: string, key: string): string {
  return `${base}[${key}]`;
}

/** True for a JSON object (not null, not an array). */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
