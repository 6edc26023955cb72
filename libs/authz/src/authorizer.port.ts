/**
 * The authorization port of the request pipeline (Kubernetes' authorizer.Authorizer). The
 * attributes are what RequestInfo parsed from the path plus the authenticated (or impersonated)
 * user; a decision is Allow, Deny or NoOpinion (a union asks the next authorizer).
 */
import { parseFieldSelector, parseLabelSelector } from '@app/apimachinery';
import type { UserInfo } from '@app/auth';

/** What is being asked (Kubernetes' authorizer.AttributesRecord). */
export interface AuthorizationAttributes {
  user: UserInfo;
  /** Resource verb (get, list, watch, create, ...), `impersonate`, or the lower-cased HTTP method of a non-resource path. */
  verb: string;
  isResourceRequest: boolean;
  /** The URL path, for non-resource requests. */
  path: string;
  apiGroup: string;
  apiVersion: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
  /**
   * The terms of a list, watch or deletecollection's field selector (kube's
   * FieldSelectorRequirements; operators `=`, `==`, `!=`), absent without one or when it does
   * not parse. The Node authorizer lets a node list its own pods by `spec.nodeName` this way.
   */
  fieldSelector?: readonly { field: string; operator: string; value: string }[];
  /**
   * The terms of a list, watch or deletecollection's label selector (kube's
   * LabelSelectorRequirements: operators `=`, `==`, `!=`, `in`, `notin`, `exists`, `!`, `gt`,
   * `lt`), absent without one or when it does not parse. No built-in mode reads them; the
   * Webhook mode passes them on.
   */
  labelSelector?: readonly { key: string; operator: string; values: readonly string[] }[];
}

/**
 * The selector attributes of a request's `fieldSelector` and `labelSelector` parameters: their
 * parsed terms, nothing for one that is empty or does not parse (the handler refuses that one
 * with 400; kube-apiserver authorizes the request as without it).
 */
export function selectorAttributes(
  fieldSelector: string | undefined,
  labelSelector: string | undefined,
): Pick<AuthorizationAttributes, 'fieldSelector' | 'labelSelector'> {
  const out: Pick<AuthorizationAttributes, 'fieldSelector' | 'labelSelector'> = {};
  if (fieldSelector) {
    try {
      out.fieldSelector = parseFieldSelector(fieldSelector).requirements();
    } catch {
      // Not passed on.
    }
  }
  if (labelSelector) {
    try {
      const terms = parseLabelSelector(labelSelector).requirements;
      if (terms.length > 0) out.labelSelector = terms;
    } catch {
      // Not passed on.
    }
  }
  return out;
}

/** The attributes of a non-resource request (`path` with an HTTP verb). */
export function nonResourceAttributes(user: UserInfo, verb: string, path: string): AuthorizationAttributes {
  return { user, verb, isResourceRequest: false, path, apiGroup: '', apiVersion: '', resource: '', subresource: '', namespace: '', name: '' };
}

/**
 * An authorizer's answer; `reason` is shown to the client after the Forbidden message. `error`
 * says the authorizer could not decide (a webhook out of reach): a request no other mode allows
 * then fails with 500 rather than 403, as in kube-apiserver.
 */
export interface AuthorizationDecision {
  decision: 'Allow' | 'Deny' | 'NoOpinion';
  reason?: string;
  error?: string;
}

/** One authorization mode. May answer synchronously. */
export interface Authorizer {
  authorize(attrs: AuthorizationAttributes): AuthorizationDecision | Promise<AuthorizationDecision>;
}

/** Injection token of the request pipeline's authorizer (the union of `--authorization-mode`). */
export const AUTHORIZER = Symbol.for('kapi.Authorizer');
