/**
 * ResourceQuota behaviour (pkg/registry/core/resourcequota strategy.go): the status a client
 * sends on create is dropped and a spec write keeps the stored status; status changes only
 * through /status (the resourcequota controller and the ResourceQuota admission plugin write
 * it), which keeps the stored spec.
 */
import { STATUS_STRATEGY, type Strategy, type SubresourceStrategy } from '@app/registry';
import { asMap } from '../core.helpers.js';
import { validateResourceQuotaSpec, validateResourceQuotaStatus, validateResourceQuotaUpdate } from './resourcequota.validation.js';

/** The ResourceQuota strategy. */
export const resourceQuotaStrategy: Strategy = {
  prepareForCreate(rq) {
    rq.status = {};
  },
  validate: (rq) => [...validateResourceQuotaSpec(asMap(rq.spec)), ...validateResourceQuotaStatus(asMap(rq.status))],
  validateUpdate: (rq, old) => validateResourceQuotaUpdate(asMap(rq.spec), asMap(old.spec)),
};

/** /status: only status (and labels, annotations) change, validated as a ResourceQuotaStatus. */
export const resourceQuotaStatusStrategy: SubresourceStrategy = {
  prepareForUpdate: STATUS_STRATEGY.prepareForUpdate,
  validateUpdate: (rq) => validateResourceQuotaStatus(asMap(rq.status)),
};
