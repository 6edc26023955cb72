/**
 * What the admissionregistration.k8s.io/v1 protobuf messages cannot say about the schemas derived
 * from them (schema.proto.ts): descriptions, required fields, enums and the defaults of
 * pkg/apis/admissionregistration/v1 defaults.go (failurePolicy Fail, matchPolicy Equivalent,
 * empty selectors, timeoutSeconds 10, reinvocationPolicy Never, rule scope "*", service port 443).
 * The messages of the webhook configurations and of ValidatingAdmissionPolicy and its binding are
 * overlaid (the policy's defaults: failurePolicy Fail, matchPolicy Equivalent, empty selectors).
 *
 * Schema validation runs beside the strategy's (write.pipeline.ts), so `required` and `enum` are
 * declared only where the schema's error reads exactly as Kubernetes' rule does (the 422 message
 * then lists it once); sideEffects, clientConfig and admissionReviewVersions are required by the
 * rules in admissionregistration.validation.ts, with Kubernetes' wording.
 */
import type { MessageOverlay, SchemaOverlays } from '@app/apimachinery';

const A = 'k8s.io.api.admissionregistration.v1';
const d = (description: string) => ({ description });

/** failurePolicy values. */
export const FAILURE_POLICIES: readonly string[] = ['Fail', 'Ignore'];
/** matchPolicy values. */
export const MATCH_POLICIES: readonly string[] = ['Equivalent', 'Exact'];
/** sideEffects values a v1 webhook may declare (Some and Unknown only survive from v1beta1). */
export const NO_SIDE_EFFECT_CLASSES: readonly string[] = ['None', 'NoneOnDryRun'];
/** Every sideEffects value, including the two v1 refuses on new webhooks. */
export const SIDE_EFFECT_CLASSES: readonly string[] = ['None', 'NoneOnDryRun', 'Some', 'Unknown'];
/** reinvocationPolicy values (mutating webhooks only). */
export const REINVOCATION_POLICIES: readonly string[] = ['IfNeeded', 'Never'];
/** validationActions values of a ValidatingAdmissionPolicyBinding. */
export const VALIDATION_ACTIONS: readonly string[] = ['Audit', 'Deny', 'Warn'];
/** parameterNotFoundAction values. */
export const PARAMETER_NOT_FOUND_ACTIONS: readonly string[] = ['Allow', 'Deny'];
/** The reasons a policy validation may give. */
export const VALIDATION_REASONS: readonly string[] = ['Unauthorized', 'Forbidden', 'Invalid', 'RequestEntityTooLarge'];
/** Rule operations. */
export const OPERATIONS: readonly string[] = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
/** Rule scopes. */
export const SCOPES: readonly string[] = ['*', 'Cluster', 'Namespaced'];

/** The fields both webhook messages share. */
const webhookFields = {
  name: d('Name of the webhook, a fully qualified domain name of at least three segments (e.g. check.policy.example.com); unique in its configuration.'),
  clientConfig: d('Where the API server sends admission reviews for this webhook. Required.'),
  rules: d('Operations on resources the webhook is called for; any one matching rule is enough. Webhook configurations themselves are never sent to webhooks.'),
  failurePolicy: {
    description: 'What happens when the call fails or times out: Fail (the default) rejects the request, Ignore lets it pass.',
    enum: [...FAILURE_POLICIES],
    default: 'Fail',
  },
  matchPolicy: {
    description:
      'Exact: only requests through a group-version listed in rules match. Equivalent (the default): a request through another version of a listed resource matches too, converted to the listed version.',
    enum: [...MATCH_POLICIES],
    default: 'Equivalent',
  },
  namespaceSelector: {
    description:
      'Limits the webhook to objects in namespaces whose labels match (for a Namespace, its own labels); cluster-scoped objects other than namespaces are always sent. Empty (the default) matches all.',
    default: {},
  },
  objectSelector: {
    description:
      'Limits the webhook to objects whose labels (old or new) match. Empty (the default) matches all; the object owner can change labels, so use it only for opt-in webhooks.',
    default: {},
  },
  sideEffects: d(
    'Whether a call changes anything outside the reviewed object: None, or NoneOnDryRun (the webhook skips its side effects when the review says dryRun). Required.',
  ),
  timeoutSeconds: { description: 'Seconds to wait for the webhook, 1 to 30 (default 10); on timeout the failure policy applies.', default: 10 },
  admissionReviewVersions: d(
    'AdmissionReview versions the webhook understands, most preferred first; the API server sends the first it supports and at least one of v1, v1beta1 must be listed. Required.',
  ),
  matchConditions: d(
    'CEL conditions a request must all meet to be sent (at most 64, names unique); evaluated after rules and selectors. An error in one follows the failure policy.',
  ),
};

