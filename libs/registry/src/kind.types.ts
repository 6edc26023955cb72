/**
 * A kind is data: this declaration is everything the generic registry, discovery, OpenAPI,
 * the codecs and Table output need to serve it. Built-in kinds and custom resources alike.
 */
import type { FieldError } from '@app/apimachinery';
import type { JSONSchemaProps } from '../../apimachinery/src/schema/schema.types.js';
import type { KubeObject } from '@app/storage';

/** Kubernetes verbs as listed in discovery. */
export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

/** Who is asking, as authentication produced it. */
export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

/** Per-request context handed to strategy hooks. */
export interface RequestContext {
  user: UserInfo;
  namespace?: string;
  dryRun: boolean;
  /** Warnings to return in `Warning` headers (299 - "text"). */
  warnings: string[];
  /** Wall clock, injectable for tests. */
  now(): Date;
}

/**
 * Per-kind behaviour around the generic verbs, in Kubernetes' fixed order:
 * prepareForCreate/Update (may mutate: clear status, bump generation) -> defaults from schema ->
 * validate (never mutates) -> canonicalize -> storage.
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
  /** OpenAPI v3 structural schema of the whole object (apiVersion, kind, metadata, ...). */
  schema: JSONSchemaProps;
  /** Fully-qualified protobuf message name, e.g. 'k8s.io.api.core.v1.ConfigMap'; absent = JSON only. */
  protobufMessage?: string;
  strategy?: Strategy;
  /** Extra Table columns after Name (Name is always first; Age/Created At is added by default). */
  tableColumns?: TableColumn[];
  /** Field selectors beyond metadata.name and metadata.namespace: path -> value getter. */
  fieldSelectors?: Record<string, (obj: KubeObject) => string | undefined>;
  /** Subresources served by the generic handler (status: spec/status split). */
  subresources?: { status?: boolean };
  /** DELETE answers with the deleted object instead of a Status (resources doc, "Delete response bodies"). */
  deleteReturnsObject?: boolean;
  /** Verbs served; default all. */
  verbs?: Verb[];
  /** PUT to a missing name creates it (ConfigMap: false in Kubernetes; Namespace: false). */
  allowCreateOnUpdate?: boolean;
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
}
