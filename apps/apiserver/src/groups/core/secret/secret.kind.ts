/**
 * core/v1 Secret: its declaration.
 */
import type { KindDeclaration } from '@app/registry';
import { count, str } from '../core.helpers.js';
import { SecretSchema } from './secret.schema.js';
import { secretStrategy } from './secret.strategy.js';

/** The Secret declaration. */
export const secretKind: KindDeclaration = {
  group: '',
  version: 'v1',
  kind: 'Secret',
  plural: 'secrets',
  singular: 'secret',
  namespaced: true,
  schema: SecretSchema,
  protobufMessage: 'k8s.io.api.core.v1.Secret',
  strategy: secretStrategy,
  tableColumns: [
    { name: 'Type', type: 'string', priority: 0, description: 'The type of the secret', cell: (o) => o.type ?? '' },
    { name: 'Data', type: 'integer', priority: 0, description: 'Number of keys in data', cell: (o) => count(o.data) },
  ],
  fieldSelectors: { type: str((o) => o.type) },
};
