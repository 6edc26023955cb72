import type { KubeObject } from '@app/apimachinery';
import {
  desiredEndpoints,
  desiredServiceSlices,
  desiredSubsets,
  endpointsPodView,
  findPort,
  formatTriggerTime,
  managesService,
  planServiceSlices,
  serviceSliceLabels,
  shouldPodBeInEndpoints,
  truncateSubsets,
  TriggerTimeTracker,
  withTriggerTime,
} from './endpoints.logic.js';

type Obj = Record<string, unknown>;

const service = (spec: Obj = {}, meta: Obj = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'web', namespace: 'default', uid: 'svc-uid', labels: { team: 'a' }, ...meta },
  spec: {
    selector: { app: 'web' },
    clusterIP: '10.0.0.10',
    ipFamilies: ['IPv4'],
    ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }],
    ...spec,
  },
});

const pod = (name: string, ip: string | undefined, opts: { ready?: boolean; labels?: Obj; spec?: Obj; status?: Obj; meta?: Obj } = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', uid: `uid-${name}`, labels: opts.labels ?? { app: 'web' }, ...opts.meta },
  spec: { nodeName: 'node-1', containers: [{ name: 'c', image: 'x', ports: [{ name: 'web', containerPort: 8080 }] }], ...opts.spec },
  status: {
    phase: 'Running',
    ...(ip ? { podIP: ip, podIPs: [{ ip }] } : {}),
    conditions: [{ type: 'Ready', status: opts.ready === false ? 'False' : 'True' }],
    ...opts.status,
  },
});

const ref = (name: string) => ({ kind: 'Pod', namespace: 'default', name, uid: `uid-${name}` });

describe('which Services and pods', () => {
  it('manages Services with a selector that are not ExternalName', () => {
    expect(managesService(service())).toBe(true);
    expect(managesService(service({ selector: {} }))).toBe(false);
    expect(managesService(service({ selector: undefined }))).toBe(false);
    expect(managesService(service({ type: 'ExternalName', externalName: 'x.example' }))).toBe(false);
  });

  it('takes pods with an IP that are not terminal; terminating ones only when asked', () => {
    expect(shouldPodBeInEndpoints(pod('a', '10.1.0.1'), false)).toBe(true);
    expect(shouldPodBeInEndpoints(pod('a', undefined), true)).toBe(false);
    expect(shouldPodBeInEndpoints(pod('a', '10.1.0.1', { status: { phase: 'Succeeded' } }), true)).toBe(false);
    expect(shouldPodBeInEndpoints(pod('a', '10.1.0.1', { status: { phase: 'Failed' } }), true)).toBe(false);
    const terminating = pod('a', '10.1.0.1', { meta: { deletionTimestamp: '2026-01-01T00:00:00Z' } });
    expect(shouldPodBeInEndpoints(terminating, false)).toBe(false);
    expect(shouldPodBeInEndpoints(terminating, true)).toBe(true);
  });

  it('finds a target port by number, by name and protocol, in sidecars too, and defaults it to the port', () => {
    const p = pod('a', '10.1.0.1', {
      spec: {
        containers: [{ name: 'c', ports: [{ name: 'dns', containerPort: 53, protocol: 'UDP' }] }],
        initContainers: [
          { name: 'side', restartPolicy: 'Always', ports: [{ name: 'metrics', containerPort: 9090 }] },
          { name: 'init', ports: [{ name: 'setup', containerPort: 7000 }] },
        ],
      },
    });
    expect(findPort(p, { port: 80, targetPort: 8080 })).toBe(8080);
    expect(findPort(p, { port: 80 })).toBe(80);
    expect(findPort(p, { port: 53, targetPort: 'dns', protocol: 'UDP' })).toBe(53);
    expect(findPort(p, { port: 53, targetPort: 'dns', protocol: 'TCP' })).toBeUndefined();
    expect(findPort(p, { port: 90, targetPort: 'metrics' })).toBe(9090);
    expect(findPort(p, { port: 70, targetPort: 'setup' })).toBeUndefined();
  });
});

