/**
 * admissionregistration.k8s.io/v1 MutatingWebhookConfiguration (cluster-scoped), with kubectl's
 * columns NAME WEBHOOKS AGE.
 */
import type { KindDeclaration } from '@app/registry';
import { MutatingWebhookConfigurationSchema } from '../admissionregistration.schemas.js';
import { WEBHOOK_CONFIGURATION_COMMON, webhookConfigurationStrategy } from '../admissionregistration.strategy.js';

/** The MutatingWebhookConfiguration declaration. */
export const mutatingWebhookConfigurationKind: KindDeclaration = {
  ...WEBHOOK_CONFIGURATION_COMMON,
  kind: 'MutatingWebhookConfiguration',
  plural: 'mutatingwebhookconfigurations',
  singular: 'mutatingwebhookconfiguration',
  schema: MutatingWebhookConfigurationSchema,
  protobufMessage: 'k8s.io.api.admissionregistration.v1.MutatingWebhookConfiguration',
  strategy: webhookConfigurationStrategy('mutating'),
};
