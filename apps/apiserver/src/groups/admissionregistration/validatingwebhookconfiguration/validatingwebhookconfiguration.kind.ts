/**
 * admissionregistration.k8s.io/v1 ValidatingWebhookConfiguration (cluster-scoped), with
 * kubectl's columns NAME WEBHOOKS AGE.
 */
import type { KindDeclaration } from '@app/registry';
import { ValidatingWebhookConfigurationSchema } from '../admissionregistration.schemas.js';
import { WEBHOOK_CONFIGURATION_COMMON, webhookConfigurationStrategy } from '../admissionregistration.strategy.js';

/** The ValidatingWebhookConfiguration declaration. */
export const validatingWebhookConfigurationKind: KindDeclaration = {
  ...WEBHOOK_CONFIGURATION_COMMON,
  kind: 'ValidatingWebhookConfiguration',
  plural: 'validatingwebhookconfigurations',
  singular: 'validatingwebhookconfiguration',
  schema: ValidatingWebhookConfigurationSchema,
  protobufMessage: 'k8s.io.api.admissionregistration.v1.ValidatingWebhookConfiguration',
  strategy: webhookConfigurationStrategy('validating'),
};
