/**
 * Service cluster IPs and node ports end to end, with real kubectl: a Service gets a free IP of
 * --service-cluster-ip-range and NodePort Services free ports of --service-node-port-range; a
 * requested value is taken once, and one outside the range or already taken is 422 with
 * Kubernetes' message; a delete, a type change and a failed create give values back; a dry run
 * shows values and takes none; `kubectl replace` without the values keeps them; a full range is
 * a 500; the repair loop marks values a Service written around the API holds and gives back
 * those no Service holds; concurrent creates through several API servers never share a value;
 * the kubernetes Service's endpoints keep a server's record while it is renewed, whatever time
 * it claims, and drop it once it is not.
 */
import { jest } from '@jest/globals';
import { isIP } from 'node:net';
import { startEtcd, type EtcdCluster } from './support/etcd.js';
import { startThreeNodeCluster, type TestCluster } from './support/cluster.helper.js';
import { run } from './support/run.js';
import { etcdServerArgs, getFreePorts, kubectl, request, startServer, testStorage, waitFor, type ServerHandle } from './support/server.js';

jest.setTimeout(240_000);

type Obj = Record<string, unknown>;
type Spec = {
  clusterIP?: string;
  clusterIPs?: string[];
  type?: string;
  ports?: Array<{ name?: string; port: number; nodePort?: number }>;
  healthCheckNodePort?: number;
};
const SVC = (ns = 'default') => `/api/v1/namespaces/${ns}/services`;
const service = (name: string, spec: Obj): Obj => ({ apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { selector: { app: name }, ...spec } });
const specOf = (o: unknown): Spec => (o as { spec: Spec }).spec;
const inCidr24 = (ip: string | undefined, prefix: string) => typeof ip === 'string' && ip.startsWith(prefix);

