/**
 * A kind is data: this declaration is everything the generic registry, discovery, OpenAPI,
 * the codecs and Table output need to serve it. Built-in kinds and custom resources alike.
 */
import type { Agent as HttpsAgent } from 'node:https';
import type { Agent as HttpAgent } from 'node:http';
import type { FieldError, KubeObject } from '@app/apimachinery';
import type { JSONSchemaProps } from '@app/apimachinery';
import type { UserInfo } from '@app/auth';

/** Kubernetes verbs as listed in discovery. */
export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

/** Per-request context handed to strategy hooks. */
export interface RequestContext {
  user: UserInfo;
  namespace?: string;
  dryRun: boolean;
  /** Warnings to return in `Warning` headers (299 - "text"). */
  warnings: string[];
  /** Wall clock, injectable for tests. */
  now(): Date;
  /**
   * Set on the writes a subresource's handler makes on behalf of a request that admission has
   * already seen as that subresource (an eviction's pod delete, a scale's workload update): they
   * skip the admission chain, as kube's subresource storage writes with rest.ValidateAllObjectFunc.
   */
  admitted?: boolean;
  /**
   * The request's audit record, when the audit policy records it: admission adds annotations
   * (kept only at `min` and above, Metadata or Request).
   */
  audit?: { annotate(key: string, value: string, min: 'Metadata' | 'Request'): void };
}

/**
 * Per-kind behaviour around the generic verbs. The store calls the hooks in Kubernetes' fixed
 * order (write.pipeline.ts): schema defaults -> mutating admission -> prepareForCreate/Update
 * (may mutate: clear status, bump generation) -> validate (never mutates) -> validating
 * admission -> canonicalize -> storage.
 */
export interface Strategy {
  prepareForCreate?(obj: KubeObject, ctx: RequestContext): void;
  prepareForUpdate?(obj: KubeObject, old: KubeObject, ctx: RequestContext): void;
  validate?(obj: KubeObject, ctx: RequestContext): FieldError[];
  validateUpdate?(obj: KubeObject, old: KubeObject, ctx: RequestContext): FieldError[];
  /** Last step before storing, e.g. Secret: merge stringData into data. */
  canonicalize?(obj: KubeObject): void;
  /** Cleanup on every read response, e.g. never return Secret.stringData. */
  decorate?(obj: KubeObject): void;
  /**
   * Finalizers outside metadata.finalizers that keep a deleted object in storage (Namespace:
   * spec.finalizers). The object is removed once these and metadata.finalizers are empty.
   */
  pendingFinalizers?(obj: KubeObject): string[];
  /** Called once when graceful deletion starts (e.g. Namespace phase -> Terminating). */
  prepareForDelete?(obj: KubeObject, ctx: RequestContext): void;
  /** Checks a delete before it happens (e.g. the default namespaces cannot be deleted). */
  validateDelete?(obj: KubeObject, ctx: RequestContext): void;
}

/**
 * What a write through an update-style subresource may change (Kubernetes' status strategies,
 * namespace finalize strategy, CSR approval strategy): `prepareForUpdate` resets every other
 * part of `obj` to `old`, in place. It runs after mutating admission, in place of the kind's
 * own prepareForUpdate.
 */
export interface SubresourceStrategy {
  prepareForUpdate(obj: KubeObject, old: KubeObject, ctx: RequestContext): void;
  /** Validation of the subresource write; default: the kind's validateUpdate/validate. */
  validateUpdate?(obj: KubeObject, old: KubeObject, ctx: RequestContext): FieldError[];
}

/**
 * Handler of a subresource that is not a view of the stored object (TokenRequest on
 * serviceaccounts/token, Scale on .../scale). The answer is of `kind`. A handler with both
 * `get` and `update` also serves PATCH: the patch is applied to what `get` returns and the
 * result goes to `update`.
 */
export interface SubresourceRestHandler {
  get?(ns: string, name: string, ctx: RequestContext): Promise<KubeObject>;
  create?(ns: string, name: string, obj: KubeObject, ctx: RequestContext): Promise<KubeObject>;
  update?(ns: string, name: string, obj: KubeObject, ctx: RequestContext): Promise<KubeObject>;
}

/** What a stream subresource answers with: bytes, whole or as a stream (a followed log). */
export interface StreamAnswer {
  contentType: string;
  body: Buffer | NodeJS.ReadableStream;
}

