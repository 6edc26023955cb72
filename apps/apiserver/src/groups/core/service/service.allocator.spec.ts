import { StatusError, type KubeObject } from '@app/apimachinery';
import { StorageError } from '@app/storage';
import { heldValues, initIPFamilyFields, ServiceAllocator, type RangeStore } from './service.allocator.js';
import { formatIP } from '../../networking/networking.ip.js';
import { Bitmap, parseIp, parseIpRange, parsePortRange, type ValueRange } from './service.ranges.js';
import { ROUNDS_BEFORE_RELEASE, ServiceRangeRepair } from './service.repair.js';
import { dropTypeDependentFields, patchAllocatedValues } from './service.strategy.js';

/** A range's bitmap in memory, with the compare-and-swap the repair uses. */
class MemoryRange<V> implements RangeStore {
  bits: Bitmap;
  version = 1;
  exists = true;
  constructor(readonly range: ValueRange<V>) {
    this.bits = new Bitmap(range.size);
  }
  async update<T>(change: (bits: Bitmap) => T, dryRun: boolean): Promise<T> {
    const copy = new Bitmap(this.range.size, this.bits.bytes);
    const out = change(copy);
    if (!dryRun) {
      this.bits = copy;
      this.version++;
    }
    return out;
  }
  async snapshot() {
    return this.exists ? { bits: new Bitmap(this.range.size, this.bits.bytes), version: String(this.version) } : undefined;
  }
  async replace(version: string, bits: Bitmap) {
    if (version !== String(this.version)) throw new StorageError('Conflict', 'range', 'changed');
    this.bits = bits;
    this.version++;
  }
  values(): V[] {
    return [...this.bits.taken()].map((o) => this.range.valueAt(o));
  }
}

type SvcSpec = { [k: string]: unknown; clusterIP?: string; type?: string; externalName?: string; ipFamilies?: string[]; ports?: unknown };
const sp = (o: KubeObject): SvcSpec => o.spec as SvcSpec;
const svc = (spec: Record<string, unknown>, name = 'web'): KubeObject => ({ metadata: { name, namespace: 'default' }, spec });
const setup = (cidr = '10.0.0.0/24', ports = '30000-32767') => {
  const ips = new MemoryRange(parseIpRange(cidr));
  const np = new MemoryRange(parsePortRange(ports));
  const logs: string[] = [];
  const alloc = new ServiceAllocator({
    ips: { range: ips.range as ReturnType<typeof parseIpRange>, store: ips },
    ports: { range: np.range, store: np },
    log: (l) => logs.push(l),
  });
  return { ips, np, alloc, logs };
};
const rejected = async (p: Promise<unknown>): Promise<StatusError> => {
  try {
    await p;
  } catch (e) {
    if (e instanceof StatusError) return e;
    throw e;
  }
  throw new Error('expected a rejection');
};

describe('service ranges', () => {
  it('parses CIDRs, leaving out the network (and IPv4 broadcast) address', () => {
    const r = parseIpRange('10.0.0.0/24');
    expect([r.size, r.staticBand, r.valueAt(0), r.valueAt(253), r.family]).toEqual([254, 16, '10.0.0.1', '10.0.0.254', 'IPv4']);
    expect([r.offsetOf('10.0.0.0'), r.offsetOf('10.0.0.255'), r.offsetOf('10.0.1.1'), r.offsetOf('10.0.0.10')]).toEqual([undefined, undefined, undefined, 9]);
    expect(parseIpRange('10.96.5.7/12').text).toBe('10.96.0.0/12');
    expect(parseIpRange('10.96.0.0/12').staticBand).toBe(256);
    const v6 = parseIpRange('fd00:10:96::/112');
    expect([v6.size, v6.valueAt(0), v6.valueAt(65534), v6.offsetOf('fd00:10:96::ffff'), v6.family]).toEqual([
      65535,
      'fd00:10:96::1',
      'fd00:10:96::ffff',
      65534,
      'IPv6',
    ]);
    expect(() => parseIpRange('10.0.0.0/8')).toThrow('the mask must be >= 12');
    expect(() => parseIpRange('10.0.0.0/32')).toThrow('too small');
    expect(() => parseIpRange('10.0.0/24')).toThrow('is not a CIDR');
  });

  it('formats IPv6 as RFC 5952 does', () => {
    const f = (s: string) => formatIP({ bits: 128, value: parseIp(s)!.value });
    expect([f('2001:DB8:0:0:1:0:0:1'), f('::1'), f('1::'), f('2001:db8::0:1'), f('1:0:1:0:1:0:1:0'), f('::ffff:1.2.3.4')]).toEqual([
      '2001:db8::1:0:0:1',
      '::1',
      '1::',
      '2001:db8::1',
      '1:0:1:0:1:0:1:0',
      '::ffff:102:304',
    ]);
    expect(parseIp('1.2.3.256')).toBeUndefined();
    expect(parseIp('1:2:3')).toBeUndefined();
    expect(parseIp('010.0.0.1')).toEqual({ family: 'IPv4', value: 0x0a000001n }); // sloppy, as kube's flags
  });

  it('parses node port ranges', () => {
    const r = parsePortRange('30000-32767');
    expect([r.size, r.staticBand, r.valueAt(0), r.offsetOf(32767), r.offsetOf(29999)]).toEqual([2768, 86, 30000, 2767, undefined]);
    expect(parsePortRange('30000+100').text).toBe('30000-30100');
    expect(() => parsePortRange('40000-30000')).toThrow('not a port range');
  });

  it('takes free values above the static band first, then in it, then none', () => {
    const b = new Bitmap(20);
    const got: number[] = [];
    for (let i = 0; i < 20; i++) {
      const off = b.firstFree(16, () => 0.5)!;
      b.set(off);
      got.push(off);
    }
    expect(got.slice(0, 4).sort((x, y) => x - y)).toEqual([16, 17, 18, 19]);
    expect(got.slice(4).every((o) => o < 16)).toBe(true);
    expect(b.firstFree(16)).toBeUndefined();
    expect(b.count()).toBe(20);
  });
});

