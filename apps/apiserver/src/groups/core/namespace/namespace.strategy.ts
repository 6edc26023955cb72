/**
 * Namespace behaviour (pkg/registry/core/namespace): the "kubernetes" finalizer on create,
 * spec.finalizers only through the finalize subresource, DNS-label names, phase Terminating on
 * delete, the built-in namespaces cannot be deleted, and the `kubernetes.io/metadata.name`
 * label always holds the name (what namespace selectors of webhooks and policies match on).
 */
import { Errors, validateKubeFinalizerNames, type FieldError, type KubeObject } from '@app/apimachinery';
import { FINALIZE_STRATEGY, STATUS_STRATEGY, type Strategy, type SubresourceStrategy } from '@app/registry';
import { asMap } from '../core.helpers.js';

/** Namespaces whose delete is refused (Kubernetes' namespace lifecycle admission). */
export const UNDELETABLE_NAMESPACES: readonly string[] = ['default', 'kube-system', 'kube-public'];

/** The label every namespace carries with its own name (kube's v1.LabelMetadataName). */
export const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

/** Sets the name label, as Kubernetes does on every write and read of a Namespace. */
function labelWithName(obj: KubeObject): void {
  const name = obj.metadata.name;
  if (!name) return;
  const labels = asMap(obj.metadata.labels);
  if (labels[NAMESPACE_NAME_LABEL] === name) return;
  obj.metadata.labels = { ...labels, [NAMESPACE_NAME_LABEL]: name };
}

/** The Namespace strategy. */
export const namespaceStrategy: Strategy = {
  // After validation, once a generated name is known (kube's Canonicalize), and on reads of
  // namespaces stored without it (kube's defaulting).
  canonicalize: labelWithName,
  decorate: labelWithName,
  prepareForCreate(obj) {
    // Kubernetes always sets the "kubernetes" finalizer so the namespace controller can empty it.
    const spec = asMap(obj.spec);
    const fins = Array.isArray(spec.finalizers) ? (spec.finalizers as string[]) : [];
    if (!fins.includes('kubernetes')) fins.push('kubernetes');
    obj.spec = { ...spec, finalizers: fins };
    obj.status = { phase: 'Active' };
  },
  prepareForUpdate(obj, old) {
    // spec.finalizers change only through the finalize subresource.
    obj.spec = { ...asMap(obj.spec), finalizers: asMap(old.spec).finalizers };
    if (asMap(obj.spec).finalizers === undefined) delete asMap(obj.spec).finalizers;
  },
  validate(obj) {
    const name = obj.metadata.name ?? '';
    if (name && !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name)) {
      return [
        {
          type: 'FieldValueInvalid',
          field: 'metadata.name',
          value: name,
          detail:
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        },
      ];
    }
    if (name.length > 63) return [{ type: 'FieldValueTooLong', field: 'metadata.name', detail: 'must be no more than 63 characters' }];
    return [];
  },
  pendingFinalizers(obj) {
    const f = asMap(obj.spec).finalizers;
    return Array.isArray(f) ? (f as string[]) : [];
  },
  prepareForDelete(obj) {
    obj.status = { ...asMap(obj.status), phase: 'Terminating' };
  },
  validateDelete(obj) {
    const name = obj.metadata.name ?? '';
    if (UNDELETABLE_NAMESPACES.includes(name)) {
      throw Errors.forbidden({ group: '', resource: 'namespaces' }, name, 'this namespace may not be deleted');
    }
  },
};

/**
 * The namespace's /status (ValidateNamespaceStatusUpdate): the phase follows deletion, Active
 * while deletionTimestamp is empty and Terminating once it is set, so a client cannot mark a
 * live namespace Terminating (which would refuse every create in it). An empty phase is
 * defaulted to Active first (SetDefaults_NamespaceStatus).
 */
export const namespaceStatusStrategy: SubresourceStrategy = {
  prepareForUpdate(obj, old, ctx) {
    STATUS_STRATEGY.prepareForUpdate(obj, old, ctx);
    const status = asMap(obj.status);
    if (!status.phase) obj.status = { ...status, phase: 'Active' };
  },
  validateUpdate(obj: KubeObject): FieldError[] {
    const phase = asMap(obj.status).phase;
    const deleting = obj.metadata.deletionTimestamp !== undefined && obj.metadata.deletionTimestamp !== null;
    if (!deleting && phase !== 'Active') {
      return [{ type: 'FieldValueInvalid', field: 'status.Phase', value: phase, detail: "may only be 'Active' if `deletionTimestamp` is empty" }];
    }
    if (deleting && phase !== 'Terminating') {
      return [{ type: 'FieldValueInvalid', field: 'status.Phase', value: phase, detail: "may only be 'Terminating' if `deletionTimestamp` is not empty" }];
    }
    return [];
  },
};

/**
 * The namespace's /finalize (ValidateNamespaceFinalizeUpdate): every spec.finalizers entry is a
 * qualified name, and an unqualified one must be a standard finalizer (`kubernetes`, ...).
 */
export const namespaceFinalizeStrategy: SubresourceStrategy = {
  prepareForUpdate: FINALIZE_STRATEGY.prepareForUpdate,
  validateUpdate(obj: KubeObject): FieldError[] {
    return validateKubeFinalizerNames(asMap(obj.spec).finalizers, 'spec.finalizers');
  },
};
