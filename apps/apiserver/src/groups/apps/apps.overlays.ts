/**
 * What the apps/v1 protobuf messages cannot say about the schemas derived from them
 * (schema.proto.ts): descriptions, required fields, enums and the scalar defaults of
 * pkg/apis/apps/v1 defaults.go. The strategy defaults (rollingUpdate only for RollingUpdate) are
 * conditional, so deployment.strategy.ts applies them. Passed together with the core overlays,
 * since a Deployment embeds a PodTemplateSpec.
 */
import type { SchemaOverlays } from '@app/apimachinery';
import { workloadConditionOverlay } from '../core/core.overlays.js';

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
  [`${A}.ReplicaSetSpec`]: {
    description: 'The desired state of a ReplicaSet: how many pods of which template.',
    required: ['selector'],
    fields: {
      replicas: { description: 'Number of pods wanted. Default 1.', default: 1 },
      minReadySeconds: d('Seconds a new pod must be ready, without a container crashing, before it counts as available. Default 0.'),
      selector: d('Label query over the pods of the ReplicaSet; must match the template labels. Immutable in apps/v1.'),
      template: d('The pods to create when too few exist; its restartPolicy may only be Always.'),
    },
  },
  [`${A}.ReplicaSetStatus`]: {
    description: 'What the replicaset controller last observed; written through the status subresource.',
    fields: {
      replicas: d('Pods selected by the ReplicaSet.'),
      fullyLabeledReplicas: d('Pods whose labels match the template labels.'),
      readyReplicas: d('Pods with a Ready condition.'),
      availableReplicas: d('Pods ready for at least minReadySeconds.'),
      terminatingReplicas: d('Pods being deleted (alpha).'),
      observedGeneration: d('The generation the controller last acted on.'),
      conditions: d('Latest observations of the ReplicaSet (ReplicaFailure).'),
    },
  },
  [`${A}.ReplicaSetCondition`]: workloadConditionOverlay('ReplicaSet', 'ReplicaFailure.'),
  [`${A}.StatefulSetSpec`]: {
    description: 'The desired state of a StatefulSet: pods with stable identities, and the claims they get.',
    required: ['selector', 'template'],
    fields: {
      replicas: { description: 'Number of pods wanted. Default 1.', default: 1 },
      selector: d('Label query over the pods of the StatefulSet; must match the template labels. Immutable.'),
      template: d('The pods to run, named <statefulset>-<ordinal>; its restartPolicy may only be Always.'),
      volumeClaimTemplates: d('Claims each pod gets, by name, for its volumes. Immutable.'),
      serviceName: d("The Service governing the pods' network identity; may be empty. Immutable."),
      podManagementPolicy: { description: 'OrderedReady (default) or Parallel. Immutable.', enum: ['OrderedReady', 'Parallel'], default: 'OrderedReady' },
      updateStrategy: d('How pods are replaced when the template changes.'),
      revisionHistoryLimit: { description: 'How many old revisions are kept. Default 10.', default: 10 },
      minReadySeconds: d('Seconds a new pod must be ready, without a container crashing, before it counts as available. Default 0.'),
      persistentVolumeClaimRetentionPolicy: d('What happens to the claims when the StatefulSet is deleted or scaled down. Default Retain for both.'),
      ordinals: d('The numbering of the pods.'),
    },
  },
  [`${A}.StatefulSetUpdateStrategy`]: {
    description: 'How the pods of a StatefulSet are updated.',
    fields: {
      type: { description: 'RollingUpdate (default) or OnDelete.', enum: ['OnDelete', 'RollingUpdate'] },
      rollingUpdate: d('Parameters of a rolling update; only with type RollingUpdate.'),
    },
  },
  [`${A}.RollingUpdateStatefulSetStrategy`]: {
    description: 'Bounds of a StatefulSet rolling update.',
    fields: {
      partition: d('Pods with an ordinal at or above this one are updated; the others are not. Default 0.'),
      maxUnavailable: d('Pods that may be unavailable during the update, a number or a percentage; not 0 (alpha).'),
    },
  },
  [`${A}.StatefulSetPersistentVolumeClaimRetentionPolicy`]: {
    description: 'The lifecycle of the claims made from volumeClaimTemplates.',
    fields: {
      whenDeleted: { description: 'Retain (default) or Delete the claims when the StatefulSet is deleted.', enum: ['Delete', 'Retain'] },
      whenScaled: { description: 'Retain (default) or Delete the claims of pods removed by a scale down.', enum: ['Delete', 'Retain'] },
    },
  },
  [`${A}.StatefulSetOrdinals`]: {
    description: 'How the pods of a StatefulSet are numbered.',
    fields: { start: d('The ordinal of the first pod. Default 0.') },
  },
  [`${A}.StatefulSetStatus`]: {
    description: 'What the statefulset controller last observed; written through the status subresource.',
    fields: {
      observedGeneration: d('The generation the controller last acted on.'),
      replicas: d('Pods created by the controller.'),
      readyReplicas: d('Pods with a Ready condition.'),
      currentReplicas: d('Pods of the currentRevision.'),
      updatedReplicas: d('Pods of the updateRevision.'),
      currentRevision: d('The revision of the pods [0, currentReplicas).'),
      updateRevision: d('The revision of the pods [replicas-updatedReplicas, replicas).'),
      collisionCount: d('Hash collisions met when naming the newest ControllerRevision.'),
      conditions: d('Latest observations of the StatefulSet.'),
      availableReplicas: d('Pods ready for at least minReadySeconds.'),
    },
  },
  [`${A}.StatefulSetCondition`]: workloadConditionOverlay('StatefulSet', 'The condition type.'),
  [`${A}.DaemonSetSpec`]: {
    description: 'The desired state of a DaemonSet: one pod of a template on each eligible node.',
    required: ['selector', 'template'],
    fields: {
      selector: d('Label query over the pods of the DaemonSet; must match the template labels. Immutable in apps/v1.'),
      template: d('The pod to run on each node; its restartPolicy may only be Always.'),
      updateStrategy: d('How pods of an old template are replaced by pods of a new one.'),
      minReadySeconds: d('Seconds a new pod must be ready, without a container crashing, before it counts as available. Default 0.'),
      revisionHistoryLimit: { description: 'How many old revisions are kept for rollback. Default 10.', default: 10 },
    },
  },
  [`${A}.DaemonSetUpdateStrategy`]: {
    description: 'How the pods of a DaemonSet are updated.',
    fields: {
      type: { description: 'RollingUpdate (default) or OnDelete.', enum: ['OnDelete', 'RollingUpdate'] },
      rollingUpdate: d('Parameters of a rolling update; only with type RollingUpdate.'),
    },
  },
  [`${A}.RollingUpdateDaemonSet`]: {
    description: 'Bounds of a DaemonSet rolling update, as a number of nodes or a percentage of the desired pods; exactly one is non-zero.',
    fields: {
      maxUnavailable: d('Pods that may be unavailable during the update (percentages round up). Default 1.'),
      maxSurge: d('Nodes that may run an updated pod beside the old one during the update. Default 0.'),
    },
  },
  [`${A}.DaemonSetStatus`]: {
    description: 'What the daemonset controller last observed; written through the status subresource.',
    fields: {
      currentNumberScheduled: d('Nodes running the daemon pod that should.'),
      numberMisscheduled: d('Nodes running the daemon pod that should not.'),
      desiredNumberScheduled: d('Nodes that should run the daemon pod.'),
      numberReady: d('Nodes whose daemon pod is Ready.'),
      observedGeneration: d('The generation the controller last acted on.'),
      updatedNumberScheduled: d('Nodes running the updated daemon pod.'),
      numberAvailable: d('Nodes whose daemon pod is available.'),
      numberUnavailable: d('Nodes that should run the daemon pod and have none available.'),
      collisionCount: d('Hash collisions met when naming the newest ControllerRevision.'),
      conditions: d('Latest observations of the DaemonSet.'),
    },
  },
  [`${A}.DaemonSetCondition`]: workloadConditionOverlay('DaemonSet', 'The condition type.'),
};