/**
 * Handler of a subresource that answers GET with bytes rather than an object (pods/log, kube's
 * rest.StorageWithOptions answering with a ResourceStreamer). `query` holds the request's query
 * parameters (first value of each), the handler's options; `signal` aborts when the client goes.
 * Discovery lists it with the kind it belongs to.
 */
export interface SubresourceStreamHandler {
  get(ns: string, name: string, query: Readonly<Record<string, string | undefined>>, ctx: RequestContext, signal: AbortSignal): Promise<StreamAnswer>;
}

/** Where a connect subresource's connection goes, and through which connection pool (TLS settings). */
export interface ConnectTarget {
  url: URL;
  /** An https Agent for https URLs, an http one for http URLs (the proxy subresources). */
  agent: HttpsAgent | HttpAgent;
  /** Headers the backend gets besides the client's (the aggregation layer's X-Remote-* identity of the user). */
  headers?: Readonly<Record<string, string | readonly string[]>>;
}

/**
 * Handler of a subresource that connects the client to a backend (kube's rest.Connecter:
 * pods/exec, attach, portforward): it resolves the options (`query`, every value of each
 * parameter) to where the connection goes, or throws the Status the request fails with. The
 * HTTP layer then upgrades the client's connection to a tunnel to that backend
 * (http/upgrade-proxy.ts). Discovery lists it with its options' kind.
 */
export interface SubresourceConnectHandler {
  optionsKind: string;
  /**
   * A proxy (kube's ProxyREST: nodes, pods and services/proxy): every request is passed to the
   * backend, not only upgrades, with `path` (what follows `/proxy` in the request's path, still
   * percent-encoded) and the request's query. `name` may carry a scheme and port
   * (`[scheme:]name[:port]`).
   */
  proxy?: boolean;
  connect(ns: string, name: string, query: Readonly<Record<string, readonly string[]>>, ctx: RequestContext, path?: string): Promise<ConnectTarget>;
}

/** One declared subresource: a strategy over the stored object, a REST handler, a stream, or a connection. */
export type SubresourceDeclaration =
  | { verbs: Verb[]; strategy: SubresourceStrategy; rest?: undefined; stream?: undefined; connect?: undefined }
  | { verbs: Verb[]; rest: SubresourceRestHandler; kind: SubresourceKind; strategy?: undefined; stream?: undefined; connect?: undefined }
  | { verbs: Verb[]; stream: SubresourceStreamHandler; strategy?: undefined; rest?: undefined; connect?: undefined }
  | { verbs: Verb[]; connect: SubresourceConnectHandler; strategy?: undefined; rest?: undefined; stream?: undefined };

/**
 * The kind a REST subresource takes and answers (TokenRequest): not served as a resource of its
 * own, but its body decodes from protobuf when it names a message (the codec finds it here).
 */
export interface SubresourceKind {
  group: string;
  version: string;
  kind: string;
  protobufMessage?: string;
  schema?: JSONSchemaProps;
}

/**
 * Handler of a REST-only kind. `create` gets the decoded, defaulted, admitted and validated
 * request object and returns the answer (the object with its status filled in).
 */
export interface RestHandler {
  create(ns: string, obj: KubeObject, ctx: RequestContext): Promise<KubeObject>;
}

/**
 * A kind whose objects are computed on each read, never stored (componentstatuses): get and
 * list answer from here; it declares `verbs: ['get', 'list']`.
 */
export interface ComputedHandler {
  get(ns: string, name: string, ctx: RequestContext): Promise<KubeObject>;
  list(ns: string, ctx: RequestContext): Promise<KubeObject[]>;
}

/** The resource a kind's objects are stored as (KindDeclaration.storedAs). */
export interface StoredAs {
  group: string;
  plural: string;
  /** The stored objects' kind and apiVersion, which every stored value must have. */
  kind: string;
  apiVersion: string;
  /** The stored resource's schema, for the decode check of stored values. */
  schema?: JSONSchemaProps;
  /** A served object in the stored shape (must not mutate its input). */
  toStored(obj: KubeObject): KubeObject;
  /** A stored object in the served shape (must not mutate its input). */
  toServed(obj: KubeObject): KubeObject;
}

