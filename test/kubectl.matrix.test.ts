/**
 * The kubectl client matrix: the core scenario set (create -f with validation, apply client- and
 * server-side, get -o yaml/json/wide, the three patch types, explain from OpenAPI v3 and v2,
 * watch, --dry-run=server, diff, delete) with every bundled kubectl from 1.27 to 1.33, each
 * called by its absolute path (the /usr/bin/kubectl dispatcher would pick one by the server's
 * version). A missing binary fails its version's tests. kubectl up to 1.28 reads the protobuf
 * form of /openapi/v2 for validation, apply and explain.
 *
 * One server for all versions; each version works in its own namespace with a fresh --cache-dir
 * and HOME, so no discovery or OpenAPI cache carries over from one version to the next.
 */
import { spawn } from 'node:child_process';
import { existsSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import YAML from 'yaml';
import { request, runKubectl, startServer, type KubectlOptions, type KubectlTarget, type ServerHandle } from './support/server.js';

/** Where the Google Cloud SDK installs its versioned kubectl binaries. */
const KUBECTL_DIR = '/usr/lib/google-cloud-sdk/bin';
const VERSIONS = ['1.27', '1.28', '1.29', '1.30', '1.31', '1.32', '1.33'];
const PB_V2 = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';

let server: ServerHandle;

beforeAll(async () => {
  server = await startServer();
});

afterAll(async () => {
  await server?.cleanup();
});

describe('/openapi/v2 in protobuf', () => {
  it('answers the gnostic type with the JSON ETag, Vary: Accept and 304 on If-None-Match', async () => {
    const json = await request(server, 'GET', '/openapi/v2', { headers: { accept: 'application/json' } });
    expect(json.status).toBe(200);
    const pb = await request(server, 'GET', '/openapi/v2', { headers: { accept: PB_V2 } });
    expect(pb.status).toBe(200);
    expect(pb.headers['content-type']).toBe('application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
    expect(pb.headers.etag).toBe(json.headers.etag);
    expect(pb.headers.vary).toMatch(/\bAccept\b/);
    const again = await request(server, 'GET', '/openapi/v2', { headers: { accept: PB_V2, 'if-none-match': pb.headers.etag } });
    expect(again.status).toBe(304);
    expect(again.headers.etag).toBe(pb.headers.etag);
  });
});

describe.each(VERSIONS)('kubectl %s', (version) => {
  const bin = path.join(KUBECTL_DIR, `kubectl.${version}`);
  const ns = `matrix-${version.replace('.', '-')}`;
  let target: KubectlTarget;

  const k = (args: readonly string[], opts: Omit<KubectlOptions, 'bin'> = {}) => runKubectl(target, args, { ...opts, bin });
  const configMap = (name: string, data: Record<string, string>, extra = '') =>
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${ns}\n${extra}data:\n${Object.entries(data)
      .map(([key, v]) => `  ${key}: "${v}"\n`)
      .join('')}`;

  beforeAll(async () => {
    const dir = await fs.mkdtemp(path.join(server.harnessDir, `kubectl-${version}-`));
    await fs.mkdir(path.join(dir, 'home'));
    target = { kubeconfig: server.kubeconfig, kubectlCacheDir: path.join(dir, 'cache'), homeDir: path.join(dir, 'home') };
  });

  it('is installed and reports its version', async () => {
    expect(existsSync(bin)).toBe(true);
    const r = await runKubectl(null, ['version', '--client', '-o', 'json'], { bin });
    expect((JSON.parse(r.stdout) as { clientVersion: { minor: string } }).clientVersion.minor).toBe(version.split('.')[1]);
  });

  it('create -f creates a namespace and objects, and validation rejects an unknown field', async () => {
    await k(['create', 'ns', ns]);
    const manifest = `${configMap('created', { a: '1' })}---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: s1\n  namespace: ${ns}\nstringData:\n  k: v\n`;
    const r = await k(['create', '-f', '-'], { input: manifest });
    expect(r.stdout).toContain('configmap/created created');
    expect(r.stdout).toContain('secret/s1 created');
    const bad = await k(['create', '-f', '-'], { input: configMap('bad', { a: '1' }, 'bogus: 1\n'), expectFail: true });
    expect(bad.stderr).toMatch(/unknown field "bogus"/);
    await k(['get', 'cm', 'bad', '-n', ns], { expectFail: true });
  });

  it('apply creates, then configures with the last-applied annotation', async () => {
    expect((await k(['apply', '-f', '-'], { input: configMap('applied', { a: '1' }) })).stdout).toContain('configmap/applied created');
    expect((await k(['apply', '-f', '-'], { input: configMap('applied', { a: '2', b: '3' }) })).stdout).toContain('configmap/applied configured');
    const obj = JSON.parse((await k(['get', 'cm', 'applied', '-n', ns, '-o', 'json'])).stdout);
    expect(obj.data).toEqual({ a: '2', b: '3' });
    expect(JSON.parse(obj.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']).data).toEqual({ a: '2', b: '3' });
  });

  it('apply --server-side records kubectl as the field manager', async () => {
    const r = await k(['apply', '--server-side', '-f', '-'], { input: configMap('ssa', { x: '1' }) });
    expect(r.stdout).toContain('configmap/ssa serverside-applied');
    const obj = JSON.parse((await k(['get', 'cm', 'ssa', '-n', ns, '-o', 'json', '--show-managed-fields'])).stdout);
    expect(obj.data).toEqual({ x: '1' });
    expect(obj.metadata.managedFields).toEqual(expect.arrayContaining([expect.objectContaining({ manager: 'kubectl', operation: 'Apply' })]));
  });

  it('get prints YAML, JSON and the wide table', async () => {
    const y = YAML.parse((await k(['get', 'cm', 'created', '-n', ns, '-o', 'yaml'])).stdout);
    expect(y).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'created', namespace: ns }, data: { a: '1' } });
    const list = JSON.parse((await k(['get', 'cm', '-n', ns, '-o', 'json'])).stdout);
    expect(list.kind).toBe('List');
    expect(list.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual(expect.arrayContaining(['applied', 'created', 'ssa']));
    const wide = (await k(['get', 'cm', '-n', ns, '-o', 'wide'])).stdout;
    expect(wide).toMatch(/^NAME\s+DATA\s+AGE/);
    expect(wide).toMatch(/^created\s+1\s+\d+s/m);
  });

  it('patches with strategic merge, merge and JSON patch', async () => {
    expect((await k(['patch', 'cm', 'created', '-n', ns, '--type=strategic', '-p', '{"data":{"s":"1"}}'])).stdout).toContain('configmap/created patched');
    await k(['patch', 'cm', 'created', '-n', ns, '--type=merge', '-p', '{"data":{"m":"2"}}']);
    await k(['patch', 'cm', 'created', '-n', ns, '--type=json', '-p', '[{"op":"add","path":"/data/j","value":"3"},{"op":"remove","path":"/data/a"}]']);
    const data = JSON.parse((await k(['get', 'cm', 'created', '-n', ns, '-o', 'jsonpath={.data}'])).stdout);
    expect(data).toEqual({ s: '1', m: '2', j: '3' });
    const bad = await k(['patch', 'cm', 'created', '-n', ns, '--type=json', '-p', '[{"op":"test","path":"/data/s","value":"no"}]'], { expectFail: true });
    expect(bad.stderr).toMatch(/test failed|testing value/i);
  });

  it('explains a field from OpenAPI v3 and from OpenAPI v2', async () => {
    const v3 = await k(['explain', 'configmap.data']);
    expect(v3.stdout).toMatch(/KIND:\s+ConfigMap/);
    expect(v3.stdout).toMatch(/data\s+<map\[string\]string>/);
    const v2 = await k(['explain', 'configmap.data', '--output', 'plaintext-openapiv2']);
    expect(v2.stdout).toMatch(/KIND:\s+ConfigMap/);
    expect(v2.stdout).toMatch(/FIELD:\s+data <map\[string\]string>/);
  });

  it('watches: get -w prints an object created meanwhile', async () => {
    const env: Record<string, string | undefined> = { ...process.env, HOME: target.homeDir };
    delete env.KUBECONFIG;
    const child = spawn(bin, ['--kubeconfig', target.kubeconfig, '--cache-dir', target.kubectlCacheDir, 'get', 'cm', '-n', ns, '-w'], { env });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    // Asserts that `re` shows up in kubectl's output within `ms`; throws with the output otherwise.
    const expectPrinted = async (re: RegExp, ms = 20_000) => {
      const end = Date.now() + ms;
      while (!re.test(out)) {
        if (Date.now() > end) throw new Error(`timed out waiting for ${re} in:\n${out}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    try {
      await expectPrinted(/^created\s+/m);
      await k(['create', 'cm', 'watched', '-n', ns, '--from-literal=a=1']);
      await expectPrinted(/^watched\s+1\s+/m);
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('--dry-run=server validates and answers without storing', async () => {
    const r = await k(['create', '-f', '-', '--dry-run=server'], { input: configMap('dry', { a: '1' }) });
    expect(r.stdout).toContain('configmap/dry created (server dry run)');
    const gone = await k(['get', 'cm', 'dry', '-n', ns], { expectFail: true });
    expect(gone.stderr).toContain('configmaps "dry" not found');
    const ap = await k(['apply', '-f', '-', '--dry-run=server'], { input: configMap('applied', { a: '9', b: '3' }) });
    expect(ap.stdout).toContain('configmap/applied configured (server dry run)');
    expect(JSON.parse((await k(['get', 'cm', 'applied', '-n', ns, '-o', 'jsonpath={.data}'])).stdout)).toEqual({ a: '2', b: '3' });
  });

  it('diff shows the change apply would make, exiting 1', async () => {
    const r = await k(['diff', '-f', '-'], { input: configMap('applied', { a: '5', b: '3' }), expectFail: true });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^-\s+a: "2"$/m);
    expect(r.stdout).toMatch(/^\+\s+a: "5"$/m);
  });

  it('deletes by file and by name', async () => {
    const r = await k(['delete', '-f', '-'], { input: configMap('applied', { a: '2' }) });
    expect(r.stdout).toMatch(/configmap "applied" deleted/);
    expect((await k(['delete', 'cm', 'ssa', '-n', ns])).stdout).toMatch(/configmap "ssa" deleted/);
    const gone = await k(['get', 'cm', 'applied', '-n', ns], { expectFail: true });
    expect(gone.stderr).toContain('configmaps "applied" not found');
  });
});
