/**
 * The policy API group: `/apis/policy/v1` with PodDisruptionBudget (and the pods' Eviction body),
 * `/apis/policy/v1beta1` with the deprecated PodSecurityPolicy.
 */
import { Module } from '@nestjs/common';
import type { KindDeclaration } from '@app/registry';
import { apiKinds } from '../api-group.js';
import { podDisruptionBudgetKind } from './poddisruptionbudget/pdb.kind.js';
import { podSecurityPolicyKind } from './podsecuritypolicy/podsecuritypolicy.kind.js';

/** The policy kinds. */
export const POLICY_KINDS: readonly KindDeclaration[] = [podDisruptionBudgetKind, podSecurityPolicyKind];

/** Provides the policy kinds. */
@Module({ providers: [apiKinds('policy', POLICY_KINDS)] })
export class PolicyGroupModule {}
