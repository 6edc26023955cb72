/**
 * CustomResourceDefinitions on one node, driven by real kubectl and @kubernetes/client-node: a
 * definition is accepted and Established, its resource is discovered, described by OpenAPI,
 * validated, pruned and defaulted by its schema, printed with its columns, split into /status
 * and /scale, applied server-side, served at several versions, kept across a restart, and
 * removed with its objects when the definition is deleted.
 */
import { jest } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import { kubectl, request, startServer, type ServerHandle } from './support/server.js';

jest.setTimeout(120_000);

type Obj = Record<string, unknown>;
let server: ServerHandle;
const k = (args: string[], opts: { input?: string; expectFail?: boolean } = {}) => kubectl(server, args, opts);

const CRONTAB_CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names:
    plural: crontabs
    singular: crontab
    kind: CronTab
    shortNames: [ct]
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              cronSpec:
                type: string
                pattern: '^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$'
                description: The schedule, in cron format.
              image: {type: string}
              policy: {type: string, pattern: '^(?i)(abort|warn)?$'}
              replicas: {type: integer, minimum: 1, maximum: 10, default: 1}
          status:
            type: object
            properties:
              replicas: {type: integer}
              labelSelector: {type: string}
              conditions: {type: array, items: {type: object, x-kubernetes-preserve-unknown-fields: true}}
    subresources:
      status: {}
      scale:
        specReplicasPath: .spec.replicas
        statusReplicasPath: .status.replicas
        labelSelectorPath: .status.labelSelector
    additionalPrinterColumns:
    - {name: Spec, type: string, jsonPath: .spec.cronSpec}
    - {name: Replicas, type: integer, jsonPath: .spec.replicas}
    - {name: Ready, type: string, jsonPath: '.status.conditions[?(@.type=="Ready")].status'}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
