/**
 * core/v1 `bindings`: the namespaced, create-only resource that binds the pod the Binding's
 * metadata.name names (kube's LegacyBindingREST), the older way of what the pods' `binding`
 * subresource does (pod/pod.binding.ts). Never stored; the answer is a Status of Success.
 * Unlike the subresource, the Binding's uid and resourceVersion are not preconditions (the create
 * handler wipes system metadata before the handler sees it).
 */
import type { KindDeclaration } from '@app/registry';
import { BINDING_MESSAGE, BindingSchema, bindPod, validatePodBinding } from '../pod/pod.binding.js';
import { bindingPorts } from '../pod/pod.kind.js';

/** The Binding declaration. */
export const bindingKind: KindDeclaration = {
  group: '',
  version: 'v1',
  kind: 'Binding',
  plural: 'bindings',
  singular: 'binding',
  namespaced: true,
  verbs: ['create'],
  schema: BindingSchema,
  protobufMessage: BINDING_MESSAGE,
  strategy: { validate: (b) => validatePodBinding(b) },
  rest: {
    create: (ns, obj, ctx) => bindPod(bindingPorts, ns, obj.metadata.name ?? '', obj, false, ctx),
  },
};
