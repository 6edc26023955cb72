/**
 * The `kubernetes` Service in `default` and its endpoints (kube-apiserver's bootstrap controller
 * and its lease endpoint reconciler): the Service takes the first IP of the cluster IP range,
 * port 443 (`https`) to the API's secure port, and its Endpoints and EndpointSlices list every
 * API server that is up.
 *
 * Every API server runs this, every 10 s (KAPI_APISERVER_ENDPOINT_INTERVAL_MS): it renews its own
 * record under `/registry/masterleases/<address>:<port>` (a plain stored object, served by no
 * kind: { address, port, renewTime }), removes the records it has not seen renewed for three
 * periods of its own clock (ObservedRenewals: the renewTime written is only informative), and
 * writes the Endpoints and slices when the live records differ from them. It creates the Service
 * when it is missing (deleted by someone, or at the first start). On shutdown a server removes
 * its record and the endpoints drop it.
 *
 * The Endpoints carry `endpointslice.kubernetes.io/skip-mirror: "true"` (the slices are written
 * here, not mirrored). Servers that serve on different ports (tests run three on one host) are
 * grouped into one subset, and one EndpointSlice, per port.
 */
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { Inject, Injectable, type BeforeApplicationShutdown } from '@nestjs/common';
import { StatusError, type KubeObject } from '@app/apimachinery';
import { PRIVILEGED_GROUP } from '@app/auth';
import { KindRegistry, type KindDeclaration, type RequestContext } from '@app/registry';
import { StorageError, type Storage } from '@app/storage';
import { PostStartHook, type PostStartHookProvider } from '../../../bootstrap/post-start-hook.js';
import type { ServerConfig } from '../../../config/flags.js';
import { envInt } from '../../../config/env.js';
import { SERVER_CONFIG, STORAGE, STORES, type StoreFactory } from '../../../tokens.js';
import { ObservedRenewals } from './service.renewals.js';
import { ServiceRanges } from './service.wiring.js';

const LEASES = '/registry/masterleases/';
const NAME = 'kubernetes';
const NS = 'default';
const SKIP_MIRROR = 'endpointslice.kubernetes.io/skip-mirror';
const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

const CTX = (): RequestContext => ({
  user: { username: 'system:apiserver', groups: [PRIVILEGED_GROUP, 'system:authenticated'] },
  dryRun: false,
  warnings: [],
  now: () => new Date(),
});

/** One API server as its record names it. */
export interface ApiServerAddress {
  address: string;
  port: number;
}

/** The Endpoints of the `kubernetes` Service for the live API servers: one subset per port, addresses sorted. */
export function kubernetesEndpoints(servers: ApiServerAddress[]): KubeObject {
  const byPort = new Map<number, string[]>();
  for (const s of servers) byPort.set(s.port, [...(byPort.get(s.port) ?? []), s.address]);
  const subsets = [...byPort.keys()]
    .sort((a, b) => a - b)
    .map((port) => ({
      addresses: [...new Set(byPort.get(port))].sort().map((ip) => ({ ip })),
      ports: [{ name: 'https', port, protocol: 'TCP' }],
    }));
  return {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: { name: NAME, namespace: NS, labels: { [SKIP_MIRROR]: 'true' } },
    ...(subsets.length ? { subsets } : {}),
  };
}

/** The EndpointSlices of the `kubernetes` Service: one per port and address family, the first named `kubernetes`. */
export function kubernetesSlices(servers: ApiServerAddress[]): KubeObject[] {
  const groups = new Map<string, { port: number; type: string; addresses: string[] }>();
  for (const s of servers) {
    const type = isIP(s.address) === 6 ? 'IPv6' : 'IPv4';
    const key = `${type}/${s.port}`;
    const g = groups.get(key) ?? { port: s.port, type, addresses: [] };
    g.addresses.push(s.address);
    groups.set(key, g);
  }
  const sorted = [...groups.values()].sort((a, b) => (a.type === b.type ? a.port - b.port : a.type < b.type ? -1 : 1));
  return sorted.map((g, i) => ({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: i === 0 ? NAME : `${NAME}-${g.type.toLowerCase()}-${g.port}`, namespace: NS, labels: { [SERVICE_NAME_LABEL]: NAME } },
    addressType: g.type,
    endpoints: [...new Set(g.addresses)].sort().map((ip) => ({ addresses: [ip], conditions: { ready: true } })),
    ports: [{ name: 'https', port: g.port, protocol: 'TCP' }],
  }));
}

