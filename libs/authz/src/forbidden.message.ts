/**
 * The 403 a denied request gets, worded as kube-apiserver words it (endpoints/handlers/
 * responsewriters: forbiddenMessage, then apierrors.NewForbidden), so clients and people see
 * the same text they would see there.
 */
import { Errors, StatusError } from '@app/apimachinery';
import type { AuthorizationAttributes } from './authorizer.port.js';

/** `User "u" cannot <verb> resource "<res>" in API group "<g>" in the namespace "<ns>"`, and its other forms. */
export function forbiddenMessage(a: AuthorizationAttributes): string {
  const user = JSON.stringify(a.user.username);
  if (!a.isResourceRequest) return `User ${user} cannot ${a.verb} path ${JSON.stringify(a.path)}`;
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const scope = a.namespace ? `in the namespace ${JSON.stringify(a.namespace)}` : 'at the cluster scope';
  return `User ${user} cannot ${a.verb} resource ${JSON.stringify(resource)} in API group ${JSON.stringify(a.apiGroup)} ${scope}`;
}

/** The Forbidden Status of a denied request, with the authorizer's reason appended when it gave one. */
export function forbiddenError(a: AuthorizationAttributes, reason?: string): StatusError {
  const msg = reason ? `${forbiddenMessage(a)}: ${reason}` : forbiddenMessage(a);
  if (!a.isResourceRequest || !a.resource) return new StatusError(403, 'Forbidden', `forbidden: ${msg}`, {});
  return Errors.forbidden({ group: a.apiGroup, resource: a.resource }, a.name, msg);
}
