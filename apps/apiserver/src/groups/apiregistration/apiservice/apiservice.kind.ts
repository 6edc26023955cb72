/**
 * apiregistration.k8s.io/v1 APIService (cluster-scoped, +status), with kubectl's columns NAME
 * SERVICE AVAILABLE AGE (kube-aggregator's table convertor).
 */
import { type KindDeclaration } from '@app/registry';
import type { KubeObject } from '@app/apimachinery';
import { asMap } from '../../core/core.helpers.js';
import { APIServiceSchema } from './apiservice.schema.js';
import { apiServiceStatusStrategy, apiServiceStrategy } from './apiservice.strategy.js';

/** SERVICE: `Local`, or `<namespace>/<name>` of the backing service. */
export function apiServiceService(o: KubeObject): string {
  const s = asMap(o.spec).service;
  if (s === undefined || s === null) return 'Local';
  const m = asMap(s);
  return `${String(m.namespace ?? '')}/${String(m.name ?? '')}`;
}

/** AVAILABLE: the Available condition's status, with its reason when not True; `Unknown` without one. */
export function apiServiceAvailable(o: KubeObject): string {
  const conds = asMap(o.status).conditions;
  const c = Array.isArray(conds) ? conds.map(asMap).find((x) => x.type === 'Available') : undefined;
  if (!c) return 'Unknown';
  return c.status === 'True' ? 'True' : `${String(c.status)} (${String(c.reason ?? '')})`;
}

/** The APIService declaration. */
export const apiServiceKind: KindDeclaration = {
  group: 'apiregistration.k8s.io',
  version: 'v1',
  kind: 'APIService',
  plural: 'apiservices',
  singular: 'apiservice',
  categories: ['api-extensions'],
  namespaced: false,
  // `<version>.<group>`, and `v1.` for the legacy group: the strategy checks the exact form.
  nameValidation: 'pathSegment',
  schema: APIServiceSchema,
  protobufMessage: 'k8s.io.kube_aggregator.pkg.apis.apiregistration.v1.APIService',
  strategy: apiServiceStrategy,
  subresources: { status: { verbs: ['get', 'patch', 'update'], strategy: apiServiceStatusStrategy } },
  generation: 'none',
  tableColumns: [
    { name: 'Service', type: 'string', priority: 0, description: 'The backing service, or Local', cell: apiServiceService },
    { name: 'Available', type: 'string', priority: 0, description: 'Whether the group-version answers', cell: apiServiceAvailable },
  ],
};
