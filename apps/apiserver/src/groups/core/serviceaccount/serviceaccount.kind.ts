/**
 * core/v1 ServiceAccount: its declaration. No rules beyond its schema; DELETE answers with the
 * deleted object (resources doc, "Delete response bodies"). The `token` subresource takes a
 * TokenRequest (tokenrequest.handler.ts), in JSON or protobuf.
 */
import type { KindDeclaration } from '@app/registry';
import { AUTHENTICATION_GROUP, TokenRequestSchema } from '../../authentication/authentication.schema.js';
import { ServiceAccountSchema } from './serviceaccount.schema.js';
import { tokenRequestHandler, TokenRequestPorts } from './tokenrequest.handler.js';

/** What the TokenRequest handler uses of the server; the core group module fills it in at start. */
export const tokenRequestPorts = new TokenRequestPorts();

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
  subresources: {
    token: {
      verbs: ['create'],
      rest: tokenRequestHandler(tokenRequestPorts),
      kind: {
        group: AUTHENTICATION_GROUP,
        version: 'v1',
        kind: 'TokenRequest',
        protobufMessage: 'k8s.io.api.authentication.v1.TokenRequest',
        schema: TokenRequestSchema,
      },
    },
  },
  tableColumns: [
    { name: 'Secrets', type: 'integer', priority: 0, description: 'Number of secrets', cell: (o) => (Array.isArray(o.secrets) ? o.secrets.length : 0) },
  ],
};
