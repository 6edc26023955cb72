/**
 * Rules of core/v1 Binding: the pods' `binding` subresource and the namespaced `bindings`
 * resource (pkg/registry/core/pod/storage/storage.go BindingREST, LegacyBindingREST,
 * setPodNodeNameAndAnnotations; pkg/apis/core/validation ValidatePodBinding), and how both
 * appear in discovery.
 */
import type { RowGroup } from './conformance.types.js';

const NS = 'cf-bind';
const PODS = `/api/v1/namespaces/${NS}/pods`;

type Obj = Record<string, unknown>;
const pod = (name: string, spec: Obj = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'c', image: 'nginx' }], ...spec },
});
const binding = (name: string, target: Obj, meta: Obj = {}) => ({ apiVersion: 'v1', kind: 'Binding', metadata: { name, ...meta }, target });
const SRC = 'upstream pkg/registry/core/pod/storage/storage.go';
const VALIDATION_DIVERGENCE =
  'kube-apiserver returns ValidatePodBinding errors as a plain aggregate, which it answers as 500; here they are 422 Invalid with the field in details.causes, as every other validation error';

/** The group. */
export const BINDING: RowGroup = {
  name: 'core/v1 Binding',
  namespace: NS,
  rows: [
    {
      id: 'bind-1',
      rule: 'POST pods/<name>/binding sets spec.nodeName, merges the annotations and makes PodScheduled True',
      source: `${SRC} (BindingREST.Create, setPodNodeNameAndAnnotations)`,
      upstream: '201, a Status of Success; the pod has nodeName n1, the annotation and PodScheduled True',
      setup: [{ method: 'POST', path: PODS, body: pod('b1') }],
      req: { method: 'POST', path: `${PODS}/b1/binding`, body: binding('b1', { kind: 'Node', name: 'n1' }, { annotations: { 'example.com/by': 'test' } }) },
      expect: { status: 201, body: { kind: 'Status', apiVersion: 'v1', status: 'Success', code: 201 } },
      then: [
        {
          req: { method: 'GET', path: `${PODS}/b1` },
          expect: {
            status: 200,
            body: {
              metadata: { annotations: { 'example.com/by': 'test' } },
              spec: { nodeName: 'n1' },
              status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'True' }] },
            },
          },
        },
      ],
    },
    {
      id: 'bind-2',
      rule: 'A pod already on a node is not bound again',
      source: `${SRC} (setPodNodeNameAndAnnotations, assignPod)`,
      upstream: '409 Conflict on pods/binding, \'pod b2 is already assigned to node "n1"\'',
      setup: [
        { method: 'POST', path: PODS, body: pod('b2') },
        { method: 'POST', path: `${PODS}/b2/binding`, body: binding('b2', { name: 'n1' }) },
      ],
      req: { method: 'POST', path: `${PODS}/b2/binding`, body: binding('b2', { name: 'n2' }) },
      expect: {
        status: 409,
        reason: 'Conflict',
        message: 'Operation cannot be fulfilled on pods/binding "b2": pod b2 is already assigned to node "n1"',
        body: { details: { name: 'b2', kind: 'pods/binding' } },
      },
    },
    {
      id: 'bind-3',
      rule: 'A pod with scheduling gates is not bound',
      source: `${SRC} (setPodNodeNameAndAnnotations)`,
      upstream: '409 Conflict, "pod b3 has non-empty .spec.schedulingGates"',
      setup: [{ method: 'POST', path: PODS, body: pod('b3', { schedulingGates: [{ name: 'example.com/gate' }] }) }],
      req: { method: 'POST', path: `${PODS}/b3/binding`, body: binding('b3', { name: 'n1' }) },
      expect: { status: 409, reason: 'Conflict', message: 'Operation cannot be fulfilled on pods/binding "b3": pod b3 has non-empty .spec.schedulingGates' },
    },
    {
      id: 'bind-4',
      rule: 'The target kind is Node or empty',
      source: 'upstream pkg/apis/core/validation (ValidatePodBinding)',
      upstream: '500, no reason, \'target.kind: Unsupported value: "Pod": supported values: "Node", "<empty>"\'',
      divergence: VALIDATION_DIVERGENCE,
      setup: [{ method: 'POST', path: PODS, body: pod('b4') }],
      req: { method: 'POST', path: `${PODS}/b4/binding`, body: binding('b4', { kind: 'Pod', name: 'n1' }) },
      expect: {
        status: 422,
        reason: 'Invalid',
        message: 'Binding "b4" is invalid: target.kind: Unsupported value: "Pod": supported values: "Node", "<empty>"',
        body: { details: { causes: [{ reason: 'FieldValueNotSupported', field: 'target.kind' }] } },
      },
    },
    {
      id: 'bind-5',
      rule: 'The target name is required',
      source: 'upstream pkg/apis/core/validation (ValidatePodBinding)',
      upstream: '500, no reason, "target.name: Required value"',
      divergence: VALIDATION_DIVERGENCE,
      setup: [{ method: 'POST', path: PODS, body: pod('b5') }],
      req: { method: 'POST', path: `${PODS}/b5/binding`, body: binding('b5', { kind: 'Node' }) },
      expect: {
        status: 422,
        reason: 'Invalid',
        message: 'Binding "b5" is invalid: target.name: Required value',
        body: { details: { causes: [{ reason: 'FieldValueRequired', field: 'target.name' }] } },
      },
    },
    {
      id: 'bind-6',
      rule: "The Binding's name is the pod's in the URL",
      source: `${SRC} (BindingREST.Create)`,
      upstream: '400 BadRequest, "name in URL does not match name in Binding object"',
      setup: [{ method: 'POST', path: PODS, body: pod('b6') }],
      req: { method: 'POST', path: `${PODS}/b6/binding`, body: binding('other', { name: 'n1' }) },
      expect: { status: 400, reason: 'BadRequest', message: 'name in URL does not match name in Binding object' },
    },
    {
      id: 'bind-7',
      rule: 'Binding a pod that does not exist is 404',
      source: `${SRC} (assignPod: InterpretGetError)`,
      upstream: '404 NotFound, \'pods "ghost" not found\'',
      req: { method: 'POST', path: `${PODS}/ghost/binding`, body: binding('ghost', { name: 'n1' }) },
      expect: { status: 404, reason: 'NotFound', message: 'pods "ghost" not found' },
    },
    {
      id: 'bind-8',
      rule: 'A dry-run binding answers Success and leaves the pod unbound',
      source: `${SRC} (GuaranteedUpdate with dryRun)`,
      upstream: '201 Success; the pod has no nodeName and no conditions',
      setup: [{ method: 'POST', path: PODS, body: pod('b8') }],
      req: { method: 'POST', path: `${PODS}/b8/binding?dryRun=All`, body: binding('b8', { name: 'n1' }) },
      expect: { status: 201, body: { status: 'Success' } },
      then: [{ req: { method: 'GET', path: `${PODS}/b8` }, expect: { status: 200, absent: ['spec.nodeName', 'status.conditions'] } }],
    },
    {
      id: 'bind-9',
      rule: 'POST bindings binds the pod that metadata.name names',
      source: `${SRC} (LegacyBindingREST.Create)`,
      upstream: '201, a Status of Success; the pod has nodeName n3',
      setup: [{ method: 'POST', path: PODS, body: pod('b9') }],
      req: { method: 'POST', path: `/api/v1/namespaces/${NS}/bindings`, body: binding('b9', { kind: 'Node', name: 'n3' }) },
      expect: { status: 201, body: { kind: 'Status', status: 'Success' } },
      then: [{ req: { method: 'GET', path: `${PODS}/b9` }, expect: { status: 200, body: { spec: { nodeName: 'n3' } } } }],
    },
    {
      id: 'bind-10',
      rule: 'Discovery lists bindings and pods/binding, both create-only, of kind Binding',
      source: 'upstream pkg/registry/core/rest/storage_core.go (bindings, pods/binding)',
      upstream: '200; {"name":"bindings","singularName":"binding","namespaced":true,"kind":"Binding","verbs":["create"]} and pods/binding alike',
      req: { method: 'GET', path: '/api/v1' },
      expect: {
        status: 200,
        text: /^(?=.*\{"name":"bindings","singularName":"binding","namespaced":true,"kind":"Binding","verbs":\["create"\]\})(?=.*\{"name":"pods\/binding","singularName":"","namespaced":true,"kind":"Binding","verbs":\["create"\]\})/s,
      },
    },
    {
      id: 'bind-11',
      rule: 'kubectl api-resources lists bindings with the verb create',
      source: 'upstream kubectl api-resources over discovery',
      upstream: 'a row "bindings  v1  true  Binding  create"',
      kubectl: { args: ['api-resources', '--api-group=', '--namespaced=true', '-o', 'wide'], stdout: /^bindings\s+v1\s+true\s+Binding\s+create\s*$/m },
    },
  ],
};
