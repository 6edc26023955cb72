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
