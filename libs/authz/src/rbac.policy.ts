/**
 * The RBAC policy held in memory: roles by name and bindings by subject, kept current by
 * whoever watches storage (the server's RBAC policy watcher). A check looks up only the
 * bindings of the request's user and groups, never every binding.
 *
 * The authorizer's hot path reads {@link SubjectGrants}: the rules granted to one user name
 * (service accounts included, as `system:serviceaccount:<ns>:<name>`) or one group, flattened
 * from its bindings and their roles, split into cluster-wide rules and rules per namespace.
 * They are computed on first use per subject and dropped on every change of any role or
 * binding, so a decision never sees a policy older than the last event applied, and a request
 * costs one map lookup per subject and the rule matches, with nothing allocated.
 */
import type { UserInfo } from '@app/auth';
import type { PolicyRule } from './rbac.rules.js';

/** The four RBAC kinds. */
export type RbacKind = 'Role' | 'ClusterRole' | 'RoleBinding' | 'ClusterRoleBinding';

/** The parts of an RBAC object the policy reads. */
export interface RbacObject {
  metadata: { name?: string; namespace?: string; labels?: Record<string, string> | null; [k: string]: unknown };
  rules?: PolicyRule[] | null;
  roleRef?: { apiGroup?: string; kind?: string; name?: string };
  subjects?: Array<{ kind?: string; apiGroup?: string; name?: string; namespace?: string }> | null;
  [k: string]: unknown;
}

/** A binding as indexed: where it applies ('' = cluster-wide) and which role it grants. */
export interface IndexedBinding {
  /** `<namespace>/<name>` of a RoleBinding, `/<name>` of a ClusterRoleBinding. */
  id: string;
  namespace: string;
  roleKind: string;
  roleName: string;
  /** Each subject index key of the binding -> the binding and subject as kube's RBAC names them in an allow's reason. */
  described?: ReadonlyMap<string, string>;
}

/**
 * The rules granted to one subject: by ClusterRoleBindings, and by the RoleBindings of each
 * namespace; beside each list, the reason an allow by each rule gives (the binding that grants
 * it: `RBAC: allowed by ClusterRoleBinding "x" of ClusterRole "y" to Group "z"`), built once
 * when the grants are compiled.
 */
export interface SubjectGrants {
  readonly cluster: readonly PolicyRule[];
  readonly byNamespace: ReadonlyMap<string, readonly PolicyRule[]>;
  readonly clusterReasons: readonly string[];
  readonly reasonsByNamespace: ReadonlyMap<string, readonly string[]>;
}

const NO_GRANTS: SubjectGrants = Object.freeze({
  cluster: Object.freeze([]) as readonly PolicyRule[],
  byNamespace: new Map(),
  clusterReasons: Object.freeze([]) as readonly string[],
  reasonsByNamespace: new Map(),
});

/** kube's describeSubject: a service account as `name/namespace`, anyone else by name. */
function describeSubject(s: { kind?: string; name?: string; namespace?: string }, bindingNamespace: string): string {
  const name = s.kind === 'ServiceAccount' ? `${s.name}/${s.namespace || bindingNamespace}` : s.name;
  return `${s.kind} ${JSON.stringify(name)}`;
}

/** What each subject index key of a binding is described as in an allow's reason. */
function describedSubjects(kind: 'RoleBinding' | 'ClusterRoleBinding', b: RbacObject): Map<string, string> {
  const ns = b.metadata.namespace ?? '';
  const name = kind === 'RoleBinding' ? `${b.metadata.name ?? ''}/${ns}` : (b.metadata.name ?? '');
  const role = `${b.roleRef?.kind ?? ''} ${JSON.stringify(b.roleRef?.name ?? '')}`;
  const out = new Map<string, string>();
  for (const s of b.subjects ?? []) {
    if (!s?.name) continue;
    const key = subjectKeys({ metadata: b.metadata, subjects: [s] })[0];
    if (key && !out.has(key))
      out.set(key, `RBAC: allowed by ${kind} ${JSON.stringify(name)} of ${role} to ${describeSubject(s, kind === 'RoleBinding' ? ns : '')}`);
  }
  return out;
}

