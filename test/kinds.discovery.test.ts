/**
 * discovery.k8s.io/v1 EndpointSlice end to end with real kubectl: `apply` with Kubernetes'
 * defaults, the columns of `get endpointslices`, `explain`, refusals with Kubernetes' messages,
 * and the endpointslicemirroring controller: the Endpoints of a Service without a selector is
 * mirrored into a slice that follows it and goes away with it, so `kubectl describe service`
 * and `kubectl describe ingress` find the Service's endpoints as they do against Kubernetes.
 */
import { jest } from '@jest/globals';
import { encodeProtobuf } from '@app/apimachinery';
import { kubectl, request, startServer, waitFor, type ServerHandle } from './support/server.js';

jest.setTimeout(180_000);

let server: ServerHandle;

beforeAll(async () => {
  server = await startServer();
});

afterAll(async () => {
  await server?.cleanup();
});

const k = (args: string[], opts: { input?: string; expectFail?: boolean } = {}) => kubectl(server, args, opts);

const SLICE = `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: manual-1
  labels:
    kubernetes.io/service-name: manual
addressType: IPv4
ports:
- name: http
  port: 80
- port: 53
  protocol: UDP
endpoints:
- addresses: ["10.1.0.1"]
  conditions:
    ready: true
  hostname: pod-1
  nodeName: node-1
  zone: zone-a
- addresses: ["10.1.0.2"]
- addresses: ["10.1.0.3"]
- addresses: ["10.1.0.4"]
`;

const SERVICE = `apiVersion: v1
kind: Service
metadata:
  name: ext
spec:
  ports:
  - name: http
    port: 80
    targetPort: 8080
`;

const ENDPOINTS = `apiVersion: v1
kind: Endpoints
metadata:
  name: ext
  labels:
    team: edge
subsets:
- addresses:
  - ip: 10.2.0.1
  notReadyAddresses:
  - ip: 10.2.0.2
  ports:
  - name: http
    port: 8080
`;

const INGRESS = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: ext
spec:
  defaultBackend:
    service:
      name: ext
      port:
        number: 80
