/**
 * Ingress behaviour as a stored kind (pkg/registry/networking/ingress, no controller): status
 * emptied on create (to `{loadBalancer: {}}`, as Kubernetes' Go type prints an empty one), kept
 * by writes to the main resource, written through /status only (which keeps the spec).
 * Generation bumps on spec changes (the generic store does it).
 */
import { STATUS_STRATEGY, type Strategy, type SubresourceStrategy } from '@app/registry';
import { validateIngress, validateIngressStatusUpdate, validateIngressUpdate } from './ingress.validation.js';

/** The Ingress strategy. */
export const ingressStrategy: Strategy = {
  prepareForCreate(ing) {
    ing.status = { loadBalancer: {} };
  },
  validate: validateIngress,
  validateUpdate: validateIngressUpdate,
};

/** /status: only status (and labels, annotations) change; the load balancer points are checked. */
export const ingressStatusStrategy: SubresourceStrategy = {
  prepareForUpdate: STATUS_STRATEGY.prepareForUpdate,
  validateUpdate: validateIngressStatusUpdate,
};
