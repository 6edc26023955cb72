/**
 * Cluster IPs and node ports of Services (kube's service REST allocators, pkg/registry/core/
 * service/storage alloc.go): what a Service create, update or delete takes from and gives back
 * to the two ranges, around the write that stores the Service.
 *
 * - Create: the IP family fields are filled in, then a cluster IP is taken (the one asked for,
 *   or a free one) unless the Service is ExternalName or headless, then its node ports (NodePort
 *   and LoadBalancer Services; ports of the same number share one) and the health check node
 *   port of a LoadBalancer with externalTrafficPolicy Local. If the Service's write fails, what
 *   was taken is given back.
 * - Update: only what the new state takes beyond the old one is taken; what the old one held
 *   and the new one does not is given back once the write succeeded.
 * - Delete: everything the Service held is given back.
 * - Dry run: the same checks and the same answer (a free IP or port is filled in), nothing taken.
 *
 * Each range's bitmap is one stored object changed by compare-and-swap (RangeStore), so two
 * API servers never hand out the same value. A crash between taking a value and storing the
 * Service leaves the value taken; the repair loop (service.repair.ts) gives it back.
 */
import { Errors, goSlice, StatusError, type FieldError, type KubeObject } from '@app/apimachinery';
import type { AllocationTxn, WriteAllocator } from '@app/registry';
import { asMap } from '../core.helpers.js';
import { parseIp, type Bitmap, type IpRange, type ValueRange } from './service.ranges.js';

/** One range's bitmap in storage. */
export interface RangeStore {
  /**
   * Runs `change` on the current bitmap and stores the result atomically (compare-and-swap,
   * retried on fresh state, so `change` may run more than once). With `dryRun` it runs on a copy
   * and nothing is stored. Errors thrown by `change` propagate. Returns what `change` returns.
   */
  update<T>(change: (bits: Bitmap) => T, dryRun: boolean): Promise<T>;
}

/** What the allocator works with. */
export interface ServiceAllocatorDeps {
  ips: { range: IpRange; store: RangeStore };
  ports: { range: ValueRange<number>; store: RangeStore };
  /** Where a failure to give values back is reported (the repair loop takes them back later). */
  log(line: string): void;
  random?(): number;
}

type Port = { name?: string; port?: number; protocol?: string; nodePort?: number };

function specOf(svc: KubeObject): Record<string, unknown> {
  const spec = asMap(svc.spec);
  svc.spec = spec;
  return spec;
}
const typeOf = (svc: KubeObject): string => (typeof asMap(svc.spec).type === 'string' ? (asMap(svc.spec).type as string) : 'ClusterIP');
const portsOf = (svc: KubeObject): Port[] => (Array.isArray(asMap(svc.spec).ports) ? (asMap(svc.spec).ports as Port[]) : []);
const clusterIPsOf = (svc: KubeObject): string[] => {
  const spec = asMap(svc.spec);
  if (Array.isArray(spec.clusterIPs) && spec.clusterIPs.length > 0) return spec.clusterIPs as string[];
  return typeof spec.clusterIP === 'string' && spec.clusterIP !== '' ? [spec.clusterIP] : [];
};

/** The Service type has a cluster IP field (all but ExternalName). */
export const needsClusterIP = (svc: KubeObject): boolean => typeOf(svc) !== 'ExternalName';
/** The Service type has node ports. */
export const needsNodePort = (svc: KubeObject): boolean => typeOf(svc) === 'NodePort' || typeOf(svc) === 'LoadBalancer';
/** A LoadBalancer with externalTrafficPolicy Local has a health check node port. */
export const needsHealthCheck = (svc: KubeObject): boolean => typeOf(svc) === 'LoadBalancer' && asMap(svc.spec).externalTrafficPolicy === 'Local';
const isHeadless = (svc: KubeObject): boolean => clusterIPsOf(svc)[0] === 'None';
/** Node ports are taken for ports without one (LoadBalancer: unless allocateLoadBalancerNodePorts is false). */
const shouldAllocateNodePorts = (svc: KubeObject): boolean =>
  typeOf(svc) === 'NodePort' || (typeOf(svc) === 'LoadBalancer' && asMap(svc.spec).allocateLoadBalancerNodePorts !== false);
const nodePortOf = (p: Port): number => (typeof p.nodePort === 'number' ? p.nodePort : 0);

