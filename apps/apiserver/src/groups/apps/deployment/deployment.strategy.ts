/**
 * Deployment behaviour as a stored kind (pkg/registry/apps/deployment, no controller): the
 * defaults schema defaults cannot express (SetDefaults_Deployment's strategy, the pod
 * template's containers), status emptied on create and written through /status only, and
 * generation bumped on annotation changes too (annotations are copied to ReplicaSets).
 */
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '@app/apimachinery';
import { STATUS_STRATEGY, type Strategy, type SubresourceStrategy } from '@app/registry';
import { defaultContainers } from '../../core/pod/pod.strategy.js';
import { validateDeployment, validateDeploymentStatusUpdate, validateDeploymentUpdate } from './deployment.validation.js';
import { withPodSpecWarnings } from '../../core/pod/pod.warnings.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * SetDefaults_Deployment's conditional part: strategy type RollingUpdate, and for it
 * maxUnavailable and maxSurge of 25% each; plus the pod template's container defaults.
 * Replicas, revisionHistoryLimit and progressDeadlineSeconds are schema defaults.
 */
export function defaultDeployment(d: KubeObject): void {
  if (!isObj(d.spec)) return;
  const spec = d.spec;
  if (!isObj(spec.strategy)) spec.strategy = {};
  const strategy = spec.strategy as Obj;
  if (strategy.type === undefined || strategy.type === null || strategy.type === '') strategy.type = 'RollingUpdate';
  if (strategy.type === 'RollingUpdate') {
    if (!isObj(strategy.rollingUpdate)) strategy.rollingUpdate = {};
    const ru = strategy.rollingUpdate as Obj;
    ru.maxUnavailable ??= '25%';
    ru.maxSurge ??= '25%';
  }
  if (isObj(spec.template)) defaultContainers(spec.template);
}

/** The Deployment strategy. */
export const deploymentStrategy: Strategy = withPodSpecWarnings(
  {
    prepareForCreate(d) {
      defaultDeployment(d);
      d.status = {};
    },
    prepareForUpdate(d, old) {
      defaultDeployment(d);
      const annotations = (o: KubeObject): unknown => o.metadata.annotations ?? {};
      if (!isDeepStrictEqual(annotations(d), annotations(old))) {
        d.metadata.generation = (typeof old.metadata.generation === 'number' ? old.metadata.generation : 0) + 1;
      }
    },
    validate: validateDeployment,
    validateUpdate: validateDeploymentUpdate,
  },
  ['spec', 'template', 'spec'],
);

/** /status: only status (and labels, annotations) change, validated as a DeploymentStatus. */
export const deploymentStatusStrategy: SubresourceStrategy = {
  prepareForUpdate: STATUS_STRATEGY.prepareForUpdate,
  validateUpdate: validateDeploymentStatusUpdate,
};
