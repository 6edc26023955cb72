/**
 * What the apps/v1 protobuf messages cannot say about the schemas derived from them
 * (schema.proto.ts): descriptions, required fields, enums and the scalar defaults of
 * pkg/apis/apps/v1 defaults.go. The strategy defaults (rollingUpdate only for RollingUpdate) are
 * conditional, so deployment.strategy.ts applies them. Passed together with the core overlays,
 * since a Deployment embeds a PodTemplateSpec.
 */
import type { SchemaOverlays } from '@app/apimachinery';

const A = 'k8s.io.api.apps.v1';
const d = (description: string) => ({ description });

/** Deployment strategy types. */
export const DEPLOYMENT_STRATEGY_TYPES: readonly string[] = ['Recreate', 'RollingUpdate'];

/** The apps/v1 overlays. */
export const APPS_OVERLAYS: SchemaOverlays = {
  [`${A}.DeploymentSpec`]: {
    description: 'The desired state of a Deployment: how many pods of which template, and how to roll out a new template.',
    required: ['selector', 'template'],
    fields: {
      replicas: { description: 'Number of pods wanted. Default 1.', default: 1 },
      selector: d('Label query over the pods of the Deployment; must match the template labels. Immutable in apps/v1.'),
      template: d('The pods to run; its restartPolicy may only be Always.'),
      strategy: d('How pods of an old template are replaced by pods of a new one.'),
      minReadySeconds: d('Seconds a new pod must be ready, without a container crashing, before it counts as available. Default 0.'),
      revisionHistoryLimit: { description: 'How many old ReplicaSets are kept for rollback. Default 10.', default: 10 },
      paused: d('Whether rollouts are paused.'),
      progressDeadlineSeconds: {
        description: 'Seconds a rollout may go without progress before it is reported as failed; more than minReadySeconds. Default 600.',
        default: 600,
      },
      podReplacementPolicy: d('When replacement pods are created: TerminationStarted or TerminationComplete (alpha).'),
    },
  },
  [`${A}.DeploymentStrategy`]: {
    description: 'How to replace existing pods with new ones.',
    fields: {
      type: { description: 'Recreate or RollingUpdate (default).', enum: [...DEPLOYMENT_STRATEGY_TYPES] },
      rollingUpdate: d('Parameters of a rolling update; only with type RollingUpdate.'),
    },
  },
  [`${A}.RollingUpdateDeployment`]: {
    description: 'Bounds of a rolling update, as a number of pods or a percentage of spec.replicas.',
    fields: {
      maxUnavailable: d('Pods that may be unavailable during the update (percentages round down); not 0 when maxSurge is 0. Default 25%.'),
      maxSurge: d('Pods that may exist above spec.replicas during the update (percentages round up); not 0 when maxUnavailable is 0. Default 25%.'),
    },
  },
  [`${A}.DeploymentStatus`]: {
    description: 'What the deployment controller last observed; written through the status subresource.',
    fields: {
      observedGeneration: d('The generation the controller last acted on.'),
      replicas: d('Non-terminating pods selected by the Deployment.'),
      updatedReplicas: d('Non-terminating pods with the current template.'),
      readyReplicas: d('Non-terminating pods with a Ready condition.'),
      availableReplicas: d('Non-terminating pods ready for at least minReadySeconds.'),
      unavailableReplicas: d('Pods still missing for full available capacity.'),
      terminatingReplicas: d('Pods being deleted (alpha).'),
      conditions: d('Latest observations of the rollout (Available, Progressing, ReplicaFailure).'),
      collisionCount: d('Hash collisions met when naming the newest ReplicaSet.'),
    },
  },
  [`${A}.DeploymentCondition`]: {
    description: 'One condition of a Deployment.',
    required: ['type', 'status'],
    fields: {
      type: d('Available, Progressing or ReplicaFailure.'),
      status: { description: 'True, False or Unknown.', enum: ['False', 'True', 'Unknown'] },
      lastUpdateTime: d('When the condition was last updated.'),
      lastTransitionTime: d('When the status last changed.'),
      reason: d('CamelCase reason of the last transition.'),
      message: d('Human-readable details of the last transition.'),
    },
  },
};
