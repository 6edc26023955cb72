/**
 * The aggregation layer (kube-aggregator) of a node: the APIServices with a `service` whose
 * group-version this server does not serve itself are remote. Requests under
 * /apis/<group>/<version> go to the server behind the service, after this server has
 * authenticated and authorized them, with the user in the X-Remote-* headers of an
 * authenticating proxy and this server's --proxy-client-cert-file as the client certificate.
 * The server's certificate is checked against the APIService's caBundle for the name
 * `<service>.<namespace>.svc`, unless it says insecureSkipTLSVerify.
 *
 * Every node keeps watch-fed copies of the APIServices, Services and Endpoints, and fetches each
 * remote group-version's APIResourceList for discovery and its OpenAPI v3 document (every 30 s,
 * and at once when its APIService changes). The `Available` condition is written by the
 * availability controller (availability.controller.ts) on the node that runs the controllers,
 * with `probe`; a request to a group-version whose APIService is not Available is a 503, as
 * kube-aggregator answers.
 */
import { request as httpsRequest, Agent } from 'node:https';
import { readFileSync } from 'node:fs';
import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { StatusError } from '@app/apimachinery';
import type { UserInfo } from '@app/auth';
import { KindRegistry } from '@app/registry';
import type { Storage } from '@app/storage';
import { featureEnabled, type ServerConfig } from '../../../config/flags.js';
import { ApiMetrics } from '../../../observability/metrics.js';
import type { Aggregator, RemoteGroup } from '../../../http/aggregator.port.js';
import { proxyRequest } from '../../../http/reverse-proxy.js';
import { tunnel, upgradeOf } from '../../../http/upgrade-proxy.js';
import { WatchedCollection } from '../../../pipeline/watched-collection.js';
import { SERVER_CONFIG, STORAGE } from '../../../tokens.js';
import {
  apiServiceView,
  compareByVersionPriority,
  endpointsView,
  resolveService,
  serviceView,
  Unreachable,
  type ApiServiceView,
  type Availability,
  type EndpointsView,
  type ServiceView,
} from './aggregation.logic.js';

/** How often every node fetches the remote group-versions' discovery. */
const DISCOVERY_REFRESH_MS = 30_000;
/** How long a discovery or availability check waits for the server's answer (kube-aggregator's). */
const CHECK_TIMEOUT_MS = 5_000;
/** Largest document (APIResourceList, OpenAPI) read from a remote server. */
const MAX_DOCUMENT_BYTES = 16 * 1024 * 1024;
/** The identity of the aggregation layer's own checks (kube-aggregator's). */
const CHECKER: UserInfo = { username: 'system:kube-aggregator', groups: ['system:masters'] };

/** kube's header-key escaping of X-Remote-Extra-<key>: the key percent-encoded as a URL path segment. */
function extraHeaderKey(key: string): string {
  return encodeURIComponent(key).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * The authenticating proxy's headers naming `user` (client-go's SetAuthProxyHeaders); the UID
 * (X-Remote-Uid) only with `withUid` (the RemoteRequestHeaderUID feature gate) and when the user has one.
 */
export function remoteUserHeaders(user: UserInfo, withUid = false): Record<string, string | string[]> {
  const h: Record<string, string | string[]> = { 'X-Remote-User': user.username };
  if (withUid && user.uid) h['X-Remote-Uid'] = user.uid;
  if (user.groups.length) h['X-Remote-Group'] = [...user.groups];
  for (const [k, values] of Object.entries(user.extra ?? {})) if (values.length) h[`X-Remote-Extra-${extraHeaderKey(k)}`] = [...values];
  return h;
}

/** What one remote group-version's last probe found. */
interface Discovered {
  resources?: Record<string, unknown>[];
  fresh: boolean;
}

/** The result of a probe: the condition it gives, and the resources when the server answered. */
export interface ProbeResult {
  availability: Availability;
  resources?: Record<string, unknown>[];
  /** The server's address, when it answered. */
  base?: URL;
}

/** A remote group-version's OpenAPI v3 document, with the URL it was read from (its hash changes with it). */
interface RemoteOpenApi {
  url: string;
  body: string;
}

