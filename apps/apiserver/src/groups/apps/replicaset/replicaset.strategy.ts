/**
 * ReplicaSet behaviour as a stored kind (pkg/registry/apps/replicaset, no controller): the pod
 * template's container defaults (replicas is a schema default), status emptied on create and
 * written through /status only. Generation follows spec changes (the declaration's
 * `generation: 'spec'`).
 */
import type { KubeObject } from '@app/apimachinery';
import { STATUS_STRATEGY, type Strategy, type SubresourceStrategy } from '@app/registry';
import { defaultContainers } from '../../core/pod/pod.strategy.js';
import { validateReplicaSet, validateReplicaSetStatusUpdate, validateReplicaSetUpdate } from './replicaset.validation.js';
import { withPodSpecWarnings } from '../../core/pod/pod.warnings.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** SetDefaults_ReplicaSet's part that the schema cannot do: the template's container defaults. */
export function defaultReplicaSet(rs: KubeObject): void {
  if (isObj(rs.spec) && isObj(rs.spec.template)) defaultContainers(rs.spec.template);
}

/** The ReplicaSet strategy. */
export const replicaSetStrategy: Strategy = withPodSpecWarnings(
  {
    prepareForCreate(rs) {
      defaultReplicaSet(rs);
      rs.status = { replicas: 0 };
    },
    prepareForUpdate(rs) {
      defaultReplicaSet(rs);
    },
    validate: validateReplicaSet,
    validateUpdate: validateReplicaSetUpdate,
  },
  ['spec', 'template', 'spec'],
);

/** /status: only status (and labels, annotations) change, validated as a ReplicaSetStatus. */
export const replicaSetStatusStrategy: SubresourceStrategy = {
  prepareForUpdate: STATUS_STRATEGY.prepareForUpdate,
  validateUpdate: validateReplicaSetStatusUpdate,
};