`;

/** The mirrored slices of `ext` (while it has a selector, the endpointslice controller writes slices of its own). */
const mirrored = async (): Promise<string> =>
  (
    await k([
      'get',
      'endpointslices',
      '-l',
      'kubernetes.io/service-name=ext,endpointslice.kubernetes.io/managed-by=endpointslicemirroring-controller.k8s.io',
      '--no-headers',
    ])
  ).stdout;

describe('EndpointSlice', () => {
  it('is applied with its defaults, listed with its columns, explained and deleted', async () => {
    expect((await k(['apply', '-f', '-'], { input: SLICE })).stdout).toContain('endpointslice.discovery.k8s.io/manual-1 created');
    // (default also holds the kubernetes Service's slice, as on Kubernetes)
    expect((await k(['get', 'endpointslices', 'manual-1'])).stdout).toMatch(
      /^NAME\s+ADDRESSTYPE\s+PORTS\s+ENDPOINTS\s+AGE\nmanual-1\s+IPv4\s+80,53\s+10\.1\.0\.1,10\.1\.0\.2,10\.1\.0\.3 \+ 1 more\.\.\.\s+\d+s$/m,
    );
    const fields = (
      await k(['get', 'endpointslice', 'manual-1', '-o', 'jsonpath={.metadata.generation} {.ports[0].protocol} [{.ports[1].name}] {.endpoints[0].zone}'])
    ).stdout;
    expect(fields).toBe('1 TCP [] zone-a');
    // A protobuf body keeps the pointer fields (an empty port name, port 0, ready: false).
    const path = '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices';
    const pb = {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'pb' },
      addressType: 'IPv6',
      endpoints: [{ addresses: ['2001:db8::1'], conditions: { ready: false, serving: true } }],
      ports: [{ name: '', port: 0, protocol: 'TCP' }],
    };
    const created = await request(server, 'POST', path, {
      body: Buffer.from(encodeProtobuf(pb, 'k8s.io.api.discovery.v1.EndpointSlice')),
      headers: { 'content-type': 'application/vnd.kubernetes.protobuf', accept: 'application/json' },
    });
    expect(created.status).toBe(201);
    expect(created.json()).toMatchObject({ endpoints: pb.endpoints, ports: pb.ports });
    expect((await request(server, 'DELETE', `${path}/pb`)).status).toBe(200);

    await k(['annotate', 'endpointslice', 'manual-1', 'note=x']);
    expect((await k(['get', 'endpointslice', 'manual-1', '-o', 'jsonpath={.metadata.generation}'])).stdout).toBe('1');
    await k(['patch', 'endpointslice', 'manual-1', '--type=json', '-p', '[{"op":"remove","path":"/endpoints/3"}]']);
    expect((await k(['get', 'endpointslice', 'manual-1', '-o', 'jsonpath={.metadata.generation}'])).stdout).toBe('2');

    expect((await k(['describe', 'endpointslice', 'manual-1'])).stdout).toMatch(
      /AddressType:\s+IPv4[\s\S]*Ports:[\s\S]*http\s+80\s+TCP[\s\S]*Endpoints:[\s\S]*- Addresses:\s+10\.1\.0\.1/,
    );
    expect((await k(['explain', 'endpointslice.endpoints'])).stdout).toMatch(
      /GROUP:\s+discovery\.k8s\.io\nKIND:\s+EndpointSlice\nVERSION:\s+v1[\s\S]*FIELD: endpoints <\[\]Endpoint>[\s\S]*addresses\s+<\[\]string>[\s\S]*conditions\s+<EndpointConditions>/,
    );
    expect((await k(['api-resources', '--api-group=discovery.k8s.io'])).stdout).toMatch(/^endpointslices\s+discovery\.k8s\.io\/v1\s+true\s+EndpointSlice$/m);
    expect((await k(['delete', 'endpointslice', 'manual-1'])).stdout).toContain('endpointslice.discovery.k8s.io "manual-1" deleted');
  });

  it('is refused with Kubernetes messages', async () => {
    const ip = await k(['apply', '-f', '-'], { input: SLICE.replace('addressType: IPv4', 'addressType: IP'), expectFail: true });
    expect(ip.stderr).toContain('The EndpointSlice "manual-1" is invalid: addressType: Unsupported value: "IP": supported values: "FQDN", "IPv4", "IPv6"');
    const loopback = await k(['apply', '-f', '-'], { input: SLICE.replace('10.1.0.2', '127.0.0.1'), expectFail: true });
    expect(loopback.stderr).toContain('endpoints[1].addresses[0]: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)');
    const v6 = await k(['apply', '-f', '-'], { input: SLICE.replace('10.1.0.2', '2001:db8::1'), expectFail: true });
    expect(v6.stderr).toContain('endpoints[1].addresses[0]: Invalid value: "2001:db8::1": must be a valid IPv4 address');
    const dup = await k(['apply', '-f', '-'], { input: SLICE.replace('- port: 53', '- port: 53\n  name: http'), expectFail: true });
    expect(dup.stderr).toContain('ports[1].name: Duplicate value: "http"');
    const empty = await k(['apply', '-f', '-'], { input: SLICE.replace('- addresses: ["10.1.0.4"]', '- addresses: []'), expectFail: true });
    expect(empty.stderr).toContain('endpoints[3].addresses: Required value: must contain at least 1 address');

    expect((await k(['apply', '-f', '-'], { input: SLICE })).stdout).toContain('created');
    const immutable = await k(
      ['patch', 'endpointslice', 'manual-1', '--type=merge', '-p', '{"addressType":"FQDN","endpoints":[{"addresses":["a.example.com"]}]}'],
      {
        expectFail: true,
      },
    );
    expect(immutable.stderr).toContain('addressType: Invalid value: "FQDN": field is immutable');
    await k(['delete', 'endpointslice', 'manual-1']);
  });
});

describe('endpointslicemirroring', () => {
  it("mirrors a selector-less Service's Endpoints into a slice that follows it, for describe service and describe ingress", async () => {
    await k(['apply', '-f', '-'], { input: SERVICE });
    await k(['apply', '-f', '-'], { input: ENDPOINTS });
    const row = await waitFor('a mirrored slice', async () => {
      const out = await mirrored();
      return out.includes('10.2.0.1') ? out : undefined;
    });
    expect(row).toMatch(/^ext-[a-z0-9]{5}\s+IPv4\s+8080\s+10\.2\.0\.1,10\.2\.0\.2\s+\d+s$/m);
    const slice = JSON.parse((await k(['get', 'endpointslices', '-l', 'kubernetes.io/service-name=ext', '-o', 'json'])).stdout).items[0];
    expect(slice.metadata.labels).toEqual({
      team: 'edge',
      'kubernetes.io/service-name': 'ext',
      'endpointslice.kubernetes.io/managed-by': 'endpointslicemirroring-controller.k8s.io',
    });
    expect(slice.metadata.ownerReferences).toMatchObject([{ apiVersion: 'v1', kind: 'Endpoints', name: 'ext', controller: true }]);
    expect(slice.endpoints).toEqual([
      { addresses: ['10.2.0.1'], conditions: { ready: true } },
      { addresses: ['10.2.0.2'], conditions: { ready: false } },
    ]);
    expect(slice.ports).toEqual([{ name: 'http', port: 8080, protocol: 'TCP' }]);

    expect((await k(['describe', 'service', 'ext'])).stdout).toMatch(/Endpoints:\s+10\.2\.0\.1:8080/);
    await k(['apply', '-f', '-'], { input: INGRESS });
    const ing = (await k(['describe', 'ingress', 'ext'])).stdout;
    expect(ing).not.toContain('<error');
    expect(ing).toMatch(/Default backend:\s+ext:80 \(10\.2\.0\.1:8080\)/);

    // The slice follows the Endpoints, keeping its name.
    await k(['patch', 'endpoints', 'ext', '--type=json', '-p', '[{"op":"add","path":"/subsets/0/addresses/-","value":{"ip":"10.2.0.3"}}]']);
    const followed = await waitFor('the new address', async () => {
      const out = await mirrored();
      return out.includes('10.2.0.3') ? out : undefined;
    });
    expect(followed.split(/\s+/)[0]).toBe(slice.metadata.name);
    // A slice edited by hand is set right again.
    await k(['label', 'endpointslice', slice.metadata.name, 'team=other', '--overwrite']);
    await waitFor(
      'the label restored',
      async () => (await k(['get', 'endpointslice', slice.metadata.name, '-o', 'jsonpath={.metadata.labels.team}'])).stdout === 'edge',
    );

    // Deleting the Endpoints deletes its slices.
    await k(['delete', 'endpoints', 'ext']);
    await waitFor('no mirrored slice', async () => (await mirrored()) === '');
    await k(['delete', 'ingress', 'ext']);
  });

  it('does not mirror Services with a selector or Endpoints marked skip-mirror, cleans up when a selector appears, and goes with the Service', async () => {
    await k(['apply', '-f', '-'], { input: ENDPOINTS });
    await waitFor('a mirrored slice', async () => (await mirrored()).includes('10.2.0.1'));
    await k(['patch', 'service', 'ext', '--type=merge', '-p', '{"spec":{"selector":{"app":"ext"}}}']);
    await waitFor('no mirrored slice', async () => (await mirrored()) === '');

    // With a selector the endpoints controller keeps the Endpoints (no pod: no address); once the
    // selector is gone again, they are the user's to write.
    await waitFor('the Endpoints emptied', async () => (await k(['get', 'endpoints', 'ext', '-o', 'jsonpath={.subsets}'])).stdout === '');
    // ...with the Service's labels (it has none) in place of those the user wrote.
    expect(JSON.parse((await k(['get', 'endpoints', 'ext', '-o', 'json'])).stdout).metadata.labels ?? {}).toEqual({});
    await k(['patch', 'service', 'ext', '--type=json', '-p', '[{"op":"remove","path":"/spec/selector"}]']);
    await k(['apply', '-f', '-'], { input: ENDPOINTS });
    await waitFor('a mirrored slice again', async () => (await mirrored()).includes('10.2.0.1'));
    await k(['label', 'endpoints', 'ext', 'endpointslice.kubernetes.io/skip-mirror=true']);
    await waitFor('no mirrored slice', async () => (await mirrored()) === '');

    await k(['label', 'endpoints', 'ext', 'endpointslice.kubernetes.io/skip-mirror-']);
    await waitFor('a mirrored slice again', async () => (await mirrored()).includes('10.2.0.1'));
    // Deleting the Service deletes its Endpoints (the endpoints controller), and so the mirrored slices.
    await k(['delete', 'service', 'ext']);
    await waitFor('no Endpoints', async () => (await k(['get', 'endpoints', 'ext', '--ignore-not-found', '-o', 'name'])).stdout.trim() === '');
    await waitFor('no mirrored slice', async () => (await mirrored()) === '');
  });
});
