/**
 * Schemas of flowcontrol.apiserver.k8s.io FlowSchema and PriorityLevelConfiguration at each
 * served version (k8s.io/api/flowcontrol/<version> types.go). The versions share their shape
 * but for one field: v1beta2's limited.assuredConcurrencyShares is nominalConcurrencyShares in
 * v1beta3 and v1.
 */
import { defineSchema, fieldOf, objectRootSchema, TimeSchema, type JSONSchemaProps } from '@app/apimachinery';
import { bool, int32, str } from '../core/core.schema.js';

/** The group name. */
export const FLOWCONTROL_GROUP = 'flowcontrol.apiserver.k8s.io';

/** The served versions, preferred first; objects are stored at v1. */
export const FLOWCONTROL_VERSIONS = ['v1', 'v1beta3', 'v1beta2'] as const;

/** One served version. */
export type FlowcontrolVersion = (typeof FLOWCONTROL_VERSIONS)[number];

/** The concurrency shares field of limited priority levels at `version`. */
export function sharesField(version: string): 'assuredConcurrencyShares' | 'nominalConcurrencyShares' {
  return version === 'v1beta2' ? 'assuredConcurrencyShares' : 'nominalConcurrencyShares';
}

const strings = (description: string, listType: 'set' | 'atomic' = 'set'): JSONSchemaProps => ({
  type: 'array',
  description,
  items: { type: 'string' },
  'x-kubernetes-list-type': listType,
});
const atomicList = (description: string, items: JSONSchemaProps): JSONSchemaProps => ({
  type: 'array',
  description,
  items,
  'x-kubernetes-list-type': 'atomic',
});

function conditionSchema(def: string, what: string): JSONSchemaProps {
  return defineSchema(def, {
    type: 'object',
    description: `A condition of a ${what}.`,
    properties: {
      lastTransitionTime: fieldOf(TimeSchema, { description: 'When the condition last changed status.' }),
      message: str('Human-readable details.'),
      reason: str('CamelCase reason of the last transition.'),
      status: str('True, False or Unknown.'),
      type: str('The condition type.'),
    },
  });
}

function statusSchema(def: string, cond: JSONSchemaProps, what: string): JSONSchemaProps {
  return defineSchema(def, {
    type: 'object',
    description: `The current state of a ${what}.`,
    properties: {
      conditions: {
        type: 'array',
        description: 'Current conditions.',
        items: cond,
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['type'],
        'x-kubernetes-patch-strategy': 'merge',
        'x-kubernetes-patch-merge-key': 'type',
      },
    },
  });
}

/** FlowSchema and PriorityLevelConfiguration schemas of one version. */
export interface FlowcontrolSchemas {
  flowSchema: JSONSchemaProps;
  priorityLevelConfiguration: JSONSchemaProps;
}