// The IPs and node ports the tests ask for are in the ranges' static bands (10.99.0.1-16,
// 31000-31030), which random allocation leaves alone while the rest has room: no Service
// created earlier holds one by chance.
describe('Service allocation on one server', () => {
  let server: ServerHandle;
  const k = (args: string[], opts: { input?: string; expectFail?: boolean } = {}) => kubectl(server, args, opts);
  const create = (body: Obj, query = '') => request(server, 'POST', `${SVC()}${query}`, { body });

  beforeAll(async () => {
    server = await startServer({ args: ['--service-cluster-ip-range', '10.99.0.0/24', '--service-node-port-range', '31000-31999'] });
  });
  afterAll(async () => {
    await server?.cleanup();
  });

  it('gives kubectl-created Services distinct cluster IPs and NodePort Services node ports', async () => {
    expect((await k(['create', 'service', 'clusterip', 'alpha', '--tcp=80:8080'])).stdout).toContain('service/alpha created');
    expect((await k(['create', 'service', 'nodeport', 'beta', '--tcp=80:8080'])).stdout).toContain('service/beta created');
    const alpha = JSON.parse((await k(['get', 'svc', 'alpha', '-o', 'json'])).stdout) as Obj;
    const beta = JSON.parse((await k(['get', 'svc', 'beta', '-o', 'json'])).stdout) as Obj;
    const a = specOf(alpha);
    const b = specOf(beta);
    expect(inCidr24(a.clusterIP, '10.99.0.')).toBe(true);
    expect(inCidr24(b.clusterIP, '10.99.0.')).toBe(true);
    expect(a.clusterIP).not.toBe(b.clusterIP);
    expect(a).toMatchObject({ clusterIPs: [a.clusterIP], ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack' });
    const np = b.ports![0].nodePort!;
    expect(np).toBeGreaterThanOrEqual(31000);
    expect(np).toBeLessThanOrEqual(31999);
    const table = (await k(['get', 'svc', 'alpha', 'beta'])).stdout;
    expect(table).toMatch(new RegExp(`^alpha\\s+ClusterIP\\s+${a.clusterIP!.replace(/\./g, '\\.')}\\s+<none>\\s+80/TCP\\s+`, 'm'));
    expect(table).toMatch(new RegExp(`^beta\\s+NodePort\\s+${b.clusterIP!.replace(/\./g, '\\.')}\\s+<none>\\s+80:${np}/TCP\\s+`, 'm'));
  });

  it('takes a requested IP and node port once; taken or outside the range is 422 with the field', async () => {
    const r1 = await create(service('gamma', { type: 'NodePort', clusterIP: '10.99.0.5', ports: [{ port: 80, nodePort: 31005 }] }));
    expect(r1.status).toBe(201);
    expect(specOf(r1.json())).toMatchObject({ clusterIP: '10.99.0.5', clusterIPs: ['10.99.0.5'], ports: [{ port: 80, nodePort: 31005 }] });
    const ipTaken = await create(service('delta', { clusterIP: '10.99.0.5', ports: [{ port: 80 }] }));
    expect([ipTaken.status, ipTaken.json<Obj>().message]).toEqual([
      422,
      'Service "delta" is invalid: spec.clusterIPs: Invalid value: []string{"10.99.0.5"}: failed to allocate IP 10.99.0.5: provided IP is already allocated',
    ]);
    expect(ipTaken.json<{ details: { causes: Obj[] } }>().details.causes).toEqual([
      {
        reason: 'FieldValueInvalid',
        message: 'Invalid value: []string{"10.99.0.5"}: failed to allocate IP 10.99.0.5: provided IP is already allocated',
        field: 'spec.clusterIPs',
      },
    ]);
    const portTaken = await k(['create', '-f', '-'], {
      input: 'apiVersion: v1\nkind: Service\nmetadata:\n  name: delta\nspec:\n  type: NodePort\n  ports:\n  - port: 80\n    nodePort: 31005\n',
      expectFail: true,
    });
    expect(portTaken.stderr).toContain('The Service "delta" is invalid: spec.ports[0].nodePort: Invalid value: 31005: provided port is already allocated');
    const outside = await create(service('delta', { clusterIP: '10.98.0.5', ports: [{ port: 80 }] }));
    expect(outside.json<Obj>().message).toBe(
      'Service "delta" is invalid: spec.clusterIPs: Invalid value: []string{"10.98.0.5"}: failed to allocate IP 10.98.0.5: the provided IP (10.98.0.5) is not in the valid range. The range of valid IPs is 10.99.0.0/24',
    );
    const portOutside = await create(service('delta', { type: 'NodePort', ports: [{ port: 80, nodePort: 30000 }] }));
    expect(portOutside.json<Obj>().message).toBe(
      'Service "delta" is invalid: spec.ports[0].nodePort: Invalid value: 30000: provided port is not in the valid range. The range of valid ports is 31000-31999',
    );
    // A create that failed on its node port gave its cluster IP back: delta can take the IP the
    // failed attempts were given, so the range holds only what the stored Services hold.
    const ok = await create(service('delta', { type: 'NodePort', ports: [{ port: 80 }] }));
    expect(ok.status).toBe(201);
  });

  it('gives values back on delete, so a new Service can take them', async () => {
    const gamma = specOf((await request(server, 'GET', `${SVC()}/gamma`)).json());
    expect((await k(['delete', 'svc', 'gamma'])).stdout).toContain('service "gamma" deleted');
    const again = await create(service('gamma2', { type: 'NodePort', clusterIP: gamma.clusterIP, ports: [{ port: 80, nodePort: 31005 }] }));
    expect(again.status).toBe(201);
    // Already exists is a failed create after allocation: nothing stays taken.
    const dup = await create(service('gamma2', { ports: [{ port: 80 }], clusterIP: '10.99.0.13' }));
    expect(dup.status).toBe(409);
    expect((await create(service('epsilon', { clusterIP: '10.99.0.13', ports: [{ port: 80 }] }))).status).toBe(201);
  });

  it('shows values on a dry run and takes none', async () => {
    const dry = await k(['create', 'service', 'nodeport', 'zeta', '--tcp=80:80', '--dry-run=server', '-o', 'json']);
    const z = specOf(JSON.parse(dry.stdout));
    expect(inCidr24(z.clusterIP, '10.99.0.')).toBe(true);
    expect(z.ports![0].nodePort).toBeGreaterThanOrEqual(31000);
    expect((await request(server, 'GET', `${SVC()}/zeta`)).status).toBe(404);
    const real = await create(service('zeta', { type: 'NodePort', clusterIP: z.clusterIP, ports: [{ port: 80, nodePort: z.ports![0].nodePort }] }));
    expect(real.status).toBe(201);
    const taken = await request(server, 'POST', `${SVC()}?dryRun=All`, { body: service('eta', { clusterIP: z.clusterIP, ports: [{ port: 80 }] }) });
    expect(taken.status).toBe(422);
  });

  it('type changes take and give back node ports; replace without the values keeps them', async () => {
    await k(['create', 'service', 'clusterip', 'theta', '--tcp=80:80']);
    const before = specOf((await request(server, 'GET', `${SVC()}/theta`)).json());
    await k(['patch', 'svc', 'theta', '-p', '{"spec":{"type":"NodePort"}}']);
    const np = specOf((await request(server, 'GET', `${SVC()}/theta`)).json());
    const port = np.ports![0].nodePort!;
    expect([np.clusterIP, port >= 31000]).toEqual([before.clusterIP, true]);
    // kubectl replace of a manifest without clusterIP or nodePort keeps both.
    const manifest = `apiVersion: v1\nkind: Service\nmetadata:\n  name: theta\nspec:\n  type: NodePort\n  selector:\n    app: theta\n  ports:\n  - name: 80-80\n    port: 80\n`;
    expect((await k(['replace', '-f', '-'], { input: manifest })).stdout).toContain('service/theta replaced');
    const replaced = specOf((await request(server, 'GET', `${SVC()}/theta`)).json());
    expect([replaced.clusterIP, replaced.ports![0].nodePort]).toEqual([before.clusterIP, port]);
    // Back to ClusterIP: the node port is dropped and given back.
    await k(['patch', 'svc', 'theta', '-p', '{"spec":{"type":"ClusterIP"}}']);
    expect(specOf((await request(server, 'GET', `${SVC()}/theta`)).json()).ports![0].nodePort).toBeUndefined();
    expect((await create(service('iota', { type: 'NodePort', ports: [{ port: 80, nodePort: port }] }))).status).toBe(201);
    // ExternalName gives the IP back.
    await k(['patch', 'svc', 'theta', '--type=merge', '-p', '{"spec":{"type":"ExternalName","externalName":"db.example.com"}}']);
    const ext = specOf((await request(server, 'GET', `${SVC()}/theta`)).json());
    expect(ext.clusterIP).toBeUndefined();
    expect((await create(service('kappa', { clusterIP: before.clusterIP, ports: [{ port: 80 }] }))).status).toBe(201);
  });

  it('keeps the kubernetes Service on the first IP, with this server as its endpoint', async () => {
    const svc = (await request(server, 'GET', `${SVC()}/kubernetes`)).json<Obj>();
    expect(svc).toMatchObject({
      metadata: { labels: { component: 'apiserver', provider: 'kubernetes' } },
      spec: { type: 'ClusterIP', clusterIP: '10.99.0.1', ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: server.port }] },
    });
    // The server binds 127.0.0.1, which Endpoints may not hold: it publishes the host's address,
    // as kube-apiserver defaults its advertise address.
    const ep = await waitFor('the kubernetes endpoints', async () => {
      const r = await request(server, 'GET', '/api/v1/namespaces/default/endpoints/kubernetes');
      return r.status === 200 ? r.json<{ metadata: Obj; subsets: Array<{ addresses: Array<{ ip: string }>; ports: Obj[] }> }>() : undefined;
    });
    expect(ep.metadata).toMatchObject({ labels: { 'endpointslice.kubernetes.io/skip-mirror': 'true' } });
    expect(ep.subsets).toEqual([{ addresses: [{ ip: expect.any(String) }], ports: [{ name: 'https', port: server.port, protocol: 'TCP' }] }]);
    const ip = ep.subsets[0].addresses[0].ip;
    expect([isIP(ip), ip.startsWith('127.')]).toEqual([4, false]);
    const slice = (await request(server, 'GET', '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes')).json<Obj>();
    expect(slice).toMatchObject({
      metadata: { labels: { 'kubernetes.io/service-name': 'kubernetes' } },
      addressType: 'IPv4',
      endpoints: [{ addresses: [ip], conditions: { ready: true } }],
      ports: [{ name: 'https', port: server.port, protocol: 'TCP' }],
    });
    expect((await k(['get', 'svc', 'kubernetes'])).stdout).toMatch(/^kubernetes\s+ClusterIP\s+10\.99\.0\.1\s+<none>\s+443\/TCP\s+/m);
    // The IP is taken like any other.
    const taken = await create(service('mu', { clusterIP: '10.99.0.1', ports: [{ port: 80 }] }));
    expect(taken.status).toBe(422);
  });

  it('a changed cluster IP is refused, not allocated', async () => {
    const ip = specOf((await request(server, 'GET', `${SVC()}/alpha`)).json()).clusterIP!;
    const r = await k(['patch', 'svc', 'alpha', '--type=merge', '-p', '{"spec":{"clusterIP":"10.99.0.12","clusterIPs":["10.99.0.12"]}}'], {
      expectFail: true,
    });
    expect(r.stderr).toContain('spec.clusterIPs[0]: Invalid value: "10.99.0.12": may not change once set');
    expect(specOf((await request(server, 'GET', `${SVC()}/alpha`)).json()).clusterIP).toBe(ip);
    expect((await create(service('lambda', { clusterIP: '10.99.0.12', ports: [{ port: 80 }] }))).status).toBe(201);
  });
});

