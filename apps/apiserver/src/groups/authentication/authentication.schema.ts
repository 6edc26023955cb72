/**
 * Schemas of authentication.k8s.io (k8s.io/api/authentication/v1 types.go): UserInfo, and
 * the roots of SelfSubjectReview and TokenReview.
 */
import { defineSchema, fieldOf, objectRootSchema, TimeSchema, type JSONSchemaProps } from '@app/apimachinery';

/** The group name (authentication.GroupName). */
export const AUTHENTICATION_GROUP = 'authentication.k8s.io';

const strings = (description: string): JSONSchemaProps => ({ type: 'array', description, items: { type: 'string' }, 'x-kubernetes-list-type': 'atomic' });

const userInfos = new Map<string, JSONSchemaProps>();

/** authentication/v1 UserInfo under the definition prefix `def`; one object per name, as OpenAPI needs. */
export function userInfoSchema(def: string): JSONSchemaProps {
  const known = userInfos.get(def);
  if (known) return known;
  const schema = defineSchema(`${def}.UserInfo`, {
    type: 'object',
    description: 'A user as authentication produced it.',
    properties: {
      username: { type: 'string', description: 'Name of the user.' },
      uid: { type: 'string', description: 'Unique id of the user across time.' },
      groups: strings('Groups of the user.'),
      extra: { type: 'object', description: 'Extra attributes of the user.', additionalProperties: { type: 'array', items: { type: 'string' } } },
    },
  });
  userInfos.set(def, schema);
  return schema;
}

/** The root schema of SelfSubjectReview at `version`. */
export function selfSubjectReviewSchema(version: string): JSONSchemaProps {
  const def = `io.k8s.api.authentication.${version}`;
  return defineSchema(
    `${def}.SelfSubjectReview`,
    objectRootSchema(
      { group: AUTHENTICATION_GROUP, version, kind: 'SelfSubjectReview' },
      'The user information of the requester, as the server authenticated it.',
      {
        status: fieldOf(
          defineSchema(`${def}.SelfSubjectReviewStatus`, {
            type: 'object',
            description: 'Filled in by the server.',
            properties: { userInfo: fieldOf(userInfoSchema(def), { description: 'The requesting user.' }) },
          }),
          { description: 'The answer.' },
        ),
      },
    ),
  );
}

const DEF = 'io.k8s.api.authentication.v1';

/** authentication/v1 TokenReview. */
export const TokenReviewSchema = defineSchema(
  `${DEF}.TokenReview`,
  objectRootSchema({ group: AUTHENTICATION_GROUP, version: 'v1', kind: 'TokenReview' }, 'Authenticates a token with the server.', {
    spec: fieldOf(
      defineSchema(`${DEF}.TokenReviewSpec`, {
        type: 'object',
        description: 'The token to authenticate.',
        properties: { token: { type: 'string', description: 'The opaque bearer token.' }, audiences: strings('Audiences the token must be valid for.') },
      }),
      { description: 'What is asked.' },
    ),
    status: fieldOf(
      defineSchema(`${DEF}.TokenReviewStatus`, {
        type: 'object',
        description: 'Filled in by the server.',
        properties: {
          authenticated: { type: 'boolean', description: 'Whether the token is valid.' },
          user: fieldOf(userInfoSchema(DEF), { description: 'The user the token belongs to.' }),
          audiences: strings('Audiences the token is valid for.'),
          error: { type: 'string', description: 'Why the token could not be checked.' },
        },
      }),
      { description: 'The answer.' },
    ),
  }),
);

/** authentication/v1 TokenRequest: the body and answer of `serviceaccounts/{name}/token`. */
export const TokenRequestSchema = defineSchema(
  `${DEF}.TokenRequest`,
  objectRootSchema({ group: AUTHENTICATION_GROUP, version: 'v1', kind: 'TokenRequest' }, 'Requests a token for a service account.', {
    spec: fieldOf(
      defineSchema(`${DEF}.TokenRequestSpec`, {
        type: 'object',
        description: 'What the token is for.',
        properties: {
          audiences: strings('Audiences the token is for; default the API audiences.'),
          expirationSeconds: { type: 'integer', format: 'int64', description: 'Requested lifetime; at least 600, capped by the server.' },
          boundObjectRef: fieldOf(
            defineSchema(`${DEF}.BoundObjectReference`, {
              type: 'object',
              description: 'An object the token is bound to: the token is valid only while it exists.',
              properties: {
                kind: { type: 'string', description: 'Pod or Secret.' },
                apiVersion: { type: 'string', description: 'API version of the referent.' },
                name: { type: 'string', description: 'Name of the referent.' },
                uid: { type: 'string', description: 'UID of the referent.' },
              },
            }),
            { description: 'The object the token is bound to.' },
          ),
        },
      }),
      { description: 'What is asked.' },
    ),
    status: fieldOf(
      defineSchema(`${DEF}.TokenRequestStatus`, {
        type: 'object',
        description: 'Filled in by the server.',
        required: ['token', 'expirationTimestamp'],
        properties: {
          token: { type: 'string', description: 'The opaque bearer token.' },
          expirationTimestamp: fieldOf(TimeSchema, { description: 'When the token expires.' }),
        },
      }),
      { description: 'The answer.' },
    ),
  }),
);