`;

const cronTab = (name: string, spec: Obj, ns = 'crs'): string =>
  JSON.stringify({ apiVersion: 'stable.example.com/v1', kind: 'CronTab', metadata: { name, namespace: ns }, spec });

async function applyCrd(manifest: string, name: string): Promise<Obj> {
  await k(['apply', '-f', '-'], { input: manifest });
  await k(['wait', '--for', 'condition=established', '--timeout=30s', `crd/${name}`]);
  return JSON.parse((await k(['get', 'crd', name, '-o', 'json'])).stdout) as Obj;
}

/** A namespaced definition with one version, v1, whose `spec` has the given schema, as JSON. */
function oneVersionCrd(group: string, names: Obj, spec: Obj): string {
  return JSON.stringify({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${String(names.plural)}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names,
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec } } } }],
    },
  });
}

beforeAll(async () => {
  server = await startServer();
  await k(['create', 'ns', 'crs']);
});

afterAll(async () => {
  await server?.cleanup();
});

describe('CustomResourceDefinition', () => {
  it('is accepted and Established, with the storage version stored, and listed by kubectl', async () => {
    const crd = await applyCrd(CRONTAB_CRD, 'crontabs.stable.example.com');
    const status = crd.status as Obj;
    expect(status.acceptedNames).toEqual({ plural: 'crontabs', singular: 'crontab', shortNames: ['ct'], kind: 'CronTab', listKind: 'CronTabList' });
    expect(status.storedVersions).toEqual(['v1']);
    const conds = Object.fromEntries((status.conditions as Obj[]).map((c) => [c.type, [c.status, c.reason, c.message]]));
    expect(conds.NamesAccepted).toEqual(['True', 'NoConflicts', 'no conflicts found']);
    expect(conds.Established).toEqual(['True', 'InitialNamesAccepted', 'the initial names have been accepted']);
    // Its group-version has a local APIService, as kube's crd-autoregistration makes.
    let apiService: Obj | undefined;
    for (let i = 0; i < 100 && !apiService; i++) {
      const r = await request(server, 'GET', '/apis/apiregistration.k8s.io/v1/apiservices/v1.stable.example.com');
      if (r.status === 200) apiService = r.json<Obj>();
      else await new Promise((res) => setTimeout(res, 100));
    }
    expect(apiService).toMatchObject({
      metadata: { labels: { 'kube-aggregator.kubernetes.io/automanaged': 'true' } },
      spec: { group: 'stable.example.com', version: 'v1', groupPriorityMinimum: 1000, versionPriority: 100 },
    });
    const table = (await k(['get', 'crd'])).stdout;
    expect(table).toMatch(/^NAME\s+CREATED AT\n/);
    expect(table).toMatch(/crontabs\.stable\.example\.com\s+\d{4}-\d\d-\d\dT/);
  });

  it('serves the resource: discovery, OpenAPI (kubectl explain), defaults and printer columns', async () => {
    const rl = (await request(server, 'GET', '/apis/stable.example.com/v1')).json<{ resources: Obj[] }>();
    expect(rl.resources.map((r) => r.name).sort()).toEqual(['crontabs', 'crontabs/scale', 'crontabs/status']);
    expect(rl.resources.find((r) => r.name === 'crontabs')).toMatchObject({ kind: 'CronTab', namespaced: true, shortNames: ['ct'], singularName: 'crontab' });
    expect((await k(['explain', 'crontab.spec.cronSpec'])).stdout).toContain('The schedule, in cron format.');

    await k(['apply', '-f', '-'], { input: cronTab('nightly', { cronSpec: '0 3 * * *', image: 'backup:1' }) });
    const obj = JSON.parse((await k(['get', 'ct', 'nightly', '-n', 'crs', '-o', 'json'])).stdout) as Obj;
    expect(obj.spec).toEqual({ cronSpec: '0 3 * * *', image: 'backup:1', replicas: 1 });
    expect((obj.metadata as Obj).generation).toBe(1);
    await request(server, 'PATCH', '/apis/stable.example.com/v1/namespaces/crs/crontabs/nightly/status', {
      body: { status: { conditions: [{ type: 'Ready', status: 'True' }] } },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    const out = (await k(['get', 'ct', '-n', 'crs'])).stdout.split('\n');
    expect(out[0]).toMatch(/^NAME\s+SPEC\s+REPLICAS\s+READY\s+AGE$/);
    expect(out[1]).toMatch(/^nightly\s+0 3 \* \* \*\s+1\s+True\s+\d+s$/);
  });

  it('validates objects against the schema with field paths, refuses unknown fields under Strict and prunes them otherwise', async () => {
    // RE2's flag group in a pattern: case-insensitive, as Kubernetes evaluates it.
    await k(['apply', '-f', '-'], { input: cronTab('flags', { cronSpec: '* * * * *', policy: 'Warn' }) });
    const flags = await k(['apply', '-f', '-'], { input: cronTab('flags2', { cronSpec: '* * * * *', policy: 'stop' }), expectFail: true });
    expect(flags.stderr).toContain("spec.policy in body should match '^(?i)(abort|warn)?$'");
    const bad = await k(['apply', '-f', '-'], { input: cronTab('bad', { cronSpec: 'never', replicas: 20 }), expectFail: true });
    expect(bad.stderr).toContain('The CronTab "bad" is invalid');
    expect(bad.stderr).toContain('spec.cronSpec: Invalid value: "never"');
    expect(bad.stderr).toContain('spec.replicas: Invalid value: 20: spec.replicas in body should be less than or equal to 10');
    const strict = await k(['apply', '-f', '-'], { input: cronTab('extra', { cronSpec: '* * * * *', color: 'red' }), expectFail: true });
    expect(strict.stderr).toContain('strict decoding error: unknown field "spec.color"');
    await k(['apply', '--validate=false', '-f', '-'], { input: cronTab('extra', { cronSpec: '* * * * *', color: 'red' }) });
    const obj = JSON.parse((await k(['get', 'ct', 'extra', '-n', 'crs', '-o', 'json'])).stdout) as Obj;
    expect(obj.spec).toEqual({ cronSpec: '* * * * *', replicas: 1 });
  });

  it('reports a value of the wrong type as the schema does (422) without running CEL rules on it, drops nulls and selects by selectable fields', async () => {
    const shirts = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: shirts.stable.example.com}
spec:
  group: stable.example.com
  scope: Namespaced
  names: {plural: shirts, kind: Shirt}
  versions:
  - name: v1
    served: true
    storage: true
    selectableFields: [{jsonPath: .spec.color}]
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations: [{rule: "!has(self.size) || self.size > 0", message: size must be positive}]
            properties:
              color: {type: string}
              size: {type: integer}
          status: {type: object, x-kubernetes-preserve-unknown-fields: true}
`;
    const made = await k(['apply', '-f', '-'], { input: shirts });
    expect(made.stderr).not.toContain('Warning');
    await k(['wait', '--for', 'condition=established', '--timeout=30s', 'crd/shirts.stable.example.com']);
    const shirt = (name: string, spec: Obj) =>
      JSON.stringify({ apiVersion: 'stable.example.com/v1', kind: 'Shirt', metadata: { name, namespace: 'crs' }, spec });
    const wrong = await k(['create', '-f', '-'], { input: shirt('wrong', { size: 'big' }), expectFail: true });
    expect(wrong.stderr).toContain('The Shirt "wrong" is invalid:');
    expect(wrong.stderr).toContain('spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"');
    // kube's hasBlockingErr: the rules are not shown an object of the wrong shape.
    expect(wrong.stderr).toContain(
      '<nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
    );
    const zero = await k(['create', '-f', '-'], { input: shirt('zero', { size: 0 }), expectFail: true });
    expect(zero.stderr).toContain('The Shirt "zero" is invalid: spec: Invalid value: "object": size must be positive');
    await k(['create', '-f', '-'], { input: shirt('red', { color: 'red', size: null }) });
    await k(['create', '-f', '-'], { input: shirt('blue', { color: 'blue', size: 2 }) });
    expect(JSON.parse((await k(['get', 'shirt', 'red', '-n', 'crs', '-o', 'json'])).stdout).spec).toEqual({ color: 'red' });
    expect((await k(['get', 'shirts', '-n', 'crs', '--field-selector', 'spec.color=blue', '-o', 'name'])).stdout.trim()).toBe('shirt.stable.example.com/blue');
    const unknown = await request(server, 'GET', '/apis/stable.example.com/v1/namespaces/crs/shirts?fieldSelector=spec.size%3D2');
    expect(unknown.status).toBe(400);
    // Without /status, any change but metadata bumps the generation (status included); metadata alone does not.
    const merge = { 'content-type': 'application/merge-patch+json' };
    const path = '/apis/stable.example.com/v1/namespaces/crs/shirts/blue';
    const gen = async (body: Obj) => (await request(server, 'PATCH', path, { body, headers: merge })).json<{ metadata: Obj }>().metadata.generation;
    expect(await gen({ metadata: { labels: { a: 'b' } } })).toBe(1);
    expect(await gen({ status: { worn: true } })).toBe(2);
    expect(await gen({ spec: { size: 3 } })).toBe(3);
  });

  it('evaluates CEL rules (x-kubernetes-validations): compiled with the definition, run on create, update and /status, transition rules and ratcheting', async () => {
    const def = (rules: string) => `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: pools.stable.example.com}
spec:
  group: stable.example.com
  scope: Namespaced
  names: {plural: pools, kind: Pool}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-validations:
        - {rule: "self.metadata.name.startsWith('pool-')", message: "the name must start with pool-"}
        properties:
          spec:
            type: object
            x-kubernetes-validations: ${rules}
            properties:
              min: {type: integer}
              max: {type: integer}
              zone: {type: string, x-kubernetes-validations: [{rule: "self == oldSelf", message: "zone is immutable"}]}
              tier: {type: string}
          status:
            type: object
            properties:
              used: {type: integer}
            x-kubernetes-validations: [{rule: "self.used >= 0", message: "used cannot be negative", fieldPath: ".used"}]
`;
    const bad = await k(['apply', '-f', '-'], { input: def('[{rule: "self.minimum <= self.max"}]'), expectFail: true });
    expect(bad.stderr).toContain('The CustomResourceDefinition "pools.stable.example.com" is invalid');
    expect(bad.stderr).toContain(
      'spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: apiextensions.ValidationRule{Rule:"self.minimum <= self.max"',
    );
    expect(bad.stderr).toContain("compilation failed: ERROR: <input>:1:5: undefined field 'minimum'");
    await k(['apply', '-f', '-'], {
      input: def("[{rule: \"self.min <= self.max\", messageExpression: \"'min (' + string(self.min) + ') must not exceed max (' + string(self.max) + ')'\"}]"),
    });
    await k(['wait', '--for', 'condition=established', '--timeout=30s', 'crd/pools.stable.example.com']);
    const pool = (name: string, spec: Obj) => JSON.stringify({ apiVersion: 'stable.example.com/v1', kind: 'Pool', metadata: { name, namespace: 'crs' }, spec });
    const over = await k(['create', '-f', '-'], { input: pool('pool-a', { min: 5, max: 2, zone: 'a' }), expectFail: true });
    expect(over.stderr).toContain('The Pool "pool-a" is invalid: spec: Invalid value: "object": min (5) must not exceed max (2)');
    const named = await k(['create', '-f', '-'], { input: pool('other', { min: 1, max: 2 }), expectFail: true });
    expect(named.stderr).toContain('The Pool "other" is invalid: <nil>: Invalid value: "object": the name must start with pool-');
    await k(['create', '-f', '-'], { input: pool('pool-a', { min: 1, max: 2, zone: 'a' }) });
    // A transition rule: the zone cannot change; other fields can.
    const moved = await k(['patch', 'pool', 'pool-a', '-n', 'crs', '--type=merge', '-p', '{"spec":{"zone":"b"}}'], { expectFail: true });
    expect(moved.stderr).toContain('The Pool "pool-a" is invalid: spec.zone: Invalid value: "string": zone is immutable');
    await k(['patch', 'pool', 'pool-a', '-n', 'crs', '--type=merge', '-p', '{"spec":{"max":3}}']);
    // The rules run on /status writes, at the rule's fieldPath.
    const negative = await k(['patch', 'pool', 'pool-a', '-n', 'crs', '--subresource=status', '--type=merge', '-p', '{"status":{"used":-1}}'], {
      expectFail: true,
    });
    expect(negative.stderr).toContain('The Pool "pool-a" is invalid: status.used: Invalid value: "object": used cannot be negative');
    await k(['patch', 'pool', 'pool-a', '-n', 'crs', '--subresource=status', '--type=merge', '-p', '{"status":{"used":1}}']);
    // Ratcheting: a rule added later does not block updates that leave the failing value alone,
    // it warns of it.
    const merge = { 'content-type': 'application/merge-patch+json' };
    const poolPath = '/apis/stable.example.com/v1/namespaces/crs/pools/pool-a';
    expect((await request(server, 'PATCH', poolPath, { body: { spec: { tier: 'silver' } }, headers: merge })).status).toBe(200);
    await k(['apply', '-f', '-'], {
      input: def(
        '[{rule: "self.min <= self.max", message: "min must not exceed max"}, {rule: "!has(self.tier) || self.tier == \'gold\'", message: "only gold"}]',
      ),
    });
    let kept = await k(['label', 'pool', 'pool-a', '-n', 'crs', 'a=1']);
    for (let i = 2; !kept.stderr.includes('only gold') && i < 50; i++) {
      await new Promise((r) => setTimeout(r, 100));
      kept = await k(['label', 'pool', 'pool-a', '-n', 'crs', `a=${i}`]);
    }
    expect(kept.stderr).toContain('Warning: spec: Invalid value: "object": only gold');
    const changed = await k(['patch', 'pool', 'pool-a', '-n', 'crs', '--type=merge', '-p', '{"spec":{"tier":"bronze"}}'], { expectFail: true });
    expect(changed.stderr).toContain('The Pool "pool-a" is invalid: spec: Invalid value: "object": only gold');
    await k(['patch', 'pool', 'pool-a', '-n', 'crs', '--type=merge', '-p', '{"spec":{"tier":"gold"}}']);
    await k(['delete', 'crd', 'pools.stable.example.com', '--timeout=60s']);
  });

  it("runs rules that use kube's CEL libraries: quantity, url, ip and cidr, format, semver, sets, math, lists, regex, timestamps, two-variable comprehensions", async () => {
    const rules = [
      ["quantity(self.memory).isLessThan(quantity('4Gi'))", "'memory ' + self.memory + ' is not below 4Gi'"],
      ["isURL(self.endpoint) && url(self.endpoint).getScheme() == 'https'", "'endpoint must be an https URL'"],
      [
        'cidr(self.subnet).containsIP(self.gateway) && ip(self.gateway).family() == 4',
        "'gateway ' + self.gateway + ' is not an IPv4 address in ' + self.subnet",
      ],
      ['!format.dns1123Label().validate(self.host).hasValue()', "'host: ' + format.dns1123Label().validate(self.host).value().join(', ')"],
      ["isSemver(self.version) && semver(self.version).isGreaterThan(semver('1.2.0'))", "'version must be above 1.2.0'"],
      ["sets.contains(['a', 'b', 'c'], self.zones)", "'zones must be among a, b, c'"],
      ['math.greatest(self.ports) <= 9000 && self.ports.distinct().size() == self.ports.size()', "'ports must be distinct and at most 9000'"],
      ['self.limits.all(k, v, v.startsWith(k))', "'each limit must start with its key: ' + '%s'.format([self.limits])"],
      ["self.host.findAll('[0-9]+').size() <= 1 && self.endpoint.find(':[0-9]+') != ':0'", "'host numbers: ' + self.host.findAll('[0-9]+').join(', ')"],
      ["self.since < timestamp('2030-01-01T00:00:00Z') && self.since.getFullYear() >= 2020", "'since ' + string(self.since) + ' is not in the 2020s'"],
    ];
    await k(['apply', '-f', '-'], {
      input: oneVersionCrd(
        'libs.example.com',
        { plural: 'nets', kind: 'Net' },
        {
          type: 'object',
          'x-kubernetes-validations': rules.map(([rule, messageExpression]) => ({ rule, messageExpression })),
          properties: {
            memory: { type: 'string' },
            endpoint: { type: 'string' },
            subnet: { type: 'string' },
            gateway: { type: 'string' },
            host: { type: 'string' },
            version: { type: 'string' },
            zones: { type: 'array', items: { type: 'string' } },
            ports: { type: 'array', items: { type: 'integer' } },
            limits: { type: 'object', additionalProperties: { type: 'string' } },
            since: { type: 'string', format: 'date-time' },
          },
        },
      ),
    });
    await k(['wait', '--for', 'condition=established', '--timeout=30s', 'crd/nets.libs.example.com']);
    const good = {
      memory: '512Mi',
      endpoint: 'https://example.com:8443/api',
      subnet: '10.0.0.0/24',
      gateway: '10.0.0.1',
      host: 'gw-1',
      version: '1.10.0',
      zones: ['a', 'c'],
      ports: [80, 443],
      limits: { cpu: 'cpu-2', mem: 'mem-1' },
      since: '2025-06-01T12:00:00Z',
    };
    const net = (name: string, spec: Obj) => JSON.stringify({ apiVersion: 'libs.example.com/v1', kind: 'Net', metadata: { name, namespace: 'crs' }, spec });
    await k(['create', '-f', '-'], { input: net('good', good) });
    const bad = await k(['create', '-f', '-'], {
      input: net('bad', {
        memory: '8Gi',
        endpoint: 'ftp://example.com',
        subnet: '10.0.0.0/24',
        gateway: '10.0.1.1',
        host: 'Gateway_1_22',
        version: '1.1.9',
        zones: ['a', 'z'],
        ports: [80, 80],
        limits: { cpu: 'x' },
        since: '2031-01-01T00:00:00.5Z',
      }),
      expectFail: true,
    });
    for (const message of [
      'memory 8Gi is not below 4Gi',
      'endpoint must be an https URL',
      'gateway 10.0.1.1 is not an IPv4 address in 10.0.0.0/24',
      "host: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'",
      'version must be above 1.2.0',
      'zones must be among a, b, c',
      'ports must be distinct and at most 9000',
      'each limit must start with its key: {"cpu":"x"}',
      'host numbers: 1, 22',
      'since 2031-01-01T00:00:00.5Z is not in the 2020s',
    ])
      expect(bad.stderr).toContain(message);
    await k(['delete', 'crd', 'nets.libs.example.com', '--timeout=60s']);
  });

  it('splits /status from the main resource, and scales through /scale', async () => {
    const path = '/apis/stable.example.com/v1/namespaces/crs/crontabs/scaled';
    const created = await request(server, 'POST', '/apis/stable.example.com/v1/namespaces/crs/crontabs', {
      body: { apiVersion: 'stable.example.com/v1', kind: 'CronTab', metadata: { name: 'scaled' }, spec: { cronSpec: '* * * * *' }, status: { replicas: 9 } },
    });
    expect(created.status).toBe(201);
    expect(created.json<Obj>().status).toBeUndefined();
    const merge = { 'content-type': 'application/merge-patch+json' };
    const st = await request(server, 'PATCH', `${path}/status`, {
      body: { spec: { image: 'ignored' }, status: { replicas: 2, labelSelector: 'app=cron' } },
      headers: merge,
    });
    expect(st.status).toBe(200);
    expect(st.json<Obj>().spec).toEqual({ cronSpec: '* * * * *', replicas: 1 });
    const main = await request(server, 'PATCH', path, { body: { spec: { replicas: 4 }, status: { replicas: 7 } }, headers: merge });
    expect(main.json<Obj>()).toMatchObject({ spec: { replicas: 4 }, status: { replicas: 2 }, metadata: { generation: 2 } });
    expect((await k(['scale', 'ct', 'scaled', '-n', 'crs', '--replicas=6'])).stdout).toContain('crontab.stable.example.com/scaled scaled');
    const scale = (await request(server, 'GET', `${path}/scale`)).json<Obj>();
    expect(scale).toMatchObject({ apiVersion: 'autoscaling/v1', kind: 'Scale', spec: { replicas: 6 }, status: { replicas: 2, selector: 'app=cron' } });
    const big = await request(server, 'PATCH', `${path}/scale`, { body: { spec: { replicas: 11 } }, headers: merge });
    expect(big.status).toBe(422);
    expect(big.json<Obj>().message).toContain('spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10');
  });

  it('takes server-side apply with field ownership, and is used through client-node', async () => {
    const r = await k(['apply', '--server-side', '-f', '-'], { input: cronTab('ssa', { cronSpec: '5 * * * *' }) });
    expect(r.stdout).toContain('crontab.stable.example.com/ssa serverside-applied');
    const obj = JSON.parse((await k(['get', 'ct', 'ssa', '-n', 'crs', '-o', 'json', '--show-managed-fields'])).stdout) as Obj;
    const mf = (obj.metadata as Obj).managedFields as Obj[];
    expect(mf[0]).toMatchObject({ manager: 'kubectl', operation: 'Apply', apiVersion: 'stable.example.com/v1' });
    expect((mf[0].fieldsV1 as Obj)['f:spec']).toEqual({ 'f:cronSpec': {} });

    const kc = new k8s.KubeConfig();
    kc.loadFromFile(server.kubeconfig);
    const api = kc.makeApiClient(k8s.CustomObjectsApi);
    const list = (await api.listNamespacedCustomObject({ group: 'stable.example.com', version: 'v1', namespace: 'crs', plural: 'crontabs' })) as {
      items: Obj[];
    };
    expect(list.items.map((i) => (i.metadata as Obj).name)).toEqual(expect.arrayContaining(['nightly', 'ssa', 'scaled']));
    const made = (await api.createNamespacedCustomObject({
      group: 'stable.example.com',
      version: 'v1',
      namespace: 'crs',
      plural: 'crontabs',
      body: { apiVersion: 'stable.example.com/v1', kind: 'CronTab', metadata: { name: 'from-client-node' }, spec: { cronSpec: '1 1 * * *' } },
    })) as Obj;
    expect(made.spec).toEqual({ cronSpec: '1 1 * * *', replicas: 1 });
  });

  it('refuses malformed definitions with the field at fault', async () => {
    const base = (over: string) => `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: ${over.includes('NAME=') ? over.split('NAME=')[1]!.split('\n')[0] : 'gadgets.acme.io'}}
spec:
  group: acme.io
  scope: Namespaced
  names: {plural: gadgets, kind: Gadget}
${over.replace(/NAME=.*\n/, '')}`;
    const noSchema = await k(['apply', '-f', '-'], { input: base('  versions:\n  - {name: v1, served: true, storage: true}\n'), expectFail: true });
    expect(noSchema.stderr).toContain('spec.versions[0].schema.openAPIV3Schema: Required value: schemas are required');
    const twoStorage = await k(['apply', '-f', '-'], {
      input: base(
        '  versions:\n  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}\n  - {name: v2, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}\n',
      ),
      expectFail: true,
    });
    expect(twoStorage.stderr).toContain('must have exactly one version marked as storage version');
    const wrongName = await k(['apply', '-f', '-'], {
      input: base('NAME=gizmos.acme.io\n  versions:\n  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}\n'),
      expectFail: true,
    });
    expect(wrongName.stderr).toContain('metadata.name: Invalid value: "gizmos.acme.io": must be spec.names.plural+"."+spec.group');
    const untyped = await k(['apply', '-f', '-'], {
      input: base(
        '  versions:\n  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, properties: {spec: {description: x}}}}}\n',
      ),
      expectFail: true,
    });
    expect(untyped.stderr).toContain('spec.validation.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields');
    // What kube refuses in a schema beyond types: rules under allOf, list map keys that may be
    // missing, uniqueItems; per version when the versions' schemas differ.
    const refused = await k(['apply', '-f', '-'], {
      input: base(
        '  versions:\n' +
          '  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {a: {type: string}},' +
          ' allOf: [{x-kubernetes-validations: [{rule: "self.a != \'\'"}]}]}}}}}\n' +
          '  - {name: v2, served: true, storage: false, schema: {openAPIV3Schema: {type: object, properties: {ports: {type: array, x-kubernetes-list-type: map,' +
          ' x-kubernetes-list-map-keys: [port], items: {type: object, properties: {port: {type: integer}}}}, tags: {type: array, uniqueItems: true, items: {type: string}}}}}}\n',
      ),
      expectFail: true,
    });
    expect(refused.stderr).toContain(
      'spec.versions[0].schema.openAPIV3Schema.properties[spec].allOf[0].x-kubernetes-validations: Forbidden: must be empty to be structural',
    );
    expect(refused.stderr).toContain(
      'spec.versions[1].schema.openAPIV3Schema.properties[ports].items.properties[port].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property',
    );
    expect(refused.stderr).toContain(
      'spec.versions[1].schema.openAPIV3Schema.properties[tags].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic',
    );
    const prot = await request(server, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      body: {
        metadata: { name: 'things.example.k8s.io' },
        spec: {
          group: 'example.k8s.io',
          scope: 'Cluster',
          names: { plural: 'things', kind: 'Thing' },
          versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } }],
        },
      },
    });
    expect(prot.status).toBe(422);
    expect(prot.json<Obj>().message).toContain('protected groups must have approval annotation "api-approved.kubernetes.io"');
  });

  it('reports a names conflict with another definition of the group and does not serve it', async () => {
    const mk = (plural: string, kind: string) => `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: ${plural}.conflict.example.com}
spec:
  group: conflict.example.com
  scope: Cluster
  names: {plural: ${plural}, singular: ${plural.slice(0, -1)}, kind: ${kind}}
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
`;
    await applyCrd(mk('apples', 'Fruit'), 'apples.conflict.example.com');
    await k(['apply', '-f', '-'], { input: mk('pears', 'Fruit') });
    let names: Obj | undefined;
    for (let i = 0; i < 50 && !names; i++) {
      const crd = JSON.parse((await k(['get', 'crd', 'pears.conflict.example.com', '-o', 'json'])).stdout) as Obj;
      names = ((crd.status as Obj | undefined)?.conditions as Obj[] | undefined)?.find((c) => c.type === 'NamesAccepted');
      if (!names) await new Promise((r) => setTimeout(r, 100));
    }
    expect(names).toMatchObject({ status: 'False', reason: 'KindConflict', message: '"Fruit" is already in use' });
    expect((await request(server, 'GET', '/apis/conflict.example.com/v1/pears')).status).toBe(404);
    expect((await request(server, 'GET', '/apis/conflict.example.com/v1/apples')).status).toBe(200);
  });

  it('serves every served version of one stored set of objects, and follows a change of the storage version', async () => {
    const widgets = (storage: 'v1' | 'v1beta1') => `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.acme.io}
spec:
  group: acme.io
  scope: Cluster
  names: {plural: widgets, kind: Widget}
  versions:
  - {name: v1beta1, served: true, storage: ${storage === 'v1beta1'}, deprecated: true, schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, x-kubernetes-preserve-unknown-fields: true}}}}}
  - {name: v1, served: true, storage: ${storage === 'v1'}, schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, x-kubernetes-preserve-unknown-fields: true}}}}}
`;
    await applyCrd(widgets('v1beta1'), 'widgets.acme.io');
    const made = await k(['apply', '-f', '-'], {
      input: JSON.stringify({ apiVersion: 'acme.io/v1beta1', kind: 'Widget', metadata: { name: 'w1' }, spec: { a: { b: 1 } } }),
    });
    expect(made.stderr).toContain('acme.io/v1beta1 Widget is deprecated');
    expect((await request(server, 'GET', '/apis/acme.io')).json<Obj>().preferredVersion).toEqual({ groupVersion: 'acme.io/v1', version: 'v1' });
    const v1 = (await request(server, 'GET', '/apis/acme.io/v1/widgets/w1')).json<Obj>();
    expect([v1.apiVersion, v1.spec]).toEqual(['acme.io/v1', { a: { b: 1 } }]);
    const crd = await applyCrd(widgets('v1'), 'widgets.acme.io');
    expect((crd.status as Obj).storedVersions).toEqual(['v1beta1', 'v1']);
    for (const v of ['v1', 'v1beta1']) expect((await request(server, 'GET', `/apis/acme.io/${v}/widgets/w1`)).json<Obj>().apiVersion).toBe(`acme.io/${v}`);
    await request(server, 'PUT', '/apis/acme.io/v1/widgets/w1', { body: { ...v1, spec: { a: { b: 2 } } } });
    expect((await request(server, 'GET', '/apis/acme.io/v1beta1/widgets/w1')).json<Obj>()).toMatchObject({
      apiVersion: 'acme.io/v1beta1',
      spec: { a: { b: 2 } },
    });
  });

  it('defaults objects stored before a default was added when they are read: get, list and watch', async () => {
    // Two string fields, defaulted or not; the definition as JSON, which kubectl apply takes too.
    const field = (dflt: string | undefined) => ({ type: 'string', ...(dflt ? { default: dflt } : {}) });
    const widgetCrd = (withDefault: boolean) =>
      oneVersionCrd(
        'defaults.example.com',
        { plural: 'widgets', singular: 'widget', kind: 'Widget' },
        { type: 'object', properties: { size: field(withDefault ? 'M' : undefined), color: field(withDefault ? 'blue' : undefined) } },
      );
    await applyCrd(widgetCrd(false), 'widgets.defaults.example.com');
    const widget = (name: string, spec: Obj) =>
      JSON.stringify({ apiVersion: 'defaults.example.com/v1', kind: 'Widget', metadata: { name, namespace: 'crs' }, spec });
    await k(['apply', '-f', '-'], { input: widget('plain', {}) });
    await k(['apply', '-f', '-'], { input: widget('red', { color: 'red' }) });
    const path = '/apis/defaults.example.com/v1/namespaces/crs/widgets';
    expect((await request(server, 'GET', `${path}/plain`)).json<{ spec: Obj }>().spec).toEqual({});

    await applyCrd(widgetCrd(true), 'widgets.defaults.example.com');
    // The definition reaches the served kinds through a watch: wait for the new schema.
    let spec: Obj = {};
    for (let i = 0; i < 100 && spec.size === undefined; i++) {
      spec = (await request(server, 'GET', `${path}/plain`)).json<{ spec: Obj }>().spec;
      if (spec.size === undefined) await new Promise((r) => setTimeout(r, 100));
    }
    expect(spec).toEqual({ size: 'M', color: 'blue' });
    const listed = JSON.parse((await k(['get', 'widgets.defaults.example.com', '-n', 'crs', '-o', 'json'])).stdout) as {
      items: { metadata: Obj; spec: Obj }[];
    };
    expect(Object.fromEntries(listed.items.map((i) => [i.metadata.name, i.spec]))).toEqual({
      plain: { size: 'M', color: 'blue' },
      red: { size: 'M', color: 'red' },
    });
    const watched = await request(server, 'GET', `${path}?watch=true&resourceVersion=0&timeoutSeconds=1`);
    const events = watched.body
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; object: { metadata: Obj; spec: Obj } });
    expect(events.map((e) => [e.type, e.object.metadata.name, e.object.spec])).toEqual([
      ['ADDED', 'plain', { size: 'M', color: 'blue' }],
      ['ADDED', 'red', { size: 'M', color: 'red' }],
    ]);
  });

  it('is served again at once after a restart', async () => {
    await server.restart();
    expect((await request(server, 'GET', '/apis/stable.example.com/v1/namespaces/crs/crontabs/nightly')).status).toBe(200);
    expect((await k(['get', 'ct', '-n', 'crs', '-o', 'name'])).stdout).toContain('crontab.stable.example.com/nightly');
    const apiServices = (await k(['get', 'apiservices', '-o', 'name'])).stdout;
    expect(apiServices).toContain('apiservice.apiregistration.k8s.io/v1.stable.example.com');
    expect(apiServices).toContain('apiservice.apiregistration.k8s.io/v1beta1.acme.io');
  });

  it('deleting a namespace deletes its custom objects', async () => {
    await k(['create', 'ns', 'crs-gone']);
    await k(['apply', '-f', '-'], { input: cronTab('doomed', { cronSpec: '* * * * *' }, 'crs-gone') });
    await k(['delete', 'ns', 'crs-gone', '--timeout=60s']);
    expect((await request(server, 'GET', '/apis/stable.example.com/v1/namespaces/crs-gone/crontabs/doomed')).status).toBe(404);
  });

  it('a deleted definition stays Terminating, refusing creates, until its objects are gone; then the resource is no longer served', async () => {
    const held = await request(server, 'POST', '/apis/stable.example.com/v1/namespaces/crs/crontabs', {
      body: {
        apiVersion: 'stable.example.com/v1',
        kind: 'CronTab',
        metadata: { name: 'held', finalizers: ['example.com/hold'] },
        spec: { cronSpec: '* * * * *' },
      },
    });
    expect(held.status).toBe(201);
    await k(['delete', 'crd', 'crontabs.stable.example.com', '--wait=false']);
    let crd: Obj = {};
    for (let i = 0; i < 100; i++) {
      crd = (await request(server, 'GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com')).json<Obj>();
      const items = (await request(server, 'GET', '/apis/stable.example.com/v1/crontabs')).json<{ items?: Obj[] }>().items ?? [];
      if (items.length === 1) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect((crd.metadata as Obj).finalizers).toEqual(['customresourcecleanup.apiextensions.k8s.io']);
    expect((crd.status as Obj).conditions).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: 'Terminating', status: 'True', reason: 'InstanceDeletionInProgress' })]),
    );
    const refused = await request(server, 'POST', '/apis/stable.example.com/v1/namespaces/crs/crontabs', {
      body: { apiVersion: 'stable.example.com/v1', kind: 'CronTab', metadata: { name: 'late' }, spec: { cronSpec: '* * * * *' } },
    });
    expect([refused.status, refused.json<Obj>().message]).toEqual([405, 'create not allowed while custom resource definition is terminating']);
    await request(server, 'PATCH', '/apis/stable.example.com/v1/namespaces/crs/crontabs/held', {
      body: { metadata: { finalizers: null } },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    let status = 0;
    for (let i = 0; i < 100 && status !== 404; i++) {
      status = (await request(server, 'GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com')).status;
      if (status !== 404) await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe(404);
    expect((await request(server, 'GET', '/apis/stable.example.com/v1/crontabs')).status).toBe(404);
    // The group stays for the definition left in it (shirts), without crontabs.
    const rl = (await request(server, 'GET', '/apis/stable.example.com/v1')).json<{ resources: Obj[] }>();
    expect(rl.resources.map((r) => r.name)).toEqual(['shirts']);
    await k(['delete', 'crd', 'shirts.stable.example.com', '--timeout=60s']);
    const groups = (await request(server, 'GET', '/apis')).json<{ groups: Obj[] }>().groups.map((g) => g.name);
    expect(groups).not.toContain('stable.example.com');
    let apiService = 200;
    for (let i = 0; i < 100 && apiService !== 404; i++) {
      apiService = (await request(server, 'GET', '/apis/apiregistration.k8s.io/v1/apiservices/v1.stable.example.com')).status;
      if (apiService !== 404) await new Promise((r) => setTimeout(r, 100));
    }
    expect(apiService).toBe(404);
    expect(groups).toContain('acme.io');
  });
});