describe('Service allocation: a full range', () => {
  let server: ServerHandle;
  beforeAll(async () => {
    server = await startServer({ args: ['--service-cluster-ip-range', '10.98.0.0/29', '--service-node-port-range', '32000-32001'] });
  });
  afterAll(async () => {
    await server?.cleanup();
  });

  it('is a 500 once every IP or node port is taken', async () => {
    // A /29 holds 6 addresses; the kubernetes Service has the first.
    for (let i = 0; i < 5; i++) expect((await request(server, 'POST', SVC(), { body: service(`s${i}`, { ports: [{ port: 80 }] }) })).status).toBe(201);
    const full = await request(server, 'POST', SVC(), { body: service('s6', { ports: [{ port: 80 }] }) });
    expect([full.status, full.json<Obj>().reason, full.json<Obj>().message]).toEqual([
      500,
      'InternalError',
      'Internal error occurred: failed to allocate a serviceIP: range is full',
    ]);
    // Headless Services need no IP.
    expect((await request(server, 'POST', SVC(), { body: service('h', { clusterIP: 'None', ports: [{ port: 80 }] }) })).status).toBe(201);
    await request(server, 'DELETE', `${SVC()}/s0`);
    await request(server, 'DELETE', `${SVC()}/s1`);
    expect(
      (
        await request(server, 'POST', SVC(), {
          body: service('n0', {
            type: 'NodePort',
            ports: [
              { name: 'a', port: 80 },
              { name: 'b', port: 81 },
            ],
          }),
        })
      ).status,
    ).toBe(201);
    const noPort = await request(server, 'POST', SVC(), { body: service('n1', { type: 'NodePort', ports: [{ port: 80 }] }) });
    expect([noPort.status, noPort.json<Obj>().message]).toEqual([500, 'Internal error occurred: failed to allocate a nodePort: range is full']);
    // That failure gave its cluster IP back.
    expect((await request(server, 'POST', SVC(), { body: service('s7', { ports: [{ port: 80 }] }) })).status).toBe(201);
  });
});