/**
 * Storage version of a multi-version kind and the conversion between its versions; also what
 * objects read from storage go through (a custom resource is defaulted there).
 */
export interface Conversion {
  /** The version objects are stored at (e.g. 'v2'). */
  storageVersion: string;
  /**
   * Converts `obj` (any served version of this kind) to `toVersion`; metadata is kept as is.
   * Must not mutate its input; may return obj itself when it is already at that version and
   * has nothing to change.
   */
  convert(obj: KubeObject, toVersion: string): KubeObject;
  /**
   * Present when converting calls out (a custom resource's conversion webhook): converts objects
   * in one call; the store and admission convert through it, and `convert` then throws for any
   * object not already at `toVersion`. Rejects with a StatusError (500) when the call fails.
   */
  convertMany?(objs: KubeObject[], toVersion: string): Promise<KubeObject[]>;
  /**
   * Objects may be stored at versions other than storageVersion (a custom resource whose storage
   * version changed keeps its older objects as they are): reads convert at the storage version
   * too.
   */
  mixedStoredVersions?: boolean;
}

/** A Table column (meta/v1 TableColumnDefinition) with a function computing its cell. */
export interface TableColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  format?: string;
  description?: string;
  /** 0 = shown by default; >0 only with -o wide. */
  priority: number;
  cell(obj: KubeObject, now: Date): unknown;
}

/**
 * A deprecated kind-version (conventions.md "Versioning", deprecation rules): every request to
 * it answers with kube's Warning and counts in apiserver_requested_deprecated_apis. Releases
 * are `<major>.<minor>` ('1.21').
 */
export interface Deprecation {
  deprecatedIn: string;
  /** The release that no longer serves it, if announced. */
  removedIn?: string;
  /** The kind to use instead. */
  replacement?: { group: string; version: string; kind: string };
  /** The whole warning, in place of the one built from the fields above (a custom resource's deprecationWarning). */
  warning?: string;
}

/** What reconciling an existing initial object gives (KindDeclaration.reconcileInitial). */
export type InitialReconcile = { update: KubeObject } | { recreate: KubeObject };

