/**
 * The admissionregistration.k8s.io API group (`/apis/admissionregistration.k8s.io/v1`): the
 * webhook configurations and the ValidatingAdmissionPolicies with their bindings, stored and
 * validated. Calling the webhooks and checking the policies is the admission chain's part
 * (admission/webhook, admission/policy). Schemas, rules and the shared strategy sit beside this module; a
 * kind is one folder.
 */
import { Module } from '@nestjs/common';
import type { KindDeclaration } from '@app/registry';
import { apiKinds } from '../api-group.js';
import { mutatingWebhookConfigurationKind } from './mutatingwebhookconfiguration/mutatingwebhookconfiguration.kind.js';
import { validatingWebhookConfigurationKind } from './validatingwebhookconfiguration/validatingwebhookconfiguration.kind.js';
import { validatingAdmissionPolicyKind } from './validatingadmissionpolicy/validatingadmissionpolicy.kind.js';
import { validatingAdmissionPolicyBindingKind } from './validatingadmissionpolicybinding/validatingadmissionpolicybinding.kind.js';

/** The admissionregistration.k8s.io/v1 kinds. */
export const ADMISSIONREGISTRATION_KINDS: readonly KindDeclaration[] = [
  mutatingWebhookConfigurationKind,
  validatingWebhookConfigurationKind,
  validatingAdmissionPolicyKind,
  validatingAdmissionPolicyBindingKind,
];

/** Provides the admissionregistration.k8s.io/v1 kinds. */
@Module({ providers: [apiKinds('admissionregistration.k8s.io', ADMISSIONREGISTRATION_KINDS)] })
export class AdmissionregistrationGroupModule {}
