/**
 * Repeated entries in lists, as kube-apiserver treats them: a built-in kind refuses the repeats
 * its own validation names (container names, a host port taken twice) and accepts the others
 * with warnings (environment variables, container ports, host aliases, finalizers); a custom
 * resource refuses repeats in its `set` and `map` lists. The Warning headers stay bounded
 * however many warnings a request gives rise to.
 */
import { type ServerHandle, kubectl, request, startServer } from './support/server.js';

const NS = 'default';
const pod = (name: string, spec: Record<string, unknown>) => JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec });

describe('repeated list entries', () => {
  let server: ServerHandle;

  beforeAll(async () => {
    server = await startServer();
  });

  afterAll(async () => {
    await server?.cleanup();
  });

  it("kubectl creates a pod with a repeated env name and port, printing kube's warnings", async () => {
    const r = await kubectl(server, ['create', '-n', NS, '-f', '-'], {
      input: pod('dup-env', {
        containers: [
          {
            name: 'app',
            image: 'nginx',
            env: [
              { name: 'MODE', value: 'a' },
              { name: 'MODE', value: 'b' },
            ],
            ports: [{ containerPort: 80 }, { containerPort: 80 }],
          },
        ],
        hostAliases: [
          { ip: '10.0.0.9', hostnames: ['a'] },
          { ip: '10.0.0.9', hostnames: ['b'] },
        ],
      }),
    });
    expect(r.stdout).toContain('pod/dup-env created');
    expect(r.stderr).toContain('Warning: spec.containers[0].env[1]: hides previous definition of "MODE", which may be dropped when using apply');
    expect(r.stderr).toContain('Warning: spec.containers[0].ports[1]: duplicate port definition with spec.containers[0].ports[0]');
    expect(r.stderr).toContain('Warning: spec.hostAliases[1].ip: duplicate ip "10.0.0.9"');
    const env = await kubectl(server, ['get', 'pod', 'dup-env', '-n', NS, '-o', 'jsonpath={.spec.containers[0].env[*].value}']);
    expect(env.stdout).toBe('a b');
    // Repeated finalizers are kept as given, as kube keeps them.
    const fin = await request(server, 'POST', `/api/v1/namespaces/${NS}/configmaps`, {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dup-fin', finalizers: ['example.com/f', 'example.com/f'] } },
    });
    expect(fin.status).toBe(201);
    expect((fin.json() as { metadata: { finalizers: string[] } }).metadata.finalizers).toEqual(['example.com/f', 'example.com/f']);
  });

  it('gives the same warnings for the pod template of a workload', async () => {
    const r = await kubectl(server, ['create', '-n', NS, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'dup-env' },
        spec: {
          selector: { matchLabels: { app: 'd' } },
          template: {
            metadata: { labels: { app: 'd' } },
            spec: {
              containers: [
                {
                  name: 'app',
                  image: 'nginx',
                  env: [
                    { name: 'MODE', value: 'a' },
                    { name: 'MODE', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
                  ],
                },
              ],
            },
          },
        },
      }),
    });
    expect(r.stdout).toContain('deployment.apps/dup-env created');
    expect(r.stderr).toContain('Warning: spec.template.spec.containers[0].env[1]: hides previous definition of "MODE", which may be dropped when using apply');
  });

  it('refuses repeated container names and a host port taken twice', async () => {
    const r = await kubectl(server, ['create', '-n', NS, '-f', '-'], {
      input: pod('dup-names', {
        containers: [
          { name: 'app', image: 'nginx', ports: [{ containerPort: 80, hostPort: 8080 }] },
          { name: 'app', image: 'nginx', ports: [{ containerPort: 81, hostPort: 8080 }] },
        ],
      }),
      expectFail: true,
    });
    expect(r.stderr).toContain('The Pod "dup-names" is invalid');
    expect(r.stderr).toContain('spec.containers[1].name: Duplicate value: "app"');
    expect(r.stderr).toContain('spec.containers[1].ports[0].hostPort: Duplicate value: "TCP//8080"');
    expect(r.stderr).not.toContain('spec.containers[1]: Duplicate value');
  });

  it('keeps the Warning headers of a request bounded', async () => {
    const env = Array.from({ length: 20_000 }, (_, i) => ({ name: 'SAME', value: `v${i}` }));
    const r = await request(server, 'POST', `/api/v1/namespaces/${NS}/pods`, {
      body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'many-env' }, spec: { containers: [{ name: 'app', image: 'nginx', env }] } },
    });
    expect(r.status).toBe(201);
    const raw = r.headers.warning;
    const warnings = Array.isArray(raw) ? raw : String(raw).split(/,\s*(?=299 )/);
    // Each text once, 4,096 characters in all before they are cut (to 256 each) and the rest dropped.
    const texts = warnings.map((w) => JSON.parse(w.slice('299 - '.length)) as string);
    expect(new Set(texts).size).toBe(texts.length);
    expect(texts.reduce((n, t) => n + t.length, 0)).toBeLessThanOrEqual(4096 + 256);
    expect(texts.length).toBeLessThan(100);
    expect(warnings[0]).toBe('299 - "spec.containers[0].env[1]: hides previous definition of \\"SAME\\", which may be dropped when using apply"');
  });

  it('refuses repeats in the set and map lists of a custom resource', async () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'boxes.lists.example.com' },
      spec: {
        group: 'lists.example.com',
        scope: 'Namespaced',
        names: { plural: 'boxes', singular: 'box', kind: 'Box', listKind: 'BoxList' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: {
                  spec: {
                    type: 'object',
                    properties: {
                      tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
                      slots: {
                        type: 'array',
                        'x-kubernetes-list-type': 'map',
                        'x-kubernetes-list-map-keys': ['id'],
                        items: { type: 'object', required: ['id'], properties: { id: { type: 'integer' } } },
                      },
                    },
                  },
                },
              },
            },
          },
        ],
      },
    };
    await kubectl(server, ['apply', '-f', '-'], { input: JSON.stringify(crd) });
    await kubectl(server, ['wait', '--for', 'condition=established', '--timeout=30s', 'crd/boxes.lists.example.com']);
    const r = await kubectl(server, ['create', '-n', NS, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'lists.example.com/v1',
        kind: 'Box',
        metadata: { name: 'b' },
        spec: { tags: ['a', 'a'], slots: [{ id: 1 }, { id: 1 }] },
      }),
      expectFail: true,
    });
    expect(r.stderr).toContain('spec.tags[1]: Duplicate value: "a"');
    // Its metadata is ObjectMeta, as for any kind: repeated finalizers pass.
    const fin = await kubectl(server, ['create', '-n', NS, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'lists.example.com/v1',
        kind: 'Box',
        metadata: { name: 'f', finalizers: ['example.com/f', 'example.com/f'] },
        spec: {},
      }),
    });
    expect(fin.stdout).toContain('box.lists.example.com/f created');
    expect(r.stderr).toContain('spec.slots[1]: Duplicate value: map[string]interface {}{"id":1}');
  });
});