/** Declaration of one served kind at one group-version. */
export interface KindDeclaration {
  group: string; // '' for core
  version: string;
  kind: string;
  /** Defaults to `${kind}List`. */
  listKind?: string;
  plural: string;
  singular: string;
  shortNames?: string[];
  categories?: string[];
  namespaced: boolean;
  /**
   * The rule of metadata.name: DNS subdomain (the default) or `pathSegment` (path.IsValidPathSegmentName,
   * RBAC's rule: anything but '.', '..', '/' and '%', so names like `system:basic-user` work).
   */
  nameValidation?: 'dnsSubdomain' | 'pathSegment';
  /**
   * ObjectMeta is checked as apimachinery checks objects outside kube-apiserver's own types
   * (custom resources and CustomResourceDefinitions): finalizer names need only be qualified
   * names, without core's list of standard unqualified ones.
   */
  genericObjectMeta?: boolean;
  /**
   * The objects have no Go type (custom resources): a body is decoded as unstructured JSON, so a
   * value of the wrong JSON type is schema validation's 422 rather than a decoding 400, and
   * JSON null is dropped where the schema does not allow it.
   */
  untyped?: boolean;
  /** OpenAPI v3 structural schema of the whole object (apiVersion, kind, metadata, ...). */
  schema: JSONSchemaProps;
  /** Fully-qualified protobuf message name, e.g. 'k8s.io.api.core.v1.ConfigMap'; absent = JSON only. */
  protobufMessage?: string;
  strategy?: Strategy;
  /** Extra Table columns after Name (Name is always first; Age/Created At is added by default). */
  tableColumns?: TableColumn[];
  /** false: no Age column is added (kinds kubectl prints without one: ComponentStatus, PodSecurityPolicy). */
  ageColumn?: boolean;
  /** The Name cell when kubectl prints more than the name (StorageClass: `fast (default)`). */
  nameCell?: (obj: KubeObject) => string;
  /** Field selectors beyond metadata.name and metadata.namespace: path -> value getter. */
  fieldSelectors?: Record<string, (obj: KubeObject) => string | undefined>;
  /**
   * Subresources of the kind by name (`status`, `finalize`, `scale`, `token`, `approval`, ...).
   * Discovery lists them from here and the handler serves nothing else. A kind that declares
   * `status` keeps the stored status on writes to the main resource.
   */
  subresources?: Record<string, SubresourceDeclaration>;
  /**
   * REST-only kind (the review APIs, TokenRequest): never stored. The request goes through the
   * same decode, admission and validation steps, then to this handler instead of storage.
   */
  rest?: RestHandler;
  /** Computed kind (componentstatuses): reads answer from this handler, not from storage. */
  computed?: ComputedHandler;
  /**
   * A kind served at several versions but stored at one: the storage version and the conversion
   * between them. The store converts on the way into and out of storage, so every served
   * version reads and writes the same objects.
   */
  conversion?: Conversion;
  /**
   * A kind whose objects are another resource's, stored under that resource's keys in its shape
   * and converted on the way in and out (events.k8s.io Event is core Event), so writes through
   * either are seen through both.
   */
  storedAs?: StoredAs;
  /** Present when this version of the kind is deprecated. */
  deprecation?: Deprecation;
  /** DELETE answers with the deleted object instead of a Status (resources doc, "Delete response bodies"). */
  deleteReturnsObject?: boolean;
  /** Verbs served; default all. */
  verbs?: Verb[];
  /** PUT to a missing name creates it (ConfigMap: false in Kubernetes; Namespace: false). */
  allowCreateOnUpdate?: boolean;
  /**
   * false: a PUT must carry metadata.resourceVersion (422 otherwise), as for kinds whose
   * Kubernetes strategy does not allow unconditional updates (Lease). Default true.
   */
  allowUnconditionalUpdate?: boolean;
  /**
   * How metadata.generation is kept, as the kind's Kubernetes strategy keeps it: `spec` (the
   * default, as workloads) sets 1 on create and bumps it when spec changes;
   * `create` sets 1 on create and never bumps it (PriorityClass); `none` never sets it (Lease,
   * Namespace, and every kind without spec); `content` (custom resources) sets 1 on create and
   * bumps it when anything but metadata changes, status too unless the kind has /status.
   */
  generation?: 'spec' | 'create' | 'none' | 'content';
  /**
   * What deleting an owner does to its dependents when the request names no policy
   * (Kubernetes' GarbageCollectionPolicy): DeleteDependents (Background, the default),
   * OrphanDependents, or Unsupported (the kind's objects are never owners).
   */
  defaultGarbageCollectionPolicy?: 'DeleteDependents' | 'OrphanDependents' | 'Unsupported';
  /**
   * Objects that exist from the first start on (the system namespaces, the built-in
   * PriorityClasses): created through the kind's store when missing, before the node reports
   * ready. apiVersion and kind may be left out; a namespaced object names its namespace.
   */
  initialObjects?: KubeObject[];
  /**
   * For an initial object that already exists: what it should become, or undefined to leave it
   * as it is. `update`: the existing object with what a newer version of the server adds to it;
   * `recreate`: an object to create in its place, after deleting the existing one (a field that
   * cannot change, such as a binding's roleRef, differs). Without it, an existing initial object
   * is never changed. The RBAC bootstrap policy reconciles this way.
   */
  reconcileInitial?(existing: KubeObject, wanted: KubeObject): InitialReconcile | undefined;
  /**
   * Values the kind's objects hold that must be unique among them and come from a finite pool
   * (Service cluster IPs and node ports): taken around the store's writes (allocating.storage.ts).
   */
  allocator?: WriteAllocator;
}

/**
 * What an object takes from a pool around its write (Kubernetes' BeginCreate/BeginUpdate hooks
 * of the Service storage): called after validation with the object about to be stored, which it
 * may fill in (an allocated value). The transaction is committed once the write succeeded and
 * reverted when it failed or was retried on fresher state.
 */
export interface WriteAllocator {
  allocateCreate(obj: KubeObject, dryRun: boolean): Promise<AllocationTxn>;
  allocateUpdate(obj: KubeObject, old: KubeObject, dryRun: boolean): Promise<AllocationTxn>;
  /** After the object was removed from storage: gives back what it held. */
  release(obj: KubeObject): Promise<void>;
}

/** The values one write took: committed (releasing what the old state held) or reverted. */
export interface AllocationTxn {
  commit(): Promise<void>;
  revert(): Promise<void>;
}
