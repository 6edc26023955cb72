/**
 * Schema of coordination.k8s.io/v1 Lease with Kubernetes' field names and types
 * (k8s.io/api/coordination/v1 types.go), registered under its definition names.
 */
import { defineSchema, fieldOf, MicroTimeSchema, objectRootSchema, type JSONSchemaProps } from '@app/apimachinery';

const COORD = 'io.k8s.api.coordination.v1';

/** coordination/v1 LeaseSpec. */
export const LeaseSpecSchema = defineSchema(`${COORD}.LeaseSpec`, {
  type: 'object',
  description: 'The specification of a Lease.',
  properties: {
    acquireTime: fieldOf(MicroTimeSchema, { description: 'When the current lease was acquired.' }),
    holderIdentity: { type: 'string', description: 'Identity of the holder of the current lease.' },
    leaseDurationSeconds: {
      type: 'integer',
      format: 'int32',
      description: 'Seconds candidates wait, measured against the last observed renewTime, before forcing acquisition.',
    },
    leaseTransitions: { type: 'integer', format: 'int32', description: 'Number of transitions of the lease between holders.' },
    preferredHolder: { type: 'string', description: 'Signals to the holder that the lease should be handed over (coordinated leader election).' },
    renewTime: fieldOf(MicroTimeSchema, { description: 'When the current holder last updated the lease.' }),
    strategy: { type: 'string', description: 'The strategy for picking the leader in coordinated leader election.' },
  },
});

/** coordination/v1 Lease. */
export const LeaseSchema: JSONSchemaProps = defineSchema(
  `${COORD}.Lease`,
  objectRootSchema({ group: 'coordination.k8s.io', version: 'v1', kind: 'Lease' }, 'A lease concept: leader election and node heartbeats.', {
    spec: fieldOf(LeaseSpecSchema, { description: 'Specification of the Lease.' }),
  }),
);
