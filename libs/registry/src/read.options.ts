/**
 * Read options (conventions "Resource versions", list and watch tables): resourceVersion
 * parsing, the read consistency of get and list, continue tokens, and watch option
 * validation. Every invalid combination is a 400 with Kubernetes' message
 * (ValidateListOptions, validateWatchOptions, the etcd3 store for rv + continue).
 */
import { Errors, StatusError } from '@app/apimachinery';
import { ContinueTokenError, decodeContinueToken, encodeContinueToken, type ReadConsistency } from '@app/storage';
import type { ListOptions, WatchOptions } from './request.options.js';

/** A verified continue token. `rv` -1: continue at the latest revision. */
export interface ContinueToken {
  v: string;
  rv: number;
  start: string;
}

const CONTINUE_VERSION = 'meta.k8s.io/v1';

/**
 * Encodes a continue token (Kubernetes' payload plus an HMAC tag: @app/storage continue.token).
 * `rv` -1 means "continue at the latest revision" (the token of an expired-continue 410).
 */
export function encodeContinue(rv: number, start: string): string {
  return encodeContinueToken(rv, start);
}

/** Decodes and verifies a continue token; malformed or forged tokens are 400, never a read elsewhere. */
export function decodeContinue(token: string): ContinueToken {
  try {
    const t = decodeContinueToken(token);
    return { v: CONTINUE_VERSION, rv: t.rv, start: t.start };
  } catch (e) {
    if (e instanceof ContinueTokenError) throw Errors.badRequest(e.message);
    throw e;
  }
}

/** Parses a resourceVersion parameter: '' -> undefined, '0' -> 0, else a positive integer or 400. */
export function parseResourceVersion(rv: string | undefined, what = 'resourceVersion'): number | undefined {
  if (rv === undefined || rv === '') return undefined;
  if (!/^\d+$/.test(rv) || !Number.isSafeInteger(Number(rv))) {
    throw Errors.badRequest(`invalid ${what}: ${JSON.stringify(rv)}`);
  }
  return Number(rv);
}

/** Read consistency of a get (conventions: unset Most Recent, "0" Any, other Not older than). */
export function getConsistency(resourceVersion: string | undefined): ReadConsistency {
  const rv = parseResourceVersion(resourceVersion);
  if (rv === undefined) return { mode: 'MostRecent' };
  if (rv === 0) return { mode: 'Any' };
  return { mode: 'NotOlderThan', revision: rv };
}

/** The list parameters as sent (strings), before resolution. */
export interface ListQuery {
  labelSelector?: string;
  fieldSelector?: string;
  resourceVersion?: string;
  resourceVersionMatch?: string;
  limit?: number;
  continue?: string;
}

/**
 * Resolves a list query into ListOptions: the read consistency from resourceVersion,
 * resourceVersionMatch, limit and continue, with the invalid cells answered 400.
 */
export function resolveListOptions(q: ListQuery): ListOptions {
  const rv = parseResourceVersion(q.resourceVersion);
  const match = q.resourceVersionMatch || undefined;
  const forbidden = (detail: string): StatusError => Errors.badRequest(`ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: ${detail}`);
  if (match !== undefined && match !== 'Exact' && match !== 'NotOlderThan') {
    throw Errors.badRequest(
      `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: ${JSON.stringify(match)}: supported values: "Exact", "NotOlderThan", ""`,
    );
  }
  const base: ListOptions = { labelSelector: q.labelSelector, fieldSelector: q.fieldSelector, limit: q.limit && q.limit > 0 ? q.limit : undefined };
  if (match !== undefined && rv === undefined) throw forbidden('resourceVersionMatch is forbidden unless resourceVersion is provided');
  if (q.continue) {
    if (match !== undefined) throw forbidden('resourceVersionMatch is forbidden when continue is provided');
    // Table: limit and continue with rv non-zero is invalid (400); rv "0" is treated as unset.
    if (rv !== undefined && rv !== 0) throw Errors.badRequest('specifying resource version is not allowed when using continue');
    const t = decodeContinue(q.continue);
    // rv -1: the token of an expired-continue 410, continuing at the latest revision.
    return { ...base, consistency: t.rv === -1 ? { mode: 'MostRecent' } : { mode: 'Exact', revision: t.rv }, continueAfter: t.start };
  }
  if (match === 'Exact') {
    if (rv === 0) throw forbidden('resourceVersionMatch "exact" is forbidden for resourceVersion "0"');
    return { ...base, consistency: { mode: 'Exact', revision: rv! } };
  }
  if (match === 'NotOlderThan') {
    return { ...base, consistency: rv === 0 ? { mode: 'Any' } : { mode: 'NotOlderThan', revision: rv! } };
  }
  if (rv === undefined) return { ...base, consistency: { mode: 'MostRecent' } };
  if (rv === 0) return { ...base, consistency: { mode: 'Any' } };
  // Legacy (no resourceVersionMatch): a limit makes a non-zero rv Exact, else Not older than.
  return { ...base, consistency: q.limit ? { mode: 'Exact', revision: rv } : { mode: 'NotOlderThan', revision: rv } };
}

/** The watch parameters as sent, with booleans and integers already checked for form. */
export interface WatchQuery {
  labelSelector?: string;
  fieldSelector?: string;
  resourceVersion?: string;
  resourceVersionMatch?: string;
  continue?: string;
  sendInitialEvents?: boolean;
  allowWatchBookmarks?: boolean;
  timeoutSeconds?: number;
}

/**
 * Validates the watch form of ListOptions the way Kubernetes' validateWatchOptions does
 * (answered 400, as the conventions' error table says for invalid combinations):
 * sendInitialEvents needs resourceVersionMatch=NotOlderThan; resourceVersionMatch needs
 * sendInitialEvents, must be NotOlderThan, and is forbidden with continue.
 */
export function resolveWatchOptions(q: WatchQuery): WatchOptions {
  const resourceVersion = parseResourceVersion(q.resourceVersion);
  const sendInitialEvents = q.sendInitialEvents;
  const match = q.resourceVersionMatch || undefined;
  const errs: string[] = [];
  if (sendInitialEvents !== undefined && match !== 'NotOlderThan') {
    errs.push('resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan');
  }
  if (match !== undefined) {
    if (sendInitialEvents === undefined)
      errs.push('resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided');
    if (match !== 'NotOlderThan') errs.push(`resourceVersionMatch: Unsupported value: ${JSON.stringify(match)}: supported values: "NotOlderThan"`);
    if (q.continue) errs.push('resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided');
  }
  if (errs.length) throw Errors.badRequest(`ListOptions.meta.k8s.io "" is invalid: ${errs.join(', ')}`);
  const timeout = q.timeoutSeconds;
  if (timeout !== undefined && timeout < 0) throw Errors.badRequest('timeoutSeconds: Invalid value: must be non-negative');
  return {
    labelSelector: q.labelSelector,
    fieldSelector: q.fieldSelector,
    resourceVersion,
    sendInitialEvents,
    allowWatchBookmarks: q.allowWatchBookmarks === true,
    timeoutSeconds: timeout !== undefined && timeout > 0 ? timeout : undefined,
  };
}