describe('Endpoints', () => {
  it('lists ready and not ready pods per port set, sorted, with node, target and hostname', () => {
    const svc = service({ ports: [{ name: 'http', port: 80, targetPort: 'web', protocol: 'TCP' }] });
    const subsets = desiredSubsets(svc, [
      pod('b', '10.1.0.2'),
      pod('a', '10.1.0.1', { ready: false }),
      pod('c', '10.1.0.3', { spec: { hostname: 'c-host', subdomain: 'web', containers: [{ name: 'c', ports: [{ name: 'web', containerPort: 9000 }] }] } }),
      pod('other', '10.1.0.9', { labels: { app: 'other' } }),
      pod('no-ip', undefined),
      pod('no-port', '10.1.0.8', { spec: { containers: [{ name: 'c' }] } }),
    ]);
    expect(subsets).toEqual([
      {
        addresses: [{ ip: '10.1.0.2', nodeName: 'node-1', targetRef: ref('b') }],
        notReadyAddresses: [{ ip: '10.1.0.1', nodeName: 'node-1', targetRef: ref('a') }],
        ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
      },
      { addresses: [{ ip: '10.1.0.3', hostname: 'c-host', nodeName: 'node-1', targetRef: ref('c') }], ports: [{ name: 'http', port: 9000, protocol: 'TCP' }] },
    ]);
  });

  it('publishes not-ready and terminating pods as ready with publishNotReadyAddresses; a headless Service without ports lists bare addresses', () => {
    const terminating = pod('t', '10.1.0.4', { ready: false, meta: { deletionTimestamp: '2026-01-01T00:00:00Z' } });
    expect(desiredSubsets(service(), [terminating])).toEqual([]);
    expect(desiredSubsets(service({ publishNotReadyAddresses: true }), [terminating])).toEqual([
      { addresses: [{ ip: '10.1.0.4', nodeName: 'node-1', targetRef: ref('t') }], ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] },
    ]);
    expect(desiredSubsets(service({ clusterIP: 'None', ports: [] }), [pod('a', '10.1.0.1')])).toEqual([
      { addresses: [{ ip: '10.1.0.1', nodeName: 'node-1', targetRef: ref('a') }] },
    ]);
    // Without ports and with a cluster IP there is nothing to list.
    expect(desiredSubsets(service({ ports: [] }), [pod('a', '10.1.0.1')])).toEqual([]);
  });

  it("picks the pod's address of the Service's family", () => {
    const dual = pod('d', '10.1.0.5', { status: { podIP: '10.1.0.5', podIPs: [{ ip: '10.1.0.5' }, { ip: 'fd00::5' }] } });
    const v6 = service({ clusterIP: 'fd00:10::a', ipFamilies: ['IPv6'] });
    expect(desiredSubsets(v6, [dual])[0]!.addresses).toEqual([{ ip: 'fd00::5', nodeName: 'node-1', targetRef: ref('d') }]);
    expect(desiredSubsets(v6, [pod('a', '10.1.0.1')])).toEqual([]);
  });

  it('writes only what differs: labels of the Service, the headless label, the subsets', () => {
    const svc = service();
    const created = desiredEndpoints(svc, [pod('a', '10.1.0.1')], undefined)!;
    expect(created.metadata).toEqual({ name: 'web', namespace: 'default', labels: { team: 'a' } });
    const stored = { ...created, metadata: { ...created.metadata, resourceVersion: '7', uid: 'ep-uid' } };
    expect(desiredEndpoints(svc, [pod('a', '10.1.0.1')], stored)).toBeUndefined();
    // A pod's resourceVersion in a stored targetRef does not count.
    const withRV = structuredClone(stored) as KubeObject & { subsets: Array<{ addresses: Array<{ targetRef: Obj }> }> };
    withRV.subsets[0]!.addresses[0]!.targetRef.resourceVersion = '99';
    expect(desiredEndpoints(svc, [pod('a', '10.1.0.1')], withRV)).toBeUndefined();
    const moved = desiredEndpoints(svc, [pod('a', '10.1.0.2')], stored)!;
    expect(moved.metadata).toMatchObject({ resourceVersion: '7', uid: 'ep-uid' });
    expect(moved.subsets).toEqual([
      { addresses: [{ ip: '10.1.0.2', nodeName: 'node-1', targetRef: ref('a') }], ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] },
    ]);
    expect(desiredEndpoints(service({}, { labels: { team: 'b' } }), [pod('a', '10.1.0.1')], stored)!.metadata.labels).toEqual({ team: 'b' });
    const headless = desiredEndpoints(service({ clusterIP: 'None' }), [], undefined)!;
    expect(headless.metadata.labels).toEqual({ team: 'a', 'service.kubernetes.io/headless': '' });
    expect(headless).not.toHaveProperty('subsets');
  });

  it('truncates beyond 1000 addresses, ready ones first, and says so', () => {
    const addr = (i: number) => ({ ip: `10.2.${Math.floor(i / 250)}.${i % 250}` });
    const subsets = [
      {
        addresses: Array.from({ length: 600 }, (_, i) => addr(i)),
        notReadyAddresses: Array.from({ length: 100 }, (_, i) => addr(2000 + i)),
        ports: [{ port: 1 }],
      },
      {
        addresses: Array.from({ length: 300 }, (_, i) => addr(1000 + i)),
        notReadyAddresses: Array.from({ length: 300 }, (_, i) => addr(3000 + i)),
        ports: [{ port: 2 }],
      },
    ];
    const { subsets: kept, truncated } = truncateSubsets(subsets);
    expect(truncated).toBe(true);
    const counts = kept.map((s) => [(s.addresses as unknown[]).length, ((s.notReadyAddresses as unknown[]) ?? []).length]);
    // 100 places left for 400 not-ready addresses: a quarter for the first subset, the rest for the second.
    expect(counts).toEqual([
      [600, 25],
      [300, 75],
    ]);
    expect(truncateSubsets(subsets.slice(1)).truncated).toBe(false);
    const pods = Array.from({ length: 1001 }, (_, i) => pod(`p${i}`, `10.3.${Math.floor(i / 250)}.${i % 250}`));
    const big = desiredEndpoints(service(), pods, undefined)!;
    expect(big.metadata.annotations).toEqual({ 'endpoints.kubernetes.io/over-capacity': 'truncated' });
    expect((big.subsets as Array<{ addresses: unknown[] }>)[0]!.addresses).toHaveLength(1000);
  });
});

