/**
 * core/v1 Node, Service and Endpoints end to end with real kubectl: each is created from its
 * YAML fixture (test/fixtures), listed with kubectl's columns, explained, patched and deleted
 * (Service answers the delete with the object, the others with a Status), and each validation
 * rule answers with Kubernetes' message. A new Node gets the not-ready taint from the
 * TaintNodesByCondition admission plugin.
 */
import { jest } from '@jest/globals';
import { join } from 'node:path';
import { encodeProtobuf } from '@app/apimachinery';
import { kubectl, repoRoot, request, startServer, type ServerHandle } from './support/server.js';

jest.setTimeout(120_000);

let server: ServerHandle;

beforeAll(async () => {
  server = await startServer();
});

afterAll(async () => {
  await server?.cleanup();
});

const k = (args: string[], opts: { input?: string; expectFail?: boolean } = {}) => kubectl(server, args, opts);
const fixture = (name: string): string => join(repoRoot(), 'test', 'fixtures', name);

describe('Node', () => {
  it('is created from YAML with its status, tainted not-ready, and listed with its columns', async () => {
    // The created object as the server answered it: admission's not-ready taint is there (the
    // node lifecycle controller takes it off once it sees the node's Ready condition True).
    const created = JSON.parse((await k(['create', '-f', fixture('node.yaml'), '-o', 'json'])).stdout) as {
      metadata: { name: string };
      spec: { taints: unknown };
    };
    expect(created.metadata.name).toBe('worker-1');
    expect(created.spec.taints).toEqual([{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }]);
    const r = await k(['get', 'nodes']);
    expect(r.stdout).toMatch(/^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION$/m);
    expect(r.stdout).toMatch(/^worker-1\s+Ready\s+worker\s+\d+s\s+v1\.33\.0$/m);
    const wide = await k(['get', 'node', 'worker-1', '-o', 'wide']);
    expect(wide.stdout).toMatch(/INTERNAL-IP\s+EXTERNAL-IP\s+OS-IMAGE\s+KERNEL-VERSION\s+CONTAINER-RUNTIME$/m);
    expect(wide.stdout).toMatch(/172\.18\.0\.3\s+<none>\s+Debian GNU\/Linux 12 \(bookworm\)\s+6\.1\.0-18-amd64\s+containerd:\/\/1\.7\.13$/m);
    const node = JSON.parse((await k(['get', 'node', 'worker-1', '-o', 'json'])).stdout);
    expect(node.spec.podCIDRs).toEqual(['10.244.1.0/24']);
    expect(node.status.capacity).toEqual({ cpu: '4', memory: '16Gi', pods: '110' });
  });

  it('is explained from its schema', async () => {
    const r = await k(['explain', 'node.spec.taints']);
    expect(r.stdout).toMatch(/FIELD:\s+taints <\[\]Taint>/);
    expect(r.stdout).toMatch(/^\s+effect\s+<string> -required-/m);
    const cap = await k(['explain', 'node.status.capacity']);
    expect(cap.stdout).toMatch(/FIELD:\s+capacity <map\[string\]Quantity>/);
  });

  it('is patched: unschedulable shows in STATUS, status only through /status', async () => {
    await k(['patch', 'node', 'worker-1', '--type=merge', '-p', '{"spec":{"unschedulable":true},"status":{"nodeInfo":{"kubeletVersion":"v9"}}}']);
    expect((await k(['get', 'node', 'worker-1'])).stdout).toMatch(/^worker-1\s+Ready,SchedulingDisabled\s+worker\s+\d+s\s+v1\.33\.0$/m);
    await k(['patch', 'node', 'worker-1', '--subresource=status', '--type=merge', '-p', '{"status":{"conditions":[{"type":"Ready","status":"False"}]}}']);
    expect((await k(['get', 'node', 'worker-1'])).stdout).toMatch(/^worker-1\s+NotReady,SchedulingDisabled\s+/m);
    expect((await k(['get', 'nodes', '--field-selector=spec.unschedulable=true', '-o', 'name'])).stdout.trim()).toBe('node/worker-1');
  });

  it('refuses a bad taint, a second podCIDR change and a providerID change, with the messages', async () => {
    const bad = await k(['create', '-f', '-'], {
      input:
        'apiVersion: v1\nkind: Node\nmetadata:\n  name: n2\nspec:\n  taints:\n  - key: "bad key"\n    effect: NoSchedule\n  - key: a\n    effect: NoSchedule\n  - key: a\n    effect: NoSchedule\n',
      expectFail: true,
    });
    expect(bad.stderr).toContain('The Node "n2" is invalid');
    expect(bad.stderr).toContain('spec.taints[0].key: Invalid value: "bad key": name part must consist of alphanumeric characters');
    expect(bad.stderr).toContain('taints must be unique by key and effect pair');
    const cidr = await k(['patch', 'node', 'worker-1', '--type=merge', '-p', '{"spec":{"podCIDRs":["10.244.9.0/24"]}}'], { expectFail: true });
    expect(cidr.stderr).toContain('spec.podCIDRs: Forbidden: node updates may not change podCIDR except from "" to valid');
    const provider = await k(['patch', 'node', 'worker-1', '--type=merge', '-p', '{"spec":{"providerID":"aws:///x"}}'], { expectFail: true });
    expect(provider.stderr).toContain('spec.providerID: Forbidden: node updates may only set providerID except from "" to valid');
  });

  it('is created from a protobuf body and read back in protobuf', async () => {
    const body = encodeProtobuf(
      { apiVersion: 'v1', kind: 'Node', metadata: { name: 'pb-node' }, spec: { taints: [{ key: 'dedicated', value: 'db', effect: 'NoExecute' }] } },
      'k8s.io.api.core.v1.Node',
    );
    const r = await request(server, 'POST', '/api/v1/nodes', {
      body: Buffer.from(body),
      headers: { 'content-type': 'application/vnd.kubernetes.protobuf', accept: 'application/json' },
    });
    expect(r.status).toBe(201);
    expect(r.json()).toMatchObject({
      kind: 'Node',
      spec: {
        taints: [
          { key: 'dedicated', value: 'db', effect: 'NoExecute' },
          { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' },
        ],
      },
    });
    expect((await k(['delete', 'node', 'pb-node'])).stdout).toContain('node "pb-node" deleted');
  });

  it('is deleted with a Status answer', async () => {
    const r = await request(server, 'DELETE', '/api/v1/nodes/worker-1');
    expect(r.status).toBe(200);
    expect(r.json()).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'worker-1', kind: 'nodes' } });
    expect((await k(['get', 'nodes', '-o', 'name'])).stdout.trim()).toBe('');
  });
});

