/**
 * networking.k8s.io/v1 IngressClass (cluster-scoped) as a stored kind. kubectl's columns
 * (pkg/printers internalversion printIngressClass): NAME CONTROLLER PARAMETERS AGE. The class
 * annotated ingressclass.kubernetes.io/is-default-class: "true" is the one the
 * DefaultIngressClass admission plugin gives new Ingresses that name none.
 */
import type { KubeObject } from '@app/apimachinery';
import { ageOf, type KindDeclaration } from '@app/registry';
import { asMap } from '../../core/core.helpers.js';
import { IngressClassSchema } from '../networking.schema.js';
import { ingressClassStrategy } from './ingressclass.strategy.js';

/** The annotation that makes a class the default one. */
export const DEFAULT_INGRESS_CLASS_ANNOTATION = 'ingressclass.kubernetes.io/is-default-class';

/** Whether `ic` is marked as the cluster's default IngressClass. */
export function isDefaultIngressClass(ic: KubeObject): boolean {
  return asMap(ic.metadata.annotations)[DEFAULT_INGRESS_CLASS_ANNOTATION] === 'true';
}

/** PARAMETERS: `<kind>[.<apiGroup>]/<name>`, or <none>. */
export function ingressClassParametersCell(o: KubeObject): string {
  const spec = asMap(o.spec);
  if (spec.parameters === undefined || spec.parameters === null) return '<none>';
  const p = asMap(spec.parameters);
  const group = typeof p.apiGroup === 'string' ? `.${p.apiGroup}` : '';
  return `${String(p.kind ?? '')}${group}/${String(p.name ?? '')}`;
}

/** The IngressClass declaration. */
export const ingressClassKind: KindDeclaration = {
  group: 'networking.k8s.io',
  version: 'v1',
  kind: 'IngressClass',
  plural: 'ingressclasses',
  singular: 'ingressclass',
  namespaced: false,
  schema: IngressClassSchema,
  protobufMessage: 'k8s.io.api.networking.v1.IngressClass',
  strategy: ingressClassStrategy,
  generation: 'spec',
  tableColumns: [
    {
      name: 'Controller',
      type: 'string',
      priority: 0,
      description: 'The controller that serves the class',
      cell: (o) => String(asMap(o.spec).controller ?? ''),
    },
    { name: 'Parameters', type: 'string', priority: 0, description: 'The object holding settings for the controller', cell: ingressClassParametersCell },
    { name: 'Age', type: 'string', priority: 0, description: 'Time since creation', cell: (o, now) => ageOf(o, now) },
  ],
};
