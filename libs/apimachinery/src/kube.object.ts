/**
 * An API object as JSON, the shape every layer passes around: the codecs decode into it, the
 * generic store and strategies work on it, storage stores it. `metadata.resourceVersion` is set
 * by storage on every object it returns (the modRevision, decimal).
 */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    [k: string]: unknown;
  };
  [k: string]: unknown;
}

/**
 * Freezes a value and everything reachable from it but byte arrays (which cannot be frozen).
 * Objects shared between readers (a watch event's decoded object, a watch-fed copy's objects)
 * are never changed in place; tests freeze them so that code breaking that rule fails at once.
 */
export function deepFreeze<T>(v: T): T {
  if (v && typeof v === 'object' && !Object.isFrozen(v) && !ArrayBuffer.isView(v)) {
    Object.freeze(v);
    for (const x of Object.values(v as object)) deepFreeze(x);
  }
  return v;
}
