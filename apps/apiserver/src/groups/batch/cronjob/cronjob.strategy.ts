/**
 * CronJob behaviour as a stored kind (pkg/registry/batch/cronjob, no controller): the pod
 * template's container defaults (the CronJob's own defaults are schema defaults), status emptied
 * on create and written through /status only.
 */
import type { KubeObject } from '@app/apimachinery';
import { STATUS_STRATEGY, type Strategy, type SubresourceStrategy } from '@app/registry';
import { asMap } from '../../core/core.helpers.js';
import { defaultContainers } from '../../core/pod/pod.strategy.js';
import { validateCronJob, validateCronJobUpdate } from './cronjob.validation.js';
import { withPodSpecWarnings } from '../../core/pod/pod.warnings.js';

/** The pod template defaults of a CronJob's jobTemplate (its JobSpec gets no Job defaults, as in Kubernetes). */
export function defaultCronJob(cj: KubeObject): void {
  const template = asMap(asMap(asMap(cj.spec).jobTemplate).spec).template;
  if (typeof template === 'object' && template !== null && !Array.isArray(template)) defaultContainers(template as Record<string, unknown>);
}

/** The CronJob strategy. */
export const cronJobStrategy: Strategy = withPodSpecWarnings(
  {
    prepareForCreate(cj) {
      defaultCronJob(cj);
      cj.status = {};
    },
    prepareForUpdate(cj) {
      defaultCronJob(cj);
    },
    validate: validateCronJob,
    validateUpdate: validateCronJobUpdate,
  },
  ['spec', 'jobTemplate', 'spec', 'template', 'spec'],
);

/** /status: only status (and labels, annotations) change; the CronJob is checked as on any update. */
export const cronJobStatusStrategy: SubresourceStrategy = {
  prepareForUpdate: STATUS_STRATEGY.prepareForUpdate,
};
