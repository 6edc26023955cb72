/**
 * admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy (cluster-scoped, +status), checked
 * on requests by the ValidatingAdmissionPolicy admission plugin (admission/policy) where a
 * binding applies it. kubectl's columns: NAME VALIDATIONS PARAMKIND AGE. The generation goes up
 * with each change of spec; status is written through /status only.
 */
import { statusSubresource, type KindDeclaration } from '@app/registry';
import { ValidatingAdmissionPolicySchema } from '../admissionregistration.schemas.js';
import { validateValidatingAdmissionPolicy } from '../admissionregistration.policy.validation.js';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});

/** The ValidatingAdmissionPolicy declaration. */
export const validatingAdmissionPolicyKind: KindDeclaration = {
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  kind: 'ValidatingAdmissionPolicy',
  plural: 'validatingadmissionpolicies',
  singular: 'validatingadmissionpolicy',
  namespaced: false,
  categories: ['api-extensions'],
  schema: ValidatingAdmissionPolicySchema,
  protobufMessage: 'k8s.io.api.admissionregistration.v1.ValidatingAdmissionPolicy',
  strategy: {
    prepareForCreate(o) {
      delete o.status;
    },
    validate: (o) => validateValidatingAdmissionPolicy(o as unknown as Obj),
    validateUpdate: (o) => validateValidatingAdmissionPolicy(o as unknown as Obj),
  },
  subresources: { status: statusSubresource() },
  generation: 'spec',
  tableColumns: [
    {
      name: 'Validations',
      type: 'integer',
      priority: 0,
      description: 'The number of validation rules of the policy',
      cell: (o) => (Array.isArray(obj(o.spec).validations) ? (obj(o.spec).validations as unknown[]).length : 0),
    },
    {
      name: 'ParamKind',
      type: 'string',
      priority: 0,
      description: 'The kind of the parameter objects of the policy',
      cell: (o) => {
        const pk = obj(obj(o.spec).paramKind);
        return typeof pk.kind === 'string' ? `${String(pk.apiVersion ?? '')}/${pk.kind}` : '<unset>';
      },
    },
  ],
};
