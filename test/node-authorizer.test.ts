/**
 * The Node authorization mode and the NodeRestriction admission plugin end to end
 * (`--authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction`, kubeadm's
 * settings): kubelets with client certificates of system:node:<name> in system:nodes read the
 * Secrets and ConfigMaps of the pods bound to their node and no others, keep to their own Node,
 * Lease and pods (read by name or listed by their spec.nodeName), create only mirror pods, and do
 * the rest of a kubelet's work under the system:node role's rules; the graph follows pods as they
 * come and go.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { issueClientCertificate, writeKubeconfig } from '@app/pki';
import { kubectl, request, startServer, waitFor, type ServerHandle } from './support/server.js';

describe('Node authorization', () => {
  let server: ServerHandle;
  const kubelet: Record<string, { kubeconfig: string; id: { certPem: string; keyPem: string } }> = {};

  beforeAll(async () => {
    server = await startServer({ args: ['--authorization-mode=Node,RBAC', '--enable-admission-plugins=NodeRestriction'] });
    const caPem = await readFile(join(server.dataDir, 'pki', 'ca.crt'), 'utf8');
    for (const n of ['n1', 'n2']) {
      const id = await issueClientCertificate(join(server.dataDir, 'pki'), `system:node:${n}`, ['system:nodes']);
      const kubeconfig = join(server.harnessDir, `${n}.kubeconfig`);
      await writeKubeconfig(kubeconfig, { server: server.url, caPem, certPem: id.certPem, keyPem: id.keyPem });
      kubelet[n] = { kubeconfig, id };
    }
    await kubectl(server, ['create', 'secret', 'generic', 'mounted', '--from-literal=k=v']);
    await kubectl(server, ['create', 'secret', 'generic', 'unrelated', '--from-literal=k=v']);
    await kubectl(server, ['create', 'configmap', 'settings', '--from-literal=a=b']);
    await kubectl(server, ['create', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'web', namespace: 'default' },
        spec: {
          nodeName: 'n1',
          containers: [{ name: 'c', image: 'nginx', envFrom: [{ configMapRef: { name: 'settings' } }] }],
          volumes: [{ name: 'creds', secret: { secretName: 'mounted' } }],
        },
      }),
    });
  });

  afterAll(async () => {
    await server?.cleanup();
  });

  const as = (n: string, args: string[]) => kubectl(server, ['--kubeconfig', kubelet[n]!.kubeconfig, ...args], { expectFail: 'any' });

  it('lets a kubelet read what the pods bound to its node use, and nothing else of those kinds', async () => {
    const got = await waitFor('n1 reads the mounted secret', async () => {
      const r = await as('n1', ['get', 'secret', 'mounted', '-o', 'jsonpath={.data.k}']);
      return r.code === 0 ? r : undefined;
    });
    expect(got.stdout).toBe('dg==');
    expect((await as('n1', ['get', 'configmap', 'settings'])).code).toBe(0);
    // A kubelet's reflector watches one object through a metadata.name field selector.
    expect((await as('n1', ['get', 'secrets', '--field-selector', 'metadata.name=mounted'])).code).toBe(0);
    const other = await as('n1', ['get', 'secret', 'unrelated']);
    expect(other.stderr).toContain(
      `Error from server (Forbidden): secrets "unrelated" is forbidden: User "system:node:n1" cannot get resource "secrets" in API group "" in the namespace "default": no relationship found between node 'n1' and this object`,
    );
    expect((await as('n1', ['get', 'secrets'])).stderr).toContain('User "system:node:n1" cannot list resource "secrets"');
    // Another node reaches nothing of that pod.
    expect((await as('n2', ['get', 'secret', 'mounted'])).stderr).toContain("no relationship found between node 'n2' and this object");
    // Service-account tokens for the pods' accounts only, and bound to one of the node's pods.
    const uid = (await kubectl(server, ['get', 'pod', 'web', '-o', 'jsonpath={.metadata.uid}'])).stdout;
    const bound = ['create', 'token', 'default', '--bound-object-kind=Pod', '--bound-object-name=web', `--bound-object-uid=${uid}`];
    expect((await as('n1', bound)).code).toBe(0);
    expect((await as('n1', ['create', 'token', 'default'])).stderr).toContain('node requested token not bound to a pod');
    expect((await as('n2', bound)).stderr).toContain("no relationship found between node 'n2' and this object");
  });

  it('keeps a kubelet to its own Lease and lets it do the rest of its work under the system:node rules', async () => {
    const lease = (name: string) => ({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name, namespace: 'kube-node-lease' },
      spec: { holderIdentity: name, leaseDurationSeconds: 40 },
    });
    const path = '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases';
    expect((await request(server, 'POST', path, { identity: kubelet.n1!.id, body: lease('n1') })).status).toBe(201);
    expect((await request(server, 'POST', path, { identity: kubelet.n2!.id, body: lease('n2') })).status).toBe(201);
    const theirs = await request(server, 'GET', `${path}/n2`, { identity: kubelet.n1!.id });
    expect(theirs.status).toBe(403);
    expect(theirs.json()).toMatchObject({ message: expect.stringContaining('can only access node lease with the same name as the requesting node') });
    // The authorizer cannot see a create's name; NodeRestriction does.
    const spoofed = await request(server, 'POST', path, { identity: kubelet.n1!.id, body: lease('n3') });
    expect(spoofed.json()).toMatchObject({
      code: 403,
      message: 'leases.coordination.k8s.io "n3" is forbidden: can only access node lease with the same name as the requesting node',
    });
    // Pods are narrowed to the node's own: by name, or listed with its spec.nodeName selector.
    expect((await as('n1', ['get', 'pods', '-A'])).stderr).toContain(
      'User "system:node:n1" cannot list resource "pods" in API group "" at the cluster scope: can only list/watch pods with spec.nodeName field selector',
    );
    expect((await as('n1', ['get', 'pods', '-A', '--field-selector', 'spec.nodeName=n1', '-o', 'name'])).stdout.trim()).toBe('pod/web');
    expect((await as('n1', ['get', 'pods', '-A', '--field-selector', 'spec.nodeName=n2'])).stderr).toContain(
      'can only list/watch pods with spec.nodeName field selector',
    );
    expect((await as('n1', ['get', 'pod', 'web', '-o', 'name'])).stdout.trim()).toBe('pod/web');
    expect((await as('n2', ['get', 'pod', 'web'])).stderr).toContain(
      'pods "web" is forbidden: User "system:node:n2" cannot get resource "pods" in API group "" in the namespace "default": no relationship found between node \'n2\' and this object',
    );
    expect((await as('n1', ['delete', 'namespace', 'default'])).stderr).toContain('User "system:node:n1" cannot delete resource "namespaces"');
  });

  it('keeps a kubelet to its own Node: registration, status, no taint or restricted label changes, no other node', async () => {
    const register = (n: string) =>
      request(server, 'POST', '/api/v1/nodes', {
        identity: kubelet[n]!.id,
        body: { apiVersion: 'v1', kind: 'Node', metadata: { name: n, labels: { 'kubernetes.io/hostname': n } } },
      });
    expect((await register('n1')).status).toBe(201);
    expect((await register('n2')).status).toBe(201);
    expect((await as('n1', ['label', 'node', 'n1', 'topology.kubernetes.io/zone=a'])).code).toBe(0);
    // kubectl reads the node first, which the authorizer refuses; a write alone meets NodeRestriction.
    expect((await as('n1', ['label', 'node', 'n2', 'x=y'])).stderr).toContain("node 'n1' cannot read 'n2', only its own Node object");
    const foreign = await request(server, 'PATCH', '/api/v1/nodes/n2', {
      identity: kubelet.n1!.id,
      headers: { 'content-type': 'application/merge-patch+json' },
      body: { metadata: { labels: { x: 'y' } } },
    });
    expect(foreign.json()).toMatchObject({ code: 403, message: 'nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"' });
    expect((await as('n1', ['label', 'node', 'n1', 'node-role.kubernetes.io/control-plane='])).stderr).toContain(
      'is not allowed to modify labels: node-role.kubernetes.io/control-plane',
    );
    // (A taint of its own: the node lifecycle controller may already have taken off the not-ready
    // taint that admission gave the new Node, as kube's does for a Node without conditions.)
    expect((await as('n1', ['taint', 'node', 'n1', 'example.com/dedicated=db:NoSchedule'])).stderr).toContain('node "n1" is not allowed to modify taints');
    const status = await request(server, 'PATCH', '/api/v1/nodes/n1/status', {
      identity: kubelet.n1!.id,
      headers: { 'content-type': 'application/merge-patch+json' },
      body: { status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'ready' }] } },
    });
    expect(status.status).toBe(200);
    // It reads its own Node only.
    expect((await as('n1', ['get', 'node', 'n1', '-o', 'name'])).stdout.trim()).toBe('node/n1');
    expect((await as('n1', ['get', 'nodes'])).stderr).toContain(
      `User "system:node:n1" cannot list resource "nodes" in API group "" at the cluster scope: node 'n1' cannot read all nodes, only its own Node object`,
    );
    expect((await as('n1', ['get', 'node', 'n2'])).stderr).toContain("node 'n1' cannot read 'n2', only its own Node object");
  });

  it('lets a kubelet create only mirror pods bound to itself, and touch only the pods bound to it', async () => {
    const nodeUid = (await kubectl(server, ['get', 'node', 'n1', '-o', 'jsonpath={.metadata.uid}'])).stdout;
    const pod = (name: string, extra: Record<string, unknown> = {}) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name,
        namespace: 'default',
        annotations: { 'kubernetes.io/config.mirror': 'hash' },
        ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'n1', uid: nodeUid, controller: true }],
      },
      spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'etcd' }], ...extra },
    });
    const create = (body: unknown) => request(server, 'POST', '/api/v1/namespaces/default/pods', { identity: kubelet.n1!.id, body });
    expect((await create(pod('static-n1'))).status).toBe(201);
    const plain = pod('plain');
    delete (plain.metadata as { annotations?: unknown }).annotations;
    expect((await create(plain)).json()).toMatchObject({
      code: 403,
      message: 'pods "plain" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "n1" can only create mirror pods',
    });
    expect((await create(pod('elsewhere', { nodeName: 'n2' }))).json()).toMatchObject({
      message: 'pods "elsewhere" is forbidden: node "n1" can only create pods with spec.nodeName set to itself',
    });
    expect((await create(pod('secretive', { volumes: [{ name: 's', secret: { secretName: 'mounted' } }] }))).json()).toMatchObject({
      message: 'pods "secretive" is forbidden: a mirror pod may not reference secrets',
    });
    // A pod bound to another node: no status update, no delete.
    await kubectl(server, ['run', 'other', '--image=nginx', '--overrides={"spec":{"nodeName":"n2"}}']);
    const statusOfOther = await request(server, 'PATCH', '/api/v1/namespaces/default/pods/other/status', {
      identity: kubelet.n1!.id,
      headers: { 'content-type': 'application/merge-patch+json' },
      body: { status: { phase: 'Running' } },
    });
    expect(statusOfOther.json()).toMatchObject({
      message: 'pods "other" is forbidden: node "n1" can only update pod status for pods with spec.nodeName set to itself',
    });
    expect((await as('n1', ['delete', 'pod', 'other'])).stderr).toContain('node "n1" can only delete pods with spec.nodeName set to itself');
    expect((await as('n1', ['delete', 'pod', 'static-n1', '--grace-period=0', '--force'])).code).toBe(0);
  });

  it('answers SubjectAccessReviews that carry a field selector as it decides the requests themselves', async () => {
    const ask = async (fieldSelector?: object) => {
      const r = await request(server, 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: {
            user: 'system:node:n1',
            groups: ['system:nodes'],
            resourceAttributes: { verb: 'list', resource: 'pods', ...(fieldSelector ? { fieldSelector } : {}) },
          },
        },
      });
      return r.json<{ status: { allowed: boolean; reason?: string } }>();
    };
    expect((await ask({ rawSelector: 'spec.nodeName=n1' })).status.allowed).toBe(true);
    expect((await ask({ requirements: [{ key: 'spec.nodeName', operator: 'In', values: ['n1'] }] })).status.allowed).toBe(true);
    expect((await ask({ rawSelector: 'spec.nodeName=n2' })).status).toEqual({
      allowed: false,
      reason: 'can only list/watch pods with spec.nodeName field selector',
    });
    expect((await ask()).status.allowed).toBe(false);
    const both = await request(server, 'POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      body: {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: {
          user: 'system:node:n1',
          resourceAttributes: {
            verb: 'list',
            resource: 'pods',
            fieldSelector: { rawSelector: 'a=b', requirements: [{ key: 'a', operator: 'In', values: ['b'] }] },
          },
        },
      },
    });
    expect(both.status).toBe(422);
    expect(both.json()).toMatchObject({
      reason: 'Invalid',
      details: {
        causes: [
          { field: 'spec.resourceAttributes.fieldSelector.rawSelector', message: 'Invalid value: "a=b": may not specified at the same time as requirements' },
        ],
      },
    });
  });

  it('follows the pods: once the pod is gone, so is the access', async () => {
    await kubectl(server, ['delete', 'pod', 'web', '--grace-period=0', '--force']);
    const refused = await waitFor('n1 refused the secret', async () => {
      const r = await as('n1', ['get', 'secret', 'mounted']);
      return r.code !== 0 ? r : undefined;
    });
    expect(refused.stderr).toContain("no relationship found between node 'n1' and this object");
  });
});
