/**
 * networking.k8s.io/v1 NetworkPolicy as a stored kind: nothing enforces it here (no network
 * plugin). kubectl's columns (pkg/printers internalversion printNetworkPolicy): NAME
 * POD-SELECTOR AGE.
 */
import { ageOf, type KindDeclaration } from '@app/registry';
import { asMap } from '../../core/core.helpers.js';
import { selectorText } from '../../batch/job/job.kind.js';
import { NetworkPolicySchema } from '../networking.schema.js';
import { networkPolicyStrategy } from './networkpolicy.strategy.js';

/** The NetworkPolicy declaration. */
export const networkPolicyKind: KindDeclaration = {
  group: 'networking.k8s.io',
  version: 'v1',
  kind: 'NetworkPolicy',
  plural: 'networkpolicies',
  singular: 'networkpolicy',
  shortNames: ['netpol'],
  namespaced: true,
  schema: NetworkPolicySchema,
  protobufMessage: 'k8s.io.api.networking.v1.NetworkPolicy',
  strategy: networkPolicyStrategy,
  generation: 'spec',
  tableColumns: [
    {
      name: 'Pod-Selector',
      type: 'string',
      priority: 0,
      description: 'The pods the policy applies to',
      cell: (o) => selectorText(asMap(o.spec).podSelector, '<none>'),
    },
    { name: 'Age', type: 'string', priority: 0, description: 'Time since creation', cell: (o, now) => ageOf(o, now) },
  ],
};
