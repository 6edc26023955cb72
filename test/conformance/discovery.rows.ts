/**
 * Rules of discovery.k8s.io/v1 EndpointSlice as a stored kind: defaults (pkg/apis/discovery/v1
 * defaults.go), the strategy (pkg/registry/discovery/endpointslice: generation, dropped fields),
 * validation (pkg/apis/discovery/validation) and kubectl's columns (printEndpointSlice). The
 * endpointslicemirroring controller is asynchronous, so test/kinds.discovery.test.ts covers it
 * (waiting for its writes), not these rows.
 */
import type { RowGroup } from './conformance.types.js';

const NS = 'cf-eps';
const V1 = '/apis/discovery.k8s.io/v1';
const SLICES = `${V1}/namespaces/${NS}/endpointslices`;
const MERGE = { 'content-type': 'application/merge-patch+json' };
const TABLE = 'application/json;as=Table;g=meta.k8s.io;v=v1';

type Obj = Record<string, unknown>;
/** An IPv4 EndpointSlice named `name` with one endpoint and one port; `fields` add or replace top-level fields. */
const slice = (name: string, fields: Obj = {}, labels: Record<string, string> = { 'kubernetes.io/service-name': 'web' }) => ({
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: { name, labels },
  addressType: 'IPv4',
  endpoints: [{ addresses: ['10.0.0.1'], conditions: { ready: true } }],
  ports: [{ name: 'http', port: 80 }],
  ...fields,
});
const invalid = (name: string, detail: string) => `EndpointSlice.discovery.k8s.io "${name}" is invalid: ${detail}`;

