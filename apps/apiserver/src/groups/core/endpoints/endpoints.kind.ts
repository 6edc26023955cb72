/**
 * core/v1 Endpoints (namespaced): its declaration, with kubectl's columns (NAME ENDPOINTS AGE).
 * Stored as clients write them: no endpoints controller fills them from Services here.
 */
import { ageOf, type KindDeclaration } from '@app/registry';
import { EndpointsSchema } from './endpoints.schema.js';
import { endpointsCell, endpointsStrategy } from './endpoints.strategy.js';

/** The Endpoints declaration. */
export const endpointsKind: KindDeclaration = {
  group: '',
  version: 'v1',
  kind: 'Endpoints',
  listKind: 'EndpointsList',
  plural: 'endpoints',
  singular: 'endpoints',
  shortNames: ['ep'],
  namespaced: true,
  schema: EndpointsSchema,
  protobufMessage: 'k8s.io.api.core.v1.Endpoints',
  strategy: endpointsStrategy,
  generation: 'none',
  tableColumns: [
    { name: 'Endpoints', type: 'string', priority: 0, description: 'Ready addresses with their ports', cell: (o) => endpointsCell(o) },
    { name: 'Age', type: 'string', priority: 0, description: 'Time since creation', cell: (o, now) => ageOf(o, now) },
  ],
};