describe('EndpointSlices', () => {
  it('groups endpoints by port set with ready, serving and terminating conditions, zone and hostname', () => {
    const svc = service({ ports: [{ name: 'http', port: 80, targetPort: 'web', protocol: 'TCP' }] });
    const slices = desiredServiceSlices(
      svc,
      [
        pod('b', '10.1.0.2', { ready: false }),
        pod('a', '10.1.0.1', {
          spec: { nodeName: 'node-2', hostname: 'a', subdomain: 'web', containers: [{ name: 'c', ports: [{ name: 'web', containerPort: 8080 }] }] },
        }),
        pod('t', '10.1.0.4', { meta: { deletionTimestamp: '2026-01-01T00:00:00Z' } }),
        pod('other-port', '10.1.0.3', { spec: { containers: [{ name: 'c', ports: [{ name: 'web', containerPort: 9000 }] }] } }),
        pod('no-port', '10.1.0.5', { spec: { containers: [{ name: 'c' }] } }),
      ],
      new Map([['node-2', 'zone-b']]),
    );
    expect(slices.map((s) => [s.addressType, s.ports, s.endpoints.map((e) => (e.targetRef as Obj).name)])).toEqual([
      ['IPv4', [{ name: 'http', port: 8080, protocol: 'TCP' }], ['a', 'b', 't']],
      ['IPv4', [{ name: 'http', port: 9000, protocol: 'TCP' }], ['other-port']],
      ['IPv4', [], ['no-port']],
    ]);
    expect(slices[0]!.endpoints).toEqual([
      {
        addresses: ['10.1.0.1'],
        conditions: { ready: true, serving: true, terminating: false },
        hostname: 'a',
        targetRef: ref('a'),
        nodeName: 'node-2',
        zone: 'zone-b',
      },
      { addresses: ['10.1.0.2'], conditions: { ready: false, serving: false, terminating: false }, targetRef: ref('b'), nodeName: 'node-1' },
      { addresses: ['10.1.0.4'], conditions: { ready: false, serving: true, terminating: true }, targetRef: ref('t'), nodeName: 'node-1' },
    ]);
    const published = desiredServiceSlices(service({ publishNotReadyAddresses: true }), [pod('b', '10.1.0.2', { ready: false })]);
    expect(published[0]!.endpoints[0]!.conditions).toEqual({ ready: true, serving: false, terminating: false });
  });

  it('puts at most 100 endpoints in a slice, and keeps an empty one for a Service without endpoints', () => {
    const pods = Array.from({ length: 250 }, (_, i) => pod(`p${String(i).padStart(3, '0')}`, `10.4.${Math.floor(i / 200)}.${i % 200}`));
    expect(desiredServiceSlices(service(), pods).map((s) => s.endpoints.length)).toEqual([100, 100, 50]);
    expect(desiredServiceSlices(service(), [])).toEqual([{ key: expect.any(String), addressType: 'IPv4', ports: [], endpoints: [] }]);
    expect(desiredServiceSlices(service({ clusterIP: 'fd00::a', ipFamilies: ['IPv6'] }), [])[0]!.addressType).toBe('IPv6');
  });

  it("labels slices with the Service's labels, its name, the manager and the headless label", () => {
    expect(serviceSliceLabels(service({}, { labels: { team: 'a', 'kubernetes.io/service-name': 'spoof' } }))).toEqual({
      team: 'a',
      'kubernetes.io/service-name': 'web',
      'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io',
    });
    expect(serviceSliceLabels(service({ clusterIP: 'None' }))).toMatchObject({ 'service.kubernetes.io/headless': '' });
  });

  it('creates, rewrites in place, leaves alone, and deletes', () => {
    const svc = service();
    const wanted = desiredServiceSlices(svc, [pod('a', '10.1.0.1')]);
    const first = planServiceSlices(svc, wanted, []);
    expect(first.update).toEqual([]);
    expect(first.delete).toEqual([]);
    expect(first.create).toHaveLength(1);
    expect(first.create[0]!.metadata).toEqual({
      namespace: 'default',
      generateName: 'web-',
      labels: serviceSliceLabels(svc),
      ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: 'web', uid: 'svc-uid', controller: true, blockOwnerDeletion: true }],
    });
    const stored = { ...first.create[0]!, metadata: { ...first.create[0]!.metadata, name: 'web-abcde', resourceVersion: '5' } };
    expect(planServiceSlices(svc, wanted, [stored])).toEqual({ create: [], update: [], delete: [] });
    // Another target port: the same slice is rewritten, keeping its name and version.
    const moved = planServiceSlices(
      svc,
      desiredServiceSlices(service({ ports: [{ name: 'http', port: 80, targetPort: 9000, protocol: 'TCP' }] }), [pod('a', '10.1.0.1')]),
      [stored],
    );
    expect(moved.create).toEqual([]);
    expect(moved.delete).toEqual([]);
    expect(moved.update.map((s) => [s.metadata.name, s.metadata.resourceVersion, s.ports])).toEqual([
      ['web-abcde', '5', [{ name: 'http', port: 9000, protocol: 'TCP' }]],
    ]);
    // A duplicate of a group is deleted; a label changed by hand is set back.
    const dup = { ...stored, metadata: { ...stored.metadata, name: 'web-zzzzz', labels: { ...((stored.metadata as Obj).labels as Obj), team: 'x' } } };
    expect(planServiceSlices(svc, wanted, [dup, stored])).toEqual({ create: [], update: [], delete: ['web-zzzzz'] });
    expect(planServiceSlices(svc, wanted, [dup]).update.map((s) => s.metadata.labels)).toEqual([serviceSliceLabels(svc)]);
  });
});

