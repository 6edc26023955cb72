/**
 * core/v1 ServiceAccount: its declaration. No rules beyond its schema; DELETE answers with the
 * deleted object (resources doc, "Delete response bodies").
 */
import type { KindDeclaration } from '@app/registry';
import { ServiceAccountSchema } from './serviceaccount.schema.js';

/** The ServiceAccount declaration. */
export const serviceAccountKind: KindDeclaration = {
  group: '',
  version: 'v1',
  kind: 'ServiceAccount',
  plural: 'serviceaccounts',
  singular: 'serviceaccount',
  shortNames: ['sa'],
  namespaced: true,
  schema: ServiceAccountSchema,
  protobufMessage: 'k8s.io.api.core.v1.ServiceAccount',
  deleteReturnsObject: true,
  tableColumns: [
    { name: 'Secrets', type: 'integer', priority: 0, description: 'Number of secrets', cell: (o) => (Array.isArray(o.secrets) ? o.secrets.length : 0) },
  ],
};