describe('Service allocation: the repair loop', () => {
  let server: ServerHandle;
  let etcd: EtcdCluster | undefined;
  let clientUrl = '';
  const PREFIX = testStorage() === 'etcd3' ? '/kapi-svc' : '/registry';
  const etcdctl = async (args: string[]): Promise<string> => {
    if (etcd) return etcd.etcdctl(args);
    const r = await run('etcdctl', ['--endpoints', clientUrl, ...args], { ETCDCTL_API: '3' }, undefined, 30_000);
    if (r.code !== 0) throw new Error(`etcdctl ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
    return r.stdout;
  };

  beforeAll(async () => {
    const args = ['--service-cluster-ip-range', '10.97.0.0/24'];
    const env = { KAPI_SERVICE_REPAIR_INTERVAL_MS: '400', KAPI_APISERVER_ENDPOINT_INTERVAL_MS: '300' };
    if (testStorage() === 'etcd3') {
      etcd = await startEtcd({ members: 1 });
      server = await startServer({ args: etcdServerArgs([...args, '--etcd-prefix', PREFIX], etcd), env });
    } else {
      const [port] = await getFreePorts(1);
      clientUrl = `http://127.0.0.1:${port}`;
      server = await startServer({ args: [...args, '--listen-client-urls', clientUrl], env });
    }
  });
  afterAll(async () => {
    await server?.cleanup();
    await etcd?.cleanup();
  });

  it('marks the IP of a Service written around the API, and gives back one whose Service was removed around it', async () => {
    const a = await request(server, 'POST', SVC(), { body: service('a', { ports: [{ port: 80 }] }) });
    expect(a.status).toBe(201);
    const aIp = specOf(a.json()).clusterIP!;
    // A Service written straight into the store, with an IP the allocator never gave.
    const raw = {
      ...service('raw', { clusterIP: '10.97.0.9', clusterIPs: ['10.97.0.9'], ports: [{ port: 80 }] }),
      metadata: { name: 'raw', namespace: 'default', uid: 'u-raw' },
    };
    await etcdctl(['put', `${PREFIX}/core/services/default/raw`, JSON.stringify(raw)]);
    await waitFor(
      'the repair to mark 10.97.0.9',
      // A dry run: it creates nothing, so only the repair can make the IP taken.
      async () =>
        (await request(server, 'POST', `${SVC()}?dryRun=All`, { body: service('b', { clusterIP: '10.97.0.9', ports: [{ port: 80 }] }) })).status === 422,
      20_000,
    );
    // Service a removed around the API: its IP stays taken until the repair gives it back.
    await etcdctl(['del', `${PREFIX}/core/services/default/a`]);
    expect((await request(server, 'POST', `${SVC()}?dryRun=All`, { body: service('c', { clusterIP: aIp, ports: [{ port: 80 }] }) })).status).toBe(422);
    const c = await waitFor(
      `the repair to give back ${aIp}`,
      async () => {
        const r = await request(server, 'POST', SVC(), { body: service('c', { clusterIP: aIp, ports: [{ port: 80 }] }) });
        return r.status === 201 ? r : undefined;
      },
      30_000,
    );
    expect(specOf(c.json()).clusterIP).toBe(aIp);
  });

  it("keeps another server's endpoint record while it changes, whatever time it claims, and drops it once it stops", async () => {
    // Another API server's record, written around the API, whose renewTime is a year behind
    // this server's clock (its host's clock, say): it is renewed (rewritten) every 100 ms.
    const key = `${PREFIX}/masterleases/10.1.2.3:6443`;
    let n = 0;
    const renew = () =>
      etcdctl([
        'put',
        key,
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'APIServerAddress',
          metadata: { name: '10.1.2.3:6443' },
          address: '10.1.2.3',
          port: 6443,
          renewTime: `2025-01-01T00:00:${String(n++ % 60).padStart(2, '0')}.000Z`,
        }),
      ]);
    const listed = async (): Promise<boolean> => {
      const r = await request(server, 'GET', '/api/v1/namespaces/default/endpoints/kubernetes');
      const subsets = r.json<{ subsets?: Array<{ addresses?: Array<{ ip: string }> }> }>().subsets ?? [];
      return subsets.some((x) => (x.addresses ?? []).some((a) => a.ip === '10.1.2.3'));
    };
    await renew();
    let renewing = true;
    const renewals = (async () => {
      while (renewing) {
        await renew();
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    try {
      await waitFor('the renewed record in the endpoints', listed, 20_000);
      // Still there after more than three periods (0.9 s): judged by its changes, not its time.
      await new Promise((r) => setTimeout(r, 2_000));
      expect(await listed()).toBe(true);
    } finally {
      renewing = false;
      await renewals;
    }
    await waitFor('the record, no longer renewed, out of the endpoints', async () => !(await listed()), 20_000);
    expect(await listed()).toBe(false);
  });
});

