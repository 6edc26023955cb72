/**
 * Requests to deprecated APIs (conventions.md "Versioning"): the Warning kube-apiserver sends
 * (k8s.io/apiserver/pkg/endpoints/deprecation: "<group/version> <Kind> is deprecated in
 * v1.X+, unavailable in v1.Y+; use <group/version> <Kind>") and the labels of
 * apiserver_requested_deprecated_apis.
 */
import { apiVersionOf, type KindDeclaration } from '@app/registry';

/** The warning text of a deprecated kind-version, or undefined when it is not deprecated. */
export function deprecationWarning(decl: Pick<KindDeclaration, 'group' | 'version' | 'kind' | 'deprecation'>): string | undefined {
  const d = decl.deprecation;
  if (!d) return undefined;
  if (d.warning !== undefined) return d.warning;
  let text = `${apiVersionOf(decl)} ${decl.kind} is deprecated in v${d.deprecatedIn}+`;
  if (d.removedIn) text += `, unavailable in v${d.removedIn}+`;
  if (d.replacement) text += `; use ${apiVersionOf(d.replacement)} ${d.replacement.kind}`;
  return text;
}

/** The labels of apiserver_requested_deprecated_apis for one request. */
export function deprecatedApiLabels(
  decl: Pick<KindDeclaration, 'group' | 'version' | 'plural' | 'deprecation'>,
  subresource: string,
): { group: string; version: string; resource: string; subresource: string; removed_release: string } {
  return { group: decl.group, version: decl.version, resource: decl.plural, subresource, removed_release: decl.deprecation?.removedIn ?? '' };
}
