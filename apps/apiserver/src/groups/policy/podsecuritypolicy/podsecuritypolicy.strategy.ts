/**
 * PodSecurityPolicy rules (pkg/apis/policy/validation ValidatePodSecurityPolicySpec, with the
 * resources document's additions: ranges required for MustRunAs, SELinux options required for
 * MustRunAs, no '*' in a host path prefix, whose trailing slash is trimmed).
 */
import { isDNS1123Subdomain, type FieldError, type KubeObject } from '@app/apimachinery';
import type { Strategy } from '@app/registry';
import { asMap } from '../../core/core.helpers.js';

/** Volume types a policy may name (policy.FSType), '*' included. */
export const PSP_VOLUME_TYPES: readonly string[] = [
  '*',
  'awsElasticBlockStore',
  'azureDisk',
  'azureFile',
  'cephFS',
  'cinder',
  'configMap',
  'csi',
  'downwardAPI',
  'emptyDir',
  'ephemeral',
  'fc',
  'flexVolume',
  'flocker',
  'gcePersistentDisk',
  'gitRepo',
  'glusterfs',
  'hostPath',
  'iscsi',
  'nfs',
  'persistentVolumeClaim',
  'photonPersistentDisk',
  'portworxVolume',
  'projected',
  'quobyte',
  'rbd',
  'scaleIO',
  'secret',
  'storageos',
  'vsphereVolume',
];

const SYSCTL_PATTERN = '^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?\\*?$';
const sysctlRe = new RegExp(SYSCTL_PATTERN);
const strs = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
const supported = (vals: readonly string[]) => `supported values: ${vals.map((v) => JSON.stringify(v)).join(', ')}`;

function validateRule(opts: Record<string, unknown>, path: string, rules: readonly string[], rangesRequiredFor: string | undefined): FieldError[] {
  const errs: FieldError[] = [];
  const rule = typeof opts.rule === 'string' ? opts.rule : '';
  if (!rules.includes(rule)) errs.push({ type: 'FieldValueNotSupported', field: `${path}.rule`, value: rule, detail: supported(rules) });
  const ranges = Array.isArray(opts.ranges) ? opts.ranges.map(asMap) : [];
  if (rule === rangesRequiredFor && ranges.length === 0)
    errs.push({ type: 'FieldValueRequired', field: `${path}.ranges`, detail: `ranges are required for ${rule}` });
  ranges.forEach((r, i) => {
    const min = typeof r.min === 'number' ? r.min : 0;
    const max = typeof r.max === 'number' ? r.max : 0;
    const at = `${path}.ranges[${i}]`;
    if (min < 0) errs.push({ type: 'FieldValueInvalid', field: `${at}.min`, value: min, detail: 'min cannot be negative' });
    if (max < 0) errs.push({ type: 'FieldValueInvalid', field: `${at}.max`, value: max, detail: 'max cannot be negative' });
    if (min > max) errs.push({ type: 'FieldValueInvalid', field: `${at}.min`, value: min, detail: 'min cannot be greater than max' });
  });
  return errs;
}

function validateSysctls(list: string[], path: string): FieldError[] {
  const errs: FieldError[] = [];
  list.forEach((s, i) => {
    if (s === '*') return;
    if (s.length > 253 || !sysctlRe.test(s)) {
      errs.push({ type: 'FieldValueInvalid', field: `${path}[${i}]`, value: s, detail: `must have at most 253 characters and match regex ${SYSCTL_PATTERN}` });
    }
  });
  return errs;
}