describe('the last change trigger time', () => {
  const t = (n: number) => Date.parse('2019-01-01T00:00:00Z') + n * 1000;
  const svc = (created: number): KubeObject => service({}, { creationTimestamp: new Date(created).toISOString() });
  const readyAt = (name: string, at: number): KubeObject => ({
    metadata: { name, namespace: 'default' },
    status: { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date(at).toISOString() }] },
  });

  it('is the creation time of a Service not seen before, whatever its pods', () => {
    const tracker = new TriggerTimeTracker();
    expect(tracker.compute(svc(t(3)), [readyAt('a', t(0)), readyAt('b', t(1)), readyAt('c', t(5))])).toBe(t(3));
  });

  it('then the earliest time among the pods added or changed since; none when nothing changed', () => {
    const tracker = new TriggerTimeTracker();
    const s = svc(t(0));
    expect(tracker.compute(s, [])).toBe(t(0));
    expect(tracker.compute(s, [readyAt('a', t(2)), readyAt('b', t(1))])).toBe(t(1));
    expect(tracker.compute(s, [readyAt('a', t(5)), readyAt('b', t(4)), readyAt('c', t(3))])).toBe(t(3));
    expect(tracker.compute(s, [readyAt('a', t(5)), readyAt('b', t(4)), readyAt('c', t(3))])).toBeUndefined();
    // A pod that left and came back counts as changed.
    expect(tracker.compute(s, [readyAt('a', t(5))])).toBeUndefined();
    expect(tracker.compute(s, [readyAt('a', t(5)), readyAt('b', t(4))])).toBe(t(4));
    // A change of the spec alone has no time.
    expect(tracker.compute({ ...s, spec: { ports: [{ port: 80 }] } }, [readyAt('a', t(5)), readyAt('b', t(4))])).toBeUndefined();
  });

  it('starts again for a Service made again, and after clear', () => {
    const tracker = new TriggerTimeTracker();
    expect(tracker.compute(svc(t(0)), [readyAt('a', t(1))])).toBe(t(0));
    tracker.forget('default', 'web');
    expect(tracker.compute(svc(t(3)), [readyAt('a', t(1))])).toBe(t(3));
    expect(tracker.compute(svc(t(4)), [readyAt('a', t(1))])).toBe(t(4));
    tracker.clear();
    expect(tracker.compute(svc(t(4)), [readyAt('a', t(1))])).toBe(t(4));
  });

  it("is written as Go's RFC3339Nano and taken off when there is none", () => {
    expect(formatTriggerTime(t(0))).toBe('2019-01-01T00:00:00Z');
    expect(formatTriggerTime(t(0) + 120)).toBe('2019-01-01T00:00:00.12Z');
    expect(formatTriggerTime(t(0) + 5)).toBe('2019-01-01T00:00:00.005Z');
    const ep: KubeObject = { metadata: { name: 'web', annotations: { keep: 'x' } } };
    const stamped = withTriggerTime(ep, t(1));
    expect(stamped.metadata.annotations).toEqual({ keep: 'x', 'endpoints.kubernetes.io/last-change-trigger-time': '2019-01-01T00:00:01Z' });
    expect(withTriggerTime(stamped, undefined).metadata.annotations).toEqual({ keep: 'x' });
    expect(withTriggerTime(withTriggerTime({ metadata: { name: 'web' } }, t(1)), undefined).metadata).toEqual({ name: 'web' });
  });
});

