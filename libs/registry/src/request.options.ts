/**
 * The typed options a request hands to the store (Kubernetes' GetOptions, ListOptions,
 * CreateOptions/UpdateOptions/PatchOptions, DeleteOptions). The HTTP layer parses and validates
 * the query parameters and bodies into these once; the store trusts them and parses nothing.
 */
import type { ReadConsistency } from '@app/storage';
import type { RequestContext } from './kind.types.js';
import type { KubeObject } from '@app/apimachinery';

/** fieldValidation query parameter values (conventions "Query parameters"). */
export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

/** get: how fresh the read must be (unset = Most Recent). */
export interface GetOptions {
  consistency?: ReadConsistency;
}

/**
 * list (and deletecollection's selection), with the read consistency already resolved from
 * resourceVersion, resourceVersionMatch, limit and continue (read.options.ts).
 */
export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  /** Unset = Most Recent. */
  consistency?: ReadConsistency;
  /** Page size; 0/undefined = everything. */
  limit?: number;
  /** From a verified continue token: the key (below the collection prefix) to continue after. */
  continueAfter?: string;
}

/** watch, parsed and validated the way Kubernetes' validateWatchOptions does. */
export interface WatchOptions {
  labelSelector?: string;
  fieldSelector?: string;
  /** undefined = unset; 0 = "0"; else the revision. */
  resourceVersion: number | undefined;
  /** sendInitialEvents as sent (undefined when absent). */
  sendInitialEvents: boolean | undefined;
  allowWatchBookmarks: boolean;
  /** timeoutSeconds when set and > 0. */
  timeoutSeconds: number | undefined;
}

/**
 * The write parameters of a request (dryRun, fieldValidation, fieldManager, force) as the
 * HTTP layer validated them; the store gets them inside WriteOptions.
 */
export interface WriteParams {
  dryRun: boolean;
  fieldValidation: FieldValidation;
  /** The fieldManager query parameter as sent. */
  fieldManager?: string;
  force: boolean;
}

/** Options shared by writes. `ctx.dryRun` is the request's dryRun. */
export interface WriteOptions {
  ctx: RequestContext;
  fieldValidation: FieldValidation;
  /** Duplicate fields the decoder found (paths), judged by fieldValidation. */
  duplicateFields?: string[];
  subresource?: string;
  /** The field manager of this write (fieldManager parameter, else from the User-Agent). */
  fieldManager?: string;
  /** Set by apply: managedFields were computed by server-side apply, do not track an Update. */
  managedFieldsDone?: boolean;
}

/** Options of server-side apply (PATCH application/apply-patch+yaml). */
export interface ApplyOptions extends WriteOptions {
  /** The fieldManager query parameter as sent (required for apply). */
  fieldManagerParam?: string;
  force: boolean;
}

/** metav1.DeleteOptions (the fields the store acts on), merged from body and query. */
export interface DeleteOptions {
  gracePeriodSeconds?: number;
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  orphanDependents?: boolean;
  preconditions?: { uid?: string; resourceVersion?: string };
  /** Validated: only "All" entries. The request's ctx.dryRun follows it. */
  dryRun?: string[];
  /**
   * Delete an object whose stored value does not decode, without reading it: no finalizers, no
   * preconditions, no admission. Refused (422) for an object that decodes; the request's user
   * must also be allowed the verb `unsafe-delete-ignore-read-errors` on the resource.
   */
  ignoreStoreReadErrorWithClusterBreakingPotential?: boolean;
}

/** Result of a list. */
export interface ListResponse {
  items: KubeObject[];
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}