/** ValidatePodSecurityPolicySpec at `spec`. */
export function validatePodSecurityPolicy(psp: KubeObject): FieldError[] {
  const spec = asMap(psp.spec);
  const errs: FieldError[] = [];
  errs.push(...validateRule(asMap(spec.runAsUser), 'spec.runAsUser', ['MustRunAs', 'MustRunAsNonRoot', 'RunAsAny'], 'MustRunAs'));
  if (spec.runAsGroup !== undefined && spec.runAsGroup !== null) {
    errs.push(...validateRule(asMap(spec.runAsGroup), 'spec.runAsGroup', ['MayRunAs', 'MustRunAs', 'RunAsAny'], 'MustRunAs'));
  }
  errs.push(...validateRule(asMap(spec.fsGroup), 'spec.fsGroup', ['MayRunAs', 'MustRunAs', 'RunAsAny'], 'MustRunAs'));
  errs.push(...validateRule(asMap(spec.supplementalGroups), 'spec.supplementalGroups', ['MayRunAs', 'MustRunAs', 'RunAsAny'], 'MustRunAs'));
  const se = asMap(spec.seLinux);
  const seRule = typeof se.rule === 'string' ? se.rule : '';
  if (!['MustRunAs', 'RunAsAny'].includes(seRule))
    errs.push({ type: 'FieldValueNotSupported', field: 'spec.seLinux.rule', value: seRule, detail: supported(['MustRunAs', 'RunAsAny']) });
  if (seRule === 'MustRunAs' && (se.seLinuxOptions === undefined || se.seLinuxOptions === null)) {
    errs.push({ type: 'FieldValueRequired', field: 'spec.seLinux.seLinuxOptions', detail: 'seLinuxOptions are required for MustRunAs' });
  }
  const volumes = strs(spec.volumes);
  for (const v of volumes)
    if (!PSP_VOLUME_TYPES.includes(v)) errs.push({ type: 'FieldValueNotSupported', field: 'spec.volumes', value: v, detail: supported(PSP_VOLUME_TYPES) });
  const flex = Array.isArray(spec.allowedFlexVolumes) ? spec.allowedFlexVolumes.map(asMap) : [];
  flex.forEach((f, i) => {
    if (!f.driver) errs.push({ type: 'FieldValueRequired', field: `spec.allowedFlexVolumes[${i}].driver`, detail: 'must specify a driver' });
  });
  if (flex.length && !volumes.includes('*') && !volumes.includes('flexVolume')) {
    errs.push({ type: 'FieldValueInvalid', field: 'spec.allowedFlexVolumes', value: flex, detail: 'volume plugin flexVolume is not allowed to be used' });
  }
  (Array.isArray(spec.allowedCSIDrivers) ? spec.allowedCSIDrivers.map(asMap) : []).forEach((d, i) => {
    if (!d.name) errs.push({ type: 'FieldValueRequired', field: `spec.allowedCSIDrivers[${i}].name`, detail: '' });
  });
  (Array.isArray(spec.allowedHostPaths) ? spec.allowedHostPaths.map(asMap) : []).forEach((h, i) => {
    const p = typeof h.pathPrefix === 'string' ? h.pathPrefix : '';
    const at = `spec.allowedHostPaths[${i}].pathPrefix`;
    if (!p) errs.push({ type: 'FieldValueRequired', field: at, detail: '' });
    else if (p.split('/').includes('..')) errs.push({ type: 'FieldValueInvalid', field: at, value: p, detail: "must not contain '..'" });
    else if (p.includes('*')) errs.push({ type: 'FieldValueInvalid', field: at, value: p, detail: "must not contain '*'" });
  });
  const drops = strs(spec.requiredDropCapabilities);
  for (const f of ['defaultAddCapabilities', 'allowedCapabilities']) {
    for (const cap of strs(spec[f])) {
      if (drops.includes(cap))
        errs.push({ type: 'FieldValueInvalid', field: `spec.${f}`, value: cap, detail: `capability is listed in spec.${f} and requiredDropCapabilities` });
    }
  }
  if (spec.defaultAllowPrivilegeEscalation === true && spec.allowPrivilegeEscalation === false) {
    errs.push({
      type: 'FieldValueInvalid',
      field: 'spec.defaultAllowPrivilegeEscalation',
      value: true,
      detail: 'Cannot set DefaultAllowPrivilegeEscalation to true without also setting AllowPrivilegeEscalation to true',
    });
  }
  (Array.isArray(spec.hostPorts) ? spec.hostPorts.map(asMap) : []).forEach((r, i) => {
    const min = typeof r.min === 'number' ? r.min : 0;
    const max = typeof r.max === 'number' ? r.max : 0;
    const at = `spec.hostPorts[${i}]`;
    if (min < 0 || min > 65535)
      errs.push({ type: 'FieldValueInvalid', field: `${at}.min`, value: min, detail: 'min should be between 0 and 65535, inclusive' });
    if (max < 0 || max > 65535)
      errs.push({ type: 'FieldValueInvalid', field: `${at}.max`, value: max, detail: 'max should be between 0 and 65535, inclusive' });
    if (min > max) errs.push({ type: 'FieldValueInvalid', field: `${at}.min`, value: min, detail: 'min cannot be greater than max' });
  });
  const allowedSys = strs(spec.allowedUnsafeSysctls);
  const forbiddenSys = strs(spec.forbiddenSysctls);
  errs.push(...validateSysctls(forbiddenSys, 'spec.forbiddenSysctls'), ...validateSysctls(allowedSys, 'spec.allowedUnsafeSysctls'));
  allowedSys.forEach((s, i) => {
    if (forbiddenSys.includes(s))
      errs.push({ type: 'FieldValueInvalid', field: `spec.allowedUnsafeSysctls[${i}]`, value: s, detail: `sysctl overlaps with ${s}` });
  });
  strs(spec.allowedProcMountTypes).forEach((t, i) => {
    if (t !== 'Default' && t !== 'Unmasked')
      errs.push({ type: 'FieldValueNotSupported', field: `spec.allowedProcMountTypes[${i}]`, value: t, detail: supported(['Default', 'Unmasked']) });
  });
  if (spec.runtimeClass !== undefined && spec.runtimeClass !== null) {
    const rc = asMap(spec.runtimeClass);
    const names = strs(rc.allowedRuntimeClassNames);
    names.forEach((n, i) => {
      const at = `spec.runtimeClass.allowedRuntimeClassNames[${i}]`;
      if (n === '*') {
        if (names.length > 1)
          errs.push({ type: 'FieldValueInvalid', field: at, value: n, detail: "if '*' is present, must not specify other RuntimeClass names" });
      } else for (const m of isDNS1123Subdomain(n)) errs.push({ type: 'FieldValueInvalid', field: at, value: n, detail: m });
    });
    const def = rc.defaultRuntimeClassName;
    if (typeof def === 'string' && def) {
      for (const m of isDNS1123Subdomain(def))
        errs.push({ type: 'FieldValueInvalid', field: 'spec.runtimeClass.defaultRuntimeClassName', value: def, detail: m });
      if (!names.includes('*') && !names.includes(def)) {
        errs.push({ type: 'FieldValueInvalid', field: 'spec.runtimeClass.defaultRuntimeClassName', value: def, detail: 'default must be allowed' });
      }
    }
  }
  return errs;
}

/** Trims the trailing slash of each allowed host path prefix (a lone '/' stays). */
function trimHostPaths(psp: KubeObject): void {
  const paths = asMap(psp.spec).allowedHostPaths;
  if (!Array.isArray(paths)) return;
  for (const h of paths.map(asMap)) if (typeof h.pathPrefix === 'string' && h.pathPrefix.length > 1) h.pathPrefix = h.pathPrefix.replace(/\/+$/, '') || '/';
}

/** The PodSecurityPolicy strategy. */
export const podSecurityPolicyStrategy: Strategy = {
  prepareForCreate: trimHostPaths,
  prepareForUpdate: (psp) => trimHostPaths(psp),
  validate: validatePodSecurityPolicy,
  validateUpdate: (psp) => validatePodSecurityPolicy(psp),
};