/** The distinct node ports a Service's ports hold. */
export function serviceNodePorts(svc: KubeObject): number[] {
  return [
    ...new Set(
      portsOf(svc)
        .map(nodePortOf)
        .filter((n) => n !== 0),
    ),
  ];
}

/** Every cluster IP and node port (ports' and health check's) a Service holds. */
export function heldValues(svc: KubeObject): { ips: string[]; ports: number[] } {
  const ips = needsClusterIP(svc) && !isHeadless(svc) ? clusterIPsOf(svc).filter((ip) => ip !== 'None') : [];
  const ports = serviceNodePorts(svc);
  const hc = asMap(svc.spec).healthCheckNodePort;
  if (needsHealthCheck(svc) && typeof hc === 'number' && hc !== 0 && !ports.includes(hc)) ports.push(hc);
  return { ips, ports };
}

const invalid = (svc: KubeObject, errs: FieldError[]): StatusError => Errors.invalid('', 'Service', svc.metadata.name ?? '', errs);

/**
 * Fills in ipFamilyPolicy and ipFamilies on a cluster of one family (kube's initIPFamilyFields):
 * the policy defaults to the old object's, else RequireDualStack for a headless Service without
 * selector, else SingleStack; the families follow the cluster IPs given, else the cluster's.
 * A headless Service without selector may name both families; anything else that asks for
 * dual-stack, or for the other family, is refused.
 */
export function initIPFamilyFields(svc: KubeObject, old: KubeObject | undefined, family: 'IPv4' | 'IPv6'): void {
  if (!needsClusterIP(svc)) return;
  const spec = specOf(svc);
  const selectorless = Object.keys(asMap(spec.selector)).length === 0;
  if (typeof spec.ipFamilyPolicy !== 'string') {
    const oldPolicy = old ? asMap(old.spec).ipFamilyPolicy : undefined;
    if (typeof oldPolicy === 'string') spec.ipFamilyPolicy = oldPolicy;
    else spec.ipFamilyPolicy = isHeadless(svc) && selectorless ? 'RequireDualStack' : 'SingleStack';
  }
  const policy = spec.ipFamilyPolicy as string;
  const families: string[] = Array.isArray(spec.ipFamilies) ? [...(spec.ipFamilies as string[])] : [];
  const ips = clusterIPsOf(svc);
  const errs: FieldError[] = [];
  if (policy === 'SingleStack') {
    if (ips.length === 2) {
      errs.push({
        type: 'FieldValueInvalid',
        field: 'spec.ipFamilyPolicy',
        value: policy,
        detail: "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified",
      });
    }
    if (families.length === 2) {
      errs.push({
        type: 'FieldValueInvalid',
        field: 'spec.ipFamilyPolicy',
        value: policy,
        detail: "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified",
      });
    }
  }
  for (let i = 0; i < ips.length && ips[i] !== 'None'; i++) {
    if (i < families.length) continue;
    const fam = parseIp(ips[i])?.family;
    if (fam === undefined) continue; // validation has refused it already
    if (fam !== family)
      errs.push({ type: 'FieldValueInvalid', field: `spec.clusterIPs[${i}]`, value: goSlice(ips), detail: `${fam} is not configured on this cluster` });
    else families.push(fam);
  }
  if (errs.length) throw invalid(svc, errs);
  const other = family === 'IPv4' ? 'IPv6' : 'IPv4';
  if (isHeadless(svc) && selectorless) {
    if (families.length === 0) families.push(family);
    if (families.length < 2 && policy !== 'SingleStack') families.push(families[0] === 'IPv4' ? 'IPv6' : 'IPv4');
    spec.ipFamilies = families;
    return;
  }
  if (policy === 'RequireDualStack') {
    errs.push({ type: 'FieldValueInvalid', field: 'spec.ipFamilyPolicy', value: policy, detail: 'this cluster is not configured for dual-stack services' });
  }
  families.forEach((f, i) => {
    if (f === other) errs.push({ type: 'FieldValueInvalid', field: `spec.ipFamilies[${i}]`, value: f, detail: 'not configured on this cluster' });
  });
  if (errs.length) throw invalid(svc, errs);
  if (families.length === 0) families.push(family);
  spec.ipFamilies = families;
}

/** Node ports taken inside one change of the node port bitmap. */
interface PortOp {
  /** Takes a given node port for spec.ports[index] (-1: the health check node port). */
  take(nodePort: number, index: number): void;
  /** Takes any free node port. */
  next(index: number): number;
}

