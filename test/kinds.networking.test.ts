/**
 * networking.k8s.io/v1 Ingress, IngressClass and NetworkPolicy end to end with real kubectl, as
 * stored kinds (no ingress controller, no network plugin): `kubectl create ingress` with
 * `--rule` (a protobuf body), the columns of `get ing -o wide`, the Ingress status written
 * through /status only, `apply` of an IngressClass and a NetworkPolicy with Kubernetes'
 * defaults, the DefaultIngressClass admission plugin, `explain`, refusals with Kubernetes'
 * messages, `describe` and `delete`.
 */
import { jest } from '@jest/globals';
import { kubectl, startServer, type ServerHandle } from './support/server.js';

jest.setTimeout(180_000);

let server: ServerHandle;

beforeAll(async () => {
  server = await startServer();
});

afterAll(async () => {
  await server?.cleanup();
});

const k = (args: string[], opts: { input?: string; expectFail?: boolean } = {}) => kubectl(server, args, opts);

const INGRESS_CLASS = `apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  name: nginx
  annotations:
    ingressclass.kubernetes.io/is-default-class: "true"
spec:
  controller: k8s.io/ingress-nginx
  parameters:
    apiGroup: k8s.example.com
    kind: IngressParameters
    name: external-lb
`;

const NETWORK_POLICY = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: db
spec:
  podSelector:
    matchLabels:
      role: db
  ingress:
  - from:
    - ipBlock:
        cidr: 172.17.0.0/16
        except:
        - 172.17.1.0/24
    - namespaceSelector:
        matchLabels:
          project: myproject
    ports:
    - port: 6379
  egress:
  - to:
    - ipBlock:
        cidr: 10.0.0.0/24
    ports:
    - protocol: UDP
      port: 53
`;

const PATHLESS = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: pathless
spec:
  rules:
  - http:
      paths:
      - path: /
        backend:
          service:
            name: web
            port:
              number: 80
`;

describe('Ingress', () => {
  it('is created from --rule, listed with its columns, its status written through /status only, and deleted', async () => {
    const created = await k(['create', 'ingress', 'simple', '--rule=foo.com/bar=svc1:8080,tls=my-cert', '--rule=*.example.com/*=svc2:http']);
    expect(created.stdout).toContain('ingress.networking.k8s.io/simple created');

    const wide = (await k(['get', 'ing', '-o', 'wide'])).stdout;
    expect(wide).toMatch(/^NAME\s+CLASS\s+HOSTS\s+ADDRESS\s+PORTS\s+AGE$/m);
    expect(wide).toMatch(/^simple\s+<none>\s+foo\.com,\*\.example\.com\s+80, 443\s+\d+s$/m);

    const yaml = (await k(['get', 'ingress', 'simple', '-o', 'yaml'])).stdout;
    expect(yaml).toMatch(/pathType: Exact/);
    expect(yaml).toMatch(/pathType: Prefix/);
    expect(yaml).toMatch(/path: \/bar/);
    expect(yaml).toMatch(/secretName: my-cert/);
    expect(yaml).toMatch(/generation: 1/);
    expect(yaml).toMatch(/status:\n {2}loadBalancer: \{\}/);

    // The main resource keeps the status; /status writes it.
    await k(['patch', 'ing', 'simple', '--type=merge', '-p', '{"status":{"loadBalancer":{"ingress":[{"ip":"1.1.1.1"}]}}}']);
    expect((await k(['get', 'ing', 'simple', '-o', 'jsonpath={.status.loadBalancer}'])).stdout).toBe('{}');
    const status = '{"status":{"loadBalancer":{"ingress":[{"ip":"203.0.113.9"},{"hostname":"lb.example.com"}]}}}';
    await k(['patch', 'ing', 'simple', '--subresource=status', '--type=merge', '-p', status]);
    expect((await k(['get', 'ing', 'simple'])).stdout).toMatch(/^simple\s+<none>\s+foo\.com,\*\.example\.com\s+203\.0\.113\.9,lb\.example\.com\s+80, 443\s/m);
    const badIP = await k(['patch', 'ing', 'simple', '--subresource=status', '--type=merge', '-p', '{"status":{"loadBalancer":{"ingress":[{"ip":"bad"}]}}}'], {
      expectFail: true,
    });
    expect(badIP.stderr).toContain('status.loadBalancer.ingress[0].ip: Invalid value: "bad": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)');

    const spec = '{"spec":{"tls":null}}';
    await k(['patch', 'ing', 'simple', '--type=merge', '-p', spec]);
    expect((await k(['get', 'ing', 'simple', '-o', 'jsonpath={.metadata.generation}'])).stdout).toBe('2');

    expect((await k(['describe', 'ingress', 'simple'])).stdout).toMatch(/Name:\s+simple[\s\S]*Rules:[\s\S]*foo\.com[\s\S]*\/bar\s+svc1:8080/);
    expect((await k(['explain', 'ingress.spec.rules'])).stdout).toMatch(
      /GROUP:\s+networking\.k8s\.io\nKIND:\s+Ingress\nVERSION:\s+v1[\s\S]*FIELD: rules <\[\]IngressRule>[\s\S]*http\s+<HTTPIngressRuleValue>/,
    );
    expect((await k(['delete', 'ing', 'simple'])).stdout).toContain('ingress.networking.k8s.io "simple" deleted');
  });

  it('is refused with Kubernetes messages', async () => {
    const ip = await k(['create', 'ingress', 'byip', '--rule=1.2.3.4/=svc:80'], { expectFail: true });
    expect(ip.stderr).toContain(
      'Ingress.networking.k8s.io "byip" is invalid: spec.rules[0].host: Invalid value: "1.2.3.4": must be a DNS name, not an IP address',
    );
    const pathless = await k(['apply', '-f', '-'], { input: PATHLESS, expectFail: true });
    expect(pathless.stderr).toContain('spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified');
    const relative = await k(['apply', '-f', '-'], { input: PATHLESS.replace('path: /', 'pathType: Prefix\n        path: api'), expectFail: true });
    expect(relative.stderr).toContain('spec.rules[0].http.paths[0].path: Invalid value: "api": must be an absolute path');
    const noPort = await k(['apply', '-f', '-'], {
      input: PATHLESS.replace('path: /', 'pathType: Prefix\n        path: /').replace(/ {10}port:\n {14}number: 80\n/, ''),
      expectFail: true,
    });
    expect(noPort.stderr).toContain('spec.rules[0].http.paths[0].backend: Required value: port name or number is required');
  });
});

