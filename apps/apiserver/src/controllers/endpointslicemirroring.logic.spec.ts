import type { KubeObject } from '@app/apimachinery';
import { canonicalIP, desiredSlices, hasSelector, planMirror, repackSubsets, shouldMirror, slicePrefix } from './endpointslicemirroring.logic.js';

type Obj = Record<string, unknown>;

const endpoints = (subsets: Obj[], meta: Obj = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Endpoints',
  metadata: { name: 'ext', namespace: 'default', uid: 'uid-1', ...meta },
  subsets,
});
const HTTP = { name: 'http', port: 80, protocol: 'TCP' };

describe('which Endpoints are mirrored', () => {
  it('skips the skip-mirror label and leader-election locks, and Services with a selector', () => {
    expect(shouldMirror(endpoints([]))).toBe(true);
    expect(shouldMirror(endpoints([], { labels: { 'endpointslice.kubernetes.io/skip-mirror': 'true' } }))).toBe(false);
    expect(shouldMirror(endpoints([], { labels: { 'endpointslice.kubernetes.io/skip-mirror': 'false' } }))).toBe(true);
    expect(shouldMirror(endpoints([], { annotations: { 'control-plane.alpha.kubernetes.io/leader': '{}' } }))).toBe(false);
    expect(shouldMirror(undefined)).toBe(false);
    expect(hasSelector({ metadata: {}, spec: { selector: { app: 'x' } } })).toBe(true);
    expect(hasSelector({ metadata: {}, spec: { selector: {} } })).toBe(false);
    expect(hasSelector({ metadata: {}, spec: {} })).toBe(false);
  });
});

describe('desired slices', () => {
  it('repacks subsets: one endpoint per address, ready wins, equal port sets merge', () => {
    const repacked = repackSubsets([
      { addresses: [{ ip: '10.0.0.2' }], ports: [HTTP] },
      { addresses: [{ ip: '10.0.0.1' }], notReadyAddresses: [{ ip: '10.0.0.2' }], ports: [HTTP] },
    ]);
    expect(repacked).toEqual([{ ports: [HTTP], ready: [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }], notReady: [] }]);
  });

  it('splits by address family and port set, with ready conditions, canonical IPs, hostnames, nodes and targets', () => {
    const target = { kind: 'Pod', name: 'p', namespace: 'default', uid: 'pod-uid' };
    const { slices, invalidAddresses } = desiredSlices(
      endpoints([
        {
          addresses: [{ ip: '10.0.0.1', hostname: 'a', nodeName: 'n1', targetRef: target }, { ip: '2001:DB8:0:0::1' }, { ip: 'bogus' }],
          notReadyAddresses: [{ ip: '010.000.000.002' }],
          ports: [{ port: 53, protocol: 'UDP' }],
        },
        { addresses: [{ ip: '10.0.0.9' }], ports: [HTTP] },
      ]),
    );
    expect(invalidAddresses).toBe(1);
    expect(slices.map((s) => [s.addressType, s.ports, s.endpoints])).toEqual([
      [
        'IPv4',
        [{ name: '', port: 53, protocol: 'UDP' }],
        [
          { addresses: ['10.0.0.1'], conditions: { ready: true }, hostname: 'a', nodeName: 'n1', targetRef: target },
          { addresses: ['10.0.0.2'], conditions: { ready: false } },
        ],
      ],
      ['IPv6', [{ name: '', port: 53, protocol: 'UDP' }], [{ addresses: ['2001:db8::1'], conditions: { ready: true } }]],
      ['IPv4', [HTTP], [{ addresses: ['10.0.0.9'], conditions: { ready: true } }]],
    ]);
  });

  it('mirrors at most maxEndpointsPerSubset addresses of a subset', () => {
    const addresses = Array.from({ length: 5 }, (_, i) => ({ ip: `10.0.0.${i + 1}` }));
    const res = desiredSlices(endpoints([{ addresses, ports: [HTTP] }]), 3);
    expect(res.slices[0]!.endpoints).toHaveLength(3);
    expect(res.skippedAddresses).toBe(2);
  });

  it("prints IPs as Go's net.IP does", () => {
    expect(canonicalIP('::ffff:1.2.3.4')).toEqual({ ip: '1.2.3.4', family: 'IPv4' });
    expect(canonicalIP('2001:0db8:0000:0000:0001:0000:0000:0001')).toEqual({ ip: '2001:db8::1:0:0:1', family: 'IPv6' });
    expect(canonicalIP('fe80::')).toEqual({ ip: 'fe80::', family: 'IPv6' });
    expect(canonicalIP('1.2.3')).toBeUndefined();
    expect(slicePrefix('web')).toBe('web-');
  });
});

