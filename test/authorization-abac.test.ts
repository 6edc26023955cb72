/**
 * The ABAC authorization mode end to end with real kubectl: `--authorization-mode=ABAC,RBAC`
 * with a policy file of v1beta1 and unversioned lines gives the users that client certificates
 * identify what their policies allow (a namespace's everything, reads of one resource, a group's resource of
 * one API group, non-resource paths) and leaves the rest to RBAC; `kubectl auth can-i --list`
 * shows the policies' rules; a policy file with a broken line stops the start, naming the line.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { issueClientCertificate, writeKubeconfig } from '@app/pki';
import { kubectl, repoRoot, startServer, type ServerHandle } from './support/server.js';

const policy = (spec: Record<string, unknown>) => JSON.stringify({ apiVersion: 'abac.authorization.kubernetes.io/v1beta1', kind: 'Policy', spec });

describe('ABAC authorization', () => {
  let dir: string;
  let server: ServerHandle;
  const users: Record<string, string> = {};

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kapi-abac-'));
    writeFileSync(
      join(dir, 'policy.jsonl'),
      [
        '# alice owns the caribou namespace; reads of pods for the viewer; the devs group may change Deployments in dev',
        policy({ user: 'alice', namespace: 'caribou', resource: '*', apiGroup: '*' }),
        '',
        policy({ user: 'viewer', readonly: true, namespace: '*', resource: 'pods' }),
        policy({ group: 'devs', namespace: 'dev', resource: 'deployments', apiGroup: 'apps' }),
        // Unversioned (v0): any namespace and resource, and so non-resource paths too, read-only.
        '{"user":"auditor","readonly":true}',
        policy({ user: 'scraper', readonly: true, nonResourcePath: '/metrics' }),
      ].join('\n'),
    );
    server = await startServer({ args: ['--authorization-mode=ABAC,RBAC', `--authorization-policy-file=${join(dir, 'policy.jsonl')}`] });
    const serverCa = await readFile(join(server.dataDir, 'pki', 'ca.crt'), 'utf8');
    for (const [name, groups] of [
      ['alice', []],
      ['viewer', []],
      ['carol', ['devs']],
      ['auditor', []],
      ['scraper', []],
    ] as const) {
      const id = await issueClientCertificate(join(server.dataDir, 'pki'), name, [...groups]);
      users[name] = join(server.harnessDir, `${name}.kubeconfig`);
      await writeKubeconfig(users[name], { server: server.url, caPem: serverCa, certPem: id.certPem, keyPem: id.keyPem });
    }
    for (const ns of ['caribou', 'dev']) await kubectl(server, ['create', 'namespace', ns]);
  }, 60_000);

  afterAll(async () => {
    await server?.cleanup();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const as = (user: string, args: string[], expectFail = false) =>
    kubectl(server, ['--kubeconfig', users[user]!, ...args], expectFail ? { expectFail: true } : {});

  it('allows what a policy matches, in its namespace only', async () => {
    await as('alice', ['create', 'configmap', 'mine', '-n', 'caribou', '--from-literal=a=b']);
    expect((await as('alice', ['get', 'configmap', 'mine', '-n', 'caribou', '-o', 'name'])).stdout.trim()).toBe('configmap/mine');
    const refused = await as('alice', ['create', 'configmap', 'mine', '-n', 'default'], true);
    expect(refused.stderr).toContain('configmaps is forbidden: User "alice" cannot create resource "configmaps" in API group "" in the namespace "default"');
  });

  it('lets a readonly policy read and nothing more', async () => {
    expect((await as('viewer', ['get', 'pods', '-A'])).stderr).toContain('No resources found');
    const refused = await as('viewer', ['run', 'p', '--image=nginx', '-n', 'default'], true);
    expect(refused.stderr).toContain('User "viewer" cannot create resource "pods" in API group "" in the namespace "default"');
    expect((await as('viewer', ['get', 'configmaps', '-n', 'default'], true)).stderr).toContain('User "viewer" cannot list resource "configmaps"');
    // Unversioned lines: everything readable, nothing writable.
    expect((await as('auditor', ['get', 'configmaps', '-n', 'kube-system', '-o', 'name'])).stdout).toContain('configmap/kube-root-ca.crt');
    expect((await as('auditor', ['create', 'namespace', 'x'], true)).stderr).toContain('User "auditor" cannot create resource "namespaces"');
  });

  it("matches a group's policy on its API group and resource", async () => {
    await as('carol', ['create', 'deployment', 'web', '-n', 'dev', '--image=nginx']);
    await as('carol', ['scale', 'deployment', 'web', '-n', 'dev', '--replicas=2']);
    expect((await as('carol', ['create', 'deployment', 'web', '-n', 'default', '--image=nginx'], true)).stderr).toContain(
      'User "carol" cannot create resource "deployments" in API group "apps" in the namespace "default"',
    );
  });

  it('answers access reviews and lists the rules of a user', async () => {
    expect((await as('alice', ['auth', 'can-i', 'delete', 'secrets', '-n', 'caribou'])).stdout.trim()).toBe('yes');
    // The reason of the modes without an opinion, as kube-apiserver's union gives it.
    expect((await as('alice', ['auth', 'can-i', 'delete', 'secrets', '-n', 'default'], true)).stdout.trim()).toBe('no - No policy matched.');
    const list = (await as('viewer', ['auth', 'can-i', '--list', '-n', 'default'])).stdout;
    expect(list).toMatch(/^pods\s+\[\]\s+\[\]\s+\[get list watch\]$/m);
  });

  it('allows the non-resource paths a policy names', async () => {
    expect((await as('scraper', ['get', '--raw', '/metrics'])).stdout).toContain('apiserver_request_total');
    expect((await as('scraper', ['get', '--raw', '/logs/'], true)).stderr).toContain('forbidden');
    expect((await as('viewer', ['get', '--raw', '/metrics'], true)).stderr).toContain('forbidden');
  });

  it('refuses to start on a policy file with a broken line, naming it', () => {
    writeFileSync(join(dir, 'bad.jsonl'), `${policy({ user: 'a' })}\n{"user": "b", "readonly": "yes"}\n`);
    const entry = join(repoRoot(), 'dist', 'apps', 'apiserver', 'src', 'main.js');
    const r = spawnSync(
      process.execPath,
      [entry, '--data-dir', join(dir, 'data'), '--authorization-mode=ABAC', `--authorization-policy-file=${join(dir, 'bad.jsonl')}`],
      { encoding: 'utf8', timeout: 60_000 },
    );
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(
      `--authorization-policy-file=${join(dir, 'bad.jsonl')}: error reading policy file ${join(dir, 'bad.jsonl')}, line 2: {"user": "b", "readonly": "yes"}: readonly: expected a boolean, got "yes"`,
    );
  });
});
