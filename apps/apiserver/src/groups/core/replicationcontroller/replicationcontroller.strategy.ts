/**
 * ReplicationController behaviour as a stored kind (pkg/registry/core/replicationcontroller, no
 * replication manager runs): core/v1's defaults (SetDefaults_ReplicationController: an empty
 * selector and empty object labels are taken from the template's labels; replicas is a schema
 * default), the template's container defaults, status emptied on create and written through
 * /status only. Generation follows spec changes (the declaration's `generation: 'spec'`).
 */
import type { KubeObject } from '@app/apimachinery';
import { STATUS_STRATEGY, type Strategy, type SubresourceStrategy } from '@app/registry';
import { asMap } from '../core.helpers.js';
import { defaultContainers } from '../pod/pod.strategy.js';
import { validateReplicationController, validateReplicationControllerStatusUpdate } from './replicationcontroller.validation.js';
import { withPodSpecWarnings } from '../pod/pod.warnings.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** SetDefaults_ReplicationController's part that the schema cannot do. */
export function defaultReplicationController(rc: KubeObject): void {
  if (!isObj(rc.spec) || !isObj(rc.spec.template)) return;
  const template = rc.spec.template;
  const labels = asMap(template.metadata).labels;
  if (isObj(labels)) {
    if (Object.keys(asMap(rc.spec.selector)).length === 0) rc.spec.selector = { ...labels };
    if (Object.keys(asMap(rc.metadata.labels)).length === 0) rc.metadata.labels = { ...(labels as Record<string, string>) };
  }
  defaultContainers(template);
}

/** The ReplicationController strategy. */
export const replicationControllerStrategy: Strategy = withPodSpecWarnings(
  {
    prepareForCreate(rc) {
      defaultReplicationController(rc);
      rc.status = { replicas: 0 };
    },
    prepareForUpdate(rc) {
      defaultReplicationController(rc);
    },
    validate: validateReplicationController,
    validateUpdate: validateReplicationController,
  },
  ['spec', 'template', 'spec'],
);

/** /status: only status (and labels, annotations) change, validated as a ReplicationControllerStatus. */
export const replicationControllerStatusStrategy: SubresourceStrategy = {
  prepareForUpdate: STATUS_STRATEGY.prepareForUpdate,
  validateUpdate: validateReplicationControllerStatusUpdate,
};
