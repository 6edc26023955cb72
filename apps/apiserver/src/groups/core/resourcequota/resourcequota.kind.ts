/**
 * core/v1 ResourceQuota (+status): its declaration, with kubectl's columns (pkg/printers
 * printResourceQuota): NAME AGE REQUEST LIMIT, where REQUEST lists `name: used/hard` of every
 * resource in status.hard but the `limits.*` ones, which LIMIT lists, sorted by name.
 */
import { ageOf, statusSubresource, type KindDeclaration } from '@app/registry';
import type { KubeObject } from '@app/apimachinery';
import { asMap } from '../core.helpers.js';
import { ResourceQuotaSchema } from './resourcequota.schema.js';
import { resourceQuotaStatusStrategy, resourceQuotaStrategy } from './resourcequota.strategy.js';

/** One column of the printer: `name: used/hard` of the limits.* resources (`limits`) or of the others. */
export function quotaColumn(rq: KubeObject, limits: boolean): string {
  const status = asMap(rq.status);
  const hard = asMap(status.hard);
  const used = asMap(status.used);
  return Object.keys(hard)
    .sort()
    .filter((r) => {
      const pieces = r.split('.');
      return (pieces.length > 1 && pieces[0] === 'limits') === limits;
    })
    .map((r) => `${r}: ${String(used[r] ?? '0')}/${String(hard[r])}`)
    .join(', ');
}

/** The ResourceQuota declaration. */
export const resourceQuotaKind: KindDeclaration = {
  group: '',
  version: 'v1',
  kind: 'ResourceQuota',
  plural: 'resourcequotas',
  singular: 'resourcequota',
  shortNames: ['quota'],
  namespaced: true,
  schema: ResourceQuotaSchema,
  protobufMessage: 'k8s.io.api.core.v1.ResourceQuota',
  strategy: resourceQuotaStrategy,
  subresources: { status: { verbs: statusSubresource().verbs, strategy: resourceQuotaStatusStrategy } },
  generation: 'none',
  tableColumns: [
    { name: 'Age', type: 'string', priority: 0, description: 'Time since creation', cell: (o, now) => ageOf(o, now) },
    {
      name: 'Request',
      type: 'string',
      priority: 0,
      description: 'Request represents a minimum amount of cpu/memory that a container may consume.',
      cell: (o) => quotaColumn(o, false),
    },
    {
      name: 'Limit',
      type: 'string',
      priority: 0,
      description: 'Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.',
      cell: (o) => quotaColumn(o, true),
    },
  ],
};