@Injectable()
export class RemoteApis implements Aggregator, OnApplicationBootstrap, OnApplicationShutdown {
  readonly apiServices: WatchedCollection<ApiServiceView>;
  private readonly services: WatchedCollection<ServiceView>;
  private readonly endpoints: WatchedCollection<EndpointsView>;
  private readonly agents = new Map<string, { spec: string; agent: Agent }>();
  private readonly discovered = new Map<string, Discovered>();
  private readonly openapi = new Map<string, RemoteOpenApi>();
  private readonly client: { cert?: Buffer; key?: Buffer };
  private readonly routing: boolean;
  private changes = 0;
  private groups: RemoteGroup[] | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  /** Whether proxied requests name the user's UID too (X-Remote-Uid). */
  private readonly sendUid: boolean;

  constructor(
    @Inject(STORAGE) storage: Storage,
    private readonly registry: KindRegistry,
    @Inject(SERVER_CONFIG) cfg: ServerConfig,
    metrics: ApiMetrics,
  ) {
    this.apiServices = new WatchedCollection(storage, '/registry/apiregistration.k8s.io/apiservices/', apiServiceView, 'apiservices');
    this.services = new WatchedCollection(storage, '/registry/core/services/', serviceView, 'services (aggregation)');
    this.endpoints = new WatchedCollection(storage, '/registry/core/endpoints/', endpointsView, 'endpoints (aggregation)');
    // A file that cannot be read stops the start, as kube-apiserver's does.
    this.client =
      cfg.proxyClientCertFile && cfg.proxyClientKeyFile ? { cert: readFileSync(cfg.proxyClientCertFile), key: readFileSync(cfg.proxyClientKeyFile) } : {};
    // Endpoints unless told otherwise: nothing here makes a cluster IP reachable (as for admission webhooks).
    this.routing = cfg.enableAggregatorRouting !== false;
    this.sendUid = featureEnabled(cfg, 'RemoteRequestHeaderUID');
    metrics.apiServicesSource = () => this.apiServices.values();
  }

  /** Whether this node serves APIServices at all (the group may be disabled). */
  private served(): boolean {
    return this.registry.lookup('apiregistration.k8s.io', 'v1', 'apiservices') !== undefined;
  }

  onApplicationBootstrap(): void {
    if (!this.served()) return;
    this.running = true;
    this.apiServices.onChange((key) => {
      this.changed();
      const view = key ? this.apiServices.byKey(key) : undefined;
      if (!key) this.refreshAll();
      else if (view && this.remote(view)) void this.refresh(view);
      else this.forget(key);
    });
    this.apiServices.start();
    this.services.start();
    this.endpoints.start();
    void Promise.all([this.apiServices.whenSynced(), this.services.whenSynced(), this.endpoints.whenSynced()]).then(() => this.refreshAll());
    this.timer = setInterval(() => this.refreshAll(), DISCOVERY_REFRESH_MS);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    this.running = false;
    if (this.timer) clearInterval(this.timer);
    this.apiServices.stop();
    this.services.stop();
    this.endpoints.stop();
    for (const { agent } of this.agents.values()) agent.destroy();
    this.agents.clear();
  }

  private changed(): void {
    this.changes++;
    this.groups = undefined;
  }

  /** True for an APIService served elsewhere: it names a service and this server does not serve its group-version. */
  private remote(v: ApiServiceView): boolean {
    return v.service !== undefined && !this.registry.hasGroupVersion(v.group, v.version);
  }

  private remoteViews(): ApiServiceView[] {
    return this.apiServices.values().filter((v) => this.remote(v));
  }

  /** The names of the remote APIServices that `namespace/name` serves. */
  apiServicesOf(namespace: string, name: string): string[] {
    return this.remoteViews()
      .filter((v) => v.service!.namespace === namespace && v.service!.name === name)
      .map((v) => v.name);
  }

  version(): number {
    return this.changes;
  }

  remoteGroups(): readonly RemoteGroup[] {
    if (this.groups) return this.groups;
    const byGroup = new Map<string, ApiServiceView[]>();
    for (const v of this.remoteViews()) byGroup.set(v.group, [...(byGroup.get(v.group) ?? []), v]);
    const groups = [...byGroup.entries()].map(([name, views]) => ({
      name,
      priority: Math.max(...views.map((v) => v.groupPriorityMinimum)),
      versions: views.sort(compareByVersionPriority).map((v) => {
        const d = this.discovered.get(v.name);
        return { version: v.version, ...(d?.resources ? { resources: d.resources } : {}), fresh: d?.fresh ?? false };
      }),
    }));
    groups.sort((a, b) => b.priority - a.priority || a.name.localeCompare(b.name));
    return (this.groups = groups);
  }

