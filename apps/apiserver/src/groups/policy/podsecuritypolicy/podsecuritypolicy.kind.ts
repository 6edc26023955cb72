/**
 * policy/v1beta1 PodSecurityPolicy (cluster-scoped, deprecated in 1.21, removed in 1.25): a
 * stored object only, nothing enforces it. kubectl's columns: NAME PRIV CAPS SELINUX RUNASUSER
 * FSGROUP SUPGROUP READONLYROOTFS VOLUMES (printPodSecurityPolicy). DELETE answers with the
 * object (resources document, "Delete response bodies").
 */
import type { KubeObject } from '@app/apimachinery';
import type { KindDeclaration, TableColumn } from '@app/registry';
import { asMap } from '../../core/core.helpers.js';
import { PodSecurityPolicySchema } from './podsecuritypolicy.schema.js';
import { podSecurityPolicyStrategy } from './podsecuritypolicy.strategy.js';

const spec = (o: KubeObject) => asMap(o.spec);
const col = (name: string, description: string, cell: (o: KubeObject) => unknown): TableColumn => ({ name, type: 'string', priority: 0, description, cell });
const joined = (v: unknown) => (Array.isArray(v) ? v.join(',') : '');

/** The PodSecurityPolicy declaration. */
export const podSecurityPolicyKind: KindDeclaration = {
  group: 'policy',
  version: 'v1beta1',
  kind: 'PodSecurityPolicy',
  plural: 'podsecuritypolicies',
  singular: 'podsecuritypolicy',
  shortNames: ['psp'],
  namespaced: false,
  schema: PodSecurityPolicySchema,
  protobufMessage: 'k8s.io.api.policy.v1beta1.PodSecurityPolicy',
  strategy: podSecurityPolicyStrategy,
  generation: 'none',
  deleteReturnsObject: true,
  deprecation: { deprecatedIn: '1.21', removedIn: '1.25' },
  ageColumn: false,
  tableColumns: [
    col('Priv', 'Whether privileged pods are allowed', (o) => String(spec(o).privileged === true)),
    col('Caps', 'Capabilities pods may add', (o) => joined(spec(o).allowedCapabilities)),
    col('SELinux', 'SELinux strategy', (o) => asMap(spec(o).seLinux).rule ?? ''),
    col('RunAsUser', 'User ID strategy', (o) => asMap(spec(o).runAsUser).rule ?? ''),
    col('FsGroup', 'fsGroup strategy', (o) => asMap(spec(o).fsGroup).rule ?? ''),
    col('SupGroup', 'Supplemental groups strategy', (o) => asMap(spec(o).supplementalGroups).rule ?? ''),
    col('ReadOnlyRootFs', 'Whether the root filesystem is read-only', (o) => String(spec(o).readOnlyRootFilesystem === true)),
    col('Volumes', 'Volume types allowed', (o) => joined(spec(o).volumes)),
  ],
};
