/**
 * The set of served kinds. Group modules register their declarations at startup; discovery,
 * OpenAPI, routing and the codecs read them from here. Registration order within a group
 * gives the preferred version first.
 */
import type { KindDeclaration, Verb } from './kind.types.js';

/** All verbs of a full resource, in the order Kubernetes lists them in discovery. */
export const ALL_VERBS: Verb[] = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

/** A group with its versions in preference order. */
export interface ServedGroup {
  name: string;
  versions: string[];
}

/** Registry of served kinds, keyed by group/version/plural and by group/version/kind. */
export class KindRegistry {
  private readonly byResource = new Map<string, KindDeclaration>();
  private readonly byKind = new Map<string, KindDeclaration>();
  private readonly groups = new Map<string, string[]>();
  private generation = 0;

  /** Adds (or replaces) a kind. */
  register(decl: KindDeclaration): void {
    this.byResource.set(`${decl.group}/${decl.version}/${decl.plural}`, decl);
    this.byKind.set(`${decl.group}/${decl.version}/${decl.kind}`, decl);
    const versions = this.groups.get(decl.group) ?? [];
    if (!versions.includes(decl.version)) versions.push(decl.version);
    this.groups.set(decl.group, versions);
    this.generation++;
  }

  /** Removes a kind (custom resources going away). */
  unregister(group: string, version: string, plural: string): void {
    const decl = this.byResource.get(`${group}/${version}/${plural}`);
    if (!decl) return;
    this.byResource.delete(`${group}/${version}/${plural}`);
    this.byKind.delete(`${group}/${version}/${decl.kind}`);
    if (![...this.byResource.values()].some((d) => d.group === group && d.version === version)) {
      const vs = (this.groups.get(group) ?? []).filter((v) => v !== version);
      if (vs.length) this.groups.set(group, vs);
      else this.groups.delete(group);
    }
    this.generation++;
  }

  /** Bumped on every change, so cached documents (discovery, OpenAPI) know when to rebuild. */
  version(): number {
    return this.generation;
  }

  lookup(group: string, version: string, plural: string): KindDeclaration | undefined {
    return this.byResource.get(`${group}/${version}/${plural}`);
  }

  lookupKind(group: string, version: string, kind: string): KindDeclaration | undefined {
    return this.byKind.get(`${group}/${version}/${kind}`);
  }

  /** Kinds of one group-version, in registration order. */
  kindsOf(group: string, version: string): KindDeclaration[] {
    return [...this.byResource.values()].filter((d) => d.group === group && d.version === version);
  }

  /** The other served versions of a kind's resource (same group and plural): matchPolicy Equivalent's candidates. */
  otherVersions(decl: Pick<KindDeclaration, 'group' | 'version' | 'plural'>): KindDeclaration[] {
    return [...this.byResource.values()].filter((d) => d.group === decl.group && d.plural === decl.plural && d.version !== decl.version);
  }

  all(): KindDeclaration[] {
    return [...this.byResource.values()];
  }

  /** Served groups (core '' included) with versions in preference order. */
  servedGroups(): ServedGroup[] {
    return [...this.groups.entries()].map(([name, versions]) => ({ name, versions: [...versions] }));
  }

  hasGroupVersion(group: string, version: string): boolean {
    return (this.groups.get(group) ?? []).includes(version);
  }
}

/** The verbs a declaration serves: as declared, else every verb (a REST-only kind: create). */
export function verbsOf(decl: KindDeclaration): Verb[] {
  return decl.verbs ?? (decl.rest ? ['create'] : ALL_VERBS);
}

/** `apiVersion` string of a declaration: `v1` for core, `group/version` otherwise. */
export function apiVersionOf(decl: Pick<KindDeclaration, 'group' | 'version'>): string {
  return decl.group ? `${decl.group}/${decl.version}` : decl.version;
}

/**
 * Storage key of an object (DESIGN "Storage model"):
 * `/registry/<group or core>/<plural>/<namespace>/<name>`, cluster-scoped without namespace.
 */
export function objectKey(decl: Pick<KindDeclaration, 'group' | 'plural' | 'namespaced'>, namespace: string, name: string): string {
  const g = decl.group || 'core';
  return decl.namespaced ? `/registry/${g}/${decl.plural}/${namespace}/${name}` : `/registry/${g}/${decl.plural}/${name}`;
}

/** Key prefix of a collection (one namespace, or all when namespace is ''). Ends in '/'. */
export function collectionPrefix(decl: Pick<KindDeclaration, 'group' | 'plural' | 'namespaced'>, namespace: string): string {
  const g = decl.group || 'core';
  return decl.namespaced && namespace ? `/registry/${g}/${decl.plural}/${namespace}/` : `/registry/${g}/${decl.plural}/`;
}