  openApiV3(): ReadonlyMap<string, string> {
    const out = new Map<string, string>();
    for (const v of this.remoteViews()) {
      const doc = this.openapi.get(v.name);
      if (doc) out.set(`apis/${v.group}/${v.version}`, doc.body);
    }
    return out;
  }

  /** Drops what was fetched for an APIService that is gone or no longer remote. */
  private forget(name: string): void {
    this.agents.get(name)?.agent.destroy();
    this.agents.delete(name);
    const had = this.discovered.delete(name);
    if (this.openapi.delete(name) || had) this.changed();
  }

  isRemote(group: string, version: string): boolean {
    const v = this.apiServices.get('', `${version}.${group}`);
    return v !== undefined && this.remote(v);
  }

  /** The connection pool for `v`'s server: its CA and name, this server's client certificate. */
  private agentFor(v: ApiServiceView): Agent {
    const svc = v.service!;
    const spec = JSON.stringify([v.caBundle, v.insecureSkipTLSVerify, svc.namespace, svc.name]);
    const have = this.agents.get(v.name);
    if (have?.spec === spec) return have.agent;
    have?.agent.destroy();
    const agent = new Agent({
      keepAlive: true,
      ...(v.caBundle ? { ca: v.caBundle } : {}),
      rejectUnauthorized: !v.insecureSkipTLSVerify,
      servername: `${svc.name}.${svc.namespace}.svc`,
      ...this.client,
    });
    this.agents.set(v.name, { spec, agent });
    return agent;
  }

  /** Where requests to `v` go now; throws Unreachable. */
  private resolve(v: ApiServiceView): URL {
    const ref = v.service!;
    return resolveService(ref, this.services.get(ref.namespace, ref.name), this.endpoints.get(ref.namespace, ref.name), this.routing);
  }

  /**
   * The URL of `pathAndQuery` on the server behind `v`, an Available APIService; a 503 with
   * `message` when it is not Available or cannot be reached now (the reason goes to the log).
   */
  private target(v: ApiServiceView | undefined, pathAndQuery: string, message: string): { url: URL; agent: Agent } {
    if (!v?.available) throw new StatusError(503, 'ServiceUnavailable', message);
    let url: URL;
    try {
      url = this.resolve(v);
    } catch (e) {
      process.stderr.write(`aggregation: ${v.name}: ${(e as Error).message}\n`);
      throw new StatusError(503, 'ServiceUnavailable', message);
    }
    const q = pathAndQuery.indexOf('?');
    url.pathname = q >= 0 ? pathAndQuery.slice(0, q) : pathAndQuery;
    if (q >= 0) url.search = pathAndQuery.slice(q);
    return { url, agent: this.agentFor(v) };
  }

  async proxy(req: FastifyRequest, reply: FastifyReply, group: string, version: string, user: UserInfo): Promise<void> {
    // kube-aggregator's answer to both: the details go to the log, not to the client.
    const { url, agent } = this.target(this.apiServices.get('', `${version}.${group}`), req.url, 'service unavailable');
    const target = { url, agent, headers: remoteUserHeaders(user, this.sendUid) };
    const conn = upgradeOf(req.raw);
    if (conn) return tunnel(req, reply, conn, target);
    return proxyRequest(req, reply, target, undefined);
  }

  async getRemote(group: string, version: string, path: string, user: UserInfo): Promise<{ status: number; body: Buffer }> {
    const v = this.apiServices.get('', `${version}.${group}`);
    if (!v || !this.remote(v)) throw new StatusError(404, 'NotFound', 'the server could not find the requested resource');
    const { url, agent } = this.target(v, path, 'the server is currently unable to handle the request');
    try {
      return await this.get(url, agent, remoteUserHeaders(user, this.sendUid));
    } catch (e) {
      throw new StatusError(503, 'ServiceUnavailable', `error trying to reach service: ${(e as Error).message}`);
    }
  }

