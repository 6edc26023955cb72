/**
 * Schema of policy/v1 PodDisruptionBudget, derived from the protobuf messages with the overlays
 * below (descriptions and enums; policy/v1 has no defaults).
 */
import { defineSchema, fieldOf, objectRootSchema, protoSchema, type JSONSchemaProps, type SchemaOverlays } from '@app/apimachinery';

const P = 'k8s.io.api.policy.v1';
const d = (description: string) => ({ description });

/** What a PodDisruptionBudget does with pods that are not ready. */
export const UNHEALTHY_POD_EVICTION_POLICIES: readonly string[] = ['AlwaysAllow', 'IfHealthyBudget'];

/** The policy/v1 overlays. */
export const POLICY_OVERLAYS: SchemaOverlays = {
  [`${P}.PodDisruptionBudgetSpec`]: {
    description: 'How many of the selected pods voluntary disruptions (evictions) must leave available.',
    fields: {
      minAvailable: d('Pods (a number or a percentage of the expected pods) that must stay available after an eviction; not with maxUnavailable.'),
      selector: d('Label query over the pods the budget guards: null selects none, {} every pod of the namespace.'),
      maxUnavailable: d('Pods (a number or a percentage of the expected pods) that may be unavailable after an eviction; not with minAvailable.'),
      unhealthyPodEvictionPolicy: {
        description:
          'When a running pod that is not ready may be evicted: IfHealthyBudget (the default when unset) only while the budget holds, AlwaysAllow always.',
        enum: [...UNHEALTHY_POD_EVICTION_POLICIES],
      },
    },
  },
  [`${P}.PodDisruptionBudgetStatus`]: {
    description: 'What the disruption controller last computed; evictions read and decrement it.',
    fields: {
      observedGeneration: d('The generation this status was computed for; an eviction waits until it matches.'),
      disruptedPods: d('Pods whose eviction was granted but whose deletion the controller has not seen yet, with the time of the grant.'),
      disruptionsAllowed: d('Evictions allowed now.'),
      currentHealthy: d('Selected pods that are ready and not being deleted.'),
      desiredHealthy: d('Ready pods the budget requires.'),
      expectedPods: d('Pods the budget counts: the selected pods, or the scale of their controllers for percentages and maxUnavailable.'),
      conditions: d('DisruptionAllowed, with reason SufficientPods, InsufficientPods or SyncFailed.'),
    },
  },
};

const message = (name: string): JSONSchemaProps => protoSchema(`${P}.${name}`, POLICY_OVERLAYS);

/** policy/v1 PodDisruptionBudget (namespaced). */
export const PodDisruptionBudgetSchema: JSONSchemaProps = defineSchema(
  'io.k8s.api.policy.v1.PodDisruptionBudget',
  objectRootSchema({ group: 'policy', version: 'v1', kind: 'PodDisruptionBudget' }, 'A bound on the voluntary disruptions of a set of pods.', {
    spec: fieldOf(message('PodDisruptionBudgetSpec'), { description: 'Which pods, and how many must stay available.' }),
    status: fieldOf(message('PodDisruptionBudgetStatus'), { description: 'What the disruption controller last computed; read-only.' }),
  }),
);
