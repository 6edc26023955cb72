/**
 * The foundation's "done when": real kubectl (the installed dispatcher, which runs kubectl 1.32
 * against a server reporting minor 32) drives a real started server process.
 */
import { spawn } from 'node:child_process';
import { kubectl, startServer, type ServerHandle } from './support/server.js';

let server: ServerHandle;

beforeAll(async () => {
  server = await startServer();
});

afterAll(async () => {
  await server?.cleanup();
});

const k = (args: string[], opts: { input?: string; expectFail?: boolean } = {}) => kubectl(server, args, opts);

describe('kubectl against one node', () => {
  it('lists the system namespaces with Table columns', async () => {
    const r = await k(['get', 'ns']);
    expect(r.stdout).toMatch(/^NAME\s+STATUS\s+AGE/m);
    for (const ns of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) {
      expect(r.stdout).toMatch(new RegExp(`^${ns}\\s+Active\\s+\\d+s`, 'm'));
    }
  });

  it('discovers resources and versions', async () => {
    const r = await k(['api-resources']);
    expect(r.stdout).toMatch(/^configmaps\s+cm\s+v1\s+true\s+ConfigMap/m);
    expect(r.stdout).toMatch(/^namespaces\s+ns\s+v1\s+false\s+Namespace/m);
    expect(r.stdout).toMatch(/^secrets\s+v1\s+true\s+Secret/m);
    const v = await k(['api-versions']);
    expect(v.stdout.split('\n')).toContain('v1');
  });

  it('explains a field from the OpenAPI v3 schema', async () => {
    const r = await k(['explain', 'configmap.data']);
    expect(r.stdout).toMatch(/KIND:\s+ConfigMap/);
    expect(r.stdout).toMatch(/FIELD:\s+data/);
  });

  it('creates namespaces and config maps from typed commands (protobuf bodies)', async () => {
    await k(['create', 'ns', 'team-a']);
    await k(['create', 'cm', 'c1', '-n', 'team-a', '--from-literal=a=b', '--from-literal=x=y']);
    const r = await k(['get', 'cm', 'c1', '-n', 'team-a', '-o', 'json']);
    const cm = JSON.parse(r.stdout);
    expect(cm.data).toEqual({ a: 'b', x: 'y' });
    expect(cm.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(Number(cm.metadata.resourceVersion)).toBeGreaterThan(0);
    await k(['create', 'secret', 'generic', 's1', '-n', 'team-a', '--from-literal=password=hunter2']);
    const s = JSON.parse((await k(['get', 'secret', 's1', '-n', 'team-a', '-o', 'json'])).stdout);
    expect(Buffer.from(s.data.password, 'base64').toString()).toBe('hunter2');
    expect(s.type).toBe('Opaque');
    await k(['create', 'serviceaccount', 'robot', '-n', 'team-a']);
    const sa = await k(['get', 'sa', '-n', 'team-a']);
    expect(sa.stdout).toMatch(/^robot\s+0\s+/m);
  });

  it('answers AlreadyExists and NotFound like Kubernetes', async () => {
    const dup = await k(['create', 'ns', 'team-a'], { expectFail: true });
    expect(dup.stderr).toContain('Error from server (AlreadyExists): namespaces "team-a" already exists');
    const missing = await k(['get', 'cm', 'nope', '-n', 'team-a'], { expectFail: true });
    expect(missing.stderr).toContain('Error from server (NotFound): configmaps "nope" not found');
    const noNs = await k(['create', 'cm', 'x', '-n', 'does-not-exist', '--from-literal=a=b'], { expectFail: true });
    expect(noNs.stderr).toContain('namespaces "does-not-exist" not found');
  });

  it('applies a multi-document manifest, then a change to it', async () => {
    const manifest = (v: string) => `apiVersion: v1
kind: ConfigMap
metadata:
  name: app-config
  namespace: team-a
data:
  mode: ${v}
---
apiVersion: v1
kind: Secret
metadata:
  name: app-secret
  namespace: team-a
stringData:
  token: ${v}-token
`;
    const first = await k(['apply', '-f', '-'], { input: manifest('one') });
    expect(first.stdout).toContain('configmap/app-config created');
    expect(first.stdout).toContain('secret/app-secret created');
    const second = await k(['apply', '-f', '-'], { input: manifest('two') });
    expect(second.stdout).toContain('configmap/app-config configured');
    expect(second.stdout).toContain('secret/app-secret configured');
    const cm = JSON.parse((await k(['get', 'cm', 'app-config', '-n', 'team-a', '-o', 'json'])).stdout);
    expect(cm.data.mode).toBe('two');
    expect(cm.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']).toContain('"two"');
    const s = JSON.parse((await k(['get', 'secret', 'app-secret', '-n', 'team-a', '-o', 'json'])).stdout);
    expect(s.stringData).toBeUndefined();
    expect(Buffer.from(s.data.token, 'base64').toString()).toBe('two-token');
    const again = await k(['apply', '-f', '-'], { input: manifest('two') });
    expect(again.stdout).toContain('configmap/app-config unchanged');
  });

  it('prints yaml, jsonpath and wide output', async () => {
    const y = await k(['get', 'cm', 'c1', '-n', 'team-a', '-o', 'yaml']);
    expect(y.stdout).toMatch(/^kind: ConfigMap$/m);
    const jp = await k(['get', 'cm', 'c1', '-n', 'team-a', '-o', 'jsonpath={.data.a}']);
    expect(jp.stdout).toBe('b');
    const wide = await k(['get', 'cm', '-n', 'team-a', '-o', 'wide']);
    expect(wide.stdout).toMatch(/^NAME\s+DATA\s+AGE/m);
    expect(wide.stdout).toMatch(/^c1\s+2\s+/m);
  });

  it('labels, annotates and selects by labels (set-based) and fields', async () => {
    await k(['create', 'cm', 'c2', '-n', 'team-a', '--from-literal=k=v']);
    await k(['label', 'cm', 'c1', '-n', 'team-a', 'tier=web', 'env=prod']);
    await k(['label', 'cm', 'c2', '-n', 'team-a', 'tier=db']);
    await k(['annotate', 'cm', 'c1', '-n', 'team-a', 'owner=alice']);
    const ann = JSON.parse((await k(['get', 'cm', 'c1', '-n', 'team-a', '-o', 'json'])).stdout);
    expect(ann.metadata.annotations.owner).toBe('alice');
    const inSel = await k(['get', 'cm', '-n', 'team-a', '-l', 'tier in (web,db)', '-o', 'name']);
    expect(inSel.stdout.trim().split('\n').sort()).toEqual(['configmap/c1', 'configmap/c2']);
    const notIn = await k(['get', 'cm', '-n', 'team-a', '-l', 'tier notin (web),tier', '-o', 'name']);
    expect(notIn.stdout.trim()).toBe('configmap/c2');
    const eq = await k(['get', 'cm', '-n', 'team-a', '-l', 'env=prod,tier!=db', '-o', 'name']);
    expect(eq.stdout.trim()).toBe('configmap/c1');
    const fs = await k(['get', 'cm', '-A', '--field-selector', 'metadata.name=c2', '-o', 'name']);
    expect(fs.stdout.trim()).toBe('configmap/c2');
    const bad = await k(['get', 'cm', '-n', 'team-a', '--field-selector', 'data.k=v'], { expectFail: true });
    expect(bad.stderr).toContain('field label not supported: data.k');
  });

  it('patches with merge, json and strategic merge patches', async () => {
    await k(['patch', 'cm', 'c2', '-n', 'team-a', '--type', 'merge', '-p', '{"data":{"m":"1"}}']);
    await k(['patch', 'cm', 'c2', '-n', 'team-a', '--type', 'json', '-p', '[{"op":"add","path":"/data/j","value":"2"}]']);
    await k(['patch', 'cm', 'c2', '-n', 'team-a', '--type', 'strategic', '-p', '{"data":{"s":"3","k":null}}']);
    const cm = JSON.parse((await k(['get', 'cm', 'c2', '-n', 'team-a', '-o', 'json'])).stdout);
    expect(cm.data).toEqual({ m: '1', j: '2', s: '3' });
    const badJson = await k(['patch', 'cm', 'c2', '-n', 'team-a', '--type', 'json', '-p', '[{"op":"test","path":"/data/m","value":"nope"}]'], {
      expectFail: true,
    });
    expect(badJson.stderr).toMatch(/The request is invalid: .*test failed/);
  });

  it('watches: get -w prints a change made meanwhile', async () => {
    const child = spawn('/usr/bin/kubectl', ['--kubeconfig', server.kubeconfig, '--cache-dir', server.kubectlCacheDir, 'get', 'cm', '-n', 'team-a', '-w'], {
      env: { ...process.env, HOME: server.homeDir },
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const waitFor = async (re: RegExp, ms = 20_000) => {
      const end = Date.now() + ms;
      while (!re.test(out)) {
        if (Date.now() > end) throw new Error(`timed out waiting for ${re} in:\n${out}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    try {
      await waitFor(/^c1\s+/m);
      await k(['create', 'cm', 'watched', '-n', 'team-a', '--from-literal=a=1']);
      await waitFor(/^watched\s+1\s+/m);
      expect(out.match(/^NAME\s+DATA\s+AGE/gm)?.length).toBe(1);
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('watches one object: get NAME -w shows that object alone, and wait --for sees its change', async () => {
    await k(['create', 'cm', 'one', '-n', 'team-a', '--from-literal=a=1']);
    await k(['create', 'cm', 'one-more', '-n', 'team-a', '--from-literal=a=1']);
    const spawnK = (args: string[]) => {
      const child = spawn('/usr/bin/kubectl', ['--kubeconfig', server.kubeconfig, '--cache-dir', server.kubectlCacheDir, ...args], {
        env: { ...process.env, HOME: server.homeDir },
      });
      const state = { out: '', code: undefined as number | null | undefined };
      child.stdout.on('data', (d) => (state.out += d));
      child.stderr.on('data', (d) => (state.out += d));
      // 'close', not 'exit': 'exit' may come before the last of its output is read.
      child.on('close', (code) => (state.code = code));
      return { child, state };
    };
    const until = async (what: string, ok: () => boolean, ms = 20_000) => {
      const end = Date.now() + ms;
      while (!ok()) {
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    const watch = spawnK(['get', 'cm', 'one', '-n', 'team-a', '-w']);
    const wait = spawnK(['wait', '--for=jsonpath={.data.ready}=yes', 'cm/one', '-n', 'team-a', '--timeout=30s']);
    try {
      await until(`one in: ${watch.state.out}`, () => /^one\s+1\s+/m.test(watch.state.out));
      // Let wait read the object once without the data it waits for.
      await new Promise((r) => setTimeout(r, 1000));
      expect(wait.state.code).toBeUndefined();
      await k(['patch', 'cm', 'one-more', '-n', 'team-a', '--type', 'merge', '-p', '{"data":{"b":"2","c":"3"}}']);
      await k(['patch', 'cm', 'one', '-n', 'team-a', '--type', 'merge', '-p', '{"data":{"ready":"yes"}}']);
      await until(`the change in: ${watch.state.out}`, () => /^one\s+2\s+/m.test(watch.state.out));
      await until(`wait to end: ${wait.state.out}`, () => wait.state.code !== undefined);
      expect({ code: wait.state.code, out: wait.state.out.trim() }).toEqual({ code: 0, out: 'configmap/one condition met' });
      expect(watch.state.out).not.toMatch(/^one-more/m);
    } finally {
      watch.child.kill('SIGTERM');
      wait.child.kill('SIGTERM');
    }
  });

  it('deletes', async () => {
    const r = await k(['delete', 'cm', 'c2', '-n', 'team-a']);
    expect(r.stdout).toContain('configmap "c2" deleted');
    const gone = await k(['get', 'cm', 'c2', '-n', 'team-a'], { expectFail: true });
    expect(gone.stderr).toContain('configmaps "c2" not found');
  });

  it('deletes a namespace with objects in it, and refuses to delete the default namespaces', async () => {
    await k(['create', 'ns', 'doomed']);
    await k(['create', 'cm', 'a', '-n', 'doomed', '--from-literal=a=1']);
    await k(['create', 'secret', 'generic', 'b', '-n', 'doomed', '--from-literal=b=2']);
    const r = await k(['delete', 'ns', 'doomed', '--timeout=60s']);
    expect(r.stdout).toContain('namespace "doomed" deleted');
    const gone = await k(['get', 'ns', 'doomed'], { expectFail: true });
    expect(gone.stderr).toContain('namespaces "doomed" not found');
    const cms = await k(['get', 'cm', '-n', 'doomed', '-o', 'name']);
    expect(cms.stdout.trim()).toBe('');
    const no = await k(['delete', 'ns', 'default'], { expectFail: true });
    expect(no.stderr).toContain('Error from server (Forbidden): namespaces "default" is forbidden: this namespace may not be deleted');
  });
});
