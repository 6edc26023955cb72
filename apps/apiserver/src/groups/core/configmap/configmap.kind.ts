/**
 * core/v1 ConfigMap: its declaration.
 */
import type { KindDeclaration } from '@app/registry';
import { count } from '../core.helpers.js';
import { ConfigMapSchema } from './configmap.schema.js';
import { configMapStrategy } from './configmap.strategy.js';

/** The ConfigMap declaration. */
export const configMapKind: KindDeclaration = {
  group: '',
  version: 'v1',
  kind: 'ConfigMap',
  plural: 'configmaps',
  singular: 'configmap',
  shortNames: ['cm'],
  namespaced: true,
  schema: ConfigMapSchema,
  protobufMessage: 'k8s.io.api.core.v1.ConfigMap',
  strategy: configMapStrategy,
  tableColumns: [
    { name: 'Data', type: 'integer', priority: 0, description: 'Number of keys in data and binaryData', cell: (o) => count(o.data) + count(o.binaryData) },
  ],
};