describe('Service', () => {
  it('is created from YAML with its defaults and listed with its columns', async () => {
    expect((await k(['create', '-f', fixture('service.yaml')])).stdout).toContain('service/web created');
    const r = await k(['get', 'svc', 'web']);
    expect(r.stdout).toMatch(/^NAME\s+TYPE\s+CLUSTER-IP\s+EXTERNAL-IP\s+PORT\(S\)\s+AGE$/m);
    expect(r.stdout).toMatch(/^web\s+ClusterIP\s+10\.0\.0\.34\s+<none>\s+80\/TCP,443\/TCP\s+\d+s$/m);
    expect((await k(['get', 'svc', 'web', '-o', 'wide'])).stdout).toMatch(/\s+SELECTOR$[\s\S]*\s+app=web,tier=frontend$/m);
    const svc = JSON.parse((await k(['get', 'svc', 'web', '-o', 'json'])).stdout);
    expect(svc.spec).toMatchObject({
      type: 'ClusterIP',
      sessionAffinity: 'None',
      clusterIPs: ['10.0.0.34'],
      ipFamilies: ['IPv4'],
      ipFamilyPolicy: 'SingleStack',
      internalTrafficPolicy: 'Cluster',
      ports: [
        { name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 },
        { name: 'https', port: 443, protocol: 'TCP', targetPort: 'https' },
      ],
    });
  });

  it('is explained and patched', async () => {
    expect((await k(['explain', 'service.spec.ports'])).stdout).toMatch(/^\s+port\s+<integer> -required-/m);
    await k(['patch', 'svc', 'web', '--type=merge', '-p', '{"spec":{"type":"NodePort","ports":[{"name":"http","port":80,"nodePort":30080}]}}']);
    expect((await k(['get', 'svc', 'web'])).stdout).toMatch(/^web\s+NodePort\s+10\.0\.0\.34\s+<none>\s+80:30080\/TCP\s+/m);
    const ip = await k(['patch', 'svc', 'web', '--type=merge', '-p', '{"spec":{"clusterIP":"10.96.0.99","clusterIPs":["10.96.0.99"]}}'], { expectFail: true });
    expect(ip.stderr).toContain('spec.clusterIPs[0]: Invalid value: "10.96.0.99": may not change once set');
  });

  it('shows a LoadBalancer as pending until its status (only through /status) names an ingress', async () => {
    await k(['patch', 'svc', 'web', '--type=merge', '-p', '{"spec":{"type":"LoadBalancer"},"status":{"loadBalancer":{"ingress":[{"ip":"1.1.1.1"}]}}}']);
    expect((await k(['get', 'svc', 'web'])).stdout).toMatch(/^web\s+LoadBalancer\s+10\.0\.0\.34\s+<pending>\s+80:30080\/TCP\s+/m);
    await k(['patch', 'svc', 'web', '--subresource=status', '--type=merge', '-p', '{"status":{"loadBalancer":{"ingress":[{"ip":"203.0.113.7"}]}}}']);
    expect((await k(['get', 'svc', 'web'])).stdout).toMatch(/^web\s+LoadBalancer\s+10\.0\.0\.34\s+203\.0\.113\.7\s+80:30080\/TCP\s+/m);
  });

  it('refuses the rule violations with their messages', async () => {
    const svc = (spec: string, name = 'bad'): string => `apiVersion: v1\nkind: Service\nmetadata:\n  name: ${name}\nspec:\n${spec}`;
    const noPorts = await k(['create', '-f', '-'], { input: svc('  selector:\n    app: x\n'), expectFail: true });
    expect(noPorts.stderr).toContain('The Service "bad" is invalid: spec.ports: Required value');
    const port0 = await k(['create', '-f', '-'], { input: svc('  ports:\n  - port: 0\n'), expectFail: true });
    expect(port0.stderr).toContain('spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive');
    const unnamed = await k(['create', '-f', '-'], { input: svc('  ports:\n  - port: 80\n  - port: 81\n'), expectFail: true });
    expect(unnamed.stderr).toContain('spec.ports[0].name: Required value');
    const nodePort = await k(['create', '-f', '-'], { input: svc('  ports:\n  - port: 80\n    nodePort: 30001\n'), expectFail: true });
    expect(nodePort.stderr).toContain("spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'");
    const range = await k(['create', '-f', '-'], { input: svc('  type: NodePort\n  ports:\n  - port: 80\n    nodePort: 80\n'), expectFail: true });
    expect(range.stderr).toContain(
      'spec.ports[0].nodePort: Invalid value: 80: provided port is not in the valid range. The range of valid ports is 30000-32767',
    );
    const ext = await k(['create', '-f', '-'], { input: svc('  type: ExternalName\n'), expectFail: true });
    expect(ext.stderr).toContain('spec.externalName: Required value');
    const name = await k(['create', '-f', '-'], { input: svc('  ports:\n  - port: 80\n', '1abc'), expectFail: true });
    expect(name.stderr).toContain('metadata.name: Invalid value: "1abc": a DNS-1035 label must consist of lower case alphanumeric characters');
    const upper = await k(['create', '-f', '-'], { input: svc('  ports:\n  - port: 80\n', 'Web'), expectFail: true });
    expect(upper.stderr).toContain(
      `The Service "Web" is invalid: metadata.name: Invalid value: "Web": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
    );
    const ip = await k(['create', '-f', '-'], { input: svc('  clusterIP: 10.96.0.300\n  ports:\n  - port: 80\n'), expectFail: true });
    expect(ip.stderr).toContain('spec.clusterIPs[0]: Invalid value: "10.96.0.300": must be a valid IP address');
    const okExt = await k(['create', '-f', '-'], { input: svc('  type: ExternalName\n  externalName: db.example.com\n', 'db') });
    expect(okExt.stdout).toContain('service/db created');
    expect((await k(['get', 'svc', 'db'])).stdout).toMatch(/^db\s+ExternalName\s+<none>\s+db\.example\.com\s+<none>\s+/m);
  });

  it('is deleted with the object as the answer', async () => {
    const r = await request(server, 'DELETE', '/api/v1/namespaces/default/services/web');
    expect(r.status).toBe(200);
    expect(r.json()).toMatchObject({ kind: 'Service', metadata: { name: 'web' } });
    expect((await k(['delete', 'svc', 'db'])).stdout).toContain('service "db" deleted');
  });
});

describe('Endpoints', () => {
  it('is created from YAML, listed with its column, explained, patched and deleted', async () => {
    expect((await k(['create', '-f', fixture('endpoints.yaml')])).stdout).toContain('endpoints/web created');
    const r = await k(['get', 'endpoints', 'web']);
    expect(r.stdout).toMatch(/^NAME\s+ENDPOINTS\s+AGE$/m);
    expect(r.stdout).toMatch(/^web\s+10\.244\.1\.5:8080,10\.244\.1\.5:8443,10\.244\.1\.6:8080 \+ 1 more\.\.\.\s+\d+s$/m);
    expect((await k(['explain', 'endpoints.subsets.addresses'])).stdout).toMatch(/^\s+ip\s+<string> -required-/m);
    await k(['patch', 'ep', 'web', '--type=json', '-p', '[{"op":"replace","path":"/subsets/0/ports","value":[{"port":9090}]}]']);
    expect((await k(['get', 'ep', 'web'])).stdout).toMatch(/^web\s+10\.244\.1\.5:9090,10\.244\.1\.6:9090\s+\d+s$/m);
    const d = await request(server, 'DELETE', '/api/v1/namespaces/default/endpoints/web');
    expect(d.json()).toMatchObject({ kind: 'Status', status: 'Success' });
  });

  it('refuses bad addresses and ports with the messages', async () => {
    const ep = (subsets: string): string => `apiVersion: v1\nkind: Endpoints\nmetadata:\n  name: bad\nsubsets:\n${subsets}`;
    const r = await k(['create', '-f', '-'], {
      input: ep('- addresses:\n  - ip: not-an-ip\n  - ip: 127.0.0.1\n    hostname: Bad_Host\n  ports:\n  - port: 0\n    name: a\n  - port: 80\n'),
      expectFail: true,
    });
    expect(r.stderr).toContain('The Endpoints "bad" is invalid');
    expect(r.stderr).toContain('subsets[0].addresses[0].ip: Invalid value: "not-an-ip": must be a valid IP address');
    expect(r.stderr).toContain('subsets[0].addresses[1].ip: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)');
    expect(r.stderr).toContain('subsets[0].addresses[1].hostname: Invalid value: "Bad_Host"');
    expect(r.stderr).toContain('subsets[0].ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive');
    expect(r.stderr).toContain('subsets[0].ports[1].name: Required value');
    const empty = await k(['create', '-f', '-'], { input: ep('- ports:\n  - port: 80\n'), expectFail: true });
    expect(empty.stderr).toContain('subsets[0]: Required value: must specify `addresses` or `notReadyAddresses`');
  });
});

describe('TaintNodesByCondition', () => {
  it('is left out with --disable-admission-plugins=TaintNodesByCondition', async () => {
    const plain = await startServer({ args: ['--disable-admission-plugins=TaintNodesByCondition'] });
    try {
      const r = await request(plain, 'POST', '/api/v1/nodes', { body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'untainted' } } });
      expect(r.status).toBe(201);
      expect(r.json<{ spec?: { taints?: unknown[] } }>().spec?.taints).toBeUndefined();
    } finally {
      await plain.cleanup();
    }
  });
});

describe('Pod eviction', () => {
  const podOn = (name: string, nodeName?: string) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name },
    spec: { containers: [{ name: 'c', image: 'nginx' }], ...(nodeName ? { nodeName } : {}) },
  });
  const PODS = '/api/v1/namespaces/default/pods';

  it('lets kubectl drain cordon a node and evict its pods, leaving the others', async () => {
    await request(server, 'POST', '/api/v1/nodes', { body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'drain-1' } } });
    for (const [name, node] of [
      ['on-1', 'drain-1'],
      ['on-2', 'drain-1'],
      ['elsewhere', 'other-node'],
    ] as const) {
      expect((await request(server, 'POST', PODS, { body: podOn(name, node) })).status).toBe(201);
    }
    const r = await k(['drain', 'drain-1', '--force', '--ignore-daemonsets', '--timeout=60s']);
    expect(r.stdout).toContain('node/drain-1 cordoned');
    expect(r.stdout).toContain('pod/on-1 evicted');
    expect(r.stdout).toContain('pod/on-2 evicted');
    expect(r.stdout).toContain('node/drain-1 drained');
    expect((await request(server, 'GET', `${PODS}/on-1`)).status).toBe(404);
    expect((await request(server, 'GET', `${PODS}/elsewhere`)).status).toBe(200);
    expect((await k(['get', 'node', 'drain-1'])).stdout).toMatch(/SchedulingDisabled/);
  });

  it('takes a protobuf Eviction, honours its dry run, and answers 201 with a Status', async () => {
    await request(server, 'POST', PODS, { body: podOn('evict-pb') });
    const pb = (dryRun?: string[]) =>
      Buffer.from(
        encodeProtobuf(
          { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'evict-pb', namespace: 'default' }, deleteOptions: dryRun ? { dryRun } : {} },
          'k8s.io.api.policy.v1.Eviction',
        ),
      );
    const headers = { 'content-type': 'application/vnd.kubernetes.protobuf', accept: 'application/json' };
    const dry = await request(server, 'POST', `${PODS}/evict-pb/eviction`, { body: pb(['All']), headers });
    expect(dry.status).toBe(201);
    expect((await request(server, 'GET', `${PODS}/evict-pb`)).status).toBe(200);
    const r = await request(server, 'POST', `${PODS}/evict-pb/eviction`, { body: pb(), headers });
    expect(r.status).toBe(201);
    expect(r.json()).toMatchObject({ kind: 'Status', status: 'Success', code: 201 });
    expect((await request(server, 'GET', `${PODS}/evict-pb`)).status).toBe(404);
  });
});
