/**
 * coordination.k8s.io/v1 Lease (used for controller leader election, docs/cluster.md): its
 * declaration.
 */
import { ageOf, type KindDeclaration } from '@app/registry';
import { LeaseSchema } from './lease.schema.js';
import { leaseSpec, leaseStrategy } from './lease.strategy.js';

/** The Lease declaration. */
export const leaseKind: KindDeclaration = {
  group: 'coordination.k8s.io',
  version: 'v1',
  kind: 'Lease',
  plural: 'leases',
  singular: 'lease',
  namespaced: true,
  schema: LeaseSchema,
  protobufMessage: 'k8s.io.api.coordination.v1.Lease',
  strategy: leaseStrategy,
  // PUT to a missing Lease creates it (leaseStrategy.AllowCreateOnUpdate): leader election relies on it.
  allowCreateOnUpdate: true,
  // leaseStrategy sets no generation.
  generation: 'none',
  // leaseStrategy.AllowUnconditionalUpdate is false: a PUT must carry resourceVersion.
  allowUnconditionalUpdate: false,
  // kubectl get leases: NAME HOLDER AGE (pkg/printers/internalversion printLease).
  tableColumns: [
    {
      name: 'Holder',
      type: 'string',
      priority: 0,
      description: 'The holder of the lease (spec.holderIdentity)',
      cell: (o) => String(leaseSpec(o).holderIdentity ?? ''),
    },
    { name: 'Age', type: 'string', priority: 0, description: 'Time since creation', cell: (o, now) => ageOf(o, now) },
  ],
};