const unusable = (ip: string): boolean => /^127\./.test(ip) || ip === '::1' || ip === '0.0.0.0' || ip === '::' || isIP(ip) === 0;

/**
 * The address this server publishes (kube-apiserver's advertise address): --advertise-address,
 * else the bind address, else, when that is loopback or a wildcard, the host's first non-internal
 * address (IPv4 first). Endpoints may not hold loopback addresses; undefined when the host has
 * nothing else.
 */
export function advertisedAddress(cfg: Pick<ServerConfig, 'advertiseAddress' | 'bindAddress'>): string | undefined {
  if (cfg.advertiseAddress) return cfg.advertiseAddress;
  if (!unusable(cfg.bindAddress)) return cfg.bindAddress;
  const all = Object.values(networkInterfaces()).flatMap((l) => l ?? []);
  const pick = (family: string) => all.find((a) => !a.internal && a.family === family && !unusable(a.address) && !a.address.startsWith('fe80:'));
  return (pick('IPv4') ?? pick('IPv6'))?.address;
}

/** Keeps the `kubernetes` Service and its endpoints. */
@PostStartHook({ name: 'bootstrap-controller', order: 160 })
@Injectable()
export class KubernetesServiceController implements PostStartHookProvider, BeforeApplicationShutdown {
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private lastError = '';
  private readonly self: ApiServerAddress | undefined;
  private readonly intervalMs: number;
  private readonly renewals: ObservedRenewals;

  constructor(
    @Inject(STORAGE) private readonly storage: Storage,
    @Inject(STORES) private readonly stores: StoreFactory,
    @Inject(SERVER_CONFIG) private readonly cfg: ServerConfig,
    private readonly registry: KindRegistry,
    private readonly ranges: ServiceRanges,
  ) {
    const address = advertisedAddress(cfg);
    this.self = address ? { address, port: cfg.securePort } : undefined;
    if (!address) process.stderr.write(`${cfg.name}: no address to publish in the kubernetes Service's endpoints: set --advertise-address\n`);
    this.intervalMs = envInt('KAPI_APISERVER_ENDPOINT_INTERVAL_MS') ?? 10_000;
    this.renewals = new ObservedRenewals(3 * this.intervalMs);
  }

  private decl(group: string, plural: string): KindDeclaration | undefined {
    return this.registry.lookup(group, 'v1', plural);
  }

  async runPostStartHook(): Promise<void> {
    await this.reconcile();
    const tick = (): void => {
      this.timer = setTimeout(() => {
        void this.reconcile().finally(() => {
          if (!this.stopped) tick();
        });
      }, this.intervalMs);
      this.timer.unref();
    };
    tick();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    // Leave the endpoints, best effort and for at most 2 s: a server that cannot write now (no
    // quorum) is dropped when its record expires, and must not hold its shutdown up.
    const leave = async (): Promise<void> => {
      if (this.self) await this.storage.delete(this.leaseKey(this.self));
      await this.writeEndpoints(await this.liveServers(false));
    };
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([leave().catch(() => undefined), new Promise<void>((r) => (timer = setTimeout(r, 2_000)))]);
    clearTimeout(timer);
  }

  private leaseKey(s: ApiServerAddress): string {
    return `${LEASES}${s.address}:${s.port}`;
  }

  /** One round; failures are logged once per distinct message and retried next round. */
  async reconcile(): Promise<void> {
    try {
      await this.ensureService();
      await this.renew();
      await this.writeEndpoints(await this.liveServers(true));
      this.lastError = '';
    } catch (e) {
      const msg = (e as Error).message;
      if (msg !== this.lastError) process.stderr.write(`${this.cfg.name}: the kubernetes Service: ${msg}\n`);
      this.lastError = msg;
    }
  }

