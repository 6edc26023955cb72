/**
 * APIService rules (k8s.io/kube-aggregator pkg/apis/apiregistration/validation): the name is
 * `<version>.<group>`, group a DNS subdomain (empty only for the legacy v1), version a DNS-1035
 * label, priorities in range, a local APIService (service null) without TLS settings, a
 * remote one with its service's namespace, name and a valid port. Status conditions carry
 * True, False or Unknown.
 */
import { isDNS1035Label, isDNS1123Subdomain, type FieldError, type KubeObject } from '@app/apimachinery';
import type { Strategy, SubresourceStrategy } from '@app/registry';
import { STATUS_STRATEGY } from '@app/registry';
import { asMap } from '../../core/core.helpers.js';

/** ValidateAPIService, the name rule included (path segment, then `<version>.<group>`). */
export function validateAPIService(svc: KubeObject): FieldError[] {
  const spec = asMap(svc.spec);
  const group = typeof spec.group === 'string' ? spec.group : '';
  const version = typeof spec.version === 'string' ? spec.version : '';
  const errs: FieldError[] = [];
  const name = svc.metadata.name ?? '';
  const required = `${version}.${group}`;
  if (name && name !== required)
    errs.push({
      type: 'FieldValueInvalid',
      field: 'metadata.name',
      value: name,
      detail: `must be \`spec.version+"."+spec.group\`: ${JSON.stringify(required)}`,
    });
  if (!group && version !== 'v1')
    errs.push({ type: 'FieldValueRequired', field: 'spec.group', detail: 'only v1 may have an empty group and it better be legacy kube' });
  if (group) for (const m of isDNS1123Subdomain(group)) errs.push({ type: 'FieldValueInvalid', field: 'spec.group', value: group, detail: m });
  for (const m of isDNS1035Label(version)) errs.push({ type: 'FieldValueInvalid', field: 'spec.version', value: version, detail: m });
  const gp = typeof spec.groupPriorityMinimum === 'number' ? spec.groupPriorityMinimum : 0;
  if (gp <= 0 || gp > 20000)
    errs.push({ type: 'FieldValueInvalid', field: 'spec.groupPriorityMinimum', value: gp, detail: 'must be positive and less than 20000' });
  const vp = typeof spec.versionPriority === 'number' ? spec.versionPriority : 0;
  if (vp <= 0 || vp > 1000) errs.push({ type: 'FieldValueInvalid', field: 'spec.versionPriority', value: vp, detail: 'must be positive and less than 1000' });
  const ca = typeof spec.caBundle === 'string' ? Buffer.from(spec.caBundle, 'base64') : Buffer.alloc(0);
  const skip = spec.insecureSkipTLSVerify === true;
  if (spec.service === undefined || spec.service === null) {
    if (ca.length)
      errs.push({ type: 'FieldValueInvalid', field: 'spec.caBundle', value: `${ca.length} bytes`, detail: 'local APIServices may not have a caBundle' });
    if (skip)
      errs.push({
        type: 'FieldValueInvalid',
        field: 'spec.insecureSkipTLSVerify',
        value: true,
        detail: 'local APIServices may not have insecureSkipTLSVerify',
      });
    return errs;
  }
  const service = asMap(spec.service);
  if (!service.namespace) errs.push({ type: 'FieldValueRequired', field: 'spec.service.namespace', detail: '' });
  if (!service.name) errs.push({ type: 'FieldValueRequired', field: 'spec.service.name', detail: '' });
  const port = typeof service.port === 'number' ? service.port : 0;
  if (!(port >= 1 && port <= 65535)) {
    errs.push({ type: 'FieldValueInvalid', field: 'spec.service.port', value: port, detail: 'port is not valid: must be between 1 and 65535, inclusive' });
  }
  if (skip && ca.length)
    errs.push({ type: 'FieldValueInvalid', field: 'spec.insecureSkipTLSVerify', value: true, detail: 'may not be true if caBundle is present' });
  return errs;
}

/** ValidateAPIServiceStatus: each condition's status is True, False or Unknown. */
export function validateAPIServiceStatus(svc: KubeObject): FieldError[] {
  const conds = asMap(svc.status).conditions;
  if (!Array.isArray(conds)) return [];
  const errs: FieldError[] = [];
  conds.forEach((c, i) => {
    const status = asMap(c).status;
    if (status !== 'True' && status !== 'False' && status !== 'Unknown') {
      errs.push({
        type: 'FieldValueNotSupported',
        field: `status.conditions[${i}].status`,
        value: status,
        detail: 'supported values: "True", "False", "Unknown"',
      });
    }
  });
  return errs;
}

/** The APIService strategy (status starts empty, as kube-aggregator's PrepareForCreate). */
export const apiServiceStrategy: Strategy = {
  prepareForCreate(svc) {
    svc.status = {};
  },
  validate: validateAPIService,
  validateUpdate: (svc) => validateAPIService(svc),
};

/** /status of an APIService: only status changes, and its conditions are checked. */
export const apiServiceStatusStrategy: SubresourceStrategy = {
  prepareForUpdate: (obj, old, ctx) => STATUS_STRATEGY.prepareForUpdate(obj, old, ctx),
  validateUpdate: (svc) => validateAPIServiceStatus(svc),
};
