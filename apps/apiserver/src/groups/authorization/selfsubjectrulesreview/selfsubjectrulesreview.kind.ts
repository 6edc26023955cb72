/**
 * authorization.k8s.io/v1 SelfSubjectRulesReview: the rules the requesting user has in
 * spec.namespace, as the configured modes list them (`kubectl auth can-i --list`). The
 * answer may be incomplete (a mode that cannot list rules) and carries the resolvers'
 * errors in evaluationError, as kube-apiserver's REST does. Never stored.
 */
import { defineSchema, Errors, fieldOf, objectRootSchema, type KubeObject } from '@app/apimachinery';
import type { KindDeclaration } from '@app/registry';
import type { AuthorizationPorts } from '../access.review.js';
import { AUTHORIZATION_GROUP, AUTHZ_DEF } from '../authorization.schema.js';

const strings = { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'atomic' } as const;

const SelfSubjectRulesReviewSchema = defineSchema(
  `${AUTHZ_DEF}.SelfSubjectRulesReview`,
  objectRootSchema(
    { group: AUTHORIZATION_GROUP, version: 'v1', kind: 'SelfSubjectRulesReview' },
    'The actions the requesting user may perform in a namespace.',
    {
      spec: fieldOf(
        defineSchema(`${AUTHZ_DEF}.SelfSubjectRulesReviewSpec`, {
          type: 'object',
          description: 'The namespace asked about.',
          properties: { namespace: { type: 'string', description: 'Namespace to list the rules of.' } },
        }),
        { description: 'What is asked.' },
      ),
      status: fieldOf(
        defineSchema(`${AUTHZ_DEF}.SubjectRulesReviewStatus`, {
          type: 'object',
          description: 'The rules, filled in by the server.',
          properties: {
            resourceRules: {
              type: 'array',
              description: 'Allowed actions on resources.',
              items: { type: 'object', properties: { verbs: strings, apiGroups: strings, resources: strings, resourceNames: strings } },
              'x-kubernetes-list-type': 'atomic',
            },
            nonResourceRules: {
              type: 'array',
              description: 'Allowed actions on non-resource URLs.',
              items: { type: 'object', properties: { verbs: strings, nonResourceURLs: strings } },
              'x-kubernetes-list-type': 'atomic',
            },
            incomplete: { type: 'boolean', description: 'Whether some authorizer could not list its rules.' },
            evaluationError: { type: 'string', description: 'Errors met while listing the rules.' },
          },
        }),
        { description: 'The answer.' },
      ),
    },
  ),
);

/** The SelfSubjectRulesReview declaration, listing rules with the resolver in `ports`. */
export function selfSubjectRulesReviewKind(ports: AuthorizationPorts): KindDeclaration {
  return {
    group: AUTHORIZATION_GROUP,
    version: 'v1',
    kind: 'SelfSubjectRulesReview',
    plural: 'selfsubjectrulesreviews',
    singular: 'selfsubjectrulesreview',
    namespaced: false,
    verbs: ['create'],
    schema: SelfSubjectRulesReviewSchema,
    protobufMessage: 'k8s.io.api.authorization.v1.SelfSubjectRulesReview',
    rest: {
      create: async (_ns, obj, ctx): Promise<KubeObject> => {
        const namespace = (obj as { spec?: { namespace?: string } }).spec?.namespace ?? '';
        if (!namespace) throw Errors.badRequest('no namespace on request');
        if (!ports.rules) throw new Error('authorization reviews: no rule resolver wired');
        const r = ports.rules.rulesFor(ctx.user, namespace);
        const status: Record<string, unknown> = { resourceRules: r.resourceRules, nonResourceRules: r.nonResourceRules, incomplete: r.incomplete };
        if (r.errors.length) status.evaluationError = r.errors.length === 1 ? r.errors[0] : `[${r.errors.join(', ')}]`;
        return { ...obj, status };
      },
    },
  };
}
