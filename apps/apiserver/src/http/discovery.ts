/**
 * Discovery documents (KUBECTL-NOTES "Discovery"): the legacy APIVersions / APIGroupList /
 * APIResourceList, and aggregated discovery (apidiscovery.k8s.io v2 and v2beta1) that kubectl
 * asks for first. All are built from the KindRegistry and cached until it changes.
 */
import { createHash } from 'node:crypto';
import { apiVersionOf, type KindDeclaration, type KindRegistry, verbsOf } from '@app/registry';
import { NO_AGGREGATOR, type Aggregator, type RemoteVersion } from './aggregator.port.js';
import { parseAccept } from './negotiation.js';

/** A rendered discovery document. */
export interface DiscoveryDoc {
  contentType: string;
  body: string;
  etag?: string;
}

interface ApiResource {
  name: string;
  singularName: string;
  namespaced: boolean;
  kind: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
  storageVersionHash?: string;
  group?: string;
  version?: string;
}

function storageVersionHash(decl: KindDeclaration): string {
  // Kubernetes: base64 of the first 8 bytes of sha256("<group>/<version>/<kind>").
  return createHash('sha256').update(`${decl.group}/${decl.version}/${decl.kind}`).digest().subarray(0, 8).toString('base64');
}

/**
 * Subresources of a kind with the verbs each serves, from its declaration. A subresource that
 * is a view of the stored object answers with the kind itself; a REST one with its own kind; a
 * connection with the kind of its options.
 */
