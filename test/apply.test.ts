/**
 * Server-side apply, diff and server dry run, driven by real kubectl against a started node.
 */
import { kubectl, request, startServer, type ServerHandle } from './support/server.js';

let server: ServerHandle;

beforeAll(async () => {
  server = await startServer();
  await kubectl(server, ['create', 'ns', 'ssa']);
});

afterAll(async () => {
  await server?.cleanup();
});

const k = (args: string[], opts: { input?: string; expectFail?: boolean } = {}) => kubectl(server, args, opts);

const manifest = (a: string, b = '2') => `apiVersion: v1
kind: ConfigMap
metadata:
  name: app
  namespace: ssa
  labels:
    team: blue
data:
  a: "${a}"
  b: "${b}"
`;

interface Managed {
  manager: string;
  operation: string;
  fieldsV1: Record<string, unknown>;
}

async function managed(name: string): Promise<Managed[]> {
  const r = await k(['get', 'cm', name, '-n', 'ssa', '-o', 'json', '--show-managed-fields']);
  return JSON.parse(r.stdout).metadata.managedFields;
}

describe('kubectl apply --server-side', () => {
  it('creates, records ownership in managedFields, and updates', async () => {
    const r = await k(['apply', '--server-side', '-f', '-'], { input: manifest('1') });
    expect(r.stdout).toContain('configmap/app serverside-applied');
    const mf = await managed('app');
    expect(mf).toHaveLength(1);
    expect(mf[0]).toMatchObject({ manager: 'kubectl', operation: 'Apply' });
    expect(mf[0].fieldsV1).toEqual({ 'f:data': { 'f:a': {}, 'f:b': {} }, 'f:metadata': { 'f:labels': { 'f:team': {} } } });
    await k(['apply', '--server-side', '-f', '-'], { input: manifest('3') });
    const cm = JSON.parse((await k(['get', 'cm', 'app', '-n', 'ssa', '-o', 'json'])).stdout);
    expect(cm.data).toEqual({ a: '3', b: '2' });
  });

  it('removes fields the manager stops applying', async () => {
    const withoutB = manifest('3').replace('  b: "2"\n', '');
    await k(['apply', '--server-side', '-f', '-'], { input: withoutB });
    const cm = JSON.parse((await k(['get', 'cm', 'app', '-n', 'ssa', '-o', 'json'])).stdout);
    expect(cm.data).toEqual({ a: '3' });
  });

  it('conflicts with a second manager, shares equal values, and --force-conflicts takes ownership', async () => {
    const conflict = await k(['apply', '--server-side', '--field-manager', 'ci', '-f', '-'], {
      input: manifest('4').replace('  b: "2"\n', ''),
      expectFail: true,
    });
    expect(conflict.stderr).toContain('Apply failed with 1 conflict: conflict with "kubectl": .data.a');
    const raw = await request(server, 'PATCH', '/api/v1/namespaces/ssa/configmaps/app?fieldManager=ci', {
      body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'app' }, data: { a: '4' } }),
      headers: { 'content-type': 'application/apply-patch+yaml' },
    });
    expect(raw.status).toBe(409);
    expect(raw.json()).toMatchObject({ reason: 'Conflict', details: { causes: [{ reason: 'FieldManagerConflict', field: '.data.a' }] } });
    const shared = await k(['apply', '--server-side', '--field-manager', 'ci', '-f', '-'], { input: manifest('3').replace('  b: "2"\n', '') });
    expect(shared.stdout).toContain('serverside-applied');
    expect((await managed('app')).map((m) => m.manager).sort()).toEqual(['ci', 'kubectl']);
    await k(['apply', '--server-side', '--field-manager', 'ci', '--force-conflicts', '-f', '-'], { input: manifest('5').replace('  b: "2"\n', '') });
    const cm = JSON.parse((await k(['get', 'cm', 'app', '-n', 'ssa', '-o', 'json'])).stdout);
    expect(cm.data.a).toBe('5');
    const kubectlEntry = (await managed('app')).find((m) => m.manager === 'kubectl');
    expect(JSON.stringify(kubectlEntry?.fieldsV1 ?? {})).not.toContain('f:a');
  });

  it('requires a field manager for apply', async () => {
    const r = await request(server, 'PATCH', '/api/v1/namespaces/ssa/configmaps/app', {
      body: '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"app"}}',
      headers: { 'content-type': 'application/apply-patch+yaml' },
    });
    expect(r.status).toBe(422);
  });

  it('records Update ownership for ordinary writes, defaulting the manager from the user agent', async () => {
    await k(['create', 'cm', 'plain', '-n', 'ssa', '--from-literal=x=1']);
    const mf = await managed('plain');
    expect(mf).toEqual([expect.objectContaining({ manager: 'kubectl-create', operation: 'Update' })]);
    await request(server, 'PATCH', '/api/v1/namespaces/ssa/configmaps/plain', {
      body: '{"data":{"y":"2"}}',
      headers: { 'content-type': 'application/merge-patch+json', 'user-agent': 'my-controller/v1.2 (linux/amd64)' },
    });
    const after = await managed('plain');
    expect(after.map((m) => m.manager).sort()).toEqual(['kubectl-create', 'my-controller']);
  });
});

describe('diff and server dry run', () => {
  it('kubectl diff shows the change without making it', async () => {
    await k(['apply', '-f', '-'], { input: manifest('1').replace('name: app', 'name: csa') });
    const d = await k(['diff', '-f', '-'], { input: manifest('7').replace('name: app', 'name: csa'), expectFail: true });
    expect(d.code).toBe(1);
    expect(d.stdout).toMatch(/^-\s+a: "1"$/m);
    expect(d.stdout).toMatch(/^\+\s+a: "7"$/m);
    const cm = JSON.parse((await k(['get', 'cm', 'csa', '-n', 'ssa', '-o', 'json'])).stdout);
    expect(cm.data.a).toBe('1');
  });

  it('--dry-run=server create, apply and delete change nothing', async () => {
    const before = JSON.parse((await k(['get', 'cm', '-n', 'ssa', '-o', 'json'])).stdout).metadata.resourceVersion;
    const c = await k(['create', 'cm', 'ghost', '-n', 'ssa', '--from-literal=a=b', '--dry-run=server', '-o', 'json']);
    expect(JSON.parse(c.stdout).metadata.name).toBe('ghost');
    await k(['apply', '--dry-run=server', '-f', '-'], { input: manifest('8').replace('name: app', 'name: csa') });
    await k(['apply', '--server-side', '--force-conflicts', '--dry-run=server', '-f', '-'], { input: manifest('8').replace('name: app', 'name: csa') });
    const del = await k(['delete', 'cm', 'csa', '-n', 'ssa', '--dry-run=server']);
    expect(del.stdout).toContain('(server dry run)');
    expect((await k(['get', 'cm', 'ghost', '-n', 'ssa'], { expectFail: true })).stderr).toContain('not found');
    const cm = JSON.parse((await k(['get', 'cm', 'csa', '-n', 'ssa', '-o', 'json'])).stdout);
    expect(cm.data.a).toBe('1');
    const after = JSON.parse((await k(['get', 'cm', '-n', 'ssa', '-o', 'json'])).stdout).metadata.resourceVersion;
    expect(after).toBe(before);
  });
});
