/**
 * IngressClass behaviour (pkg/registry/networking/ingressclass): validation only; the
 * parameters' scope default (Cluster) is a schema default, and generation bumps on spec changes
 * (the generic store does it).
 */
import type { Strategy } from '@app/registry';
import { validateIngressClass, validateIngressClassUpdate } from './ingressclass.validation.js';

/** The IngressClass strategy. */
export const ingressClassStrategy: Strategy = {
  validate: validateIngressClass,
  validateUpdate: validateIngressClassUpdate,
};