describe('ServiceAllocator', () => {
  it('gives a ClusterIP Service a free IP and its family fields', async () => {
    const { ips, alloc } = setup();
    const s = svc({ ports: [{ port: 80 }], selector: { app: 'web' } });
    const txn = await alloc.allocateCreate(s, false);
    await txn.commit();
    const ip = sp(s).clusterIP as string;
    expect(s.spec).toMatchObject({ clusterIPs: [ip], ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack' });
    expect(ips.values()).toEqual([ip]);
    // Outside the static band (the first 16 addresses) while the rest has room.
    expect(ips.range.offsetOf(ip)!).toBeGreaterThanOrEqual(16);
  });

  it('takes a requested IP once; a second request or one outside the range is 422 on spec.clusterIPs', async () => {
    const { alloc } = setup();
    await alloc.allocateCreate(svc({ clusterIP: '10.0.0.5', ports: [{ port: 80 }] }), false);
    const again = await rejected(alloc.allocateCreate(svc({ clusterIP: '10.0.0.5', ports: [{ port: 80 }] }, 'b'), false));
    expect([again.code, again.message]).toEqual([
      422,
      'Service "b" is invalid: spec.clusterIPs: Invalid value: []string{"10.0.0.5"}: failed to allocate IP 10.0.0.5: provided IP is already allocated',
    ]);
    const outside = await rejected(alloc.allocateCreate(svc({ clusterIP: '10.1.0.5', ports: [{ port: 80 }] }, 'c'), false));
    expect(outside.message).toBe(
      'Service "c" is invalid: spec.clusterIPs: Invalid value: []string{"10.1.0.5"}: failed to allocate IP 10.1.0.5: the provided IP (10.1.0.5) is not in the valid range. The range of valid IPs is 10.0.0.0/24',
    );
  });

  it('gives nothing to headless and ExternalName Services; headless without selector names both families', async () => {
    const { ips, alloc } = setup();
    const headless = svc({ clusterIP: 'None', clusterIPs: ['None'], selector: { a: 'b' } });
    await alloc.allocateCreate(headless, false);
    expect(headless.spec).toMatchObject({ clusterIP: 'None', ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack' });
    const bare = svc({ clusterIP: 'None', clusterIPs: ['None'] });
    await alloc.allocateCreate(bare, false);
    expect(bare.spec).toMatchObject({ ipFamilies: ['IPv4', 'IPv6'], ipFamilyPolicy: 'RequireDualStack' });
    const ext = svc({ type: 'ExternalName', externalName: 'example.com' });
    await alloc.allocateCreate(ext, false);
    expect(ext.spec).toEqual({ type: 'ExternalName', externalName: 'example.com' });
    expect(ips.values()).toEqual([]);
  });

  it('refuses dual-stack and the other family on a single-stack cluster', async () => {
    const { alloc } = setup();
    const dual = await rejected(alloc.allocateCreate(svc({ ipFamilyPolicy: 'RequireDualStack', ports: [{ port: 1 }] }), false));
    expect(dual.message).toBe(
      'Service "web" is invalid: spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services',
    );
    const v6 = await rejected(alloc.allocateCreate(svc({ ipFamilies: ['IPv6'], ports: [{ port: 1 }] }), false));
    expect(v6.message).toBe('Service "web" is invalid: spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster');
    const ip6 = await rejected(alloc.allocateCreate(svc({ clusterIP: 'fd00::5', clusterIPs: ['fd00::5'], ports: [{ port: 1 }] }), false));
    expect(ip6.message).toBe('Service "web" is invalid: spec.clusterIPs[0]: Invalid value: []string{"fd00::5"}: IPv6 is not configured on this cluster');
    // PreferDualStack stays single on a single-stack cluster.
    const prefer = svc({ ipFamilyPolicy: 'PreferDualStack', ports: [{ port: 1 }] });
    initIPFamilyFields(prefer, undefined, 'IPv4');
    expect(sp(prefer).ipFamilies).toEqual(['IPv4']);
  });

  it('gives NodePort Services node ports, shared by ports of one number, and takes given ones', async () => {
    const { np, alloc } = setup();
    const s = svc({
      type: 'NodePort',
      ports: [
        { name: 'dns', port: 53, protocol: 'UDP' },
        { name: 'dns-tcp', port: 53, protocol: 'TCP' },
        { name: 'web', port: 80, nodePort: 30080 },
      ],
    });
    await alloc.allocateCreate(s, false);
    const ports = sp(s).ports as Array<{ nodePort: number }>;
    expect(ports[0].nodePort).toBe(ports[1].nodePort);
    expect(ports[2].nodePort).toBe(30080);
    expect(np.values().sort()).toEqual([ports[0].nodePort, 30080].sort());
    const taken = await rejected(alloc.allocateCreate(svc({ type: 'NodePort', ports: [{ port: 1 }, { name: 'b', port: 2, nodePort: 30080 }] }, 'b'), false));
    expect(taken.message).toBe('Service "b" is invalid: spec.ports[1].nodePort: Invalid value: 30080: provided port is already allocated');
    const outside = await rejected(alloc.allocateCreate(svc({ type: 'NodePort', ports: [{ port: 1, nodePort: 29999 }] }, 'c'), false));
    expect(outside.message).toBe(
      'Service "c" is invalid: spec.ports[0].nodePort: Invalid value: 29999: provided port is not in the valid range. The range of valid ports is 30000-32767',
    );
  });

  it('gives back the cluster IP when the node ports fail, and everything on revert', async () => {
    const { ips, np, alloc } = setup();
    await alloc.allocateCreate(svc({ type: 'NodePort', ports: [{ port: 1, nodePort: 30001 }] }, 'a'), false);
    expect(ips.values()).toHaveLength(1);
    await rejected(alloc.allocateCreate(svc({ type: 'NodePort', ports: [{ port: 1, nodePort: 30001 }] }, 'b'), false));
    expect(ips.values()).toHaveLength(1);
    const txn = await alloc.allocateCreate(svc({ type: 'LoadBalancer', externalTrafficPolicy: 'Local', ports: [{ port: 1 }] }, 'c'), false);
    expect([ips.values().length, np.values().length]).toEqual([2, 3]); // a node port and a health check node port
    await txn.revert();
    expect([ips.values().length, np.values()]).toEqual([1, [30001]]);
  });

  it('LoadBalancer with allocateLoadBalancerNodePorts false gets only the node ports it names', async () => {
    const { np, alloc } = setup();
    const s = svc({
      type: 'LoadBalancer',
      allocateLoadBalancerNodePorts: false,
      ports: [
        { name: 'a', port: 1 },
        { name: 'b', port: 2, nodePort: 30002 },
      ],
    });
    await alloc.allocateCreate(s, false);
    expect((sp(s).ports as Array<{ nodePort?: number }>).map((p) => p.nodePort)).toEqual([undefined, 30002]);
    expect(np.values()).toEqual([30002]);
  });

  it('dry run fills in values and checks requests, taking nothing', async () => {
    const { ips, np, alloc } = setup();
    await alloc.allocateCreate(svc({ clusterIP: '10.0.0.7', ports: [{ port: 1 }] }, 'a'), false);
    const s = svc({ type: 'NodePort', ports: [{ port: 1 }] }, 'b');
    await (await alloc.allocateCreate(s, true)).commit();
    expect(sp(s).clusterIP).toMatch(/^10\.0\.0\./);
    expect((sp(s).ports as Array<{ nodePort: number }>)[0].nodePort).toBeGreaterThanOrEqual(30000);
    expect([ips.values(), np.values()]).toEqual([['10.0.0.7'], []]);
    await rejected(alloc.allocateCreate(svc({ clusterIP: '10.0.0.7', ports: [{ port: 1 }] }, 'c'), true));
  });

  it('updates: a type change takes and gives back node ports and IPs on commit, a revert gives back only what it took', async () => {
    const { ips, np, alloc } = setup();
    const v1 = svc({ ports: [{ name: 'web', port: 80 }] });
    await alloc.allocateCreate(v1, false);
    const ip = sp(v1).clusterIP;
    // ClusterIP -> NodePort: a node port is taken.
    const v2 = structuredClone(v1);
    sp(v2).type = 'NodePort';
    const t2 = await alloc.allocateUpdate(v2, v1, false);
    const port = (sp(v2).ports as Array<{ nodePort: number }>)[0].nodePort;
    expect(np.values()).toEqual([port]);
    await t2.revert();
    expect(np.values()).toEqual([]);
    await (await alloc.allocateUpdate(v2, v1, false)).commit();
    const port2 = (sp(v2).ports as Array<{ nodePort: number }>)[0].nodePort;
    // NodePort -> ClusterIP, node ports dropped: given back on commit only.
    const v3 = structuredClone(v2);
    sp(v3).type = 'ClusterIP';
    dropTypeDependentFields(v3, v2);
    expect((sp(v3).ports as Array<{ nodePort?: number }>)[0].nodePort).toBeUndefined();
    const t3 = await alloc.allocateUpdate(v3, v2, false);
    expect(np.values()).toEqual([port2]);
    await t3.commit();
    expect(np.values()).toEqual([]);
    // ClusterIP -> ExternalName gives the IP back; back to ClusterIP takes a new one.
    const v4 = structuredClone(v3);
    Object.assign(sp(v4), { type: 'ExternalName', externalName: 'example.com' });
    dropTypeDependentFields(v4, v3);
    expect(sp(v4).clusterIP).toBeUndefined();
    await (await alloc.allocateUpdate(v4, v3, false)).commit();
    expect(ips.values()).toEqual([]);
    const v5 = structuredClone(v4);
    Object.assign(sp(v5), { type: 'ClusterIP' });
    delete sp(v5).externalName;
    await (await alloc.allocateUpdate(v5, v4, false)).commit();
    expect(ips.values()).toEqual([sp(v5).clusterIP]);
    expect(ip).toBeDefined();
  });

  it('an unchanged update needs no allocation; a stored Service without an IP gets one', async () => {
    const a = svc({ clusterIP: '10.0.0.9', clusterIPs: ['10.0.0.9'], ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack', ports: [{ port: 1 }] });
    expect(ServiceAllocator.allocationChanges(structuredClone(a), a)).toBe(false);
    const legacy = svc({ ports: [{ port: 1 }] });
    expect(ServiceAllocator.allocationChanges(structuredClone(legacy), legacy)).toBe(true);
    const { ips, alloc } = setup();
    const next = structuredClone(legacy);
    await (await alloc.allocateUpdate(next, legacy, false)).commit();
    expect(ips.values()).toEqual([sp(next).clusterIP]);
  });

  it('release gives back everything a Service held', async () => {
    const { ips, np, alloc } = setup();
    const s = svc({ type: 'LoadBalancer', externalTrafficPolicy: 'Local', ports: [{ port: 1 }, { name: 'b', port: 2 }] });
    await alloc.allocateCreate(s, false);
    expect(heldValues(s).ports).toHaveLength(3);
    expect([ips.values().length, np.values().length]).toEqual([1, 3]);
    await alloc.release(s);
    expect([ips.values(), np.values()]).toEqual([[], []]);
  });
});

describe('Service update patches', () => {
  it('keeps the cluster IP and node ports an update leaves out', () => {
    const old = svc({
      type: 'NodePort',
      clusterIP: '10.0.0.3',
      clusterIPs: ['10.0.0.3'],
      ports: [
        { name: 'a', port: 1, nodePort: 30001 },
        { name: 'b', port: 2, nodePort: 30002 },
      ],
    });
    const next = svc({
      type: 'NodePort',
      ports: [
        { name: 'a', port: 1 },
        { name: 'b', port: 2, nodePort: 30001 },
      ],
    });
    patchAllocatedValues(next, old);
    // a's old node port is used by b now, so a gets a fresh one later.
    expect(next.spec).toMatchObject({ clusterIP: '10.0.0.3', clusterIPs: ['10.0.0.3'], ports: [{ name: 'a' }, { name: 'b', nodePort: 30001 }] });
    expect((sp(next).ports as Array<{ nodePort?: number }>)[0].nodePort).toBeUndefined();
    const kept = svc({
      type: 'NodePort',
      ports: [
        { name: 'a', port: 1 },
        { name: 'b', port: 2 },
      ],
    });
    patchAllocatedValues(kept, old);
    expect((sp(kept).ports as Array<{ nodePort?: number }>).map((p) => p.nodePort)).toEqual([30001, 30002]);
  });
});

describe('ServiceRangeRepair', () => {
  it('marks what Services hold, gives back a leak after three rounds, and starts over on a conflict', async () => {
    const { ips, np, alloc, logs } = setup();
    // Asked for: an IP chosen at random could be one of those the rounds below plant.
    const a = svc({ type: 'NodePort', clusterIP: '10.0.0.5', clusterIPs: ['10.0.0.5'], ports: [{ port: 1 }] }, 'a');
    await alloc.allocateCreate(a, false);
    expect(sp(a).clusterIP).toBe('10.0.0.5');
    const stored: KubeObject[] = [a];
    // A Service stored around the allocator holds an IP the bitmap lacks.
    stored.push(svc({ clusterIP: '10.0.0.200', clusterIPs: ['10.0.0.200'], ports: [{ port: 1 }] }, 'b'));
    // A leak: taken, no Service holds it.
    await ips.update((bits) => bits.set(ips.range.offsetOf('10.0.0.100')!), false);
    const repair = new ServiceRangeRepair({
      listServices: async () => stored,
      ips: { range: ips.range, store: ips },
      ports: { range: np.range, store: np },
      log: (l) => logs.push(l),
    });
    const r1 = await repair.runOnce();
    expect([r1.ips.marked, r1.ips.leaked, r1.ips.released]).toEqual([['10.0.0.200'], ['10.0.0.100'], []]);
    expect(ips.values()).toContain('10.0.0.100');
    for (let i = 2; i < ROUNDS_BEFORE_RELEASE; i++) expect((await repair.runOnce()).ips.released).toEqual([]);
    const last = await repair.runOnce();
    expect(last.ips.released).toEqual(['10.0.0.100']);
    expect(ips.values().sort()).toEqual([sp(a).clusterIP as string, '10.0.0.200'].sort());
    expect(last.ports).toMatchObject({ marked: [], released: [], leaked: [] });
    expect(logs.some((l) => l.includes('10.0.0.100 was taken but no Service holds it'))).toBe(true);

    // A bitmap changed between the round's read and its write is left alone.
    stored.push(svc({ clusterIP: '10.0.0.201', clusterIPs: ['10.0.0.201'], ports: [{ port: 1 }] }, 'c'));
    const racing = new ServiceRangeRepair({
      listServices: async () => {
        await ips.update((bits) => bits.set(ips.range.offsetOf('10.0.0.202')!), false);
        return stored;
      },
      ips: { range: ips.range, store: ips },
      ports: { range: np.range, store: np },
      log: (l) => logs.push(l),
    });
    const r = await racing.runOnce();
    expect([r.ips.conflict, ips.values().includes('10.0.0.201')]).toEqual([true, false]);
  });

  it('reports values two Services hold and values outside the range', async () => {
    const { ips, np, logs } = setup();
    const repair = new ServiceRangeRepair({
      listServices: async () => [
        svc({ clusterIP: '10.0.0.50', clusterIPs: ['10.0.0.50'], ports: [{ port: 1 }] }, 'a'),
        svc({ clusterIP: '10.0.0.50', clusterIPs: ['10.0.0.50'], ports: [{ port: 1 }] }, 'b'),
        svc({ clusterIP: '192.168.0.1', clusterIPs: ['192.168.0.1'], ports: [{ port: 1 }] }, 'c'),
      ],
      ips: { range: ips.range, store: ips },
      ports: { range: np.range, store: np },
      log: (l) => logs.push(l),
    });
    await repair.runOnce();
    expect(logs).toEqual(
      expect.arrayContaining([
        'service range repair: the cluster IP 10.0.0.50 is held by Services default/a and default/b; recreate one of them',
        'service range repair: the cluster IP 192.168.0.1 of Service default/c is not within 10.0.0.0/24; recreate the Service',
      ]),
    );
  });
});
