/**
 * The coordination.k8s.io/v1 kinds: Lease (used for controller leader election, docs/cluster.md).
 * Validation follows Kubernetes' ValidateLeaseSpec (pkg/apis/coordination/validation).
 */
import type { FieldError } from '@app/apimachinery';
import type { KubeObject } from '@app/storage';
import { ageOf, type KindDeclaration, type Strategy } from '@app/registry';
import { LeaseSchema } from './coordination.schemas.js';

function spec(o: KubeObject): Record<string, unknown> {
  const s = o.spec;
  return s && typeof s === 'object' && !Array.isArray(s) ? (s as Record<string, unknown>) : {};
}

/** ValidateLeaseSpec: durations > 0, transitions >= 0, strategy and preferredHolder need each other. */
export function validateLease(o: KubeObject): FieldError[] {
  const s = spec(o);
  const errs: FieldError[] = [];
  const d = s.leaseDurationSeconds;
  if (d !== undefined && d !== null && (typeof d !== 'number' || d <= 0)) {
    errs.push({ type: 'FieldValueInvalid', field: 'spec.leaseDurationSeconds', value: d, detail: 'must be greater than 0' });
  }
  const t = s.leaseTransitions;
  if (t !== undefined && t !== null && (typeof t !== 'number' || t < 0)) {
    errs.push({ type: 'FieldValueInvalid', field: 'spec.leaseTransitions', value: t, detail: 'must be greater than or equal to 0' });
  }
  if (s.preferredHolder && !s.strategy) {
    errs.push({ type: 'FieldValueForbidden', field: 'spec.preferredHolder', detail: 'may only be specified if `strategy` is defined' });
  }
  return errs;
}

const leaseStrategy: Strategy = {
  validate: validateLease,
  validateUpdate: validateLease,
};

/** The coordination.k8s.io/v1 kinds. */
export const COORDINATION_KINDS: KindDeclaration[] = [
  {
    group: 'coordination.k8s.io',
    version: 'v1',
    kind: 'Lease',
    plural: 'leases',
    singular: 'lease',
    namespaced: true,
    schema: LeaseSchema,
    protobufMessage: 'k8s.io.api.coordination.v1.Lease',
    strategy: leaseStrategy,
    // kubectl get leases: NAME HOLDER AGE (pkg/printers/internalversion printLease).
    tableColumns: [
      { name: 'Holder', type: 'string', priority: 0, description: 'The holder of the lease (spec.holderIdentity)', cell: (o) => String(spec(o).holderIdentity ?? '') },
      { name: 'Age', type: 'string', priority: 0, description: 'Time since creation', cell: (o, now) => ageOf(o, now) },
    ],
  },
];
