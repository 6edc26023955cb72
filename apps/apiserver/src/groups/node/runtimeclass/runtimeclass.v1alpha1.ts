/**
 * node.k8s.io/v1alpha1 RuntimeClass: the alpha shape (handler, overhead and scheduling under
 * `spec`, the handler named `runtimeHandler`), served only when enabled with
 * `--runtime-config node.k8s.io/v1alpha1=true` or `api/alpha=true`, as alpha versions are.
 * Objects are stored at v1; the conversion moves the fields and loses nothing either way.
 */
import { defineSchema, fieldOf, objectRootSchema, type FieldError, type JSONSchemaProps, type KubeObject } from '@app/apimachinery';
import type { Conversion, KindDeclaration } from '@app/registry';
import { asMap } from '../../core/core.helpers.js';
import { str } from '../../core/core.schema.js';
import { runtimeClassKind } from './runtimeclass.kind.js';
import { OverheadSchema, SchedulingSchema } from './runtimeclass.schema.js';
import { runtimeClassStrategy } from './runtimeclass.strategy.js';

const SPEC_FIELDS: ReadonlyArray<[alpha: string, v1: string]> = [
  ['runtimeHandler', 'handler'],
  ['overhead', 'overhead'],
  ['scheduling', 'scheduling'],
];

/** Converts a RuntimeClass between v1 and v1alpha1; the input is not changed. */
export function convertRuntimeClass(obj: KubeObject, to: string): KubeObject {
  const from = obj.apiVersion === 'node.k8s.io/v1alpha1' ? 'v1alpha1' : 'v1';
  if (from === to) return obj;
  const out = structuredClone(obj);
  out.apiVersion = `node.k8s.io/${to}`;
  if (to === 'v1alpha1') {
    const spec: Record<string, unknown> = {};
    for (const [a, v] of SPEC_FIELDS) {
      if (v in out) spec[a] = out[v];
      delete out[v];
    }
    out.spec = spec;
  } else {
    const spec = asMap(out.spec);
    delete out.spec;
    for (const [a, v] of SPEC_FIELDS) if (a in spec) out[v] = spec[a];
  }
  return out;
}

/** The RuntimeClass conversion (stored at v1). */
export const RUNTIMECLASS_CONVERSION: Conversion = { storageVersion: 'v1', convert: convertRuntimeClass };

/** node/v1alpha1 RuntimeClassSpec. */
export const RuntimeClassSpecV1alpha1Schema: JSONSchemaProps = defineSchema('io.k8s.api.node.v1alpha1.RuntimeClassSpec', {
  type: 'object',
  description: 'The specification of a RuntimeClass.',
  required: ['runtimeHandler'],
  properties: {
    overhead: fieldOf(OverheadSchema, { description: 'Resource overhead of running a pod with this class.' }),
    runtimeHandler: str('The CRI handler: a lower-case DNS label, immutable.'),
    scheduling: fieldOf(SchedulingSchema, { description: 'Nodes that support this class; absent: all nodes.' }),
  },
});

/** node/v1alpha1 RuntimeClass. */
export const RuntimeClassV1alpha1Schema: JSONSchemaProps = defineSchema(
  'io.k8s.api.node.v1alpha1.RuntimeClass',
  objectRootSchema({ group: 'node.k8s.io', version: 'v1alpha1', kind: 'RuntimeClass' }, 'A container runtime configuration (alpha shape).', {
    spec: fieldOf(RuntimeClassSpecV1alpha1Schema, { description: 'The RuntimeClass.' }),
  }),
);

/** v1 field paths of the rules, as the alpha shape names them. */
function alphaPaths(errs: FieldError[]): FieldError[] {
  return errs.map((e) => ({ ...e, field: e.field === 'handler' ? 'spec.runtimeHandler' : e.field.startsWith('metadata') ? e.field : `spec.${e.field}` }));
}

/** The v1alpha1 RuntimeClass declaration. */
export const runtimeClassV1alpha1Kind: KindDeclaration = {
  ...runtimeClassKind,
  version: 'v1alpha1',
  schema: RuntimeClassV1alpha1Schema,
  protobufMessage: 'k8s.io.api.node.v1alpha1.RuntimeClass',
  conversion: RUNTIMECLASS_CONVERSION,
  strategy: {
    validate: (o, ctx) => alphaPaths(runtimeClassStrategy.validate!(convertRuntimeClass(o, 'v1'), ctx)),
    validateUpdate: (o, old, ctx) => alphaPaths(runtimeClassStrategy.validateUpdate!(convertRuntimeClass(o, 'v1'), convertRuntimeClass(old, 'v1'), ctx)),
  },
  tableColumns: [
    { name: 'Runtime-Handler', type: 'string', priority: 0, description: 'The CRI handler of the class', cell: (o) => asMap(o.spec).runtimeHandler ?? '' },
  ],
};
