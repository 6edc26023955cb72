/**
 * Rules of networking.k8s.io/v1 Ingress, IngressClass and NetworkPolicy as stored kinds (no
 * ingress controller, no network plugin): defaults (pkg/apis/networking/v1 defaults.go),
 * validation (pkg/apis/networking/validation), the status subresource, the DefaultIngressClass
 * admission plugin and kubectl's columns (printIngress, printIngressClass, printNetworkPolicy).
 */
import type { RowGroup } from './conformance.types.js';

const NS = 'cf-net';
const V1 = '/apis/networking.k8s.io/v1';
const INGRESSES = `${V1}/namespaces/${NS}/ingresses`;
const POLICIES = `${V1}/namespaces/${NS}/networkpolicies`;
const CLASSES = `${V1}/ingressclasses`;
const MERGE = { 'content-type': 'application/merge-patch+json' };
const TABLE = 'application/json;as=Table;g=meta.k8s.io;v=v1';

type Obj = Record<string, unknown>;
/** A backend on Service `web`, port 80. */
const backend = (port: Obj = { number: 80 }): Obj => ({ service: { name: 'web', port } });
/** An Ingress named `name` with one host rule of one path; `path` and `spec` add or replace fields. */
const ingress = (name: string, path: Obj = {}, spec: Obj = {}) => ({
  apiVersion: 'networking.k8s.io/v1',
  kind: 'Ingress',
  metadata: { name },
  spec: { rules: [{ host: 'shop.example.com', http: { paths: [{ path: '/', pathType: 'Prefix', backend: backend(), ...path }] } }], ...spec },
});
/** An IngressClass named `name`; `spec` adds or replaces fields. */
const ingressClass = (name: string, spec: Obj = {}, annotations?: Record<string, string>) => ({
  apiVersion: 'networking.k8s.io/v1',
  kind: 'IngressClass',
  metadata: { name, ...(annotations ? { annotations } : {}) },
  spec: { controller: 'example.com/ingress-controller', ...spec },
});
/** A NetworkPolicy named `name`; `spec` adds or replaces fields. */
const policy = (name: string, spec: Obj = {}) => ({
  apiVersion: 'networking.k8s.io/v1',
  kind: 'NetworkPolicy',
  metadata: { name },
  spec: { podSelector: { matchLabels: { app: 'db' } }, ...spec },
});