function subresourcesOf(decl: KindDeclaration): Array<{ name: string; verbs: string[]; responseKind: { group: string; version: string; kind: string } }> {
  return Object.entries(decl.subresources ?? {})
    .map(([name, s]) => ({
      name,
      verbs: [...s.verbs].sort(),
      responseKind: s.rest
        ? { group: s.kind.group, version: s.kind.version, kind: s.kind.kind }
        : { group: decl.group, version: decl.version, kind: s.connect ? s.connect.optionsKind : decl.kind },
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** Which aggregated discovery version the Accept header asks for, if any. */
export function aggregatedVersion(accept: string | undefined): 'v2' | 'v2beta1' | undefined {
  for (const r of parseAccept(accept)) {
    if (r.type === 'application/json' && r.params['as'] === 'APIGroupDiscoveryList' && r.params['g'] === 'apidiscovery.k8s.io') {
      if (r.params['v'] === 'v2' || r.params['v'] === 'v2beta1') return r.params['v'];
    }
    if (r.type === 'application/json' && !r.params['as']) return undefined;
  }
  return undefined;
}

/**
 * A remote group-version's resources in aggregated discovery's shape: the APIResourceList's
 * entries, with each `<resource>/<subresource>` under its resource.
 */
export function aggregatedRemoteResources(group: string, version: string, list: readonly Record<string, unknown>[]): Record<string, unknown>[] {
  const str = (v: unknown): string => (typeof v === 'string' ? v : '');
  const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
  const kindOf = (r: Record<string, unknown>) => ({ group: str(r.group) || group, version: str(r.version) || version, kind: str(r.kind) });
  const out = new Map<string, Record<string, unknown>>();
  for (const r of list) {
    const name = str(r.name);
    if (!name || name.includes('/')) continue;
    const e: Record<string, unknown> = {
      resource: name,
      responseKind: kindOf(r),
      scope: r.namespaced === true ? 'Namespaced' : 'Cluster',
      singularResource: str(r.singularName) || str(r.kind).toLowerCase(),
      verbs: strings(r.verbs),
    };
    if (strings(r.shortNames).length) e.shortNames = strings(r.shortNames);
    if (strings(r.categories).length) e.categories = strings(r.categories);
    out.set(name, e);
  }
  for (const r of list) {
    const [parent, sub, ...rest] = str(r.name).split('/');
    const e = out.get(parent ?? '');
    if (!e || !sub || rest.length) continue;
    e.subresources = [...((e.subresources as unknown[]) ?? []), { subresource: sub, responseKind: kindOf(r), verbs: strings(r.verbs) }];
  }
  return [...out.values()];
}

/** Builds and caches discovery documents. */
export class Discovery {
  private cache = new Map<string, DiscoveryDoc>();
  private cachedAt = '';

  constructor(
    private readonly registry: KindRegistry,
    private readonly serverAddress: () => string,
    private readonly remote: Aggregator = NO_AGGREGATOR,
  ) {}

  private cached(key: string, build: () => unknown, contentType = 'application/json'): DiscoveryDoc {
    const at = `${this.registry.version()}:${this.remote.version()}`;
    if (this.cachedAt !== at) {
      this.cache.clear();
      this.cachedAt = at;
    }
    let doc = this.cache.get(key);
    if (!doc) {
      const body = JSON.stringify(build());
      doc = { contentType, body, etag: `"${createHash('sha256').update(body).digest('hex').toUpperCase()}"` };
      this.cache.set(key, doc);
    }
    return doc;
  }

  /** GET /api */
  apiVersions(): DiscoveryDoc {
    return this.cached('api', () => ({
      kind: 'APIVersions',
      versions: this.registry.servedGroups().find((g) => g.name === '')?.versions ?? ['v1'],
      serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: this.serverAddress() }],
    }));
  }

  private groupEntry(name: string, versions: string[]): Record<string, unknown> {
    const vs = versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
    return { name, versions: vs, preferredVersion: vs[0] };
  }

  /**
   * The named groups with their versions: the local ones in the registry's order, then the
   * remote groups; a remote version of a local group follows the local versions.
   */
  private namedGroups(): Array<{ name: string; versions: string[]; remote: Map<string, RemoteVersion> }> {
    const out = this.registry
      .servedGroups()
      .filter((g) => g.name !== '')
      .map((g) => ({ name: g.name, versions: [...g.versions], remote: new Map<string, RemoteVersion>() }));
    for (const rg of this.remote.remoteGroups()) {
      let g = out.find((x) => x.name === rg.name);
      if (!g) out.push((g = { name: rg.name, versions: [], remote: new Map() }));
      for (const v of rg.versions) {
        g.versions.push(v.version);
        g.remote.set(v.version, v);
      }
    }
    return out;
  }

  /** GET /apis */
  apiGroupList(): DiscoveryDoc {
    return this.cached('apis', () => ({
      kind: 'APIGroupList',
      apiVersion: 'v1',
      groups: this.namedGroups().map((g) => this.groupEntry(g.name, g.versions)),
    }));
  }

  /** GET /apis/<group>; undefined when the group is not served. */
  apiGroup(group: string): DiscoveryDoc | undefined {
    const g = this.namedGroups().find((x) => x.name === group && group !== '');
    if (!g) return undefined;
    return this.cached(`group:${group}`, () => ({ kind: 'APIGroup', apiVersion: 'v1', ...this.groupEntry(g.name, g.versions) }));
  }

  /** GET /api/v1 or /apis/<group>/<version>; undefined when not served. */
  apiResourceList(group: string, version: string): DiscoveryDoc | undefined {
    if (!this.registry.hasGroupVersion(group, version)) return undefined;
    return this.cached(`resources:${group}/${version}`, () => {
      const resources: ApiResource[] = [];
      for (const d of this.registry.kindsOf(group, version)) {
        const r: ApiResource = {
          name: d.plural,
          singularName: d.singular,
          namespaced: d.namespaced,
          kind: d.kind,
          verbs: [...verbsOf(d)].sort(),
        };
        // Only stored resources have a storage version (kube: storage that is a StorageVersionProvider).
        if (!d.rest && !d.computed) r.storageVersionHash = storageVersionHash(d);
        if (d.shortNames?.length) r.shortNames = d.shortNames;
        if (d.categories?.length) r.categories = d.categories;
        resources.push(r);
        for (const s of subresourcesOf(d)) {
          const r: ApiResource = { name: `${d.plural}/${s.name}`, singularName: '', namespaced: d.namespaced, kind: s.responseKind.kind, verbs: s.verbs };
          if (s.responseKind.group !== d.group || s.responseKind.version !== d.version) {
            r.group = s.responseKind.group;
            r.version = s.responseKind.version;
          }
          resources.push(r);
        }
      }
      return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: group ? `${group}/${version}` : version, resources };
    });
  }

  /**
   * Aggregated discovery for /api (core) or /apis (named groups), apidiscovery.k8s.io v2 or
   * v2beta1 (same shape), with the content type kubectl checks to skip per-group requests.
   */
  aggregated(which: 'api' | 'apis', v: 'v2' | 'v2beta1'): DiscoveryDoc {
    const contentType = `application/json;g=apidiscovery.k8s.io;v=${v};as=APIGroupDiscoveryList`;
    return this.cached(
      `agg:${which}:${v}`,
      () => {
        const groups =
          which === 'api'
            ? this.registry
                .servedGroups()
                .filter((g) => g.name === '')
                .map((g) => ({ ...g, remote: new Map<string, RemoteVersion>() }))
            : this.namedGroups();
        return {
          kind: 'APIGroupDiscoveryList',
          apiVersion: `apidiscovery.k8s.io/${v}`,
          metadata: {},
          items: groups.map((g) => ({
            metadata: which === 'api' ? { creationTimestamp: null } : { name: g.name, creationTimestamp: null },
            versions: g.versions.map((ver) => {
              const remote = g.remote.get(ver);
              // A remote version as its server last listed it; Stale when that listing failed.
              if (remote)
                return {
                  version: ver,
                  resources: aggregatedRemoteResources(g.name, ver, remote.resources ?? []),
                  freshness: remote.fresh ? 'Current' : 'Stale',
                };
              return {
                version: ver,
                resources: this.registry.kindsOf(g.name, ver).map((d) => {
                  const r: Record<string, unknown> = {
                    resource: d.plural,
                    responseKind: { group: d.group, version: d.version, kind: d.kind },
                    scope: d.namespaced ? 'Namespaced' : 'Cluster',
                    singularResource: d.singular,
                    verbs: [...verbsOf(d)].sort(),
                  };
                  if (d.shortNames?.length) r.shortNames = d.shortNames;
                  if (d.categories?.length) r.categories = d.categories;
                  const subs = subresourcesOf(d);
                  if (subs.length) {
                    r.subresources = subs.map((s) => ({
                      subresource: s.name,
                      responseKind: s.responseKind,
                      verbs: s.verbs,
                    }));
                  }
                  return r;
                }),
                freshness: 'Current',
              };
            }),
          })),
        };
      },
      contentType,
    );
  }
}

/** The apiVersion a declaration's objects carry (re-exported for discovery users). */
export { apiVersionOf };
