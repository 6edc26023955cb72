/**
 * JSON merge patch, RFC 7386 (`application/merge-patch+json`), as kube-apiserver applies it
 * through evanphx/json-patch MergePatch: objects merge key by key, `null` deletes a key, any
 * other value (arrays included) replaces the target wholesale.
 */

/** True for a JSON object (not an array, not null). */
export function isJsonObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * RFC 7386 section 2, MergePatch(Target, Patch). Returns a new value; neither argument is
 * mutated (untouched subtrees of `target` are shared with the result, not copied).
 */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isJsonObject(patch)) return patch;
  const out: Record<string, unknown> = isJsonObject(target) ? { ...target } : {};
  for (const key of Object.keys(patch)) {
    const v = patch[key];
    if (v === null) {
      delete out[key];
    } else {
      const merged = applyMergePatch(out[key], v);
      // Own-property define so a "__proto__" key stays data, as JSON.parse produces it.
      if (key === '__proto__') Object.defineProperty(out, key, { value: merged, writable: true, enumerable: true, configurable: true });
      else out[key] = merged;
    }
  }
  return out;
}