/** The allocator of one server, on the two ranges' stores. */
export class ServiceAllocator implements WriteAllocator {
  constructor(private readonly deps: ServiceAllocatorDeps) {}

  get ipRange(): IpRange {
    return this.deps.ips.range;
  }

  get portRange(): ValueRange<number> {
    return this.deps.ports.range;
  }

  /** Takes IPs: '' for any free one. Returns them in request order. */
  private async takeIps(svc: KubeObject, want: string[], dryRun: boolean): Promise<string[]> {
    if (want.length === 0) return [];
    const { range, store } = this.deps.ips;
    return store.update((bits) => {
      const out: string[] = [];
      for (const ip of want) {
        if (ip === '') {
          const off = bits.firstFree(range.staticBand, this.deps.random);
          if (off === undefined) throw Errors.internal('failed to allocate a serviceIP: range is full');
          bits.set(off);
          out.push(range.valueAt(off));
          continue;
        }
        const off = range.offsetOf(ip);
        const fail = (why: string): never => {
          throw invalid(svc, [
            { type: 'FieldValueInvalid', field: 'spec.clusterIPs', value: goSlice(clusterIPsOf(svc)), detail: `failed to allocate IP ${ip}: ${why}` },
          ]);
        };
        if (off === undefined) fail(`the provided IP (${ip}) is not in the valid range. The range of valid IPs is ${range.text}`);
        else if (bits.has(off)) fail('provided IP is already allocated');
        else {
          bits.set(off);
          out.push(range.valueAt(off));
        }
      }
      return out;
    }, dryRun);
  }

  /**
   * Runs `plan` against the node port bitmap in one atomic change and returns its result and the
   * ports it took. `plan` may run more than once (compare-and-swap retries), so it must only read
   * the Service and return what to write into it.
   */
  private async withPorts<T>(svc: KubeObject, plan: (op: PortOp) => T, dryRun: boolean): Promise<{ result: T; taken: number[] }> {
    const { range, store } = this.deps.ports;
    return store.update((bits) => {
      const taken: number[] = [];
      const op: PortOp = {
        take: (nodePort, index) => {
          const off = range.offsetOf(nodePort);
          const why =
            off === undefined
              ? `provided port is not in the valid range. The range of valid ports is ${range.text}`
              : bits.has(off)
                ? 'provided port is already allocated'
                : undefined;
          if (why !== undefined) {
            if (index < 0) throw Errors.internal(`failed to allocate requested HealthCheck NodePort ${nodePort}: ${why}`);
            throw invalid(svc, [{ type: 'FieldValueInvalid', field: `spec.ports[${index}].nodePort`, value: nodePort, detail: why }]);
          }
          bits.set(off as number);
          taken.push(nodePort);
        },
        next: (index) => {
          const off = bits.firstFree(range.staticBand, this.deps.random);
          if (off === undefined) {
            throw Errors.internal(index < 0 ? 'failed to allocate a HealthCheck NodePort 0: range is full' : 'failed to allocate a nodePort: range is full');
          }
          bits.set(off);
          taken.push(range.valueAt(off));
          return range.valueAt(off);
        },
      };
      return { result: plan(op), taken };
    }, dryRun);
  }

  /** Gives values back; a failure is logged (the repair loop finds the value unused later). */
  private async give(what: { ips: string[]; ports: number[] }, why: string): Promise<void> {
    const { ips, ports } = this.deps;
    const clear =
      <V>(range: ValueRange<V>, values: V[]) =>
      (bits: Bitmap) => {
        for (const v of values) {
          const off = range.offsetOf(v);
          if (off !== undefined) bits.clear(off);
        }
      };
    try {
      if (what.ips.length) await ips.store.update(clear(ips.range, what.ips), false);
    } catch (e) {
      this.deps.log(`service allocation: could not release cluster IPs ${what.ips.join(',')} (${why}): ${(e as Error).message}`);
    }
    try {
      if (what.ports.length) await ports.store.update(clear(ports.range, what.ports), false);
    } catch (e) {
      this.deps.log(`service allocation: could not release node ports ${what.ports.join(',')} (${why}): ${(e as Error).message}`);
    }
  }

