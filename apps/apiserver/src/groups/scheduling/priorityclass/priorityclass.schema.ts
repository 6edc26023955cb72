/**
 * Schema of scheduling.k8s.io/v1 PriorityClass with Kubernetes' field names and types
 * (k8s.io/api/scheduling/v1 types.go), registered under its definition name.
 */
import { defineSchema, objectRootSchema, type JSONSchemaProps } from '@app/apimachinery';

/** The two preemption policies (core/v1 PreemptionPolicy). */
export const PREEMPTION_POLICIES: readonly string[] = ['Never', 'PreemptLowerPriority'];

/** scheduling/v1 PriorityClass (cluster-scoped). */
export const PriorityClassSchema: JSONSchemaProps = defineSchema(
  'io.k8s.api.scheduling.v1.PriorityClass',
  objectRootSchema(
    { group: 'scheduling.k8s.io', version: 'v1', kind: 'PriorityClass' },
    'Maps a priority class name to the integer priority that pods naming it receive.',
    {
      description: { type: 'string', description: 'Free text, usually guidance on when to use this class.' },
      globalDefault: {
        type: 'boolean',
        description: 'Whether pods naming no priority class get this one. If several classes are the global default, the one with the smallest value is used.',
      },
      preemptionPolicy: {
        type: 'string',
        enum: [...PREEMPTION_POLICIES],
        default: 'PreemptLowerPriority',
        description: 'Whether pods of this class may preempt pods of lower priority: Never or PreemptLowerPriority (default). Immutable.',
      },
      value: {
        type: 'integer',
        format: 'int32',
        description: 'The priority pods of this class receive; at most 1000000000 for user-defined classes. Immutable.',
      },
    },
    { required: ['value'] },
  ),
);
