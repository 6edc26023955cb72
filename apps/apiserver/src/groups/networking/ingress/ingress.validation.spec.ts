import type { KubeObject } from '@app/apimachinery';
import { ingressAddressCell, ingressHostsCell, ingressPortsCell } from './ingress.kind.js';
import { validateIngress, validateIngressStatusUpdate, validateIngressUpdate, wildcardSubdomainErrors } from './ingress.validation.js';

type Obj = Record<string, unknown>;

const backend = (name = 'svc', port: Obj = { number: 80 }): Obj => ({ service: { name, port } });
/** An Ingress with one rule of one path; `path` and `spec` add or replace fields. */
function ingress(path: Obj = {}, spec: Obj = {}, annotations?: Record<string, string>): KubeObject {
  return {
    metadata: { name: 'web', namespace: 'ns', ...(annotations ? { annotations } : {}) },
    spec: { rules: [{ host: 'foo.example.com', http: { paths: [{ path: '/api', pathType: 'Prefix', backend: backend(), ...path }] } }], ...spec },
  };
}
const messages = (errs: { field: string; detail?: string }[]) => errs.map((e) => `${e.field}: ${e.detail ?? ''}`);

describe('Ingress validation', () => {
  it('accepts rules, a default backend alone, wildcard hosts and TLS', () => {
    expect(validateIngress(ingress())).toEqual([]);
    expect(validateIngress({ metadata: { name: 'd' }, spec: { defaultBackend: backend('svc', { name: 'http' }) } })).toEqual([]);
    expect(validateIngress(ingress({}, { tls: [{ hosts: ['*.example.com'], secretName: 'cert' }], ingressClassName: 'nginx' }))).toEqual([]);
  });
  it('requires a default backend or rules', () => {
    expect(messages(validateIngress({ metadata: { name: 'x' }, spec: {} }))).toEqual([
      'spec: []networking.IngressRule(nil): either `defaultBackend` or `rules` must be specified',
    ]);
  });
  it('requires pathType and checks paths against it', () => {
    expect(messages(validateIngress(ingress({ pathType: undefined })))).toEqual(['spec.rules[0].http.paths[0].pathType: pathType must be specified']);
    expect(messages(validateIngress(ingress({ pathType: 'Regex' })))).toEqual([
      'spec.rules[0].http.paths[0].pathType: supported values: "Exact", "ImplementationSpecific", "Prefix"',
    ]);
    expect(messages(validateIngress(ingress({ path: 'api' })))).toEqual(['spec.rules[0].http.paths[0].path: must be an absolute path']);
    expect(messages(validateIngress(ingress({ path: '/a//b/..', pathType: 'Exact' })))).toEqual([
      "spec.rules[0].http.paths[0].path: must not contain '//'",
      "spec.rules[0].http.paths[0].path: cannot end with '/..'",
    ]);
    expect(validateIngress(ingress({ path: undefined, pathType: 'ImplementationSpecific' }))).toEqual([]);
  });
  it('takes one of service and resource, and a service port by name or number', () => {
    const p = 'spec.rules[0].http.paths[0].backend';
    expect(messages(validateIngress(ingress({ backend: {} })))).toEqual([`${p}: resource or service backend is required`]);
    expect(messages(validateIngress(ingress({ backend: { ...backend(), resource: { kind: 'Bucket', name: 'b' } } })))).toEqual([
      `${p}: cannot set both resource and service backends`,
    ]);
    expect(messages(validateIngress(ingress({ backend: backend('svc', {}) })))).toEqual([`${p}: port name or number is required`]);
    expect(messages(validateIngress(ingress({ backend: backend('svc', { name: 'http', number: 80 }) })))).toEqual([
      `${p}: cannot set both port name & port number`,
    ]);
    expect(messages(validateIngress(ingress({ backend: backend('svc', { number: 70000 }) })))).toEqual([
      `${p}.service.port.number: must be between 1 and 65535, inclusive`,
    ]);
    expect(messages(validateIngress(ingress({ backend: backend('1svc') })))[0]).toMatch(/^.*\.service\.name: a DNS-1035 label must consist/);
    expect(messages(validateIngress(ingress({ backend: { resource: { kind: '', name: 'a/b' } } })))).toEqual([
      `${p}.resource.kind: `,
      `${p}.resource.name: may not contain '/'`,
    ]);
  });
  it('checks hosts: no IP, DNS names, one leading wildcard label', () => {
    const rule = (host: string) => ingress({}, { rules: [{ host, http: { paths: [{ path: '/', pathType: 'Prefix', backend: backend() }] } }] });
    expect(messages(validateIngress(rule('10.0.0.1')))).toContain('spec.rules[0].host: must be a DNS name, not an IP address');
    expect(messages(validateIngress(rule('Foo.com')))[0]).toMatch(/^spec\.rules\[0\]\.host: a lowercase RFC 1123 subdomain/);
    expect(wildcardSubdomainErrors('*.*.example.com')[0]).toMatch(/^a wildcard DNS-1123 subdomain must start with '\*\.'.*e\.g\. '\*\.example\.com'/);
    expect(validateIngress(rule('*.example.com'))).toEqual([]);
  });
  it('checks TLS hosts and secret names, and the class name against the legacy annotation', () => {
    expect(messages(validateIngress(ingress({}, { tls: [{ hosts: ['*'], secretName: 'Bad_Name' }] })))).toHaveLength(2);
    expect(messages(validateIngress(ingress({}, { ingressClassName: 'a' }, { 'kubernetes.io/ingress.class': 'b' })))).toEqual([
      'annotations.kubernetes.io/ingress.class: must match `ingressClassName` when both are specified',
    ]);
  });
  it('lets an update keep a TLS secret name that was already invalid', () => {
    const old = ingress({}, { tls: [{ secretName: 'Bad_Name' }] });
    expect(validateIngressUpdate(ingress({ path: '/v2' }, { tls: [{ secretName: 'Bad_Name' }] }), old)).toEqual([]);
    expect(validateIngressUpdate(old, ingress())).toHaveLength(1);
  });
  it('checks the load balancer points written through /status', () => {
    const withStatus = (ingress: Obj[]): KubeObject => ({ ...ingress_(), status: { loadBalancer: { ingress } } });
    const ingress_ = () => ingress();
    expect(validateIngressStatusUpdate(withStatus([{ ip: '192.0.2.1' }, { hostname: 'lb.example.com' }]), ingress_())).toEqual([]);
    expect(messages(validateIngressStatusUpdate(withStatus([{ ip: 'nope' }, { hostname: '192.0.2.1' }]), ingress_()))).toEqual([
      'status.loadBalancer.ingress[0].ip: must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
      'status.loadBalancer.ingress[1].hostname: must be a DNS name, not an IP address',
    ]);
  });
});

describe("kubectl's Ingress columns", () => {
  it('print hosts (three at most), the address and the ports', () => {
    const rules = ['a.com', 'b.com', '', 'c.com', 'd.com'].map((host) => ({ host }));
    expect(ingressHostsCell({ metadata: {}, spec: { rules } })).toBe('a.com,b.com,c.com + 2 more...');
    expect(ingressHostsCell({ metadata: {}, spec: { rules: [{}] } })).toBe('*');
    const status = { loadBalancer: { ingress: [{ ip: '10.0.0.2' }, { hostname: 'lb.example.com' }, { ip: '10.0.0.2' }] } };
    expect(ingressAddressCell({ metadata: {}, status })).toBe('10.0.0.2,lb.example.com');
    expect(ingressPortsCell({ metadata: {}, spec: { tls: [{}] } })).toBe('80, 443');
    expect(ingressPortsCell({ metadata: {}, spec: {} })).toBe('80');
  });
});