/** The group. */
export const NETWORKING: RowGroup = {
  name: 'networking.k8s.io/v1 Ingress, IngressClass and NetworkPolicy',
  namespace: NS,
  rows: [
    {
      id: 'net-1',
      rule: 'The group serves ingresses (short name ing, with /status), ingressclasses (cluster-scoped) and networkpolicies (short name netpol)',
      source: 'upstream pkg/registry/networking (rest storage, ShortNames)',
      upstream: '200 APIResourceList with ingressclasses, ingresses, ingresses/status, networkpolicies',
      divergence:
        'kube-apiserver 1.33 also serves ipaddresses and servicecidrs (+/status) in this group version; they are not served here (no Service IP allocation to back them)',
      req: { method: 'GET', path: V1 },
      expect: {
        status: 200,
        body: {
          groupVersion: 'networking.k8s.io/v1',
          resources: [
            { name: 'ingressclasses', namespaced: false, kind: 'IngressClass' },
            { name: 'ingresses', namespaced: true, kind: 'Ingress', shortNames: ['ing'] },
            { name: 'ingresses/status', namespaced: true, kind: 'Ingress' },
            { name: 'networkpolicies', namespaced: true, kind: 'NetworkPolicy', shortNames: ['netpol'] },
          ],
        },
      },
    },
    {
      id: 'net-2',
      rule: 'An Ingress is stored as given, with generation 1 and an empty load balancer status; writes to the main resource keep the status, /status writes it',
      source: 'upstream pkg/registry/networking/ingress strategy.go (PrepareForCreate, PrepareForUpdate, StatusStrategy)',
      upstream: '201 with metadata.generation 1 and status {"loadBalancer":{}}; the status in a main-resource patch is ignored; /status sets it',
      req: { method: 'POST', path: INGRESSES, body: ingress('i2') },
      expect: { status: 201, body: { metadata: { generation: 1 }, status: { loadBalancer: {} } }, absent: ['spec.ingressClassName', 'spec.defaultBackend'] },
      then: [
        {
          req: { method: 'PATCH', path: `${INGRESSES}/i2`, body: { status: { loadBalancer: { ingress: [{ ip: '192.0.2.1' }] } } }, headers: MERGE },
          expect: { status: 200, body: { metadata: { generation: 1 }, status: { loadBalancer: {} } } },
        },
        {
          req: { method: 'PATCH', path: `${INGRESSES}/i2/status`, body: { status: { loadBalancer: { ingress: [{ ip: '192.0.2.1' }] } } }, headers: MERGE },
          expect: { status: 200, body: { status: { loadBalancer: { ingress: [{ ip: '192.0.2.1' }] } } } },
        },
        {
          req: { method: 'PATCH', path: `${INGRESSES}/i2`, body: { spec: { tls: [{ secretName: 'shop-tls' }] } }, headers: MERGE },
          expect: { status: 200, body: { metadata: { generation: 2 }, status: { loadBalancer: { ingress: [{ ip: '192.0.2.1' }] } } } },
        },
        {
          req: {
            method: 'PATCH',
            path: `${INGRESSES}/i2/status`,
            body: { status: { loadBalancer: { ingress: [{ hostname: '192.0.2.2' }] } } },
            headers: MERGE,
          },
          expect: {
            status: 422,
            message:
              'Ingress.networking.k8s.io "i2" is invalid: status.loadBalancer.ingress[0].hostname: Invalid value: "192.0.2.2": must be a DNS name, not an IP address',
          },
        },
      ],
    },
    {
      id: 'net-3',
      rule: 'An Ingress needs a default backend or rules',
      source: 'upstream pkg/apis/networking/validation (ValidateIngressSpec)',
      upstream: '422 Invalid "spec: Invalid value: []networking.IngressRule(nil): either `defaultBackend` or `rules` must be specified"',
      req: { method: 'POST', path: INGRESSES, body: { ...ingress('i3'), spec: {} } },
      expect: {
        status: 422,
        reason: 'Invalid',
        message:
          'Ingress.networking.k8s.io "i3" is invalid: spec: Invalid value: []networking.IngressRule(nil): either `defaultBackend` or `rules` must be specified',
      },
      then: [
        { req: { method: 'POST', path: INGRESSES, body: { ...ingress('i3'), spec: { defaultBackend: backend({ name: 'http' }) } } }, expect: { status: 201 } },
      ],
    },
    {
      id: 'net-4',
      rule: 'Each path names its pathType (no default in v1); Exact and Prefix paths are absolute, without // or /.. ',
      source: 'upstream pkg/apis/networking/validation (validateHTTPIngressPath)',
      upstream:
        '422 "spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified"; "Unsupported value: \\"Regex\\": supported values: \\"Exact\\", \\"ImplementationSpecific\\", \\"Prefix\\""; "path: Invalid value: \\"shop\\": must be an absolute path"',
      req: { method: 'POST', path: INGRESSES, body: ingress('i4', { pathType: undefined }) },
      expect: {
        status: 422,
        reason: 'Invalid',
        message: 'Ingress.networking.k8s.io "i4" is invalid: spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified',
      },
      then: [
        {
          req: { method: 'POST', path: INGRESSES, body: ingress('i4', { pathType: 'Regex' }) },
          expect: {
            status: 422,
            message:
              'Ingress.networking.k8s.io "i4" is invalid: spec.rules[0].http.paths[0].pathType: Unsupported value: "Regex": supported values: "Exact", "ImplementationSpecific", "Prefix"',
          },
        },
        {
          req: { method: 'POST', path: INGRESSES, body: ingress('i4', { path: 'shop' }) },
          expect: {
            status: 422,
            message: 'Ingress.networking.k8s.io "i4" is invalid: spec.rules[0].http.paths[0].path: Invalid value: "shop": must be an absolute path',
          },
        },
        {
          req: { method: 'POST', path: INGRESSES, body: ingress('i4', { path: '/a//b', pathType: 'Exact' }) },
          expect: {
            status: 422,
            message: 'Ingress.networking.k8s.io "i4" is invalid: spec.rules[0].http.paths[0].path: Invalid value: "/a//b": must not contain \'//\'',
          },
        },
        { req: { method: 'POST', path: INGRESSES, body: ingress('i4', { path: undefined, pathType: 'ImplementationSpecific' }) }, expect: { status: 201 } },
      ],
    },
    {
      id: 'net-5',
      rule: 'A backend is a service or a resource, not both; a service port has a name or a number, not both',
      source: 'upstream pkg/apis/networking/validation (validateIngressBackend)',
      upstream:
        '422 "backend: Invalid value: \\"\\": cannot set both resource and service backends"; "backend: Required value: port name or number is required"; "backend: Invalid value: \\"\\": cannot set both port name & port number"',
      req: {
        method: 'POST',
        path: INGRESSES,
        body: ingress('i5', { backend: { ...backend(), resource: { apiGroup: 'storage.example.com', kind: 'Bucket', name: 'assets' } } }),
      },
      expect: {
        status: 422,
        reason: 'Invalid',
        message:
          'Ingress.networking.k8s.io "i5" is invalid: spec.rules[0].http.paths[0].backend: Invalid value: "": cannot set both resource and service backends',
      },
      then: [
        {
          req: { method: 'POST', path: INGRESSES, body: ingress('i5', { backend: backend({}) }) },
          expect: {
            status: 422,
            message: 'Ingress.networking.k8s.io "i5" is invalid: spec.rules[0].http.paths[0].backend: Required value: port name or number is required',
          },
        },
        {
          req: { method: 'POST', path: INGRESSES, body: ingress('i5', { backend: backend({ name: 'http', number: 80 }) }) },
          expect: {
            status: 422,
            message:
              'Ingress.networking.k8s.io "i5" is invalid: spec.rules[0].http.paths[0].backend: Invalid value: "": cannot set both port name & port number',
          },
        },
        {
          req: {
            method: 'POST',
            path: INGRESSES,
            body: ingress('i5', { backend: { resource: { apiGroup: 'storage.example.com', kind: 'Bucket', name: 'assets' } } }),
          },
          expect: { status: 201 },
        },
      ],
    },
    {
      id: 'net-6',
      rule: 'A rule host is a DNS name (an IP is refused) or a wildcard of one leading label',
      source: 'upstream pkg/apis/networking/validation (validateIngressRules)',
      upstream:
        '422 "spec.rules[0].host: Invalid value: \\"10.0.0.1\\": must be a DNS name, not an IP address"; *.example.com accepted, *.*.example.com refused',
      req: {
        method: 'POST',
        path: INGRESSES,
        body: ingress('i6', {}, { rules: [{ host: '10.0.0.1', http: { paths: [{ path: '/', pathType: 'Prefix', backend: backend() }] } }] }),
      },
      expect: {
        status: 422,
        reason: 'Invalid',
        message: 'Ingress.networking.k8s.io "i6" is invalid: spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address',
      },
      then: [
        {
          req: {
            method: 'POST',
            path: INGRESSES,
            body: ingress('i6', {}, { rules: [{ host: '*.*.example.com', http: { paths: [{ path: '/', pathType: 'Prefix', backend: backend() }] } }] }),
          },
          expect: {
            status: 422,
            message:
              /^Ingress\.networking\.k8s\.io "i6" is invalid: spec\.rules\[0\]\.host: Invalid value: "\*\.\*\.example\.com": a wildcard DNS-1123 subdomain/,
          },
        },
        {
          req: {
            method: 'POST',
            path: INGRESSES,
            body: ingress('i6', {}, { rules: [{ host: '*.example.com', http: { paths: [{ path: '/', pathType: 'Prefix', backend: backend() }] } }] }),
          },
          expect: { status: 201 },
        },
      ],
    },
    {
      id: 'net-7',
      rule: "kubectl's Ingress columns: CLASS (<none> without one), HOSTS (* without any), ADDRESS from the status, PORTS (80, 443 with TLS), AGE",
      source: 'upstream pkg/printers/internalversion printers.go (printIngress)',
      upstream: '200 Table with columns Name, Class, Hosts, Address, Ports, Age; cells ["i7","<none>","shop.example.com","","80, 443","<age>"]',
      setup: [{ method: 'POST', path: INGRESSES, body: ingress('i7', {}, { tls: [{ hosts: ['shop.example.com'], secretName: 'shop-tls' }] }) }],
      req: { method: 'GET', path: `${INGRESSES}/i7`, headers: { accept: TABLE } },
      expect: {
        status: 200,
        body: {
          kind: 'Table',
          columnDefinitions: [{ name: 'Name' }, { name: 'Class' }, { name: 'Hosts' }, { name: 'Address' }, { name: 'Ports' }, { name: 'Age' }],
        },
        text: /"cells":\["i7","<none>","shop\.example\.com","","80, 443","\d+s"\]/,
      },
    },
    {
      id: 'net-8',
      rule: "An IngressClass's controller is a domain-prefixed path that cannot change; its parameters default to scope Cluster, which takes no namespace",
      source:
        'upstream pkg/apis/networking/v1 defaults.go (SetDefaults_IngressClass); pkg/apis/networking/validation (ValidateIngressClass, ValidateIngressClassUpdate)',
      upstream:
        '201 with spec.parameters.scope Cluster; 422 "spec.controller: Invalid value: \\"example.com/other\\": field is immutable"; "spec.parameters.namespace: Forbidden: `parameters.scope` is set to \'Cluster\'"',
      req: { method: 'POST', path: CLASSES, body: ingressClass('cf-net-8', { parameters: { apiGroup: 'example.com', kind: 'Params', name: 'p' } }) },
      expect: { status: 201, body: { metadata: { generation: 1 }, spec: { parameters: { scope: 'Cluster' } } } },
      then: [
        {
          req: { method: 'PATCH', path: `${CLASSES}/cf-net-8`, body: { spec: { controller: 'example.com/other' } }, headers: MERGE },
          expect: {
            status: 422,
            message: 'IngressClass.networking.k8s.io "cf-net-8" is invalid: spec.controller: Invalid value: "example.com/other": field is immutable',
          },
        },
        {
          req: { method: 'PATCH', path: `${CLASSES}/cf-net-8`, body: { spec: { parameters: { namespace: 'ops' } } }, headers: MERGE },
          expect: {
            status: 422,
            message: 'IngressClass.networking.k8s.io "cf-net-8" is invalid: spec.parameters.namespace: Forbidden: `parameters.scope` is set to \'Cluster\'',
          },
        },
        {
          req: { method: 'POST', path: CLASSES, body: ingressClass('cf-net-8b', { controller: 'nginx' }) },
          expect: {
            status: 422,
            message:
              'IngressClass.networking.k8s.io "cf-net-8b" is invalid: spec.controller: Invalid value: "nginx": must be a domain-prefixed path (such as "acme.io/foo")',
          },
        },
      ],
    },
    {
      id: 'net-9',
      rule: "kubectl's IngressClass columns: CONTROLLER, PARAMETERS (kind.group/name, or <none>), AGE",
      source: 'upstream pkg/printers/internalversion printers.go (printIngressClass)',
      upstream: '200 Table with columns Name, Controller, Parameters, Age; cells ["cf-net-8","example.com/ingress-controller","Params.example.com/p","<age>"]',
      req: { method: 'GET', path: `${CLASSES}/cf-net-8`, headers: { accept: TABLE } },
      expect: {
        status: 200,
        body: { kind: 'Table', columnDefinitions: [{ name: 'Name' }, { name: 'Controller' }, { name: 'Parameters' }, { name: 'Age' }] },
        text: /"cells":\["cf-net-8","example\.com\/ingress-controller","Params\.example\.com\/p","\d+s"\]/,
      },
      then: [{ req: { method: 'DELETE', path: `${CLASSES}/cf-net-8` }, expect: { status: 200 } }],
    },
    {
      id: 'net-10',
      rule: 'A NetworkPolicy gets policyTypes Ingress (and Egress with egress rules), TCP ports, and an empty podSelector written out',
      source: 'upstream pkg/apis/networking/v1 defaults.go (SetDefaults_NetworkPolicy, SetDefaults_NetworkPolicyPort)',
      upstream: '201: policyTypes ["Ingress","Egress"], ports[0].protocol TCP, generation 1; without podSelector: podSelector {} and policyTypes ["Ingress"]',
      req: { method: 'POST', path: POLICIES, body: policy('p10', { ingress: [{ ports: [{ port: 5432 }] }], egress: [{ to: [{ namespaceSelector: {} }] }] }) },
      expect: {
        status: 201,
        body: { metadata: { generation: 1 }, spec: { policyTypes: ['Ingress', 'Egress'], ingress: [{ ports: [{ port: 5432, protocol: 'TCP' }] }] } },
        absent: ['status'],
      },
      then: [
        {
          req: { method: 'POST', path: POLICIES, body: { ...policy('p10b'), spec: {} } },
          expect: { status: 201, body: { spec: { podSelector: {}, policyTypes: ['Ingress'] } } },
        },
      ],
    },
    {
      id: 'net-11',
      rule: 'A NetworkPolicy port range needs a numeric port no greater than endPort; a protocol is TCP, UDP or SCTP',
      source: 'upstream pkg/apis/networking/validation (ValidateNetworkPolicyPort)',
      upstream:
        '422 "spec.ingress[0].ports[0].endPort: Invalid value: 80: must be greater than or equal to `port`"; "endPort: Invalid value: 90: may not be specified when `port` is non-numeric"; "protocol: Unsupported value: \\"ICMP\\": supported values: \\"TCP\\", \\"UDP\\", \\"SCTP\\""',
      req: { method: 'POST', path: POLICIES, body: policy('p11', { ingress: [{ ports: [{ port: 90, endPort: 80 }] }] }) },
      expect: {
        status: 422,
        reason: 'Invalid',
        message:
          'NetworkPolicy.networking.k8s.io "p11" is invalid: spec.ingress[0].ports[0].endPort: Invalid value: 80: must be greater than or equal to `port`',
      },
      then: [
        {
          req: { method: 'POST', path: POLICIES, body: policy('p11', { ingress: [{ ports: [{ port: 'http', endPort: 90 }] }] }) },
          expect: {
            status: 422,
            message:
              'NetworkPolicy.networking.k8s.io "p11" is invalid: spec.ingress[0].ports[0].endPort: Invalid value: 90: may not be specified when `port` is non-numeric',
          },
        },
        {
          req: { method: 'POST', path: POLICIES, body: policy('p11', { egress: [{ ports: [{ protocol: 'ICMP' }] }] }) },
          expect: {
            status: 422,
            message:
              'NetworkPolicy.networking.k8s.io "p11" is invalid: spec.egress[0].ports[0].protocol: Unsupported value: "ICMP": supported values: "TCP", "UDP", "SCTP"',
          },
        },
        { req: { method: 'POST', path: POLICIES, body: policy('p11', { ingress: [{ ports: [{ port: 8000, endPort: 9000 }] }] }) }, expect: { status: 201 } },
      ],
    },
    {
      id: 'net-12',
      rule: 'A peer names pods, namespaces or an ipBlock alone; the ipBlock is a CIDR and its exceptions lie strictly inside it',
      source: 'upstream pkg/apis/networking/validation (ValidateNetworkPolicyPeer, ValidateIPBlock)',
      upstream:
        '422 "spec.ingress[0].from[0]: Required value: must specify a peer"; "from[0]: Forbidden: may not specify both ipBlock and another peer"; "ipBlock.cidr: Invalid value: \\"10.0.0.0\\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"; "ipBlock.except[0]: Invalid value: \\"10.1.0.0/24\\": must be a strict subset of `cidr`"',
      req: { method: 'POST', path: POLICIES, body: policy('p12', { ingress: [{ from: [{}] }] }) },
      expect: {
        status: 422,
        reason: 'Invalid',
        message: 'NetworkPolicy.networking.k8s.io "p12" is invalid: spec.ingress[0].from[0]: Required value: must specify a peer',
      },
      then: [
        {
          req: { method: 'POST', path: POLICIES, body: policy('p12', { ingress: [{ from: [{ podSelector: {}, ipBlock: { cidr: '10.0.0.0/8' } }] }] }) },
          expect: {
            status: 422,
            message: 'NetworkPolicy.networking.k8s.io "p12" is invalid: spec.ingress[0].from[0]: Forbidden: may not specify both ipBlock and another peer',
          },
        },
        {
          req: { method: 'POST', path: POLICIES, body: policy('p12', { egress: [{ to: [{ ipBlock: { cidr: '10.0.0.0' } }] }] }) },
          expect: {
            status: 422,
            message:
              'NetworkPolicy.networking.k8s.io "p12" is invalid: spec.egress[0].to[0].ipBlock.cidr: Invalid value: "10.0.0.0": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)',
          },
        },
        {
          req: { method: 'POST', path: POLICIES, body: policy('p12', { egress: [{ to: [{ ipBlock: { cidr: '10.0.0.0/16', except: ['10.1.0.0/24'] } }] }] }) },
          expect: {
            status: 422,
            message:
              'NetworkPolicy.networking.k8s.io "p12" is invalid: spec.egress[0].to[0].ipBlock.except[0]: Invalid value: "10.1.0.0/24": must be a strict subset of `cidr`',
          },
        },
        {
          req: { method: 'POST', path: POLICIES, body: policy('p12', { egress: [{ to: [{ ipBlock: { cidr: '10.0.0.0/16', except: ['10.0.1.0/24'] } }] }] }) },
          expect: { status: 201 },
        },
      ],
    },
    {
      id: 'net-13',
      rule: 'policyTypes holds Ingress and Egress only, at most two',
      source: 'upstream pkg/apis/networking/validation (ValidateNetworkPolicySpec)',
      upstream: '422 "spec.policyTypes[0]: Unsupported value: \\"Sideways\\": supported values: \\"Ingress\\", \\"Egress\\""',
      req: { method: 'POST', path: POLICIES, body: policy('p13', { policyTypes: ['Sideways'] }) },
      expect: {
        status: 422,
        reason: 'Invalid',
        message: 'NetworkPolicy.networking.k8s.io "p13" is invalid: spec.policyTypes[0]: Unsupported value: "Sideways": supported values: "Ingress", "Egress"',
      },
      then: [
        {
          req: { method: 'POST', path: POLICIES, body: policy('p13', { policyTypes: ['Egress'] }) },
          expect: { status: 201, body: { spec: { policyTypes: ['Egress'] } } },
        },
      ],
    },
    {
      id: 'net-14',
      rule: "kubectl's NetworkPolicy columns: POD-SELECTOR (<none> for an empty selector), AGE",
      source: 'upstream pkg/printers/internalversion printers.go (printNetworkPolicy)',
      upstream: '200 Table with columns Name, Pod-Selector, Age; cells ["p10","app=db","<age>"] and ["p10b","<none>","<age>"]',
      req: { method: 'GET', path: `${POLICIES}/p10`, headers: { accept: TABLE } },
      expect: {
        status: 200,
        body: { kind: 'Table', columnDefinitions: [{ name: 'Name' }, { name: 'Pod-Selector' }, { name: 'Age' }] },
        text: /"cells":\["p10","app=db","\d+s"\]/,
      },
      then: [
        { req: { method: 'GET', path: `${POLICIES}/p10b`, headers: { accept: TABLE } }, expect: { status: 200, text: /"cells":\["p10b","<none>","\d+s"\]/ } },
      ],
    },
    {
      id: 'net-15',
      rule: 'DefaultIngressClass: a new Ingress naming no class gets the class annotated is-default-class; two default classes refuse it',
      source: 'upstream plugin/pkg/admission/network/defaultingressclass (Admit, getDefaultClass)',
      upstream:
        '201 with spec.ingressClassName cf-net-15; an explicit class is kept; with two defaults 403 "ingresses.networking.k8s.io \\"i15c\\" is forbidden: Internal error occurred: 2 default IngressClasses were found, only 1 allowed"',
      setup: [{ method: 'POST', path: CLASSES, body: ingressClass('cf-net-15', {}, { 'ingressclass.kubernetes.io/is-default-class': 'true' }) }],
      req: { method: 'POST', path: INGRESSES, body: ingress('i15') },
      expect: { status: 201, body: { spec: { ingressClassName: 'cf-net-15' } } },
      then: [
        {
          req: { method: 'POST', path: INGRESSES, body: ingress('i15b', {}, { ingressClassName: 'other' }) },
          expect: { status: 201, body: { spec: { ingressClassName: 'other' } } },
        },
        {
          req: { method: 'POST', path: CLASSES, body: ingressClass('cf-net-15b', {}, { 'ingressclass.kubernetes.io/is-default-class': 'true' }) },
          expect: { status: 201 },
        },
        {
          req: { method: 'POST', path: INGRESSES, body: ingress('i15c') },
          expect: {
            status: 403,
            reason: 'Forbidden',
            message: 'ingresses.networking.k8s.io "i15c" is forbidden: Internal error occurred: 2 default IngressClasses were found, only 1 allowed',
          },
        },
        { req: { method: 'DELETE', path: `${CLASSES}/cf-net-15` }, expect: { status: 200 } },
        { req: { method: 'DELETE', path: `${CLASSES}/cf-net-15b` }, expect: { status: 200 } },
      ],
    },
  ],
};