  /** A transaction that gives back `taken` on revert and `released` on commit. */
  private txn(taken: { ips: string[]; ports: number[] }, released: { ips: string[]; ports: number[] }, dryRun: boolean): AllocationTxn {
    let done = false;
    const once = async (what: { ips: string[]; ports: number[] }, why: string) => {
      if (done) return;
      done = true;
      if (!dryRun && (what.ips.length || what.ports.length)) await this.give(what, why);
    };
    return { commit: () => once(released, 'after an update'), revert: () => once(taken, 'after a failed write') };
  }

  /**
   * The node ports of a create (kube's initNodePorts and allocHealthCheckNodePort): ports of one
   * number share a node port, the one given on any of them first; -1 is the health check's.
   */
  private static createPlan(svc: KubeObject, op: PortOp): Map<number, number> {
    const out = new Map<number, number>();
    if (needsNodePort(svc)) {
      const ports = portsOf(svc);
      const byNumber = new Map<unknown, number>();
      ports.forEach((p, i) => {
        const np = nodePortOf(p);
        if (np === 0 && !shouldAllocateNodePorts(svc)) return;
        const shared = byNumber.get(p.port);
        if (shared === undefined) {
          const given = nodePortOf(ports.find((q) => q.port === p.port && nodePortOf(q) !== 0) ?? {});
          if (given !== 0) op.take(given, i);
          const got = given !== 0 ? given : op.next(i);
          byNumber.set(p.port, got);
          out.set(i, got);
        } else if (np !== shared) {
          if (np === 0) out.set(i, shared);
          else op.take(np, i);
        }
      });
    }
    if (needsHealthCheck(svc)) {
      const hc = asMap(svc.spec).healthCheckNodePort;
      if (typeof hc === 'number' && hc !== 0) op.take(hc, -1);
      else out.set(-1, op.next(-1));
    }
    return out;
  }

  /**
   * The node ports of an update (kube's updateNodePorts and updateHealthCheckNodePort): a port
   * keeps a node port the old object held, takes a given one it did not, and gets a free one
   * when it has none.
   */
  private static updatePlan(svc: KubeObject, old: KubeObject, op: PortOp): Map<number, number> {
    const out = new Map<number, number>();
    const oldPorts = serviceNodePorts(old);
    if (needsNodePort(svc)) {
      const taken = new Set<number>();
      const seen = new Set<string>();
      portsOf(svc).forEach((p, i) => {
        let np = nodePortOf(p);
        if (np === 0 && !shouldAllocateNodePorts(svc)) return;
        if (np !== 0) {
          if (!oldPorts.includes(np) && !taken.has(np)) {
            op.take(np, i);
            taken.add(np);
          }
        } else {
          np = op.next(i);
          out.set(i, np);
        }
        const key = `${p.protocol ?? 'TCP'} ${np}`;
        if (seen.has(key)) throw Errors.internal(`duplicate nodePort: {${key}}`);
        seen.add(key);
      });
    }
    if (!needsHealthCheck(old) && needsHealthCheck(svc)) {
      const hc = asMap(svc.spec).healthCheckNodePort;
      if (typeof hc === 'number' && hc !== 0) op.take(hc, -1);
      else out.set(-1, op.next(-1));
    }
    return out;
  }

  /** Writes a plan's node ports into the Service. */
  private static assign(svc: KubeObject, plan: Map<number, number>): void {
    const ports = portsOf(svc);
    for (const [i, np] of plan) {
      if (i < 0) specOf(svc).healthCheckNodePort = np;
      else ports[i].nodePort = np;
    }
  }

  async allocateCreate(svc: KubeObject, dryRun: boolean): Promise<AllocationTxn> {
    initIPFamilyFields(svc, undefined, this.deps.ips.range.family);
    const spec = specOf(svc);
    const wantIp = needsClusterIP(svc) && !isHeadless(svc) ? [clusterIPsOf(svc)[0] ?? ''] : [];
    const ips = await this.takeIps(svc, wantIp, dryRun);
    try {
      const { result, taken } =
        needsNodePort(svc) || needsHealthCheck(svc)
          ? await this.withPorts(svc, (op) => ServiceAllocator.createPlan(svc, op), dryRun)
          : { result: new Map<number, number>(), taken: [] };
      ServiceAllocator.assign(svc, result);
      if (ips.length) {
        spec.clusterIP = ips[0];
        spec.clusterIPs = [ips[0]];
      }
      return this.txn({ ips, ports: taken }, { ips: [], ports: [] }, dryRun);
    } catch (e) {
      if (!dryRun) await this.give({ ips, ports: [] }, 'after a failed allocation');
      throw e;
    }
  }

