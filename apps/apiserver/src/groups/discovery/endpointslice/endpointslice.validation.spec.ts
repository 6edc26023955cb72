import type { KubeObject } from '@app/apimachinery';
import { endpointSliceEndpointsCell, endpointSlicePortsCell } from './endpointslice.kind.js';
import { endpointSliceStrategy } from './endpointslice.strategy.js';
import { fqdnErrors, validateEndpointSlice, validateEndpointSliceUpdate } from './endpointslice.validation.js';

type Obj = Record<string, unknown>;

/** An EndpointSlice as it reaches validation (port names and protocols defaulted by the schema). */
const slice = (fields: Obj = {}): KubeObject => ({
  metadata: { name: 'web-abc', namespace: 'default', generation: 1, labels: { 'kubernetes.io/service-name': 'web' } },
  addressType: 'IPv4',
  endpoints: [{ addresses: ['10.0.0.1'], conditions: { ready: true } }],
  ports: [{ name: 'http', protocol: 'TCP', port: 80 }],
  ...fields,
});
const messages = (errs: { field: string; type: string; value?: unknown; detail?: string }[]) =>
  errs.map((e) => `${e.field}: ${e.value !== undefined && e.type !== 'FieldValueTooMany' ? `${JSON.stringify(e.value)}: ` : ''}${e.detail ?? ''}`);
const ctx = { user: { username: 'u', groups: [] }, dryRun: false, warnings: [], now: () => new Date() };

describe('EndpointSlice validation', () => {
  it('accepts IPv4, IPv6 and FQDN slices', () => {
    expect(validateEndpointSlice(slice())).toEqual([]);
    expect(validateEndpointSlice(slice({ addressType: 'IPv6', endpoints: [{ addresses: ['2001:db8::1'], nodeName: 'node-1', hostname: 'a' }] }))).toEqual([]);
    expect(validateEndpointSlice(slice({ addressType: 'FQDN', endpoints: [{ addresses: ['db.example.com.'] }], ports: [] }))).toEqual([]);
    expect(validateEndpointSlice(slice({ endpoints: undefined, ports: undefined }))).toEqual([]);
  });
  it('requires a supported addressType and keeps it immutable', () => {
    expect(messages(validateEndpointSlice(slice({ addressType: undefined, endpoints: [] })))).toEqual(['addressType: ']);
    expect(messages(validateEndpointSlice(slice({ addressType: 'IP', endpoints: [] })))).toEqual([
      'addressType: "IP": supported values: "FQDN", "IPv4", "IPv6"',
    ]);
    expect(messages(validateEndpointSliceUpdate(slice({ addressType: 'IPv6', endpoints: [] }), slice()))).toEqual(['addressType: "IPv6": field is immutable']);
  });
  it('checks addresses against the addressType', () => {
    const eps = (addresses: string[], addressType = 'IPv4') => messages(validateEndpointSlice(slice({ addressType, endpoints: [{ addresses }] })));
    expect(eps([])).toEqual(['endpoints[0].addresses: must contain at least 1 address']);
    expect(eps(['2001:db8::1'])).toEqual(['endpoints[0].addresses[0]: "2001:db8::1": must be a valid IPv4 address']);
    expect(eps(['10.0.0.1'], 'IPv6')).toEqual(['endpoints[0].addresses[0]: "10.0.0.1": must be a valid IPv6 address']);
    expect(eps(['127.0.0.1'])).toEqual(['endpoints[0].addresses[0]: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)']);
    expect(eps(['0.0.0.0'])).toEqual(['endpoints[0].addresses[0]: "0.0.0.0": may not be unspecified (0.0.0.0)']);
    expect(eps(['169.254.1.1'])).toEqual(['endpoints[0].addresses[0]: "169.254.1.1": may not be in the link-local range (169.254.0.0/16, fe80::/10)']);
    expect(eps(['224.0.0.5'])).toEqual(['endpoints[0].addresses[0]: "224.0.0.5": may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)']);
    expect(eps(['fe80::1', 'ff02::1'], 'IPv6')).toHaveLength(2);
    expect(eps(Array.from({ length: 101 }, (_, i) => `10.0.${i >> 8}.${(i & 255) + 1}`))).toEqual(['endpoints[0].addresses: 101: must have at most 100 items']);
    expect(fqdnErrors('localhost', 'a').map((e) => e.detail)).toEqual(['should be a domain with at least two segments separated by dots']);
    expect(fqdnErrors('Bad.example.com', 'a')[0]!.detail).toMatch(/^a lowercase RFC 1123 subdomain/);
  });
  it('limits endpoints to 1000 and checks node names, hostnames and hints', () => {
    const many = Array.from({ length: 1001 }, () => ({ addresses: ['10.0.0.1'] }));
    expect(messages(validateEndpointSlice(slice({ endpoints: many })))).toEqual(['endpoints: 1001: must have at most 1000 items']);
    const ep = { addresses: ['10.0.0.1'], nodeName: 'Node_1', hostname: 'A', hints: { forZones: [{ name: 'a' }, { name: 'a' }] } };
    expect(messages(validateEndpointSlice(slice({ endpoints: [ep] })))).toEqual([
      expect.stringMatching(/^endpoints\[0\]\.nodeName: "Node_1": a lowercase RFC 1123 subdomain/),
      expect.stringMatching(/^endpoints\[0\]\.hostname: "A": a lowercase RFC 1123 label/),
      'endpoints[0].hints.forZones[1].name: "a": ',
    ]);
    const zones = Array.from({ length: 9 }, (_, i) => ({ name: `z${i}` }));
    expect(messages(validateEndpointSlice(slice({ endpoints: [{ addresses: ['10.0.0.1'], hints: { forZones: zones } }] })))).toEqual([
      'endpoints[0].hints.forZones: 9: must have at most 8 items',
    ]);
  });
  it('checks ports: names, duplicates, protocols and appProtocol', () => {
    const ports = [
      { name: 'http', protocol: 'TCP', port: 80 },
      { name: 'http', protocol: 'UDP', port: 81 },
      { name: 'Bad', protocol: 'ICMP' },
      { name: '', appProtocol: 'a b' },
    ];
    expect(messages(validateEndpointSlice(slice({ ports })))).toEqual([
      'ports[1].name: "http": ',
      expect.stringMatching(/^ports\[2\]\.name: "Bad": a lowercase RFC 1123 label/),
      'ports[2].protocol: "ICMP": supported values: "SCTP", "TCP", "UDP"',
      'ports[3].protocol: ',
      expect.stringMatching(/^ports\[3\]\.appProtocol: "a b": name part must consist of alphanumeric characters/),
    ]);
  });
});

