/**
 * Granting a test identity what it needs under the default RBAC authorization: a RoleBinding
 * (or ClusterRoleBinding) made as the admin, then a bounded wait until the grant shows in a
 * request of that identity (the policy reaches the authorizer through a storage watch).
 */
import { request, type HttpIdentity, type HttpTarget } from './http.helper.js';
import { waitFor } from './net.helper.js';

/** Who is granted, and the request that must stop being 403 once the grant is in effect. */
export interface GrantOptions {
  /** Subject: a user name (client certificate CN, token file user). */
  readonly user: string;
  /** The ClusterRole granted (e.g. the bootstrap `edit`). */
  readonly clusterRole: string;
  /** RoleBinding in this namespace; cluster-wide (ClusterRoleBinding) when absent. */
  readonly namespace?: string;
  /** Name of the binding (default `test-<user>-<clusterRole>`). */
  readonly name?: string;
  /** How the identity authenticates, and a GET it may make once granted. */
  readonly probe: { readonly path: string; readonly identity?: HttpIdentity; readonly token?: string };
}

/** Creates the binding (409 is fine: already there) and waits until the probe is no longer 403. */
export async function grantClusterRole(target: HttpTarget, o: GrantOptions): Promise<void> {
  const name = o.name ?? `test-${o.user}-${o.clusterRole}`.toLowerCase().replace(/[^a-z0-9.-]/g, '-');
  const kind = o.namespace === undefined ? 'ClusterRoleBinding' : 'RoleBinding';
  const path =
    o.namespace === undefined
      ? '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings'
      : `/apis/rbac.authorization.k8s.io/v1/namespaces/${o.namespace}/rolebindings`;
  const created = await request(target, 'POST', path, {
    body: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind,
      metadata: { name, ...(o.namespace !== undefined ? { namespace: o.namespace } : {}) },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: o.clusterRole },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: o.user }],
    },
  });
  if (created.status !== 201 && created.status !== 409) throw new Error(`creating ${kind} ${name}: ${created.status} ${created.body.slice(0, 300)}`);
  await waitFor(`${o.user} granted ${o.clusterRole}`, async () => {
    const r = await request(target, 'GET', o.probe.path, {
      ...(o.probe.identity !== undefined ? { identity: o.probe.identity } : {}),
      ...(o.probe.token !== undefined ? { token: o.probe.token } : {}),
    });
    return r.status !== 403;
  });
}

/** A namespaced Role, bound to one subject. */
export interface RoleGrant {
  readonly namespace: string;
  /** Name of the Role and of its RoleBinding. */
  readonly name: string;
  readonly rules: readonly Record<string, unknown>[];
  /** A user, or a service account of the namespace. */
  readonly subject: { readonly kind: 'User' | 'ServiceAccount'; readonly name: string };
  /** A request the subject may make once the grant is in effect (not 403 then). */
  readonly probe: {
    readonly method?: string;
    readonly path: string;
    readonly identity?: HttpIdentity;
    readonly token?: string;
    readonly headers?: Record<string, string>;
  };
}

/** Creates the Role and its RoleBinding as the admin and waits until the probe is no longer 403. */
export async function grantRole(target: HttpTarget, g: RoleGrant): Promise<void> {
  const base = `/apis/rbac.authorization.k8s.io/v1/namespaces/${g.namespace}`;
  const subject =
    g.subject.kind === 'User'
      ? { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: g.subject.name }
      : { kind: 'ServiceAccount', name: g.subject.name, namespace: g.namespace };
  for (const [path, body] of [
    [`${base}/roles`, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: g.name }, rules: g.rules }],
    [
      `${base}/rolebindings`,
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: g.name },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: g.name },
        subjects: [subject],
      },
    ],
  ] as const) {
    const r = await request(target, 'POST', path, { body });
    if (r.status !== 201) throw new Error(`POST ${path}: ${r.status} ${r.body.slice(0, 300)}`);
  }
  await waitFor(`${g.subject.name} granted ${g.name}`, async () => {
    const r = await request(target, g.probe.method ?? 'GET', g.probe.path, {
      ...(g.probe.identity !== undefined ? { identity: g.probe.identity } : {}),
      ...(g.probe.token !== undefined ? { token: g.probe.token } : {}),
      ...(g.probe.headers !== undefined ? { headers: g.probe.headers } : {}),
    });
    return r.status !== 403;
  });
}