describe('Service allocation across API servers', () => {
  let cluster: TestCluster | undefined;
  let servers: ServerHandle[] = [];
  let etcd: EtcdCluster | undefined;

  beforeAll(async () => {
    const args = ['--service-cluster-ip-range', '10.96.0.0/26', '--service-node-port-range', '30000-30063'];
    // Endpoint records renewed every 400 ms: one not seen renewed for 1.2 s is removed.
    const env = { KAPI_APISERVER_ENDPOINT_INTERVAL_MS: '400' };
    if (testStorage() === 'etcd3') {
      // Two API servers on one etcd.
      etcd = await startEtcd({ members: 1 });
      for (let i = 0; i < 2; i++) servers.push(await startServer({ args: etcdServerArgs([...args, '--etcd-prefix', '/kapi-multi'], etcd), env }));
    } else {
      cluster = await startThreeNodeCluster('kapi-svc-', args, env);
      servers = cluster.nodes;
    }
  });
  afterAll(async () => {
    for (const s of cluster ? [] : servers) await s.cleanup();
    await cluster?.cleanup();
    await etcd?.cleanup();
  });

  it('never gives two concurrently created Services the same IP or node port', async () => {
    const n = 40;
    const results = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        request(servers[i % servers.length], 'POST', SVC(), { body: service(`c${i}`, { type: 'NodePort', ports: [{ port: 80 }] }) }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array<number>(n).fill(201));
    const specs = results.map((r) => specOf(r.json()));
    expect(new Set(specs.map((s) => s.clusterIP)).size).toBe(n);
    expect(new Set(specs.map((s) => s.ports![0].nodePort)).size).toBe(n);
    // Every server is an endpoint of the kubernetes Service (one subset per port here: the
    // servers share a host).
    const want = servers.map((s) => s.port).sort((a, b) => a - b);
    await waitFor(
      'every server in the kubernetes endpoints',
      async () => {
        const ep = (await request(servers[0], 'GET', '/api/v1/namespaces/default/endpoints/kubernetes')).json<{
          subsets?: Array<{ ports: Array<{ port: number }> }>;
        }>();
        const ports = (ep.subsets ?? []).map((x) => x.ports[0].port);
        return JSON.stringify(ports) === JSON.stringify(want);
      },
      30_000,
    );
  });

  it('drops a server killed without leaving: its record is no longer seen renewed', async () => {
    const gone = servers[servers.length - 1]!;
    await gone.kill();
    const want = servers
      .slice(0, -1)
      .map((s) => s.port)
      .sort((a, b) => a - b);
    const endpointPorts = async (): Promise<number[] | undefined> => {
      const r = await request(servers[0], 'GET', '/api/v1/namespaces/default/endpoints/kubernetes');
      if (r.status !== 200) return undefined;
      return (r.json<{ subsets?: Array<{ ports: Array<{ port: number }> }> }>().subsets ?? []).map((x) => x.ports[0].port);
    };
    await waitFor('the killed server out of the kubernetes endpoints', async () => JSON.stringify(await endpointPorts()) === JSON.stringify(want), 30_000);
    expect(await endpointPorts()).toEqual(want);
  });
});