describe('EndpointSlice strategy and columns', () => {
  it('bumps generation on endpoint, port or label changes only, and drops v1beta1 topology and node hints', () => {
    const old = slice();
    const same = slice({ metadata: { ...old.metadata, annotations: { a: 'b' } } });
    endpointSliceStrategy.prepareForUpdate!(same, old, ctx);
    expect(same.metadata.generation).toBe(1);
    const relabeled = slice({ metadata: { ...old.metadata, labels: { x: 'y' } } });
    endpointSliceStrategy.prepareForUpdate!(relabeled, old, ctx);
    expect(relabeled.metadata.generation).toBe(2);
    const moved = slice({ endpoints: [{ addresses: ['10.0.0.2'], deprecatedTopology: { a: 'b' }, hints: { forNodes: [{ name: 'n' }] } }] });
    endpointSliceStrategy.prepareForUpdate!(moved, old, ctx);
    expect(moved.metadata.generation).toBe(2);
    expect(moved.endpoints).toEqual([{ addresses: ['10.0.0.2'], hints: {} }]);
  });
  it('prints ports and endpoints as kubectl does', () => {
    expect(endpointSlicePortsCell(slice({ ports: [{ port: 80 }, { name: 'dns' }, {}, { port: 1 }] }))).toBe('80,dns,* + 1 more...');
    expect(endpointSlicePortsCell(slice({ ports: [] }))).toBe('<unset>');
    const endpoints = [{ addresses: ['10.0.0.1', '10.0.0.2'] }, { addresses: ['10.0.0.3', '10.0.0.4'] }];
    expect(endpointSliceEndpointsCell(slice({ endpoints }))).toBe('10.0.0.1,10.0.0.2,10.0.0.3 + 1 more...');
    expect(endpointSliceEndpointsCell(slice({ endpoints: [] }))).toBe('<unset>');
  });
});
