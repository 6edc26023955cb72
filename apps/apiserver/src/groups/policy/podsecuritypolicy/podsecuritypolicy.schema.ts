/**
 * Schema of policy/v1beta1 PodSecurityPolicy (k8s.io/api policy/v1beta1 types.go, as last
 * served by Kubernetes 1.24), registered under its definition names.
 */
import { defineSchema, fieldOf, objectRootSchema, protoSchema, type JSONSchemaProps } from '@app/apimachinery';
import { CORE_OVERLAYS } from '../../core/core.overlays.js';
import { bool, int32, str } from '../../core/core.schema.js';

const P = 'io.k8s.api.policy.v1beta1';
const strings = (description: string): JSONSchemaProps => ({ type: 'array', description, items: { type: 'string' }, 'x-kubernetes-list-type': 'atomic' });
const list = (description: string, items: JSONSchemaProps): JSONSchemaProps => ({ type: 'array', description, items, 'x-kubernetes-list-type': 'atomic' });

/** policy/v1beta1 IDRange. */
export const IDRangeSchema = defineSchema(`${P}.IDRange`, {
  type: 'object',
  description: 'A range of user or group IDs.',
  required: ['min', 'max'],
  properties: {
    max: { type: 'integer', format: 'int64', description: 'End of the range, inclusive.' },
    min: { type: 'integer', format: 'int64', description: 'Start of the range, inclusive.' },
  },
});

const ruleOptions = (name: string, description: string, ruleText: string, required: boolean): JSONSchemaProps =>
  defineSchema(`${P}.${name}`, {
    type: 'object',
    description,
    ...(required ? { required: ['rule'] } : {}),
    properties: {
      ranges: list('Allowed ID ranges; required for MustRunAs.', IDRangeSchema),
      rule: str(ruleText),
    },
  });

/** policy/v1beta1 RunAsUserStrategyOptions. */
export const RunAsUserStrategyOptionsSchema = ruleOptions(
  'RunAsUserStrategyOptions',
  'The user IDs containers may run as.',
  'MustRunAs, MustRunAsNonRoot or RunAsAny.',
  true,
);
/** policy/v1beta1 RunAsGroupStrategyOptions. */
export const RunAsGroupStrategyOptionsSchema = ruleOptions(
  'RunAsGroupStrategyOptions',
  'The primary group IDs containers may run as.',
  'MustRunAs, MayRunAs or RunAsAny.',
  true,
);
/** policy/v1beta1 FSGroupStrategyOptions. */
export const FSGroupStrategyOptionsSchema = ruleOptions('FSGroupStrategyOptions', 'The fsGroup a pod may use.', 'MustRunAs, MayRunAs or RunAsAny.', false);
/** policy/v1beta1 SupplementalGroupsStrategyOptions. */
export const SupplementalGroupsStrategyOptionsSchema = ruleOptions(
  'SupplementalGroupsStrategyOptions',
  'The supplemental groups a pod may use.',
  'MustRunAs, MayRunAs or RunAsAny.',
  false,
);

/** core/v1 SELinuxOptions, as the policy embeds it: the one Pods use, derived from its message. */
export const SELinuxOptionsSchema: JSONSchemaProps = protoSchema('k8s.io.api.core.v1.SELinuxOptions', CORE_OVERLAYS);

/** policy/v1beta1 SELinuxStrategyOptions. */
export const SELinuxStrategyOptionsSchema = defineSchema(`${P}.SELinuxStrategyOptions`, {
  type: 'object',
  description: 'The SELinux labels containers may use.',
  required: ['rule'],
  properties: {
    rule: str('MustRunAs or RunAsAny.'),
    seLinuxOptions: fieldOf(SELinuxOptionsSchema, { description: 'The labels required by MustRunAs.' }),
  },
});

/** policy/v1beta1 RuntimeClassStrategyOptions. */
export const RuntimeClassStrategyOptionsSchema = defineSchema(`${P}.RuntimeClassStrategyOptions`, {
  type: 'object',
  description: 'The RuntimeClasses pods may use.',
  required: ['allowedRuntimeClassNames'],
  properties: {
    allowedRuntimeClassNames: strings("Allowed RuntimeClass names; '*' (alone) allows all; empty: no runtime class name may be set."),
    defaultRuntimeClassName: str('RuntimeClass set on pods naming none; must be allowed.'),
  },
});

/** policy/v1beta1 AllowedHostPath. */
export const AllowedHostPathSchema = defineSchema(`${P}.AllowedHostPath`, {
  type: 'object',
  description: 'A host path prefix pods may mount.',
  properties: { pathPrefix: str("Path prefix (no '*'; a trailing slash is trimmed)."), readOnly: bool('Mounts under this prefix must be read-only.') },
});

