/**
 * core/v1 Namespace (cluster-scoped): its declaration.
 */
import { finalizeSubresource, statusSubresource, type KindDeclaration } from '@app/registry';
import { asMap, str } from '../core.helpers.js';
import { NamespaceSchema } from './namespace.schema.js';
import { namespaceFinalizeStrategy, namespaceStatusStrategy, namespaceStrategy } from './namespace.strategy.js';

/** Namespaces created at first start. */
export const SYSTEM_NAMESPACES: readonly string[] = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

/** The Namespace declaration. */
export const namespaceKind: KindDeclaration = {
  group: '',
  version: 'v1',
  kind: 'Namespace',
  plural: 'namespaces',
  singular: 'namespace',
  shortNames: ['ns'],
  namespaced: false,
  schema: NamespaceSchema,
  protobufMessage: 'k8s.io.api.core.v1.Namespace',
  strategy: namespaceStrategy,
  subresources: {
    status: { verbs: statusSubresource().verbs, strategy: namespaceStatusStrategy },
    finalize: { verbs: finalizeSubresource().verbs, strategy: namespaceFinalizeStrategy },
  },
  // namespaceStrategy sets no generation.
  generation: 'none',
  verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
  tableColumns: [{ name: 'Status', type: 'string', priority: 0, description: 'The status of the namespace', cell: (o) => asMap(o.status).phase ?? '' }],
  fieldSelectors: { 'status.phase': str((o) => asMap(o.status).phase) },
  initialObjects: SYSTEM_NAMESPACES.map((name) => ({ metadata: { name } })),
};