  private async ensureService(): Promise<void> {
    const decl = this.decl('', 'services');
    if (!decl) return;
    const store = this.stores.storeFor(decl);
    try {
      await store.get(NS, NAME);
      return;
    } catch (e) {
      if (!(e instanceof StatusError && e.code === 404)) throw e;
    }
    const ip = this.ranges.ipRange.valueAt(0);
    const svc: KubeObject = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: NAME, namespace: NS, labels: { component: 'apiserver', provider: 'kubernetes' } },
      spec: {
        type: 'ClusterIP',
        clusterIP: ip,
        clusterIPs: [ip],
        ports: [{ name: 'https', protocol: 'TCP', port: 443, targetPort: this.cfg.securePort }],
        sessionAffinity: 'None',
      },
    };
    try {
      await store.create(NS, svc, { ctx: CTX(), fieldValidation: 'Strict', fieldManager: 'kube-apiserver' });
    } catch (e) {
      if (!(e instanceof StatusError && e.code === 409)) throw e;
    }
  }

  private async renew(): Promise<void> {
    const self = this.self;
    if (!self) return;
    const now = new Date().toISOString();
    const name = `${self.address}:${self.port}`;
    await this.storage.guaranteedUpdate(
      this.leaseKey(self),
      (cur) => ({ ...cur, metadata: { name }, address: self.address, port: self.port, renewTime: now }),
      {
        createIfMissing: () => ({ apiVersion: 'v1', kind: 'APIServerAddress', metadata: { name } }),
      },
    );
  }

  /** The servers whose record is fresh; `withSelf` false leaves this server out (shutdown). */
  private async liveServers(withSelf: boolean): Promise<ApiServerAddress[]> {
    const { items } = await this.storage.list(LEASES, { consistency: { mode: 'MostRecent' } });
    const recordName = (r: KubeObject) => `${String(r.address ?? '')}:${String(r.port)}`;
    this.renewals.retain(new Set(items.map(recordName)));
    const live: ApiServerAddress[] = [];
    for (const r of items) {
      const addr = { address: String(r.address ?? ''), port: Number(r.port) };
      const mine = addr.address === this.self?.address && addr.port === this.self?.port;
      if (mine && !withSelf) continue;
      if (!mine && this.renewals.expired(recordName(r), String(r.metadata.resourceVersion))) {
        // Expired: removed if nobody renewed it meanwhile.
        await this.storage.delete(this.leaseKey(addr), { preconditions: { resourceVersion: r.metadata.resourceVersion } }).catch((e: unknown) => {
          if (!(e instanceof StorageError && (e.code === 'Conflict' || e.code === 'KeyNotFound'))) throw e;
        });
        continue;
      }
      if (addr.address && Number.isInteger(addr.port)) live.push(addr);
    }
    return live;
  }

  private async writeEndpoints(servers: ApiServerAddress[]): Promise<void> {
    const ep = this.decl('', 'endpoints');
    if (ep)
      await this.put(ep, kubernetesEndpoints(servers), (o) => ({
        subsets: o.subsets,
        skip: (o.metadata.labels as Record<string, string> | undefined)?.[SKIP_MIRROR],
      }));
    const es = this.decl('discovery.k8s.io', 'endpointslices');
    if (!es) return;
    const want = kubernetesSlices(servers);
    for (const s of want) {
      await this.put(es, s, (o) => ({
        addressType: o.addressType,
        endpoints: o.endpoints,
        ports: o.ports,
        svc: (o.metadata.labels as Record<string, string> | undefined)?.[SERVICE_NAME_LABEL],
      }));
    }
    // Slices of ports no server serves on any more.
    const store = this.stores.storeFor(es);
    const have = await store.list(NS, { labelSelector: `${SERVICE_NAME_LABEL}=${NAME}` });
    for (const s of have.items) {
      const name = s.metadata.name ?? '';
      if (name.startsWith(`${NAME}-`) && !want.some((w) => w.metadata.name === name)) {
        await store.delete(NS, name, { preconditions: { resourceVersion: s.metadata.resourceVersion } }, CTX()).catch((e: unknown) => {
          if (!(e instanceof StatusError && (e.code === 404 || e.code === 409))) throw e;
        });
      }
    }
  }

  /** Creates `want`, or updates the stored object when `view` of it differs. */
  private async put(decl: KindDeclaration, want: KubeObject, view: (o: KubeObject) => unknown): Promise<void> {
    const store = this.stores.storeFor(decl);
    const name = want.metadata.name ?? '';
    let cur: KubeObject | undefined;
    try {
      cur = await store.get(NS, name);
    } catch (e) {
      if (!(e instanceof StatusError && e.code === 404)) throw e;
    }
    const opts = { ctx: CTX(), fieldValidation: 'Strict' as const, fieldManager: 'kube-apiserver' };
    if (!cur) {
      await store.create(NS, want, opts).catch((e: unknown) => {
        if (!(e instanceof StatusError && e.code === 409)) throw e;
      });
      return;
    }
    if (JSON.stringify(view(cur)) === JSON.stringify(view(want))) return;
    const next = { ...want, metadata: { ...cur.metadata, labels: { ...(cur.metadata.labels ?? {}), ...(want.metadata.labels ?? {}) } } };
    await store.update(NS, name, next, opts).catch((e: unknown) => {
      // A concurrent writer (another server) won: the next round compares again.
      if (!(e instanceof StatusError && e.code === 409)) throw e;
    });
  }
}