describe("the controllers' copy of a pod", () => {
  it('keeps what the rules read, so Endpoints and slices are those of the whole pods', () => {
    const full = (p: KubeObject): KubeObject => ({
      ...p,
      metadata: { ...p.metadata, annotations: { big: 'x'.repeat(1000) }, resourceVersion: '7', ownerReferences: [{ kind: 'ReplicaSet' }] },
      spec: { ...(p.spec as Obj), volumes: [{ name: 'v' }], tolerations: [{ key: 'k' }] },
      status: {
        ...(p.status as Obj),
        hostIP: '192.168.0.1',
        containerStatuses: [{ name: 'c' }],
        conditions: [{ type: 'PodScheduled', status: 'True' }, ...((p.status as Obj).conditions as Obj[])],
      },
    });
    const pods = [
      full(pod('a', '10.1.0.1')),
      full(pod('b', '10.1.0.2', { ready: false })),
      full(pod('c', '10.1.0.3', { meta: { deletionTimestamp: '2026-01-01T00:00:00Z' } })),
      full(pod('d', undefined)),
      full(pod('e', 'fd00::5', { status: { podIPs: [{ ip: '10.1.0.5' }, { ip: 'fd00::5' }] } })),
      full(pod('f', '10.1.0.6', { spec: { hostname: 'f', subdomain: 'web', nodeName: 'node-2' } })),
      full(
        pod('g', '10.1.0.7', {
          spec: { containers: [], initContainers: [{ name: 'side', restartPolicy: 'Always', ports: [{ name: 'web', containerPort: 9090 }] }] },
        }),
      ),
      full(pod('h', '10.1.0.8', { status: { phase: 'Succeeded' } })),
    ];
    const views = pods.map(endpointsPodView);
    const zones = new Map([['node-1', 'z1']]);
    for (const svc of [
      service({ ports: [{ name: 'http', port: 80, targetPort: 'web', protocol: 'TCP' }] }),
      service({ publishNotReadyAddresses: true }),
      service({ clusterIP: 'None' }),
    ]) {
      expect(desiredEndpoints(svc, views, undefined)).toEqual(desiredEndpoints(svc, pods, undefined));
      expect(desiredServiceSlices(svc, views, zones)).toEqual(desiredServiceSlices(svc, pods, zones));
    }
    expect(views[0]).toEqual({
      metadata: { namespace: 'default', name: 'a', uid: 'uid-a', labels: { app: 'web' } },
      spec: { nodeName: 'node-1', containers: [{ ports: [{ name: 'web', containerPort: 8080 }] }] },
      status: { phase: 'Running', podIP: '10.1.0.1', podIPs: [{ ip: '10.1.0.1' }], conditions: [{ type: 'Ready', status: 'True' }] },
    });
  });
});