const webhook = (description: string, extra: MessageOverlay['fields'] = {}): MessageOverlay => ({
  description,
  required: ['name'],
  fields: { ...webhookFields, ...extra },
});

/** The admissionregistration.k8s.io/v1 overlays. */
export const ADMISSIONREGISTRATION_OVERLAYS: SchemaOverlays = {
  [`${A}.MutatingWebhook`]: webhook('An admission webhook that may change the objects of the requests it is called for, and what it is called for.', {
    reinvocationPolicy: {
      description:
        'Never (the default): called at most once per request. IfNeeded: called once more when a later mutating plugin changed the object after the first call; such a webhook must be idempotent.',
      enum: [...REINVOCATION_POLICIES],
      default: 'Never',
    },
  }),
  [`${A}.ValidatingWebhook`]: webhook('An admission webhook that accepts or rejects the requests it is called for, and what it is called for.'),
  [`${A}.WebhookClientConfig`]: {
    description: 'How to reach a webhook: exactly one of url and service, plus the CA that signs its serving certificate.',
    fields: {
      url: d(
        'Location of a webhook outside the cluster, https://host[:port][/path] with no user, query or fragment. The host should not be a Service address; use service for those.',
      ),
      service: d('A Service in the cluster fronting the webhook.'),
      caBundle: d("PEM CA bundle that verifies the webhook's serving certificate; empty means the API server's trusted roots."),
    },
  },
  [`${A}.ServiceReference`]: {
    description: 'A Service that fronts a webhook, reached over HTTPS.',
    fields: {
      namespace: d('Namespace of the Service. Required.'),
      name: d('Name of the Service. Required.'),
      path: d('URL path requests are sent to; when set it starts with / and its segments are DNS subdomains.'),
      port: { description: 'Service port to call, 1 to 65535 (default 443).', default: 443 },
    },
  },
  [`${A}.RuleWithOperations`]: {
    description: 'Operations and resources a webhook is called for; a request must match every part.',
    fields: {
      operations: d('CREATE, UPDATE, DELETE, CONNECT, or "*" alone for all (including ones added later). Required.'),
    },
  },
  [`${A}.Rule`]: {
    description: 'A set of API groups, versions and resources.',
    fields: {
      apiGroups: d('API groups the resources belong to ("" is the core group); "*" alone means all. Required.'),
      apiVersions: d('API versions the resources are served at; "*" alone means all. Required.'),
      resources: d(
        'Resources ("pods"), subresources ("pods/status"), or wildcards: "*" every resource, "*/*" every resource and subresource, "pods/*" all of one resource\'s subresources, "*/scale" one subresource of every resource. Required.',
      ),
      scope: {
        description: 'Cluster (cluster-scoped resources only), Namespaced (namespaced only) or "*" (the default, both).',
        enum: [...SCOPES],
        default: '*',
      },
    },
  },
  [`${A}.MatchCondition`]: {
    description: 'A CEL expression a request must meet for the webhook to be called.',
    required: ['name', 'expression'],
    fields: {
      name: d('Identifies the condition (a qualified name); the merge key of matchConditions.'),
      expression: d('CEL expression over object, oldObject, request and authorizer that yields a bool.'),
    },
  },
  [`${A}.ValidatingAdmissionPolicySpec`]: {
    description: 'What a policy applies to and the CEL rules it checks.',
    fields: {
      paramKind: d('The kind of the objects a binding may name as the parameters of this policy; unset, the policy takes none.'),
      matchConstraints: d('The requests the policy applies to; a binding can only narrow them. Required, with resourceRules.'),
      validations: d('CEL expressions every request must meet; validations or auditAnnotations must have at least one entry.'),
      failurePolicy: {
        description: 'What an error evaluating the policy (or a missing parameter kind) does: Fail (the default) refuses the request, Ignore lets it pass.',
        enum: [...FAILURE_POLICIES],
        default: 'Fail',
      },
      auditAnnotations: d('Audit annotations the policy adds to the requests it applies to.'),
      matchConditions: d('CEL conditions a request must all meet for the policy to be checked (at most 64, names unique).'),
      variables: d('Named CEL expressions available to the others as variables.<name>; each may use those before it.'),
    },
  },
  [`${A}.MatchResources`]: {
    description: 'Resources and requests a policy or binding applies to.',
    fields: {
      namespaceSelector: { description: 'Limits matching to objects in namespaces whose labels match; empty (the default) matches all.', default: {} },
      objectSelector: { description: 'Limits matching to objects whose labels (old or new) match; empty (the default) matches all.', default: {} },
      resourceRules: d('Operations on resources that match; any one rule is enough.'),
      excludeResourceRules: d('Operations on resources that never match, whatever else does.'),
      matchPolicy: {
        description: 'Exact: only requests through a listed group-version match. Equivalent (the default): other versions of a listed resource too.',
        enum: [...MATCH_POLICIES],
        default: 'Equivalent',
      },
    },
  },
  [`${A}.NamedRuleWithOperations`]: {
    description: 'Operations and resources, optionally narrowed to objects of the given names.',
    fields: { resourceNames: d('Names of the objects the rule applies to; empty means all.') },
  },
  [`${A}.ParamKind`]: {
    description: "The kind of a policy's parameter objects.",
    fields: { apiVersion: d('group/version of the kind (v1 for the core group).'), kind: d('Kind of the parameter objects.') },
  },
  [`${A}.ParamRef`]: {
    description: 'The parameter objects a binding gives its policy: one by name, or all those a label selector matches.',
    fields: {
      name: d('Name of the parameter object; exclusive with selector.'),
      namespace: d('Namespace of namespaced parameters; unset, the namespace of the request.'),
      selector: d('Labels of the parameter objects; the policy is checked against each. Exclusive with name.'),
      parameterNotFoundAction: {
        description: 'Allow or Deny: what happens when no parameter object is found. Required.',
        enum: [...PARAMETER_NOT_FOUND_ACTIONS],
      },
    },
  },
  [`${A}.Validation`]: {
    description: 'One CEL rule of a policy.',
    fields: {
      expression: d('CEL over object, oldObject, request, params, namespaceObject and variables that yields a bool; false refuses. Required.'),
      message: d('Message of a refusal; default "failed expression: <expression>".'),
      reason: d('Reason of a refusal: Unauthorized, Forbidden, Invalid (the default) or RequestEntityTooLarge, which also set its HTTP code.'),
      messageExpression: d('CEL that yields the message of a refusal; used instead of message when it gives a non-empty string.'),
    },
  },
  [`${A}.Variable`]: {
    description: 'A named CEL expression.',
    fields: { name: d('Name of the variable, a CEL identifier.'), expression: d('CEL expression the variable stands for.') },
  },
  [`${A}.AuditAnnotation`]: {
    description: 'An audit annotation a policy adds: <policy name>/<key>, the value a CEL expression gives (null adds none).',
    fields: { key: d('Key of the annotation, unique in the policy.'), valueExpression: d('CEL expression that gives a string or null.') },
  },
  [`${A}.ValidatingAdmissionPolicyBindingSpec`]: {
    description: 'Binds a policy to resources, with parameters and how its failures act.',
    fields: {
      policyName: d('Name of the ValidatingAdmissionPolicy bound. Required.'),
      paramRef: d('The parameter objects of the policy, when it has a paramKind.'),
      matchResources: d("Narrows the requests the policy applies to; unset, the policy's matchConstraints alone decide."),
      validationActions: d(
        'What a failed validation does: Deny refuses the request, Warn returns a warning, Audit records it in the audit event. Deny and Warn exclude each other. Required.',
      ),
    },
  },
};
