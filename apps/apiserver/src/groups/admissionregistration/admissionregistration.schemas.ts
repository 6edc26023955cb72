/**
 * Schemas of the admissionregistration.k8s.io/v1 kinds, derived from their protobuf messages with
 * the group's overlays (schema.proto.ts). The webhook configurations have no spec: the object's
 * one field besides metadata is its `webhooks` list, a map keyed by name.
 */
import { defineSchema, objectRootSchema, protoSchema, resolveSchema, type JSONSchemaProps } from '@app/apimachinery';
import { ADMISSIONREGISTRATION_OVERLAYS } from './admissionregistration.overlays.js';

const A = 'k8s.io.api.admissionregistration.v1';
const gvk = (kind: string) => ({ group: 'admissionregistration.k8s.io', version: 'v1', kind });

/** The `webhooks` field of a configuration message, with its own description. */
function webhooksField(configMessage: string, description: string): JSONSchemaProps {
  const webhooks = resolveSchema(protoSchema(`${A}.${configMessage}`, ADMISSIONREGISTRATION_OVERLAYS)).properties?.webhooks;
  if (!webhooks) throw new Error(`admissionregistration: ${configMessage} has no webhooks field`);
  return { ...webhooks, description };
}

/** admissionregistration/v1 MutatingWebhook (one entry of a MutatingWebhookConfiguration). */
export const MutatingWebhookSchema: JSONSchemaProps = protoSchema(`${A}.MutatingWebhook`, ADMISSIONREGISTRATION_OVERLAYS);
/** admissionregistration/v1 ValidatingWebhook (one entry of a ValidatingWebhookConfiguration). */
export const ValidatingWebhookSchema: JSONSchemaProps = protoSchema(`${A}.ValidatingWebhook`, ADMISSIONREGISTRATION_OVERLAYS);

/** admissionregistration/v1 MutatingWebhookConfiguration (cluster-scoped). */
export const MutatingWebhookConfigurationSchema: JSONSchemaProps = defineSchema(
  'io.k8s.api.admissionregistration.v1.MutatingWebhookConfiguration',
  objectRootSchema(gvk('MutatingWebhookConfiguration'), 'Admission webhooks that may change the objects of the requests they are called for.', {
    webhooks: webhooksField('MutatingWebhookConfiguration', 'The webhooks, by name; they are called in order.'),
  }),
);

/** admissionregistration/v1 ValidatingWebhookConfiguration (cluster-scoped). */
export const ValidatingWebhookConfigurationSchema: JSONSchemaProps = defineSchema(
  'io.k8s.api.admissionregistration.v1.ValidatingWebhookConfiguration',
  objectRootSchema(gvk('ValidatingWebhookConfiguration'), 'Admission webhooks that accept or reject the requests they are called for.', {
    webhooks: webhooksField('ValidatingWebhookConfiguration', 'The webhooks, by name; they are called in parallel.'),
  }),
);

const field = (message: string, name: string, description: string): JSONSchemaProps => {
  const f = resolveSchema(protoSchema(`${A}.${message}`, ADMISSIONREGISTRATION_OVERLAYS)).properties?.[name];
  if (!f) throw new Error(`admissionregistration: ${message} has no ${name} field`);
  return { ...f, description };
};

/** admissionregistration/v1 ValidatingAdmissionPolicy (cluster-scoped, with /status). */
export const ValidatingAdmissionPolicySchema: JSONSchemaProps = defineSchema(
  'io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicy',
  objectRootSchema(gvk('ValidatingAdmissionPolicy'), 'CEL rules the API server checks requests against, where a binding applies them.', {
    spec: field('ValidatingAdmissionPolicy', 'spec', 'What the policy applies to and checks.'),
    status: field('ValidatingAdmissionPolicy', 'status', 'What the server observed of the policy.'),
  }),
);

/** admissionregistration/v1 ValidatingAdmissionPolicyBinding (cluster-scoped). */
export const ValidatingAdmissionPolicyBindingSchema: JSONSchemaProps = defineSchema(
  'io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicyBinding',
  objectRootSchema(gvk('ValidatingAdmissionPolicyBinding'), 'Applies a ValidatingAdmissionPolicy to resources, with its parameters and actions.', {
    spec: field('ValidatingAdmissionPolicyBinding', 'spec', 'The policy, its parameters, the resources and the actions.'),
  }),
);
