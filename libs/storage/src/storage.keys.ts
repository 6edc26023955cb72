/**
 * Storage keys (DESIGN.md "Storage model"): `/registry/<group or core>/<plural>/<namespace>/<name>`,
 * cluster-scoped kinds without the namespace segment. Prefixes end in '/', so that a watch or list
 * of `/registry/core/pods/a/` never includes namespace `ab`.
 */

/** Identifies a resource collection or one object in it. */
export interface KeyParts {
  /** API group; '' (the legacy core group) is written `core`. */
  group: string;
  /** Lower-case plural resource name, e.g. `pods`. */
  resource: string;
  /** Namespace for namespaced kinds; omit for cluster-scoped kinds or all namespaces. */
  namespace?: string;
  name?: string;
}

function segment(what: string, v: string): string {
  // A '/' or NUL inside a segment would alias another key (or break the store's key layout).
  if (v.length === 0 || v.includes('/') || v.includes('\u0000')) throw new TypeError(`invalid ${what} for a storage key: ${JSON.stringify(v)}`);
  return v;
}

/** Key of one object. Throws TypeError when a segment is empty or holds '/'. */
export function objectKey(p: KeyParts & { name: string }): string {
  return collectionPrefix(p) + segment('name', p.name);
}

/**
 * Prefix of a collection: every object of the resource (no namespace) or of one namespace.
 * Always ends in '/'.
 */
export function collectionPrefix(p: KeyParts): string {
  const group = p.group === '' ? 'core' : segment('group', p.group);
  let key = `/registry/${group}/${segment('resource', p.resource)}/`;
  if (p.namespace !== undefined) key += `${segment('namespace', p.namespace)}/`;
  return key;
}
