/**
 * admissionregistration.k8s.io/v1 ValidatingAdmissionPolicyBinding (cluster-scoped): applies a
 * ValidatingAdmissionPolicy to resources with its parameters and validation actions. kubectl's
 * columns: NAME POLICYNAME PARAMREF AGE.
 */
import { labelSelectorFromStruct, type LabelSelectorStruct } from '@app/apimachinery';
import type { KindDeclaration } from '@app/registry';
import { ValidatingAdmissionPolicyBindingSchema } from '../admissionregistration.schemas.js';
import { validateValidatingAdmissionPolicyBinding } from '../admissionregistration.policy.validation.js';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});

/** kubectl's PARAMREF cell: namespace/name, name, or a star and the selector. */
function paramRefCell(o: Obj): string {
  const spec = obj(o.spec);
  if (!spec.paramRef) return '<unset>';
  const ref = obj(spec.paramRef);
  if (typeof ref.name === 'string' && ref.name) return typeof ref.namespace === 'string' && ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name;
  try {
    return `*/${labelSelectorFromStruct(obj(ref.selector) as LabelSelectorStruct).toString()}`;
  } catch {
    return '*/';
  }
}

/** The ValidatingAdmissionPolicyBinding declaration. */
export const validatingAdmissionPolicyBindingKind: KindDeclaration = {
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  kind: 'ValidatingAdmissionPolicyBinding',
  plural: 'validatingadmissionpolicybindings',
  singular: 'validatingadmissionpolicybinding',
  namespaced: false,
  categories: ['api-extensions'],
  schema: ValidatingAdmissionPolicyBindingSchema,
  protobufMessage: 'k8s.io.api.admissionregistration.v1.ValidatingAdmissionPolicyBinding',
  strategy: {
    validate: (o) => validateValidatingAdmissionPolicyBinding(o as unknown as Obj),
    validateUpdate: (o) => validateValidatingAdmissionPolicyBinding(o as unknown as Obj),
  },
  generation: 'spec',
  tableColumns: [
    { name: 'PolicyName', type: 'string', priority: 0, description: 'The policy bound', cell: (o) => String(obj(o.spec).policyName ?? '') },
    { name: 'ParamRef', type: 'string', priority: 0, description: 'The parameters of the policy', cell: (o) => paramRefCell(o as unknown as Obj) },
  ],
};
