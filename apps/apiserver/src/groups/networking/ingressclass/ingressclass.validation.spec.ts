import type { KubeObject } from '@app/apimachinery';
import { ingressClassParametersCell, isDefaultIngressClass } from './ingressclass.kind.js';
import { validateIngressClass, validateIngressClassUpdate } from './ingressclass.validation.js';

type Obj = Record<string, unknown>;

/** An IngressClass as it reaches validation (parameters' scope defaulted by the schema). */
const ingressClass = (spec: Obj = {}, annotations?: Record<string, string>): KubeObject => ({
  metadata: { name: 'nginx', ...(annotations ? { annotations } : {}) },
  spec: { controller: 'example.com/ingress-controller', ...spec },
});
const messages = (errs: { field: string; detail?: string }[]) => errs.map((e) => `${e.field}: ${e.detail ?? ''}`);
const params = (p: Obj) => ({ parameters: { kind: 'Params', name: 'p', scope: 'Cluster', ...p } });

describe('IngressClass validation', () => {
  it('accepts a controller with cluster or namespaced parameters', () => {
    expect(validateIngressClass(ingressClass())).toEqual([]);
    expect(validateIngressClass(ingressClass(params({ apiGroup: 'example.com' })))).toEqual([]);
    expect(validateIngressClass(ingressClass(params({ scope: 'Namespace', namespace: 'ops' })))).toEqual([]);
  });
  it('requires a domain-prefixed controller of at most 250 bytes', () => {
    expect(messages(validateIngressClass(ingressClass({ controller: '' })))).toEqual(['spec.controller: ']);
    expect(messages(validateIngressClass(ingressClass({ controller: 'nginx' })))).toEqual([
      'spec.controller: must be a domain-prefixed path (such as "acme.io/foo")',
    ]);
    expect(messages(validateIngressClass(ingressClass({ controller: `example.com/${'a'.repeat(250)}` })))).toEqual([
      'spec.controller: may not be more than 250 bytes',
    ]);
    expect(messages(validateIngressClass(ingressClass({ controller: 'example.com/a b' })))).toEqual([
      `spec.controller: Invalid path (regex used for validation is '[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')`,
    ]);
  });
  it('checks the parameters: kind, name, scope and namespace', () => {
    expect(messages(validateIngressClass(ingressClass(params({ kind: '', name: '..' }))))).toEqual([
      'spec.parameters.kind: ',
      "spec.parameters.name: may not be '..'",
    ]);
    expect(messages(validateIngressClass(ingressClass(params({ scope: 'Global' }))))).toEqual([
      'spec.parameters.scope: supported values: "Cluster", "Namespace"',
    ]);
    expect(messages(validateIngressClass(ingressClass(params({ scope: 'Namespace' }))))).toEqual([
      "spec.parameters.namespace: `parameters.scope` is set to 'Namespace'",
    ]);
    expect(messages(validateIngressClass(ingressClass(params({ namespace: 'ops' }))))).toEqual([
      "spec.parameters.namespace: `parameters.scope` is set to 'Cluster'",
    ]);
  });
  it('keeps the controller immutable', () => {
    expect(messages(validateIngressClassUpdate(ingressClass({ controller: 'example.com/other' }), ingressClass()))).toEqual([
      'spec.controller: field is immutable',
    ]);
    expect(validateIngressClassUpdate(ingressClass(params({})), ingressClass())).toEqual([]);
  });
});

describe('IngressClass columns and the default annotation', () => {
  it('prints the parameters as kind.group/name and knows the default class', () => {
    expect(ingressClassParametersCell(ingressClass(params({ apiGroup: 'example.com' })))).toBe('Params.example.com/p');
    expect(ingressClassParametersCell(ingressClass(params({})))).toBe('Params/p');
    expect(ingressClassParametersCell(ingressClass())).toBe('<none>');
    expect(isDefaultIngressClass(ingressClass({}, { 'ingressclass.kubernetes.io/is-default-class': 'true' }))).toBe(true);
    expect(isDefaultIngressClass(ingressClass({}, { 'ingressclass.kubernetes.io/is-default-class': 'yes' }))).toBe(false);
  });
});
