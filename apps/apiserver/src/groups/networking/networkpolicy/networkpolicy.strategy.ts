/**
 * NetworkPolicy behaviour (pkg/registry/networking/networkpolicy): SetDefaults_NetworkPolicy
 * (policyTypes), an empty podSelector written out as `{}` as Kubernetes' Go type always does,
 * and validation. The ports' protocol default (TCP) is a schema default; generation bumps on
 * spec changes (the generic store does it). The kind has no status.
 */
import type { KubeObject } from '@app/apimachinery';
import type { Strategy } from '@app/registry';
import { validateNetworkPolicy, validateNetworkPolicyUpdate } from './networkpolicy.validation.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * SetDefaults_NetworkPolicy: without policyTypes, a policy is about Ingress, and about Egress
 * too when it has egress rules. podSelector, a non-pointer field without omitempty in Go, is
 * `{}` when absent.
 */
export function defaultNetworkPolicy(np: KubeObject): void {
  if (!isObj(np.spec)) np.spec = {};
  const spec = np.spec as Obj;
  if (!isObj(spec.podSelector)) spec.podSelector = {};
  if (!Array.isArray(spec.policyTypes) || spec.policyTypes.length === 0) {
    spec.policyTypes = Array.isArray(spec.egress) && spec.egress.length > 0 ? ['Ingress', 'Egress'] : ['Ingress'];
  }
}

/** The NetworkPolicy strategy. */
export const networkPolicyStrategy: Strategy = {
  prepareForCreate: defaultNetworkPolicy,
  prepareForUpdate: defaultNetworkPolicy,
  validate: validateNetworkPolicy,
  validateUpdate: validateNetworkPolicyUpdate,
};
