/**
 * StatefulSet behaviour as a stored kind (pkg/registry/apps/statefulset, no controller): the
 * defaults schema defaults cannot express (SetDefaults_StatefulSet's update strategy and claim
 * retention policy, the pod template's containers), status emptied on create and written
 * through /status only. Generation follows spec changes (`generation: 'spec'`).
 */
import type { KubeObject } from '@app/apimachinery';
import { STATUS_STRATEGY, type Strategy, type SubresourceStrategy } from '@app/registry';
import { defaultContainers } from '../../core/pod/pod.strategy.js';
import { validateStatefulSet, validateStatefulSetStatusUpdate, validateStatefulSetUpdate } from './statefulset.validation.js';
import { claimSpecWarnings, withPodSpecWarnings } from '../../core/pod/pod.warnings.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const unset = (v: unknown): boolean => v === undefined || v === null || v === '';

/**
 * SetDefaults_StatefulSet's conditional part: an unset update strategy becomes RollingUpdate
 * with a rollingUpdate, whose partition defaults to 0 (maxUnavailable only under an alpha gate,
 * so not here); the claim retention policy defaults to Retain for both cases. Replicas,
 * podManagementPolicy and revisionHistoryLimit are schema defaults.
 */
export function defaultStatefulSet(sts: KubeObject): void {
  if (!isObj(sts.spec)) return;
  const spec = sts.spec;
  if (!isObj(spec.updateStrategy)) spec.updateStrategy = {};
  const us = spec.updateStrategy as Obj;
  if (unset(us.type)) {
    us.type = 'RollingUpdate';
    if (!isObj(us.rollingUpdate)) us.rollingUpdate = {};
  }
  if (us.type === 'RollingUpdate' && isObj(us.rollingUpdate)) us.rollingUpdate.partition ??= 0;
  if (!isObj(spec.persistentVolumeClaimRetentionPolicy)) spec.persistentVolumeClaimRetentionPolicy = {};
  const policy = spec.persistentVolumeClaimRetentionPolicy as Obj;
  if (unset(policy.whenDeleted)) policy.whenDeleted = 'Retain';
  if (unset(policy.whenScaled)) policy.whenScaled = 'Retain';
  if (isObj(spec.template)) defaultContainers(spec.template);
}

/** The StatefulSet strategy. */
export const statefulSetStrategy: Strategy = withPodSpecWarnings(
  {
    prepareForCreate(sts) {
      defaultStatefulSet(sts);
      // The zero StatefulSetStatus: replicas and availableReplicas are not omitted when 0.
      sts.status = { replicas: 0, availableReplicas: 0 };
    },
    prepareForUpdate(sts) {
      defaultStatefulSet(sts);
    },
    validate: validateStatefulSet,
    validateUpdate: validateStatefulSetUpdate,
  },
  ['spec', 'template', 'spec'],
  false,
  // The claim templates' own warnings, named under the template itself (kube's paths).
  (sts) =>
    (isObj(sts.spec) && Array.isArray(sts.spec.volumeClaimTemplates) ? sts.spec.volumeClaimTemplates : []).flatMap((t, i) =>
      claimSpecWarnings(isObj(t) ? t.spec : undefined, `spec.volumeClaimTemplates[${i}]`),
    ),
);

/** /status: only status (and labels, annotations) change, validated as a StatefulSetStatus. */
export const statefulSetStatusStrategy: SubresourceStrategy = {
  prepareForUpdate: STATUS_STRATEGY.prepareForUpdate,
  validateUpdate: validateStatefulSetStatusUpdate,
};