describe('IngressClass and NetworkPolicy', () => {
  it('are applied with their defaults and columns, and the default class is given to new Ingresses', async () => {
    expect((await k(['apply', '-f', '-'], { input: INGRESS_CLASS })).stdout).toContain('ingressclass.networking.k8s.io/nginx created');
    expect((await k(['get', 'ingressclass'])).stdout).toMatch(
      /^NAME\s+CONTROLLER\s+PARAMETERS\s+AGE\nnginx\s+k8s\.io\/ingress-nginx\s+IngressParameters\.k8s\.example\.com\/external-lb\s+\d+s$/m,
    );
    expect((await k(['get', 'ingressclass', 'nginx', '-o', 'jsonpath={.spec.parameters.scope}'])).stdout).toBe('Cluster');
    const immutable = await k(['patch', 'ingressclass', 'nginx', '--type=merge', '-p', '{"spec":{"controller":"example.com/other"}}'], { expectFail: true });
    expect(immutable.stderr).toContain('spec.controller: Invalid value: "example.com/other": field is immutable');

    expect((await k(['create', 'ingress', 'classless', '--default-backend=web:80'])).stdout).toContain('created');
    expect((await k(['get', 'ing', 'classless', '-o', 'jsonpath={.spec.ingressClassName}'])).stdout).toBe('nginx');
    expect((await k(['get', 'ing', 'classless'])).stdout).toMatch(/^classless\s+nginx\s+\*\s+80\s+\d+s$/m);

    expect((await k(['apply', '-f', '-'], { input: NETWORK_POLICY })).stdout).toContain('networkpolicy.networking.k8s.io/db created');
    expect((await k(['get', 'netpol'])).stdout).toMatch(/^NAME\s+POD-SELECTOR\s+AGE\ndb\s+role=db\s+\d+s$/m);
    const policyTypes = (await k(['get', 'netpol', 'db', '-o', 'jsonpath={.spec.policyTypes} {.spec.ingress[0].ports[0].protocol}'])).stdout;
    expect(policyTypes).toBe('["Ingress","Egress"] TCP');
    expect((await k(['apply', '--server-side', '--force-conflicts', '-f', '-'], { input: NETWORK_POLICY.replace('port: 53', 'port: 54') })).stdout).toContain(
      'serverside-applied',
    );
    expect((await k(['get', 'netpol', 'db', '-o', 'jsonpath={.metadata.generation} {.spec.egress[0].ports[0].port}'])).stdout).toBe('2 54');
    expect((await k(['describe', 'netpol', 'db'])).stdout).toMatch(/PodSelector:\s+role=db[\s\S]*CIDR: 172\.17\.0\.0\/16[\s\S]*Policy Types: Ingress, Egress/);
    expect((await k(['explain', 'networkpolicy.spec.policyTypes'])).stdout).toMatch(/KIND:\s+NetworkPolicy/);

    const outside = await k(['apply', '-f', '-'], {
      input: NETWORK_POLICY.replace('name: db', 'name: bad').replace('172.17.1.0/24', '10.1.0.0/24'),
      expectFail: true,
    });
    expect(outside.stderr).toContain('spec.ingress[0].from[0].ipBlock.except[0]: Invalid value: "10.1.0.0/24": must be a strict subset of `cidr`');
    const endPort = await k(['apply', '-f', '-'], {
      input: NETWORK_POLICY.replace('name: db', 'name: bad').replace('port: 53', 'port: dns\n      endPort: 60'),
      expectFail: true,
    });
    expect(endPort.stderr).toContain('spec.egress[0].ports[0].endPort: Invalid value: 60: may not be specified when `port` is non-numeric');

    expect((await k(['delete', 'ing', 'classless'])).stdout).toContain('deleted');
    expect((await k(['delete', 'netpol', 'db'])).stdout).toContain('networkpolicy.networking.k8s.io "db" deleted');
    expect((await k(['delete', 'ingressclass', 'nginx'])).stdout).toContain('ingressclass.networking.k8s.io "nginx" deleted');
    expect((await k(['get', 'netpol,ing'])).stderr).toContain('No resources found');
  });
});