/** Prefix of service account user names (serviceaccount.ServiceAccountUsernamePrefix). */
export const SERVICE_ACCOUNT_USER_PREFIX = 'system:serviceaccount:';

/** The subject index keys a binding's subjects contribute (`user:<name>`, `group:<name>`). */
export function subjectKeys(b: RbacObject): string[] {
  const keys: string[] = [];
  const bindingNs = b.metadata.namespace ?? '';
  for (const s of b.subjects ?? []) {
    if (!s?.name) continue;
    if (s.kind === 'User') keys.push(`user:${s.name}`);
    else if (s.kind === 'Group') keys.push(`group:${s.name}`);
    else if (s.kind === 'ServiceAccount') keys.push(`user:${SERVICE_ACCOUNT_USER_PREFIX}${s.namespace || bindingNs}:${s.name}`);
  }
  return [...new Set(keys)];
}

/** In-memory RBAC policy; `set`/`delete` as storage events arrive, `replace` after a relist. */
export class RbacPolicy {
  private readonly roles = new Map<string, PolicyRule[]>();
  private readonly clusterRoles = new Map<string, RbacObject>();
  private readonly bindings = new Map<string, { binding: IndexedBinding; keys: string[] }>();
  private readonly bySubject = new Map<string, Map<string, IndexedBinding>>();
  private readonly listeners = new Set<(kind: RbacKind) => void>();
  /** SubjectGrants by user name and by group name; emptied on every change. */
  private readonly userGrants = new Map<string, SubjectGrants>();
  private readonly groupGrants = new Map<string, SubjectGrants>();

  /** Adds or replaces one object. */
  set(kind: RbacKind, obj: RbacObject): void {
    const name = obj.metadata.name ?? '';
    const ns = obj.metadata.namespace ?? '';
    switch (kind) {
      case 'Role':
        this.roles.set(`${ns}/${name}`, obj.rules ?? []);
        break;
      case 'ClusterRole':
        this.clusterRoles.set(name, obj);
        break;
      default: {
        const id = kind === 'RoleBinding' ? `${ns}/${name}` : `/${name}`;
        this.unindex(id);
        const binding: IndexedBinding = {
          id,
          namespace: kind === 'RoleBinding' ? ns : '',
          roleKind: obj.roleRef?.kind ?? '',
          roleName: obj.roleRef?.name ?? '',
          described: describedSubjects(kind, obj),
        };
        const keys = subjectKeys(obj);
        this.bindings.set(id, { binding, keys });
        for (const k of keys) {
          let m = this.bySubject.get(k);
          if (!m) this.bySubject.set(k, (m = new Map()));
          m.set(id, binding);
        }
      }
    }
    this.changed(kind);
  }

  /** Removes one object. */
  delete(kind: RbacKind, obj: RbacObject): void {
    const name = obj.metadata.name ?? '';
    const ns = obj.metadata.namespace ?? '';
    if (kind === 'Role') this.roles.delete(`${ns}/${name}`);
    else if (kind === 'ClusterRole') this.clusterRoles.delete(name);
    else this.unindex(kind === 'RoleBinding' ? `${ns}/${name}` : `/${name}`);
    this.changed(kind);
  }

  /** Replaces everything with a fresh list of every kind. */
  replace(all: Record<RbacKind, RbacObject[]>): void {
    this.roles.clear();
    this.clusterRoles.clear();
    this.bindings.clear();
    this.bySubject.clear();
    this.userGrants.clear();
    this.groupGrants.clear();
    for (const kind of ['Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding'] as const) for (const o of all[kind]) this.set(kind, o);
  }

