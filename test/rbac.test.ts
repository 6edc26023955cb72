/**
 * RBAC end to end with --authorization-mode=RBAC: a user with a client certificate outside
 * system:masters is refused with kube-apiserver's Forbidden wording until the admin grants a
 * role through kubectl; ClusterRoles and ClusterRoleBindings, a non-resource URL, the bootstrap
 * policy with its aggregated roles, and the refusal of privilege escalation.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { issueClientCertificate, writeKubeconfig } from '@app/pki';
import { kubectl, request, startServer, waitFor, type ServerHandle } from './support/server.js';

describe('RBAC', () => {
  let server: ServerHandle;
  let alice: string;
  let aliceId: { certPem: string; keyPem: string };

  beforeAll(async () => {
    server = await startServer({ args: ['--authorization-mode=RBAC'] });
    aliceId = await issueClientCertificate(join(server.dataDir, 'pki'), 'alice', ['dev']);
    alice = join(server.harnessDir, 'alice.kubeconfig');
    const caPem = await readFile(join(server.dataDir, 'pki', 'ca.crt'), 'utf8');
    await writeKubeconfig(alice, { server: server.url, caPem, certPem: aliceId.certPem, keyPem: aliceId.keyPem });
    await kubectl(server, ['create', 'namespace', 'team']);
    await kubectl(server, ['create', 'configmap', 'settings', '-n', 'team', '--from-literal=a=b']);
  });

  afterAll(async () => {
    await server?.cleanup();
  });

  /** Retries `args` as alice until kubectl succeeds: the policy follows a watch. */
  const eventuallyAllowed = (args: string[]) =>
    waitFor(`alice: kubectl ${args.join(' ')}`, async () => {
      const r = await kubectl(server, ['--kubeconfig', alice, ...args], { expectFail: 'any' });
      return r.code === 0 ? r : undefined;
    });

  it('refuses alice with the Forbidden message, then allows her after kubectl create role and rolebinding', async () => {
    const denied = await kubectl(server, ['--kubeconfig', alice, 'get', 'configmaps', '-n', 'team'], { expectFail: true });
    expect(denied.stderr).toContain(
      'Error from server (Forbidden): configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in the namespace "team"',
    );
    await kubectl(server, ['create', 'role', 'cm-reader', '-n', 'team', '--verb=get,list', '--resource=configmaps']);
    await kubectl(server, ['create', 'rolebinding', 'alice-cm', '-n', 'team', '--role=cm-reader', '--user=alice']);
    const allowed = await eventuallyAllowed(['get', 'configmaps', '-n', 'team']);
    expect(allowed.stdout).toMatch(/^settings\s+1\s/m);
    // The Role grants nothing in another namespace, nor verbs it does not list.
    const elsewhere = await kubectl(server, ['--kubeconfig', alice, 'get', 'configmaps', '-n', 'default'], { expectFail: true });
    expect(elsewhere.stderr).toContain('User "alice" cannot list resource "configmaps" in API group "" in the namespace "default"');
    const write = await kubectl(server, ['--kubeconfig', alice, 'create', 'configmap', 'x', '-n', 'team'], { expectFail: true });
    expect(write.stderr).toContain('User "alice" cannot create resource "configmaps" in API group "" in the namespace "team"');
    const rb = await kubectl(server, ['get', 'rolebinding', 'alice-cm', '-n', 'team', '-o', 'wide']);
    expect(rb.stdout).toMatch(/alice-cm\s+Role\/cm-reader\s+\S+\s+alice/);
  });

  it("grants cluster-wide through a ClusterRole and ClusterRoleBinding to alice's group", async () => {
    const denied = await kubectl(server, ['--kubeconfig', alice, 'get', 'namespaces'], { expectFail: true });
    expect(denied.stderr).toContain('User "alice" cannot list resource "namespaces" in API group "" at the cluster scope');
    await kubectl(server, ['create', 'clusterrole', 'ns-reader', '--verb=get,list', '--resource=namespaces']);
    await kubectl(server, ['create', 'clusterrolebinding', 'dev-ns', '--clusterrole=ns-reader', '--group=dev']);
    const r = await eventuallyAllowed(['get', 'namespaces']);
    expect(r.stdout).toContain('team');
  });

  it('checks non-resource URLs: /version is public, /metrics needs a rule', async () => {
    const version = await request(server, 'GET', '/version', { identity: 'anonymous' });
    expect(version.status).toBe(200);
    const denied = await request(server, 'GET', '/metrics', { identity: aliceId });
    expect(denied.status).toBe(403);
    expect(JSON.parse(denied.body).message).toBe('forbidden: User "alice" cannot get path "/metrics"');
    await kubectl(server, ['create', 'clusterrole', 'metrics', '--verb=get', '--non-resource-url=/metrics']);
    await kubectl(server, ['create', 'clusterrolebinding', 'alice-metrics', '--clusterrole=metrics', '--user=alice']);
    await waitFor('alice reads /metrics', async () => (await request(server, 'GET', '/metrics', { identity: aliceId })).status === 200);
  });

  it('creates the bootstrap policy and aggregates view from the roles labelled for it', async () => {
    const names = (await kubectl(server, ['get', 'clusterroles', '-o', 'name'])).stdout;
    for (const n of ['cluster-admin', 'admin', 'edit', 'view', 'system:basic-user', 'system:discovery', 'system:public-info-viewer']) {
      expect(names).toContain(`clusterrole.rbac.authorization.k8s.io/${n}\n`);
    }
    const crbs = (await kubectl(server, ['get', 'clusterrolebindings', 'cluster-admin', '-o', 'wide'])).stdout;
    expect(crbs).toMatch(/cluster-admin\s+ClusterRole\/cluster-admin\s+\S+\s+system:masters/);
    await waitFor('view aggregated', async () => {
      const view = JSON.parse((await kubectl(server, ['get', 'clusterrole', 'view', '-o', 'json'])).stdout);
      return (view.rules ?? []).some((r: { resources?: string[] }) => r.resources?.includes('configmaps'));
    });
    await kubectl(server, ['create', 'clusterrole', 'view-leases', '--verb=get', '--resource=leases.coordination.k8s.io']);
    await kubectl(server, ['label', 'clusterrole', 'view-leases', 'rbac.authorization.k8s.io/aggregate-to-view=true']);
    await waitFor('view includes leases', async () => {
      const view = JSON.parse((await kubectl(server, ['get', 'clusterrole', 'view', '-o', 'json'])).stdout);
      return (view.rules ?? []).some((r: { resources?: string[] }) => r.resources?.includes('leases'));
    });
    // admin aggregates edit, which aggregates view: the new rule reaches admin too.
    await waitFor('admin includes leases', async () => {
      const admin = JSON.parse((await kubectl(server, ['get', 'clusterrole', 'admin', '-o', 'json'])).stdout);
      return (admin.rules ?? []).some((r: { resources?: string[] }) => r.resources?.includes('leases'));
    });
  });

  it("grants Kubernetes' components what the bootstrap policy gives them", async () => {
    const canI = async (...args: string[]) => (await kubectl(server, ['auth', 'can-i', ...args], { expectFail: 'any' })).stdout.trim();
    // kube-scheduler binds pods, records Events through either API, keeps its leader Lease.
    expect(await canI('create', 'pods', '--subresource=binding', '-n', 'team', '--as=system:kube-scheduler')).toBe('yes');
    expect(await canI('create', 'events.events.k8s.io', '-n', 'team', '--as=system:kube-scheduler')).toBe('yes');
    expect(await canI('update', 'leases/kube-scheduler', '-n', 'kube-system', '--as=system:kube-scheduler')).toBe('yes');
    expect(await canI('update', 'leases/other', '-n', 'team', '--as=system:kube-scheduler')).toBe('no');
    expect(await canI('get', 'configmaps/extension-apiserver-authentication', '-n', 'kube-system', '--as=system:kube-scheduler')).toBe('yes');
    expect(await canI('delete', 'nodes', '--as=system:kube-scheduler')).toBe('no');
    // kube-controller-manager lists everything; each controller's service account its own share.
    expect(await canI('list', 'secrets', '-A', '--as=system:kube-controller-manager')).toBe('yes');
    const rsController = 'system:serviceaccount:kube-system:replicaset-controller';
    expect(await canI('create', 'pods', '-n', 'team', `--as=${rsController}`)).toBe('yes');
    expect(await canI('update', 'replicasets.apps', '--subresource=status', '-n', 'team', `--as=${rsController}`)).toBe('yes');
    expect(await canI('create', 'deployments.apps', '-n', 'team', `--as=${rsController}`)).toBe('no');
    expect(await canI('list', 'endpointslices.discovery.k8s.io', '-A', '--as=system:kube-proxy')).toBe('yes');
    // The system:monitoring group reads /metrics; others do not.
    expect(await canI('get', '/metrics', '--as=bob', '--as-group=system:monitoring')).toBe('yes');
    expect(await canI('get', '/metrics', '--as=bob')).toBe('no');
    // Shown as kube shows them: the binding of system:node has no subjects, the Roles live in kube-system.
    const node = JSON.parse((await kubectl(server, ['get', 'clusterrolebinding', 'system:node', '-o', 'json'])).stdout);
    expect(node.subjects).toBeUndefined();
    expect(node.metadata.labels).toEqual({ 'kubernetes.io/bootstrapping': 'rbac-defaults' });
    const roles = (await kubectl(server, ['get', 'roles', '-n', 'kube-system', '-o', 'name'])).stdout;
    expect(roles).toContain('role.rbac.authorization.k8s.io/system::leader-locking-kube-scheduler\n');
  });

  it("refuses a change of roleRef with kube's message", async () => {
    const r = await kubectl(server, ['patch', 'rolebinding', 'alice-cm', '-n', 'team', '--type=merge', '-p', '{"roleRef":{"name":"other"}}'], {
      expectFail: true,
    });
    expect(r.stderr).toContain('roleRef: Invalid value');
    expect(r.stderr).toContain('cannot change roleRef');
  });

  it('refuses escalation: a role granting more than alice holds, a binding to a stronger role; escalate and bind allow it', async () => {
    await kubectl(server, [
      'create',
      'role',
      'rbac-admin',
      '-n',
      'team',
      '--verb=create,get,list,update,patch,delete',
      '--resource=roles.rbac.authorization.k8s.io,rolebindings.rbac.authorization.k8s.io',
    ]);
    await kubectl(server, ['create', 'rolebinding', 'alice-rbac', '-n', 'team', '--role=rbac-admin', '--user=alice']);
    await eventuallyAllowed(['get', 'roles', '-n', 'team']);
    // Within what she holds (get/list configmaps in team) she may grant; `*` would include escalate and bind.
    await kubectl(server, ['--kubeconfig', alice, 'create', 'role', 'cm-get', '-n', 'team', '--verb=get', '--resource=configmaps']);
    const role = await kubectl(server, ['--kubeconfig', alice, 'create', 'role', 'secrets', '-n', 'team', '--verb=get,list', '--resource=secrets'], {
      expectFail: true,
    });
    expect(role.stderr).toContain(
      'Error from server (Forbidden): roles.rbac.authorization.k8s.io "secrets" is forbidden: user "alice" (groups=["dev" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}',
    );
    const binding = await kubectl(
      server,
      ['--kubeconfig', alice, 'create', 'rolebinding', 'bob-admin', '-n', 'team', '--clusterrole=cluster-admin', '--user=bob'],
      {
        expectFail: true,
      },
    );
    expect(binding.stderr).toContain(
      'rolebindings.rbac.authorization.k8s.io "bob-admin" is forbidden: user "alice" (groups=["dev" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:',
    );
    await kubectl(server, ['--kubeconfig', alice, 'create', 'rolebinding', 'bob-cm', '-n', 'team', '--role=cm-get', '--user=bob']);
    // The escalate and bind verbs lift the check.
    await kubectl(server, [
      'create',
      'role',
      'escalator',
      '-n',
      'team',
      '--verb=escalate,bind',
      '--resource=roles.rbac.authorization.k8s.io,clusterroles.rbac.authorization.k8s.io',
    ]);
    await kubectl(server, ['create', 'rolebinding', 'alice-escalate', '-n', 'team', '--role=escalator', '--user=alice']);
    await eventuallyAllowed(['create', 'role', 'secrets', '-n', 'team', '--verb=get,list', '--resource=secrets']);
    await kubectl(server, ['--kubeconfig', alice, 'create', 'rolebinding', 'bob-admin', '-n', 'team', '--clusterrole=cluster-admin', '--user=bob']);
  });
});
