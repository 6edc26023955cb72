/**
 * ReplicationController validation (pkg/apis/core/validation ValidateReplicationControllerSpec,
 * ValidatePodTemplateSpecForRC and ValidateReplicationControllerStatus), with Kubernetes'
 * messages and field paths. Unlike apps/v1 workloads, the selector is a plain label map and may
 * change on update. Pure.
 */
import { goMap, validateAnnotations, validateLabels, type FieldError, type KubeObject } from '@app/apimachinery';
import { asMap } from '../core.helpers.js';
import { validatePodSpec } from '../pod/pod.validation.js';
import { nonNegative, validateReplicaCounts } from '../../apps/workload.validation.js';

type Obj = Record<string, unknown>;

/** Whether every pair of `selector` is among `labels` (labels.SelectorFromSet(selector).Matches). */
export function mapSelectorMatches(selector: Obj, labels: Obj): boolean {
  return Object.entries(selector).every(([k, v]) => labels[k] === v);
}

/** ValidatePodTemplateSpec at `path`: the template's labels, annotations and pod spec. */
export function validatePodTemplateSpec(template: unknown, path: string): FieldError[] {
  const t = asMap(template);
  const meta = asMap(t.metadata);
  return [
    ...validateLabels(meta.labels, `${path}.metadata.labels`),
    ...validateAnnotations(meta.annotations, `${path}.metadata.annotations`),
    ...validatePodSpec(asMap(t.spec), `${path}.spec`),
  ];
}

/** ValidatePodTemplateSpecForRC at `spec.template`. */
function validateTemplateForRC(template: unknown, selector: Obj): FieldError[] {
  const path = 'spec.template';
  if (template === undefined || template === null) return [{ type: 'FieldValueRequired', field: path, detail: '' }];
  const t = asMap(template);
  const labels = asMap(asMap(t.metadata).labels);
  const errs: FieldError[] = [];
  if (Object.keys(selector).length > 0 && !mapSelectorMatches(selector, labels)) {
    errs.push({ type: 'FieldValueInvalid', field: `${path}.metadata.labels`, value: goMap(labels), detail: '`selector` does not match template `labels`' });
  }
  errs.push(...validatePodTemplateSpec(t, path));
  const spec = asMap(t.spec);
  if (spec.restartPolicy !== 'Always') {
    errs.push({ type: 'FieldValueNotSupported', field: `${path}.spec.restartPolicy`, value: spec.restartPolicy ?? '', detail: 'supported values: "Always"' });
  }
  if (spec.activeDeadlineSeconds !== undefined && spec.activeDeadlineSeconds !== null) {
    errs.push({ type: 'FieldValueInvalid', field: `${path}.spec.activeDeadlineSeconds`, value: spec.activeDeadlineSeconds, detail: 'must not be specified' });
  }
  return errs;
}

/** ValidateReplicationControllerSpec at `spec` (defaults applied). */
export function validateReplicationControllerSpec(spec: Obj): FieldError[] {
  const selector = asMap(spec.selector);
  const errs = nonNegative(spec.minReadySeconds, 'spec.minReadySeconds');
  if (Object.keys(selector).length === 0) errs.push({ type: 'FieldValueRequired', field: 'spec.selector', detail: '' });
  errs.push(...nonNegative(spec.replicas, 'spec.replicas'), ...validateTemplateForRC(spec.template, selector));
  return errs;
}

/** ValidateReplicationController without ObjectMeta (the store validates metadata); updates are validated the same way. */
export function validateReplicationController(rc: KubeObject): FieldError[] {
  return validateReplicationControllerSpec(asMap(rc.spec));
}

/** ValidateReplicationControllerStatus at `status`. */
export function validateReplicationControllerStatus(status: Obj): FieldError[] {
  return validateReplicaCounts(status, ['replicas', 'fullyLabeledReplicas', 'readyReplicas', 'availableReplicas', 'observedGeneration']);
}

/** ValidateReplicationControllerStatusUpdate. */
export function validateReplicationControllerStatusUpdate(rc: KubeObject): FieldError[] {
  return validateReplicationControllerStatus(asMap(rc.status));
}