/** policy/v1beta1 AllowedFlexVolume. */
export const AllowedFlexVolumeSchema = defineSchema(`${P}.AllowedFlexVolume`, {
  type: 'object',
  description: 'A Flexvolume driver pods may use.',
  required: ['driver'],
  properties: { driver: str('The driver name.') },
});

/** policy/v1beta1 AllowedCSIDriver. */
export const AllowedCSIDriverSchema = defineSchema(`${P}.AllowedCSIDriver`, {
  type: 'object',
  description: 'A CSI driver pods may use inline.',
  required: ['name'],
  properties: { name: str('The driver name.') },
});

/** policy/v1beta1 HostPortRange. */
export const HostPortRangeSchema = defineSchema(`${P}.HostPortRange`, {
  type: 'object',
  description: 'A range of host ports.',
  required: ['min', 'max'],
  properties: { max: int32('End of the range, inclusive.'), min: int32('Start of the range, inclusive.') },
});

/** policy/v1beta1 PodSecurityPolicySpec. */
export const PodSecurityPolicySpecSchema = defineSchema(`${P}.PodSecurityPolicySpec`, {
  type: 'object',
  description: 'The policy enforced on pods.',
  required: ['seLinux', 'runAsUser', 'supplementalGroups', 'fsGroup'],
  properties: {
    allowPrivilegeEscalation: { ...bool('Whether a process may gain more privileges than its parent; default true.'), default: true },
    allowedCSIDrivers: list('CSI drivers allowed inline; empty: any.', AllowedCSIDriverSchema),
    allowedCapabilities: strings('Capabilities pods may add; may not be required drops.'),
    allowedFlexVolumes: list('Flexvolume drivers allowed; empty or nil: all.', AllowedFlexVolumeSchema),
    allowedHostPaths: list('Host path prefixes allowed; empty: all.', AllowedHostPathSchema),
    allowedProcMountTypes: strings('Proc mount types allowed (Default, Unmasked); empty: Default only.'),
    allowedUnsafeSysctls: strings("Unsafe sysctls allowed: names or prefixes ending in '*'; '*' alone: all."),
    defaultAddCapabilities: strings('Capabilities added to every container; may not be required drops.'),
    defaultAllowPrivilegeEscalation: bool('Default of allowPrivilegeEscalation for containers.'),
    forbiddenSysctls: strings("Sysctls forbidden: names or prefixes ending in '*'; '*' alone: all."),
    fsGroup: fieldOf(FSGroupStrategyOptionsSchema, { description: 'Strategy of the fsGroup.' }),
    hostIPC: bool('Whether pods may use the host IPC namespace.'),
    hostNetwork: bool('Whether pods may use the host network.'),
    hostPID: bool('Whether pods may use the host PID namespace.'),
    hostPorts: list('Host ports allowed.', HostPortRangeSchema),
    privileged: bool('Whether privileged pods are allowed.'),
    readOnlyRootFilesystem: bool('Forces a read-only root filesystem; a pod asking otherwise is rejected.'),
    requiredDropCapabilities: strings('Capabilities dropped from every container.'),
    runAsGroup: fieldOf(RunAsGroupStrategyOptionsSchema, { description: 'Strategy of the primary group; absent: any.' }),
    runAsUser: fieldOf(RunAsUserStrategyOptionsSchema, { description: 'Strategy of the user ID.' }),
    runtimeClass: fieldOf(RuntimeClassStrategyOptionsSchema, { description: 'Strategy of the RuntimeClass.' }),
    seLinux: fieldOf(SELinuxStrategyOptionsSchema, { description: 'Strategy of the SELinux context.' }),
    supplementalGroups: fieldOf(SupplementalGroupsStrategyOptionsSchema, { description: 'Strategy of the supplemental groups.' }),
    volumes: strings("Volume types allowed; empty: none; '*': all."),
  },
});

/** policy/v1beta1 PodSecurityPolicy (cluster-scoped, deprecated). */
export const PodSecurityPolicySchema: JSONSchemaProps = defineSchema(
  `${P}.PodSecurityPolicy`,
  objectRootSchema({ group: 'policy', version: 'v1beta1', kind: 'PodSecurityPolicy' }, 'Cluster-level rules for what a pod may do (deprecated).', {
    spec: fieldOf(PodSecurityPolicySpecSchema, { description: 'The policy enforced.' }),
  }),
);
