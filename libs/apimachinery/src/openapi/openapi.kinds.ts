/**
 * What the OpenAPI publisher needs to know about a served kind: a structural subset of the
 * registry's KindDeclaration (libs/registry kind.types.ts), so a KindDeclaration can be passed
 * as is without apimachinery depending on the registry.
 */
import type { JSONSchemaProps } from '../schema/schema.types.js';

/** Kubernetes verbs as listed in discovery. */
export type OpenAPIVerb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

/** One served kind at one group-version. */
export interface OpenAPIKind {
  group: string;
  version: string;
  kind: string;
  listKind?: string;
  plural: string;
  namespaced: boolean;
  schema: JSONSchemaProps;
  /** Present when the kind is also served as protobuf (adds the protobuf media types). */
  protobufMessage?: string;
  subresources?: { status?: boolean };
  deleteReturnsObject?: boolean;
  /** Default: all verbs. */
  verbs?: readonly OpenAPIVerb[];
}

/** `api/v1` for the core group, `apis/<group>/<version>` otherwise: the key in /openapi/v3. */
export function groupVersionPath(group: string, version: string): string {
  return group === '' ? `api/${version}` : `apis/${group}/${version}`;
}

/**
 * The OpenAPI definition name of a kind that has no registered name. Built-in groups follow
 * Kubernetes' Go package paths (`io.k8s.api.<first group label>.<version>.<Kind>`; core is
 * `core`, apiextensions and apiregistration live in their own modules); other groups (custom
 * resources) use the reversed group, as kube-apiserver names CRD definitions
 * (`com.example.stable.v1.CronTab`).
 */
export function defaultDefinitionName(group: string, version: string, kind: string): string {
  if (group === '') return `io.k8s.api.core.${version}.${kind}`;
  if (group === 'apiextensions.k8s.io') return `io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.${version}.${kind}`;
  if (group === 'apiregistration.k8s.io') return `io.k8s.kube-aggregator.pkg.apis.apiregistration.${version}.${kind}`;
  if (group.endsWith('.k8s.io') || !group.includes('.')) return `io.k8s.api.${group.split('.')[0]}.${version}.${kind}`;
  return `${group.split('.').reverse().join('.')}.${version}.${kind}`;
}

/**
 * The group-version part of operation ids and tags as Kubernetes' route builder makes them:
 * `.k8s.io` dropped, labels capitalized and joined (`rbac.authorization.k8s.io` + `v1` ->
 * `RbacAuthorizationV1`, core -> `CoreV1`).
 */
export function operationGroupVersion(group: string, version: string): string {
  const g = group === '' ? 'core' : group.replace(/\.k8s\.io$/, '');
  const cap = (s: string) => (s ? s[0].toUpperCase() + s.slice(1) : s);
  return g.split(/[.-]/).map(cap).join('') + cap(version);
}

/** The tag of a group-version's operations, e.g. `core_v1`, `rbacAuthorization_v1`. */
export function operationTag(group: string, version: string): string {
  const gv = operationGroupVersion(group, version);
  const g = gv.slice(0, gv.length - version.length);
  return `${g[0].toLowerCase()}${g.slice(1)}_${version}`;
}
