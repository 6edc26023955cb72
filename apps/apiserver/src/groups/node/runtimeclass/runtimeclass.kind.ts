/**
 * node.k8s.io/v1 RuntimeClass (cluster-scoped), with kubectl's columns NAME HANDLER AGE.
 */
import type { KindDeclaration } from '@app/registry';
import { RuntimeClassSchema } from './runtimeclass.schema.js';
import { runtimeClassStrategy } from './runtimeclass.strategy.js';

/** The RuntimeClass declaration. */
export const runtimeClassKind: KindDeclaration = {
  group: 'node.k8s.io',
  version: 'v1',
  kind: 'RuntimeClass',
  plural: 'runtimeclasses',
  singular: 'runtimeclass',
  namespaced: false,
  schema: RuntimeClassSchema,
  protobufMessage: 'k8s.io.api.node.v1.RuntimeClass',
  strategy: runtimeClassStrategy,
  generation: 'none',
  tableColumns: [{ name: 'Handler', type: 'string', priority: 0, description: 'The CRI handler of the class', cell: (o) => o.handler ?? '' }],
};