  async allocateUpdate(svc: KubeObject, old: KubeObject, dryRun: boolean): Promise<AllocationTxn> {
    initIPFamilyFields(svc, old, this.deps.ips.range.family);
    const spec = specOf(svc);
    const releaseIps: string[] = [];
    let wantIp: string[] = [];
    const oldIps = heldValues(old).ips;
    if (needsClusterIP(svc) && !isHeadless(svc) && (!needsClusterIP(old) || (oldIps.length === 0 && !isHeadless(old)))) {
      // From ExternalName, or a Service stored without a cluster IP: it gets one now.
      wantIp = [clusterIPsOf(svc)[0] ?? ''];
    } else if (!needsClusterIP(svc)) {
      releaseIps.push(...oldIps);
    }
    const ips = await this.takeIps(svc, wantIp, dryRun);
    try {
      // Only a NodePort or LoadBalancer Service, or one that now needs a health check port, takes ports.
      const takesPorts = needsNodePort(svc) || (!needsHealthCheck(old) && needsHealthCheck(svc));
      const { result, taken } = takesPorts
        ? await this.withPorts(svc, (op) => ServiceAllocator.updatePlan(svc, old, op), dryRun)
        : { result: new Map<number, number>(), taken: [] as number[] };
      ServiceAllocator.assign(svc, result);
      const nowPorts = needsNodePort(svc) ? serviceNodePorts(svc) : [];
      const oldPorts = serviceNodePorts(old);
      const releasePorts = oldPorts.filter((n) => !nowPorts.includes(n));
      const oldHc = asMap(old.spec).healthCheckNodePort;
      if (needsHealthCheck(old) && !needsHealthCheck(svc) && typeof oldHc === 'number' && oldHc !== 0 && !nowPorts.includes(oldHc)) releasePorts.push(oldHc);
      if (ips.length) {
        spec.clusterIP = ips[0];
        spec.clusterIPs = [ips[0]];
      }
      return this.txn({ ips, ports: taken }, { ips: releaseIps, ports: releasePorts }, dryRun);
    } catch (e) {
      if (!dryRun) await this.give({ ips, ports: [] }, 'after a failed allocation');
      throw e;
    }
  }

  async release(svc: KubeObject): Promise<void> {
    await this.give(heldValues(svc), 'after a delete');
  }

  /** Whether an update can change what a Service holds (else it needs no allocation at all). */
  static allocationChanges(svc: KubeObject, old: KubeObject): boolean {
    const a = asMap(svc.spec);
    const b = asMap(old.spec);
    const same = (x: unknown, y: unknown) => JSON.stringify(x ?? null) === JSON.stringify(y ?? null);
    return !(
      typeOf(svc) === typeOf(old) &&
      same(a.clusterIP, b.clusterIP) &&
      same(a.clusterIPs, b.clusterIPs) &&
      same(a.ipFamilies, b.ipFamilies) &&
      same(a.ipFamilyPolicy, b.ipFamilyPolicy) &&
      same(a.healthCheckNodePort, b.healthCheckNodePort) &&
      same(a.externalTrafficPolicy, b.externalTrafficPolicy) &&
      same(a.allocateLoadBalancerNodePorts, b.allocateLoadBalancerNodePorts) &&
      same(
        portsOf(svc).map((p) => [p.port, p.protocol, nodePortOf(p)]),
        portsOf(old).map((p) => [p.port, p.protocol, nodePortOf(p)]),
      ) &&
      (clusterIPsOf(old).length > 0 || !needsClusterIP(old) || isHeadless(old))
    );
  }
}

/**
 * The allocator the Service kind declares. The server hands it the allocator of its ranges at
 * start (service.wiring.ts); a store used before that refuses Service writes with a 500.
 */
export const serviceAllocatorPort: WriteAllocator & { impl?: WriteAllocator } = {
  allocateCreate(obj, dryRun) {
    return wired().allocateCreate(obj, dryRun);
  },
  allocateUpdate(obj, old, dryRun) {
    if (!ServiceAllocator.allocationChanges(obj, old)) return Promise.resolve({ commit: async () => {}, revert: async () => {} });
    return wired().allocateUpdate(obj, old, dryRun);
  },
  release(obj) {
    return wired().release(obj);
  },
};

function wired(): WriteAllocator {
  if (!serviceAllocatorPort.impl) throw Errors.internal('the Service cluster IP and node port allocator is not configured');
  return serviceAllocatorPort.impl;
}