  /** Calls `fn` after every change (the aggregation controller listens for ClusterRoles). */
  onChange(fn: (kind: RbacKind) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Every ClusterRole held. */
  clusterRoleList(): RbacObject[] {
    return [...this.clusterRoles.values()];
  }

  /** The rules of a role a binding names (Role in `namespace`, or ClusterRole); undefined when it does not exist. */
  roleRules(kind: string, name: string, namespace: string): PolicyRule[] | undefined {
    if (kind === 'ClusterRole') return this.clusterRoles.get(name)?.rules ?? (this.clusterRoles.has(name) ? [] : undefined);
    if (kind === 'Role') return this.roles.get(`${namespace}/${name}`);
    return undefined;
  }

  /** The bindings naming `user` or one of its groups that apply in `namespace` ('' = cluster-wide ones only). */
  bindingsFor(user: UserInfo, namespace: string): IndexedBinding[] {
    const out = new Map<string, IndexedBinding>();
    for (const key of [`user:${user.username}`, ...user.groups.map((g) => `group:${g}`)]) {
      for (const b of this.bySubject.get(key)?.values() ?? []) {
        if (b.namespace === '' || (namespace !== '' && b.namespace === namespace)) out.set(b.id, b);
      }
    }
    // Cluster-wide bindings first, as kube's rule resolver visits them.
    return [...out.values()].sort((a, b) => (a.namespace === '' ? 0 : 1) - (b.namespace === '' ? 0 : 1));
  }

  /** The rules bound to the user named `username` (a User subject, or a ServiceAccount by its user name). */
  grantsOfUser(username: string): SubjectGrants {
    return this.userGrants.get(username) ?? this.compile(this.userGrants, username, `user:${username}`);
  }

  /** The rules bound to the group `group`. */
  grantsOfGroup(group: string): SubjectGrants {
    return this.groupGrants.get(group) ?? this.compile(this.groupGrants, group, `group:${group}`);
  }

  /** Every rule granted to `user` in `namespace` ('' = cluster-wide), as kube's RulesFor. */
  rulesFor(user: UserInfo, namespace: string): PolicyRule[] {
    const out: PolicyRule[] = [];
    for (const b of this.bindingsFor(user, namespace)) out.push(...(this.roleRules(b.roleKind, b.roleName, b.namespace) ?? []));
    return out;
  }

  private compile(cache: Map<string, SubjectGrants>, name: string, key: string): SubjectGrants {
    const bindings = this.bySubject.get(key);
    let grants = NO_GRANTS;
    if (bindings) {
      const cluster: PolicyRule[] = [];
      const clusterReasons: string[] = [];
      const byNamespace = new Map<string, PolicyRule[]>();
      const reasonsByNamespace = new Map<string, string[]>();
      for (const b of bindings.values()) {
        const rules = this.roleRules(b.roleKind, b.roleName, b.namespace);
        if (!rules?.length) continue;
        let into = cluster;
        let reasons = clusterReasons;
        if (b.namespace !== '') {
          into = byNamespace.get(b.namespace) ?? [];
          byNamespace.set(b.namespace, into);
          reasons = reasonsByNamespace.get(b.namespace) ?? [];
          reasonsByNamespace.set(b.namespace, reasons);
        }
        const reason = b.described?.get(key) ?? '';
        for (const r of rules) {
          into.push(r);
          reasons.push(reason);
        }
      }
      grants = { cluster, byNamespace, clusterReasons, reasonsByNamespace };
    }
    cache.set(name, grants);
    return grants;
  }

  private unindex(id: string): void {
    const old = this.bindings.get(id);
    if (!old) return;
    this.bindings.delete(id);
    for (const k of old.keys) {
      const m = this.bySubject.get(k);
      m?.delete(id);
      if (m?.size === 0) this.bySubject.delete(k);
    }
  }

  private changed(kind: RbacKind): void {
    // A role's rules reach every subject bound to it: drop every compiled grant, not one subject's.
    this.userGrants.clear();
    this.groupGrants.clear();
    for (const fn of this.listeners) fn(kind);
  }
}