  /**
   * kube-aggregator's availability check of a remote APIService: its service must be there,
   * listening on the port and (with endpoints) have an address for it, and the server must
   * answer a GET of /apis/<group>/<version> with a 2xx within 5 s.
   */
  async probe(v: ApiServiceView): Promise<ProbeResult> {
    let url: URL;
    try {
      url = this.resolve(v);
    } catch (e) {
      const reason = e instanceof Unreachable ? e.reason : 'ServiceAccessError';
      return { availability: { status: 'False', reason, message: (e as Error).message } };
    }
    const base = new URL(url.href);
    url.pathname = `/apis/${v.group}/${v.version}`;
    try {
      const { status, body } = await this.get(url, this.agentFor(v));
      if (status < 200 || status >= 300) throw new Error(`bad status from ${url.href}: ${status}`);
      let resources: Record<string, unknown>[] | undefined;
      try {
        const doc = JSON.parse(body.toString('utf8')) as { kind?: unknown; resources?: unknown };
        if (doc.kind === 'APIResourceList' && Array.isArray(doc.resources)) resources = doc.resources as Record<string, unknown>[];
      } catch {
        // Not a discovery document: available, but nothing to list.
      }
      return { availability: { status: 'True', reason: 'Passed', message: 'all checks passed' }, ...(resources ? { resources } : {}), base };
    } catch (e) {
      return {
        availability: { status: 'False', reason: 'FailedDiscoveryCheck', message: `failing or missing response from ${url.href}: ${(e as Error).message}` },
      };
    }
  }

  /** A GET as the aggregation layer itself (or as `user`), bounded in time and size. */
  private get(url: URL, agent: Agent, user: Record<string, string | string[]> = remoteUserHeaders(CHECKER)): Promise<{ status: number; body: Buffer }> {
    return new Promise((resolve, reject) => {
      const req = httpsRequest(url, { method: 'GET', agent, headers: { Accept: 'application/json', ...user }, timeout: CHECK_TIMEOUT_MS }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_DOCUMENT_BYTES) res.destroy(new Error(`answer larger than ${MAX_DOCUMENT_BYTES} bytes`));
          else chunks.push(c);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error(`timed out waiting for ${url.href}`)));
      req.on('error', reject);
      req.end();
    });
  }

  /** Probes `v` and keeps its discovery; returns the probe. */
  async refresh(v: ApiServiceView): Promise<ProbeResult> {
    const res = await this.probe(v);
    if (!this.running) return res;
    const before = this.discovered.get(v.name);
    const next: Discovered = res.resources
      ? { resources: res.resources, fresh: true }
      : { ...(before?.resources ? { resources: before.resources } : {}), fresh: false };
    if (JSON.stringify(before) !== JSON.stringify(next)) {
      this.discovered.set(v.name, next);
      this.changed();
    }
    if (res.base) await this.refreshOpenApi(v, res.base).catch(() => undefined);
    return res;
  }

  /**
   * Reads the server's OpenAPI v3 document of `v`'s group-version: the `/openapi/v3` index
   * names it with its hash, so the document is read again only when that changes. A server
   * without one keeps nothing; a failed read keeps what was read before.
   */
  private async refreshOpenApi(v: ApiServiceView, base: URL): Promise<void> {
    const agent = this.agentFor(v);
    const index = await this.get(new URL('/openapi/v3', base), agent);
    let ref: string | undefined;
    if (index.status === 200) {
      const paths = (JSON.parse(index.body.toString('utf8')) as { paths?: Record<string, { serverRelativeURL?: unknown }> }).paths ?? {};
      const u = paths[`apis/${v.group}/${v.version}`]?.serverRelativeURL;
      if (typeof u === 'string' && u.startsWith('/')) ref = u;
    } else if (index.status !== 404) {
      return;
    }
    const have = this.openapi.get(v.name);
    if (ref === undefined) {
      if (have && this.openapi.delete(v.name)) this.changed();
      return;
    }
    if (have?.url === ref) return;
    const doc = await this.get(new URL(ref, base), agent);
    if (doc.status !== 200) return;
    const body = doc.body.toString('utf8');
    JSON.parse(body); // a document that does not parse is not served
    if (!this.running) return;
    this.openapi.set(v.name, { url: ref, body });
    this.changed();
  }

  private refreshAll(): void {
    if (!this.running) return;
    const views = this.remoteViews();
    const names = new Set(views.map((v) => v.name));
    for (const name of new Set([...this.discovered.keys(), ...this.openapi.keys()])) {
      if (!names.has(name)) this.forget(name);
    }
    for (const v of views) void this.refresh(v);
  }
}