function build(version: FlowcontrolVersion): FlowcontrolSchemas {
  const D = `io.k8s.api.flowcontrol.${version}`;
  const gvk = (kind: string) => ({ group: FLOWCONTROL_GROUP, version, kind });
  const named = (name: string, description: string, nameText: string) =>
    defineSchema(`${D}.${name}`, { type: 'object', description, required: ['name'], properties: { name: str(nameText) } });
  const user = named('UserSubject', 'A user subject.', 'The user name; "*" matches all users.');
  const group = named('GroupSubject', 'A group subject.', 'The group name; "system:authenticated" and "system:unauthenticated" are useful, "*" matches all.');
  const serviceAccount = defineSchema(`${D}.ServiceAccountSubject`, {
    type: 'object',
    description: 'A service account subject.',
    required: ['namespace', 'name'],
    properties: { name: str('Service account name, or "*" for all in the namespace.'), namespace: str('Namespace of the service account.') },
  });
  const subject = defineSchema(`${D}.Subject`, {
    type: 'object',
    description: 'Who a request comes from: exactly one of user, group or serviceAccount, per kind.',
    required: ['kind'],
    properties: {
      group: fieldOf(group, { description: 'Matches a group.' }),
      kind: str('User, Group or ServiceAccount.'),
      serviceAccount: fieldOf(serviceAccount, { description: 'Matches a service account.' }),
      user: fieldOf(user, { description: 'Matches a user.' }),
    },
  });
  const resourceRule = defineSchema(`${D}.ResourcePolicyRule`, {
    type: 'object',
    description: 'Matches resource requests by verb, group, resource and namespace.',
    required: ['verbs', 'apiGroups', 'resources'],
    properties: {
      apiGroups: strings('API groups matched; "*" matches all.'),
      clusterScope: bool('Whether cluster-scoped requests match.'),
      namespaces: strings('Namespaces matched; "*" matches all namespaced requests.'),
      resources: strings('Resources matched (with subresource as resource/subresource); "*" matches all.'),
      verbs: strings('Verbs matched; "*" matches all.'),
    },
  });
  const nonResourceRule = defineSchema(`${D}.NonResourcePolicyRule`, {
    type: 'object',
    description: 'Matches non-resource requests by verb and URL path.',
    required: ['verbs', 'nonResourceURLs'],
    properties: { nonResourceURLs: strings('URL paths matched; a trailing "*" matches a prefix.'), verbs: strings('Verbs matched; "*" matches all.') },
  });
  const rules = defineSchema(`${D}.PolicyRulesWithSubjects`, {
    type: 'object',
    description: 'A test on a request: a subject and a resource or non-resource rule must match.',
    required: ['subjects'],
    properties: {
      nonResourceRules: atomicList('Non-resource rules.', nonResourceRule),
      resourceRules: atomicList('Resource rules.', resourceRule),
      subjects: atomicList('The subjects matched; at least one.', subject),
    },
  });
  const plRef = named('PriorityLevelConfigurationReference', 'Names a priority level.', 'The priority level configuration referenced.');
  const distinguisher = defineSchema(`${D}.FlowDistinguisherMethod`, {
    type: 'object',
    description: 'How flows of a schema are told apart.',
    required: ['type'],
    properties: { type: str('ByUser or ByNamespace.') },
  });
  const fsSpec = defineSchema(`${D}.FlowSchemaSpec`, {
    type: 'object',
    description: 'Which requests belong to the schema and their priority level.',
    required: ['priorityLevelConfiguration'],
    properties: {
      distinguisherMethod: fieldOf(distinguisher, { description: 'How flows are distinguished; nil: one flow for the whole schema.' }),
      matchingPrecedence: { ...int32('Order among schemas (lower first), 1-10000; default 1000.'), default: 1000 },
      priorityLevelConfiguration: fieldOf(plRef, {
        description: 'The priority level of matched requests; an unresolvable one makes the schema ignored and marked invalid.',
      }),
      rules: atomicList('Tests a request must pass one of.', rules),
    },
  });
  const fsCond = conditionSchema(`${D}.FlowSchemaCondition`, 'flow schema');
  const flowSchema = defineSchema(
    `${D}.FlowSchema`,
    objectRootSchema(gvk('FlowSchema'), 'A class of flows: requests with similar attributes, identified by the schema name and a distinguisher.', {
      spec: fieldOf(fsSpec, { description: 'The schema.' }),
      status: fieldOf(statusSchema(`${D}.FlowSchemaStatus`, fsCond, 'flow schema'), { description: 'The current status.' }),
    }),
  );
  const queuing = defineSchema(`${D}.QueuingConfiguration`, {
    type: 'object',
    description: 'Queuing parameters.',
    properties: {
      handSize: { ...int32('Queues a flow is shuffle-sharded onto; default 8.'), default: 8 },
      queueLengthLimit: { ...int32('Requests a queue may hold; default 50.'), default: 50 },
      queues: { ...int32('Number of queues; default 64.'), default: 64 },
    },
  });
  const limitResponse = defineSchema(`${D}.LimitResponse`, {
    type: 'object',
    description: 'What to do with a request that cannot run at once.',
    required: ['type'],
    properties: { queuing: fieldOf(queuing, { description: 'Queuing parameters; only for type Queue.' }), type: str('Queue or Reject.') },
  });
  const shares = sharesField(version);
  const limited = defineSchema(`${D}.LimitedPriorityLevelConfiguration`, {
    type: 'object',
    description: 'A priority level with limited concurrency.',
    properties: {
      borrowingLimitPercent: int32('Seats it may borrow from others, in percent of its nominal limit.'),
      lendablePercent: { ...int32('Seats others may borrow, in percent of its nominal limit, 0-100.'), default: 0 },
      limitResponse: fieldOf(limitResponse, { description: 'What happens to requests over the limit.' }),
      [shares]: { ...int32('Share of the server concurrency limit; default 30.'), default: 30 },
    },
  });
  const exempt = defineSchema(`${D}.ExemptPriorityLevelConfiguration`, {
    type: 'object',
    description: 'A priority level exempt from limits.',
    properties: {
      lendablePercent: int32('Seats others may borrow, in percent, 0-100.'),
      nominalConcurrencyShares: int32('Share of the server concurrency limit (not enforced for exempt levels).'),
    },
  });
  const plSpec = defineSchema(`${D}.PriorityLevelConfigurationSpec`, {
    type: 'object',
    description: 'The configuration of a priority level.',
    required: ['type'],
    properties: {
      exempt: fieldOf(exempt, { description: 'Parameters of an Exempt level.' }),
      limited: fieldOf(limited, { description: 'Parameters of a Limited level.' }),
      type: str('Exempt or Limited.'),
    },
  });
  const plCond = conditionSchema(`${D}.PriorityLevelConfigurationCondition`, 'priority level');
  const priorityLevelConfiguration = defineSchema(
    `${D}.PriorityLevelConfiguration`,
    objectRootSchema(gvk('PriorityLevelConfiguration'), 'A priority level: a concurrency limit shared by the flows of the schemas naming it.', {
      spec: fieldOf(plSpec, { description: 'The configuration.' }),
      status: fieldOf(statusSchema(`${D}.PriorityLevelConfigurationStatus`, plCond, 'priority level'), { description: 'The current status.' }),
    }),
  );
  return { flowSchema, priorityLevelConfiguration };
}

/** The schemas of each served version. */
export const FLOWCONTROL_SCHEMAS: Readonly<Record<FlowcontrolVersion, FlowcontrolSchemas>> = {
  v1: build('v1'),
  v1beta3: build('v1beta3'),
  v1beta2: build('v1beta2'),
};