/** The group. */
export const DISCOVERY: RowGroup = {
  name: 'discovery.k8s.io/v1 EndpointSlice',
  namespace: NS,
  rows: [
    {
      id: 'eps-1',
      rule: 'The group serves endpointslices (namespaced), and a local APIService v1.discovery.k8s.io with kube-apiserver priorities',
      source: 'upstream pkg/registry/discovery/rest; cmd/kube-apiserver/app aggregator.go (apiVersionPriorities)',
      upstream: '200 APIResourceList with endpointslices; APIService groupPriorityMinimum 16200, versionPriority 15',
      req: { method: 'GET', path: V1 },
      expect: {
        status: 200,
        body: {
          groupVersion: 'discovery.k8s.io/v1',
          resources: [{ name: 'endpointslices', namespaced: true, kind: 'EndpointSlice', singularName: 'endpointslice' }],
        },
      },
      then: [
        {
          req: { method: 'GET', path: '/apis/apiregistration.k8s.io/v1/apiservices/v1.discovery.k8s.io' },
          expect: { status: 200, body: { spec: { group: 'discovery.k8s.io', version: 'v1', groupPriorityMinimum: 16200, versionPriority: 15 } } },
        },
      ],
    },
    {
      id: 'eps-2',
      rule: 'An EndpointSlice is stored with generation 1, a port\'s name defaulting to "" and its protocol to TCP; a v1 write clears deprecatedTopology and the alpha hints.forNodes',
      source:
        'upstream pkg/apis/discovery/v1 defaults.go (SetDefaults_EndpointPort); pkg/registry/discovery/endpointslice strategy.go (PrepareForCreate, dropTopologyOnV1, dropDisabledFieldsOnCreate)',
      upstream: '201 with metadata.generation 1, ports [{"name":"","port":53,"protocol":"TCP"}], no deprecatedTopology, hints without forNodes',
      req: {
        method: 'POST',
        path: SLICES,
        body: slice('s2', {
          endpoints: [
            { addresses: ['10.0.0.1'], deprecatedTopology: { rack: 'r1' }, hints: { forZones: [{ name: 'zone-a' }], forNodes: [{ name: 'node-1' }] } },
          ],
          ports: [{ port: 53 }],
        }),
      },
      expect: {
        status: 201,
        body: { metadata: { generation: 1 }, ports: [{ name: '', port: 53, protocol: 'TCP' }], endpoints: [{ hints: { forZones: [{ name: 'zone-a' }] } }] },
        absent: ['endpoints.0.deprecatedTopology', 'endpoints.0.hints.forNodes'],
      },
    },
    {
      id: 'eps-3',
      rule: 'generation goes up when anything but metadata changes, or the labels change; annotations alone keep it',
      source: 'upstream pkg/registry/discovery/endpointslice strategy.go (PrepareForUpdate)',
      upstream: 'generation 1 after an annotation, 2 after a label, 3 after an endpoints change',
      setup: [{ method: 'POST', path: SLICES, body: slice('s3') }],
      req: { method: 'PATCH', path: `${SLICES}/s3`, body: { metadata: { annotations: { note: 'x' } } }, headers: MERGE },
      expect: { status: 200, body: { metadata: { generation: 1 } } },
      then: [
        {
          req: { method: 'PATCH', path: `${SLICES}/s3`, body: { metadata: { labels: { tier: 'web' } } }, headers: MERGE },
          expect: { status: 200, body: { metadata: { generation: 2 } } },
        },
        {
          req: { method: 'PATCH', path: `${SLICES}/s3`, body: { endpoints: [{ addresses: ['10.0.0.2'] }] }, headers: MERGE },
          expect: { status: 200, body: { metadata: { generation: 3 } } },
        },
      ],
    },
    {
      id: 'eps-4',
      rule: 'addressType is required, one of FQDN, IPv4 and IPv6 (the deprecated IP is refused), and immutable',
      source: 'upstream pkg/apis/discovery/validation validation.go (validateAddressType, ValidateEndpointSliceUpdate)',
      upstream:
        '422 "addressType: Required value"; "addressType: Unsupported value: \\"IP\\": supported values: \\"FQDN\\", \\"IPv4\\", \\"IPv6\\""; "addressType: Invalid value: \\"IPv6\\": field is immutable"',
      req: { method: 'POST', path: SLICES, body: slice('s4', { addressType: 'IP' }) },
      expect: { status: 422, reason: 'Invalid', message: invalid('s4', 'addressType: Unsupported value: "IP": supported values: "FQDN", "IPv4", "IPv6"') },
      then: [
        {
          req: { method: 'POST', path: SLICES, body: slice('s4', { addressType: undefined, endpoints: [] }) },
          expect: { status: 422, message: invalid('s4', 'addressType: Required value') },
        },
        { req: { method: 'POST', path: SLICES, body: slice('s4') }, expect: { status: 201 } },
        {
          req: { method: 'PATCH', path: `${SLICES}/s4`, body: { addressType: 'IPv6', endpoints: [{ addresses: ['2001:db8::1'] }] }, headers: MERGE },
          expect: { status: 422, message: invalid('s4', 'addressType: Invalid value: "IPv6": field is immutable') },
        },
      ],
    },
    {
      id: 'eps-5',
      rule: 'Every address is of the slice addressType; an IP may not be unspecified, loopback, link-local or link-local multicast',
      source: 'upstream pkg/apis/discovery/validation validation.go (validateEndpoints); pkg/apis/core/validation ValidateEndpointIP',
      upstream:
        '422 "endpoints[0].addresses[0]: Invalid value: \\"2001:db8::1\\": must be a valid IPv4 address"; "...: \\"127.0.0.1\\": may not be in the loopback range (127.0.0.0/8, ::1/128)"; "...: \\"fe80::1\\": may not be in the link-local range (169.254.0.0/16, fe80::/10)"',
      req: { method: 'POST', path: SLICES, body: slice('s5', { endpoints: [{ addresses: ['2001:db8::1'] }] }) },
      expect: { status: 422, message: invalid('s5', 'endpoints[0].addresses[0]: Invalid value: "2001:db8::1": must be a valid IPv4 address') },
      then: [
        {
          req: { method: 'POST', path: SLICES, body: slice('s5', { endpoints: [{ addresses: ['127.0.0.1'] }] }) },
          expect: {
            status: 422,
            message: invalid('s5', 'endpoints[0].addresses[0]: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)'),
          },
        },
        {
          req: { method: 'POST', path: SLICES, body: slice('s5', { addressType: 'IPv6', endpoints: [{ addresses: ['fe80::1'] }] }) },
          expect: {
            status: 422,
            message: invalid('s5', 'endpoints[0].addresses[0]: Invalid value: "fe80::1": may not be in the link-local range (169.254.0.0/16, fe80::/10)'),
          },
        },
      ],
    },
    {
      id: 'eps-6',
      rule: 'An FQDN address is a lowercase domain of at least two labels (a trailing dot allowed)',
      source: 'upstream k8s.io/apimachinery/pkg/util/validation IsFullyQualifiedDomainName',
      upstream:
        '201 for db.example.com.; 422 "endpoints[0].addresses[0]: Invalid value: \\"localhost\\": should be a domain with at least two segments separated by dots"',
      req: { method: 'POST', path: SLICES, body: slice('s6', { addressType: 'FQDN', endpoints: [{ addresses: ['localhost'] }] }) },
      expect: {
        status: 422,
        message: invalid('s6', 'endpoints[0].addresses[0]: Invalid value: "localhost": should be a domain with at least two segments separated by dots'),
      },
      then: [
        {
          req: { method: 'POST', path: SLICES, body: slice('s6', { addressType: 'FQDN', endpoints: [{ addresses: ['db.example.com.'] }] }) },
          expect: { status: 201 },
        },
      ],
    },
    {
      id: 'eps-7',
      rule: 'An endpoint has 1 to 100 addresses; a slice has at most 1000 endpoints',
      source: 'upstream pkg/apis/discovery/validation validation.go (maxAddresses, maxEndpoints)',
      upstream: '422 "endpoints[0].addresses: Required value: must contain at least 1 address"; "endpoints: Too many: 1001: must have at most 1000 items"',
      req: { method: 'POST', path: SLICES, body: slice('s7', { endpoints: [{ addresses: [] }] }) },
      expect: { status: 422, message: invalid('s7', 'endpoints[0].addresses: Required value: must contain at least 1 address') },
      then: [
        {
          req: { method: 'POST', path: SLICES, body: slice('s7', { endpoints: Array.from({ length: 1001 }, () => ({ addresses: ['10.0.0.1'] })) }) },
          expect: { status: 422, message: invalid('s7', 'endpoints: Too many: 1001: must have at most 1000 items') },
        },
      ],
    },
    {
      id: 'eps-8',
      rule: 'Endpoint hostnames are DNS labels, node names DNS subdomains, zone hints unique label values (at most 8)',
      source: 'upstream pkg/apis/discovery/validation validation.go (validateEndpoints, validateHints)',
      upstream:
        '422 listing "endpoints[0].nodeName: Invalid value: \\"Node_1\\": ...", "endpoints[0].hostname: Invalid value: \\"A\\": ...", "endpoints[0].hints.forZones[1].name: Duplicate value: \\"a\\""',
      req: {
        method: 'POST',
        path: SLICES,
        body: slice('s8', { endpoints: [{ addresses: ['10.0.0.1'], nodeName: 'Node_1', hostname: 'A', hints: { forZones: [{ name: 'a' }, { name: 'a' }] } }] }),
      },
      expect: {
        status: 422,
        message:
          /endpoints\[0\]\.nodeName: Invalid value: "Node_1": a lowercase RFC 1123 subdomain[\s\S]*endpoints\[0\]\.hostname: Invalid value: "A": a lowercase RFC 1123 label[\s\S]*endpoints\[0\]\.hints\.forZones\[1\]\.name: Duplicate value: "a"/,
      },
    },
    {
      id: 'eps-9',
      rule: 'Port names are unique ("" or DNS labels), protocols TCP, UDP or SCTP, appProtocol a qualified name',
      source: 'upstream pkg/apis/discovery/validation validation.go (validatePorts)',
      upstream:
        '422 "[ports[1].name: Duplicate value: \\"http\\", ports[2].protocol: Unsupported value: \\"ICMP\\": supported values: \\"SCTP\\", \\"TCP\\", \\"UDP\\", ports[2].appProtocol: Invalid value: \\"a b\\": ...]"',
      req: {
        method: 'POST',
        path: SLICES,
        body: slice('s9', {
          ports: [
            { name: 'http', port: 80 },
            { name: 'http', port: 81 },
            { name: 'x', protocol: 'ICMP', appProtocol: 'a b' },
          ],
        }),
      },
      expect: {
        status: 422,
        message:
          /^EndpointSlice\.discovery\.k8s\.io "s9" is invalid: \[ports\[1\]\.name: Duplicate value: "http", ports\[2\]\.protocol: Unsupported value: "ICMP": supported values: "SCTP", "TCP", "UDP", ports\[2\]\.appProtocol: Invalid value: "a b": name part must consist of alphanumeric characters/,
      },
    },
    {
      id: 'eps-10',
      rule: "kubectl's EndpointSlice columns: ADDRESSTYPE, PORTS (numbers, else names, else *), ENDPOINTS (the first three addresses, then + N more...), AGE",
      source: 'upstream pkg/printers/internalversion printers.go (printEndpointSlice, formatDiscoveryPorts, formatDiscoveryEndpoints)',
      upstream:
        '200 Table with columns Name, AddressType, Ports, Endpoints, Age; cells ["s10","IPv4","80,dns","10.0.0.1,10.0.0.2,10.0.0.3 + 1 more...","<age>"]',
      setup: [
        {
          method: 'POST',
          path: SLICES,
          body: slice('s10', {
            endpoints: [{ addresses: ['10.0.0.1'] }, { addresses: ['10.0.0.2'] }, { addresses: ['10.0.0.3'] }, { addresses: ['10.0.0.4'] }],
            ports: [{ name: 'http', port: 80 }, { name: 'dns' }],
          }),
        },
      ],
      req: { method: 'GET', path: `${SLICES}/s10`, headers: { accept: TABLE } },
      expect: {
        status: 200,
        body: { kind: 'Table', columnDefinitions: [{ name: 'Name' }, { name: 'AddressType' }, { name: 'Ports' }, { name: 'Endpoints' }, { name: 'Age' }] },
        text: /"cells":\["s10","IPv4","80,dns","10\.0\.0\.1,10\.0\.0\.2,10\.0\.0\.3 \+ 1 more\.\.\.","\d+s"\]/,
      },
    },
  ],
};
