/**
 * core/v1 Event validation (pkg/apis/core/validation ValidateEventCreate/Update, the checks of
 * legacyValidateEvent): an Event without eventTime must name its own namespace in
 * involvedObject.namespace; one with eventTime (a "new" Event) must also say who reported it
 * and what happened.
 */
import { isQualifiedName, type FieldError, type KubeObject } from '@app/apimachinery';
import type { Strategy } from '@app/registry';
import { asMap } from '../core.helpers.js';

/** Limits of the fields a new Event must carry (ReportingInstanceLengthLimit, ActionLengthLimit, ...). */
const LIMIT_128 = 128;
const NOTE_LIMIT = 1024;

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** The legacy Event checks; `namespace` is the Event's own. */
export function validateEvent(o: KubeObject): FieldError[] {
  const errs: FieldError[] = [];
  const ns = str(o.metadata.namespace);
  const involvedNs = str(asMap(o.involvedObject).namespace);
  const mismatch = (): FieldError => ({
    type: 'FieldValueInvalid',
    field: 'involvedObject.namespace',
    value: involvedNs,
    detail: 'does not match event.namespace',
  });
  if (!o.eventTime) {
    if (involvedNs === '') {
      // Old clients may leave it empty for events of the default namespace.
      if (ns !== '' && ns !== 'default') errs.push(mismatch());
    } else if (ns !== involvedNs) errs.push(mismatch());
    return errs;
  }
  if (involvedNs === '' && ns !== 'default' && ns !== 'kube-system') errs.push(mismatch());
  const required = (field: string, v: unknown, limit: number): void => {
    const s = str(v);
    if (s === '') errs.push({ type: 'FieldValueRequired', field, detail: '' });
    else if (s.length > limit) errs.push({ type: 'FieldValueInvalid', field, value: '', detail: `can have at most ${limit} characters` });
  };
  // Kubernetes names the fields by their internal names: reportingController is core/v1's
  // reportingComponent (and events.k8s.io's reportingController).
  const controller = str(o.reportingComponent);
  if (controller === '') errs.push({ type: 'FieldValueRequired', field: 'reportingController', detail: '' });
  for (const msg of isQualifiedName(controller)) errs.push({ type: 'FieldValueInvalid', field: 'reportingController', value: controller, detail: msg });
  required('reportingInstance', o.reportingInstance, LIMIT_128);
  required('action', o.action, LIMIT_128);
  required('reason', o.reason, LIMIT_128);
  if (str(o.message).length > NOTE_LIMIT)
    errs.push({ type: 'FieldValueInvalid', field: 'message', value: '', detail: `can have at most ${NOTE_LIMIT} characters` });
  return errs;
}

/** The Event strategy. */
export const eventStrategy: Strategy = {
  validate: validateEvent,
  validateUpdate: validateEvent,
};