describe('planMirror', () => {
  const ep = endpoints([{ addresses: [{ ip: '10.0.0.1' }], ports: [HTTP] }], {
    labels: { team: 'a' },
    annotations: { note: 'x', 'endpoints.kubernetes.io/last-change-trigger-time': 't', 'kubectl.kubernetes.io/last-applied-configuration': '{}' },
  });

  it('creates a slice named after the Service, labelled, annotated and owned by the Endpoints', () => {
    const plan = planMirror(ep, []);
    expect(plan.update).toEqual([]);
    expect(plan.delete).toEqual([]);
    expect(plan.create).toEqual([
      {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: {
          namespace: 'default',
          generateName: 'ext-',
          labels: { team: 'a', 'kubernetes.io/service-name': 'ext', 'endpointslice.kubernetes.io/managed-by': 'endpointslicemirroring-controller.k8s.io' },
          annotations: { note: 'x' },
          ownerReferences: [{ apiVersion: 'v1', kind: 'Endpoints', name: 'ext', uid: 'uid-1', controller: true, blockOwnerDeletion: true }],
        },
        addressType: 'IPv4',
        endpoints: [{ addresses: ['10.0.0.1'], conditions: { ready: true } }],
        ports: [HTTP],
      },
    ]);
  });

  it('leaves a matching slice alone, rewrites a stale one in place, and deletes extra ones', () => {
    const existing = { ...planMirror(ep, []).create[0]!, metadata: { ...planMirror(ep, []).create[0]!.metadata, name: 'ext-a', generateName: undefined } };
    delete existing.metadata.generateName;
    expect(planMirror(ep, [existing])).toEqual({ create: [], update: [], delete: [] });
    const moved = endpoints([{ addresses: [{ ip: '10.0.0.7' }], ports: [HTTP] }], ep.metadata);
    const plan = planMirror(moved, [existing, { ...existing, metadata: { ...existing.metadata, name: 'ext-b' } }]);
    expect(plan.create).toEqual([]);
    expect(plan.update.map((s) => [s.metadata.name, s.endpoints])).toEqual([['ext-a', [{ addresses: ['10.0.0.7'], conditions: { ready: true } }]]]);
    expect(plan.delete).toEqual(['ext-b']);
    const relabeled = endpoints(ep.subsets as Obj[], { ...ep.metadata, labels: { team: 'b' } });
    expect(planMirror(relabeled, [existing]).update).toHaveLength(1);
  });

  it('recycles the slice of an old port set for the new one, and deletes everything when no address is left', () => {
    const existing = { ...planMirror(ep, []).create[0]!, metadata: { ...planMirror(ep, []).create[0]!.metadata, name: 'ext-a' } };
    const newPorts = endpoints([{ addresses: [{ ip: '10.0.0.1' }], ports: [{ name: 'https', port: 443, protocol: 'TCP' }] }], ep.metadata);
    const plan = planMirror(newPorts, [existing]);
    expect(plan.create).toEqual([]);
    expect(plan.delete).toEqual([]);
    expect(plan.update.map((s) => [s.metadata.name, s.metadata.generateName, s.ports])).toEqual([
      ['ext-a', undefined, [{ name: 'https', port: 443, protocol: 'TCP' }]],
    ]);
    expect(planMirror(endpoints([], ep.metadata), [existing])).toEqual({ create: [], update: [], delete: ['ext-a'] });
    expect(planMirror(endpoints(ep.subsets as Obj[], { ...ep.metadata, deletionTimestamp: 'now' }), []).create).toEqual([]);
  });
});
