/**
 * The kinds of the resources document beyond the core ones, end to end with real kubectl:
 * ControllerRevision, HorizontalPodAutoscaler, RuntimeClass, APIService, FlowSchema,
 * PriorityLevelConfiguration and PodSecurityPolicy are created from the YAML examples in
 * test/fixtures/kinds, listed with kubectl's columns, explained, patched and deleted (each
 * delete answering with the body the document names); rules answer with Kubernetes' messages;
 * deprecated APIs warn and count; componentstatuses lists the storage; flowcontrol versions
 * round-trip; and `--runtime-config` removes or adds group-versions everywhere they show.
 */
import { jest } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeProtobuf, type JsonObject } from '@app/apimachinery';
import { kubectl, repoRoot, request, startServer, type ServerHandle } from './support/server.js';

jest.setTimeout(180_000);

let server: ServerHandle;

beforeAll(async () => {
  server = await startServer();
});

afterAll(async () => {
  await server?.cleanup();
});

const k = (args: string[], opts: { input?: string; expectFail?: boolean } = {}) => kubectl(server, args, opts);
const fixture = (name: string) => readFileSync(join(repoRoot(), 'test', 'fixtures', 'kinds', `${name}.yaml`), 'utf8');
const STATEFULSET_WEB = JSON.stringify({
  apiVersion: 'apps/v1',
  kind: 'StatefulSet',
  metadata: { name: 'web', namespace: 'default' },
  spec: {
    serviceName: 'web',
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'nginx', image: 'nginx:1.27' }] } },
  },
});
/**
 * The text of a fixture to create. The ControllerRevision's owner, StatefulSet `web`, is created
 * first and its uid put in the owner reference: the garbage collector deletes a dependent whose
 * owner does not exist, as Kubernetes' does.
 */
async function input(name: string): Promise<string> {
  const text = fixture(name);
  if (name !== 'controllerrevision') return text;
  await k(['apply', '-f', '-'], { input: STATEFULSET_WEB });
  const uid = (await k(['get', 'statefulset', 'web', '-o', 'jsonpath={.metadata.uid}'])).stdout.trim();
  return text.replace('5b1f0c2e-0000-4000-8000-000000000001', uid);
}

interface KindCase {
  fixture: string;
  /** kubectl's name for the created object. */
  ref: string;
  /** What kubectl prints on create. */
  created: string;
  header: RegExp;
  row: RegExp;
  explain: RegExp;
  patch: { body: string; check: (o: Record<string, unknown>) => void };
  /** The object's URL. */
  path: string;
  /** DELETE answers with the object (true) or a Status (false). */
  deleteReturnsObject: boolean;
}

const CASES: KindCase[] = [
  {
    fixture: 'controllerrevision',
    ref: 'controllerrevision/web-7d4b9c',
    created: 'controllerrevision.apps/web-7d4b9c created',
    header: /^NAME\s+CONTROLLER\s+REVISION\s+AGE$/m,
    row: /^web-7d4b9c\s+statefulset\.apps\/web\s+3\s+\d+s$/m,
    explain: /GROUP:\s+apps\nKIND:\s+ControllerRevision\nVERSION:\s+v1/,
    patch: { body: '{"revision":4}', check: (o) => expect(o.revision).toBe(4) },
    path: '/apis/apps/v1/namespaces/default/controllerrevisions/web-7d4b9c',
    deleteReturnsObject: false,
  },
  {
    fixture: 'horizontalpodautoscaler',
    ref: 'hpa/web',
    created: 'horizontalpodautoscaler.autoscaling/web created',
    header: /^NAME\s+REFERENCE\s+TARGETS\s+MINPODS\s+MAXPODS\s+REPLICAS\s+AGE$/m,
    row: /^web\s+Deployment\/web\s+cpu: <unknown>\/75%\s+2\s+10\s+0\s+\d+s$/m,
    explain: /GROUP:\s+autoscaling\nKIND:\s+HorizontalPodAutoscaler\nVERSION:\s+v2/,
    patch: { body: '{"spec":{"maxReplicas":12}}', check: (o) => expect((o.spec as Record<string, unknown>).maxReplicas).toBe(12) },
    path: '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers/web',
    deleteReturnsObject: false,
  },
  {
    fixture: 'runtimeclass',
    ref: 'runtimeclass/gvisor',
    created: 'runtimeclass.node.k8s.io/gvisor created',
    header: /^NAME\s+HANDLER\s+AGE$/m,
    row: /^gvisor\s+runsc\s+\d+s$/m,
    explain: /GROUP:\s+node\.k8s\.io\nKIND:\s+RuntimeClass\nVERSION:\s+v1/,
    patch: {
      body: '{"metadata":{"labels":{"tier":"sandbox"}}}',
      check: (o) => expect((o.metadata as { labels: unknown }).labels).toEqual({ tier: 'sandbox' }),
    },
    path: '/apis/node.k8s.io/v1/runtimeclasses/gvisor',
    deleteReturnsObject: false,
  },
  {
    fixture: 'apiservice',
    ref: 'apiservice/v1beta1.metrics.example.com',
    created: 'apiservice.apiregistration.k8s.io/v1beta1.metrics.example.com created',
    header: /^NAME\s+SERVICE\s+AVAILABLE\s+AGE$/m,
    // No condition until the availability controller has looked, then the missing service's.
    row: /^v1beta1\.metrics\.example\.com\s+kube-system\/metrics-server\s+(Unknown|False \(ServiceNotFound\))\s+\d+s$/m,
    explain: /GROUP:\s+apiregistration\.k8s\.io\nKIND:\s+APIService\nVERSION:\s+v1/,
    patch: { body: '{"spec":{"versionPriority":50}}', check: (o) => expect((o.spec as Record<string, unknown>).versionPriority).toBe(50) },
    path: '/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.metrics.example.com',
    deleteReturnsObject: false,
  },
  {
    fixture: 'prioritylevelconfiguration',
    ref: 'prioritylevelconfiguration/batch',
    created: 'prioritylevelconfiguration.flowcontrol.apiserver.k8s.io/batch created',
    header: /^NAME\s+TYPE\s+NOMINALCONCURRENCYSHARES\s+QUEUES\s+HANDSIZE\s+QUEUELENGTHLIMIT\s+AGE$/m,
    row: /^batch\s+Limited\s+20\s+16\s+4\s+20\s+\d+s$/m,
    explain: /GROUP:\s+flowcontrol\.apiserver\.k8s\.io\nKIND:\s+PriorityLevelConfiguration\nVERSION:\s+v1/,
    patch: {
      body: '{"spec":{"limited":{"nominalConcurrencyShares":25}}}',
      check: (o) => expect((o.spec as { limited: Record<string, unknown> }).limited.nominalConcurrencyShares).toBe(25),
    },
    path: '/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations/batch',
    deleteReturnsObject: false,
  },
  {
    fixture: 'flowschema',
    ref: 'flowschema/batch-jobs',
    created: 'flowschema.flowcontrol.apiserver.k8s.io/batch-jobs created',
    header: /^NAME\s+PRIORITYLEVEL\s+MATCHINGPRECEDENCE\s+DISTINGUISHERMETHOD\s+AGE\s+MISSINGPL$/m,
    row: /^batch-jobs\s+batch\s+500\s+ByUser\s+\d+s\s+\?$/m,
    explain: /GROUP:\s+flowcontrol\.apiserver\.k8s\.io\nKIND:\s+FlowSchema\nVERSION:\s+v1/,
    patch: { body: '{"spec":{"matchingPrecedence":600}}', check: (o) => expect((o.spec as Record<string, unknown>).matchingPrecedence).toBe(600) },
    path: '/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas/batch-jobs',
    deleteReturnsObject: false,
  },
  {
    fixture: 'podsecuritypolicy',
    ref: 'psp/restricted',
    created: 'podsecuritypolicy.policy/restricted created',
    header: /^NAME\s+PRIV\s+CAPS\s+SELINUX\s+RUNASUSER\s+FSGROUP\s+SUPGROUP\s+READONLYROOTFS\s+VOLUMES$/m,
    row: /^restricted\s+false\s+RunAsAny\s+MustRunAsNonRoot\s+MustRunAs\s+MustRunAs\s+false\s+configMap,emptyDir,projected,secret,downwardAPI,persistentVolumeClaim$/m,
    explain: /GROUP:\s+policy\nKIND:\s+PodSecurityPolicy\nVERSION:\s+v1beta1/,
    patch: { body: '{"spec":{"hostPID":true}}', check: (o) => expect((o.spec as Record<string, unknown>).hostPID).toBe(true) },
    path: '/apis/policy/v1beta1/podsecuritypolicies/restricted',
    deleteReturnsObject: true,
  },
];

describe.each(CASES)('$fixture', (c) => {
  it('is created from YAML, listed with its columns, explained, patched and deleted with the documented answer', async () => {
    expect((await k(['create', '-f', '-'], { input: await input(c.fixture) })).stdout).toContain(c.created);
    const list = await k(['get', c.ref]);
    expect(list.stdout).toMatch(c.header);
    expect(list.stdout).toMatch(c.row);
    expect((await k(['explain', c.ref.split('/')[0]])).stdout).toMatch(c.explain);
    await k(['patch', c.ref, '--type', 'merge', '-p', c.patch.body]);
    c.patch.check(JSON.parse((await k(['get', c.ref, '-o', 'json'])).stdout) as Record<string, unknown>);
    const del = await request(server, 'DELETE', c.path);
    expect(del.status).toBe(200);
    const body = del.json<Record<string, unknown>>();
    const name = c.ref.split('/')[1];
    expect(body).toMatchObject(
      c.deleteReturnsObject ? { kind: 'PodSecurityPolicy', metadata: { name } } : { kind: 'Status', apiVersion: 'v1', status: 'Success', details: { name } },
    );
    expect((await request(server, 'GET', c.path)).status).toBe(404);
  });
});

describe('protobuf', () => {
  const PB: Array<{ path: string; message: string; obj: JsonObject }> = [
    {
      path: '/apis/apps/v1/namespaces/default/controllerrevisions',
      message: 'k8s.io.api.apps.v1.ControllerRevision',
      obj: { apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name: 'pb' }, revision: 2, data: { spec: { replicas: 3 } } },
    },
    {
      path: '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers',
      message: 'k8s.io.api.autoscaling.v1.HorizontalPodAutoscaler',
      obj: {
        apiVersion: 'autoscaling/v1',
        kind: 'HorizontalPodAutoscaler',
        metadata: { name: 'pb' },
        spec: { scaleTargetRef: { kind: 'Deployment', name: 'pb' }, minReplicas: 1, maxReplicas: 3 },
      },
    },
    {
      path: '/apis/node.k8s.io/v1/runtimeclasses',
      message: 'k8s.io.api.node.v1.RuntimeClass',
      obj: {
        apiVersion: 'node.k8s.io/v1',
        kind: 'RuntimeClass',
        metadata: { name: 'pb' },
        handler: 'pb',
        scheduling: { tolerations: [{ key: 'a', operator: 'Exists' }] },
      },
    },
    {
      path: '/apis/apiregistration.k8s.io/v1/apiservices',
      message: 'k8s.io.kube_aggregator.pkg.apis.apiregistration.v1.APIService',
      obj: {
        apiVersion: 'apiregistration.k8s.io/v1',
        kind: 'APIService',
        metadata: { name: 'v1.pb.example.com' },
        spec: { group: 'pb.example.com', version: 'v1', groupPriorityMinimum: 10, versionPriority: 10, service: { namespace: 'ns', name: 'svc', port: 8443 } },
      },
    },
    {
      path: '/apis/flowcontrol.apiserver.k8s.io/v1beta2/prioritylevelconfigurations',
      message: 'k8s.io.api.flowcontrol.v1beta2.PriorityLevelConfiguration',
      obj: {
        apiVersion: 'flowcontrol.apiserver.k8s.io/v1beta2',
        kind: 'PriorityLevelConfiguration',
        metadata: { name: 'pb' },
        spec: { type: 'Limited', limited: { assuredConcurrencyShares: 3, limitResponse: { type: 'Reject' } } },
      },
    },
    {
      path: '/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas',
      message: 'k8s.io.api.flowcontrol.v1.FlowSchema',
      obj: {
        apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
        kind: 'FlowSchema',
        metadata: { name: 'pb' },
        spec: { priorityLevelConfiguration: { name: 'pb' }, matchingPrecedence: 42 },
      },
    },
    {
      path: '/apis/policy/v1beta1/podsecuritypolicies',
      message: 'k8s.io.api.policy.v1beta1.PodSecurityPolicy',
      obj: {
        apiVersion: 'policy/v1beta1',
        kind: 'PodSecurityPolicy',
        metadata: { name: 'pb' },
        spec: {
          runAsUser: { rule: 'RunAsAny' },
          seLinux: { rule: 'RunAsAny' },
          fsGroup: { rule: 'RunAsAny' },
          supplementalGroups: { rule: 'RunAsAny' },
          hostPorts: [{ min: 80, max: 90 }],
        },
      },
    },
    {
      path: '/apis/events.k8s.io/v1/namespaces/default/events',
      message: 'k8s.io.api.events.v1.Event',
      obj: {
        apiVersion: 'events.k8s.io/v1',
        kind: 'Event',
        metadata: { name: 'pb' },
        eventTime: '2026-01-01T00:00:00.000001Z',
        series: { count: 2, lastObservedTime: '2026-01-01T00:00:01.000002Z' },
        reportingController: 'example.com/pb',
        reportingInstance: 'pb-1',
        action: 'Encode',
        reason: 'Encoded',
        regarding: { apiVersion: 'v1', kind: 'ConfigMap', name: 'pb', namespace: 'default' },
        note: 'sent as protobuf',
        type: 'Normal',
      },
    },
    {
      path: '/api/v1/namespaces/default/replicationcontrollers',
      message: 'k8s.io.api.core.v1.ReplicationController',
      obj: {
        apiVersion: 'v1',
        kind: 'ReplicationController',
        metadata: { name: 'pb' },
        spec: { replicas: 2, selector: { app: 'pb' }, template: { metadata: { labels: { app: 'pb' } }, spec: { containers: [{ name: 'c', image: 'pb:1' }] } } },
      },
    },
    {
      path: '/api/v1/namespaces/default/podtemplates',
      message: 'k8s.io.api.core.v1.PodTemplate',
      obj: {
        apiVersion: 'v1',
        kind: 'PodTemplate',
        metadata: { name: 'pb' },
        template: { metadata: { labels: { app: 'pb' } }, spec: { containers: [{ name: 'c', image: 'pb:1' }] } },
      },
    },
  ];

  it.each(PB)('creates $obj.kind from a protobuf body', async ({ path, message, obj }) => {
    const r = await request(server, 'POST', path, {
      body: Buffer.from(encodeProtobuf(obj, message)),
      headers: { 'content-type': 'application/vnd.kubernetes.protobuf', accept: 'application/json' },
    });
    expect(r.status).toBe(201);
    const { metadata, ...fields } = obj;
    expect(r.json()).toMatchObject({ ...fields, metadata });
    expect((await request(server, 'DELETE', `${path}/${(metadata as { name: string }).name}`)).status).toBe(200);
  });
});

describe('rules through kubectl, with Kubernetes messages', () => {
  it('keeps ControllerRevision data immutable', async () => {
    await k(['create', '-f', '-'], { input: await input('controllerrevision') });
    const r = await k(['patch', 'controllerrevision', 'web-7d4b9c', '--type', 'merge', '-p', '{"data":{"spec":{"other":1}}}'], { expectFail: true });
    expect(r.stderr).toContain('The ControllerRevision "web-7d4b9c" is invalid: data: Invalid value:');
    expect(r.stderr).toContain('field is immutable');
    await k(['delete', 'controllerrevision', 'web-7d4b9c']);
  });

  it('checks HorizontalPodAutoscaler replica bounds', async () => {
    const bad = fixture('horizontalpodautoscaler').replace('minReplicas: 2', 'minReplicas: 0').replace('maxReplicas: 10', 'maxReplicas: 0');
    const r = await k(['create', '-f', '-'], { input: bad, expectFail: true });
    expect(r.stderr).toContain('spec.minReplicas: Invalid value: 0: must be greater than or equal to 1');
    expect(r.stderr).toContain('spec.maxReplicas: Invalid value: 0: must be greater than 0');
  });

  it('keeps the RuntimeClass handler a DNS label and immutable', async () => {
    const r = await k(['create', '-f', '-'], { input: fixture('runtimeclass').replace('handler: runsc', 'handler: Run_SC'), expectFail: true });
    expect(r.stderr).toContain('The RuntimeClass "gvisor" is invalid: handler: Invalid value: "Run_SC": a lowercase RFC 1123 label must consist of');
    await k(['create', '-f', '-'], { input: fixture('runtimeclass') });
    const u = await k(['patch', 'runtimeclass', 'gvisor', '--type', 'merge', '-p', '{"handler":"runc"}'], { expectFail: true });
    expect(u.stderr).toContain('handler: Invalid value: "runc": field is immutable');
    await k(['delete', 'runtimeclass', 'gvisor']);
  });

  it('names an APIService <version>.<group> and refuses TLS settings on a local one', async () => {
    const named = fixture('apiservice').replace('name: v1beta1.metrics.example.com', 'name: v1.metrics.example.com');
    const r = await k(['create', '-f', '-'], { input: named, expectFail: true });
    expect(r.stderr).toContain('metadata.name: Invalid value: "v1.metrics.example.com": must be `spec.version+"."+spec.group`: "v1beta1.metrics.example.com"');
    const local = fixture('apiservice').replace(/ {2}service:\n.*\n.*\n/, '');
    const l = await k(['create', '-f', '-'], { input: local, expectFail: true });
    expect(l.stderr).toContain('spec.insecureSkipTLSVerify: Invalid value: true: local APIServices may not have insecureSkipTLSVerify');
  });

  it('checks flow schemas and priority levels', async () => {
    const fs = fixture('flowschema').replace('matchingPrecedence: 500', 'matchingPrecedence: 20000').replace("namespaces: ['*']", 'clusterScope: false');
    const r = await k(['create', '-f', '-'], { input: fs, expectFail: true });
    expect(r.stderr).toContain('spec.matchingPrecedence: Invalid value: 20000: must not be greater than 10000');
    expect(r.stderr).toContain(
      'spec.rules[0].resourceRules[0].namespaces: Required value: resource rules that are not cluster scoped must supply at least one namespace',
    );
    const pl = fixture('prioritylevelconfiguration').replace('handSize: 4', 'handSize: 40');
    const p = await k(['create', '-f', '-'], { input: pl, expectFail: true });
    expect(p.stderr).toContain('spec.limited.limitResponse.queuing.handSize: Invalid value: 40: should not be greater than queues (16)');
  });

  it('refuses a PodSecurityPolicy capability that is both added and dropped', async () => {
    const psp = fixture('podsecuritypolicy').replace(
      "requiredDropCapabilities: ['ALL']",
      "requiredDropCapabilities: ['NET_RAW']\n  defaultAddCapabilities: ['NET_RAW']",
    );
    const r = await k(['create', '-f', '-'], { input: psp, expectFail: true });
    expect(r.stderr).toContain(
      'spec.defaultAddCapabilities: Invalid value: "NET_RAW": capability is listed in spec.defaultAddCapabilities and requiredDropCapabilities',
    );
  });
});

describe('system priority classes', () => {
  it('cannot be deleted or changed', async () => {
    const d = await k(['delete', 'priorityclass', 'system-cluster-critical'], { expectFail: true });
    expect(d.stderr).toContain(
      'priorityclasses.scheduling.k8s.io "system-cluster-critical" is forbidden: this is a system priority class and cannot be deleted',
    );
    const p = await k(['patch', 'priorityclass', 'system-node-critical', '--type', 'merge', '-p', '{"value":5}'], { expectFail: true });
    expect(p.stderr).toContain('value: Forbidden: may not be changed in an update.');
    expect(JSON.parse((await k(['get', 'pc', 'system-node-critical', '-o', 'json'])).stdout).value).toBe(2000001000);
  });
});

describe('local APIServices', () => {
  it('exist for every served group-version, Local and Available', async () => {
    const r = await k(['get', 'apiservices']);
    for (const name of [
      'v1.',
      'v1.apps',
      'v1.autoscaling',
      'v1.node.k8s.io',
      'v1beta1.policy',
      'v1.flowcontrol.apiserver.k8s.io',
      'v1beta2.flowcontrol.apiserver.k8s.io',
    ]) {
      expect(r.stdout).toMatch(new RegExp(`^${name.replace(/\./g, '\\.')}\\s+Local\\s+True\\s+`, 'm'));
    }
    expect(r.stdout).not.toContain('v1alpha1.node.k8s.io');
    const v1 = JSON.parse((await k(['get', 'apiservice', 'v1.apps', '-o', 'json'])).stdout);
    expect(v1.spec).toEqual({ group: 'apps', version: 'v1', groupPriorityMinimum: 17800, versionPriority: 15 });
    expect(v1.status.conditions[0]).toMatchObject({ type: 'Available', status: 'True', reason: 'Local' });
  });
});

describe('deprecated APIs', () => {
  const WARNING = 'policy/v1beta1 PodSecurityPolicy is deprecated in v1.21+, unavailable in v1.25+';

  it('warn through kubectl and in the raw Warning header, and count in apiserver_requested_deprecated_apis', async () => {
    const r = await k(['get', 'podsecuritypolicies']);
    expect(r.stderr).toContain(`Warning: ${WARNING}`);
    const raw = await request(server, 'GET', '/apis/policy/v1beta1/podsecuritypolicies');
    expect(raw.status).toBe(200);
    expect(raw.headers.warning).toBe(`299 - "${WARNING}"`);
    const missing = await request(server, 'GET', '/apis/policy/v1beta1/podsecuritypolicies/absent');
    expect(missing.status).toBe(404);
    expect(missing.headers.warning).toBe(`299 - "${WARNING}"`);
    const metrics = (await request(server, 'GET', '/metrics')).body;
    expect(metrics).toContain(
      'apiserver_requested_deprecated_apis{group="policy",version="v1beta1",resource="podsecuritypolicies",subresource="",removed_release="1.25"} 1',
    );
    const watch = await request(server, 'GET', '/apis/policy/v1beta1/podsecuritypolicies?watch=true&timeoutSeconds=1');
    expect(watch.status).toBe(200);
    expect(watch.headers.warning).toBe(`299 - "${WARNING}"`);
    const ga = await request(server, 'GET', '/apis/node.k8s.io/v1/runtimeclasses');
    expect(ga.headers.warning).toBeUndefined();
  });

  it('count each deprecated API once it is requested', async () => {
    const series =
      'apiserver_requested_deprecated_apis{group="flowcontrol.apiserver.k8s.io",version="v1beta3",resource="flowschemas",subresource="",removed_release="1.32"} 1';
    expect((await request(server, 'GET', '/metrics')).body).not.toContain(series);
    const r = await request(server, 'GET', '/apis/flowcontrol.apiserver.k8s.io/v1beta3/flowschemas');
    expect(r.headers.warning).toBe(
      '299 - "flowcontrol.apiserver.k8s.io/v1beta3 FlowSchema is deprecated in v1.29+, unavailable in v1.32+; use flowcontrol.apiserver.k8s.io/v1 FlowSchema"',
    );
    expect((await request(server, 'GET', '/metrics')).body).toContain(series);
  });

  it('lists componentstatuses with the storage of this node, and their deprecation', async () => {
    const r = await k(['get', 'cs']);
    expect(r.stdout).toMatch(/^NAME\s+STATUS\s+MESSAGE\s+ERROR$/m);
    expect(r.stdout).toMatch(/^etcd-0\s+Healthy\s+ok\s*$/m);
    expect(r.stderr).toContain('Warning: v1 ComponentStatus is deprecated in v1.19+');
    const one = await request(server, 'GET', '/api/v1/componentstatuses/etcd-0');
    expect(one.json()).toEqual({
      kind: 'ComponentStatus',
      apiVersion: 'v1',
      metadata: { name: 'etcd-0' },
      conditions: [{ type: 'Healthy', status: 'True', message: 'ok' }],
    });
    expect((await request(server, 'DELETE', '/api/v1/componentstatuses/etcd-0')).status).toBe(405);
    expect((await request(server, 'GET', '/metrics')).body).toContain(
      'apiserver_requested_deprecated_apis{group="",version="v1",resource="componentstatuses",subresource="",removed_release=""} 1',
    );
  });
});

describe('flowcontrol versions', () => {
  it('round-trip a priority level between v1beta2, v1beta3 and v1 without loss', async () => {
    const G = '/apis/flowcontrol.apiserver.k8s.io';
    const limited = {
      assuredConcurrencyShares: 7,
      lendablePercent: 15,
      borrowingLimitPercent: 40,
      limitResponse: { type: 'Queue', queuing: { queues: 8, handSize: 3, queueLengthLimit: 11 } },
    };
    const c = await request(server, 'POST', `${G}/v1beta2/prioritylevelconfigurations`, {
      body: {
        apiVersion: 'flowcontrol.apiserver.k8s.io/v1beta2',
        kind: 'PriorityLevelConfiguration',
        metadata: { name: 'rt' },
        spec: { type: 'Limited', limited },
      },
    });
    expect(c.status).toBe(201);
    expect(c.headers.warning).toContain('flowcontrol.apiserver.k8s.io/v1beta2 PriorityLevelConfiguration is deprecated in v1.26+, unavailable in v1.29+');
    const v1 = (await request(server, 'GET', `${G}/v1/prioritylevelconfigurations/rt`)).json<{ spec: { limited: Record<string, unknown> } }>();
    const { assuredConcurrencyShares, ...rest } = limited;
    expect(v1.spec.limited).toEqual({ nominalConcurrencyShares: assuredConcurrencyShares, ...rest });
    const v1beta3 = (await request(server, 'GET', `${G}/v1beta3/prioritylevelconfigurations/rt`)).json<{ apiVersion: string; spec: unknown }>();
    expect(v1beta3).toMatchObject({ apiVersion: 'flowcontrol.apiserver.k8s.io/v1beta3', spec: v1.spec });
    // Written back at v1, read at v1beta2: the original fields.
    const upd = await request(server, 'PUT', `${G}/v1/prioritylevelconfigurations/rt`, { body: v1 });
    expect(upd.status).toBe(200);
    const back = (await request(server, 'GET', `${G}/v1beta2/prioritylevelconfigurations/rt`)).json<{ spec: unknown }>();
    expect(back.spec).toEqual({ type: 'Limited', limited });
  });
});

describe('autoscaling versions', () => {
  it('round-trip an autoscaler between v2 and v1 without loss', async () => {
    const NSP = '/apis/autoscaling/%s/namespaces/default/horizontalpodautoscalers';
    const path = (v: string) => NSP.replace('%s', v);
    const spec = {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'rt' },
      minReplicas: 2,
      maxReplicas: 8,
      metrics: [
        { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '500Mi' } } },
        { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 60 } } },
      ],
      behavior: { scaleDown: { stabilizationWindowSeconds: 120, selectPolicy: 'Max', policies: [{ type: 'Pods', value: 2, periodSeconds: 60 }] } },
    };
    const c = await request(server, 'POST', path('v2'), {
      body: { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'rt' }, spec },
    });
    expect(c.status).toBe(201);
    const v1 = (await request(server, 'GET', `${path('v1')}/rt`)).json<{ spec: Record<string, unknown>; metadata: { annotations: Record<string, string> } }>();
    expect(v1.spec).toEqual({ scaleTargetRef: spec.scaleTargetRef, minReplicas: 2, maxReplicas: 8, targetCPUUtilizationPercentage: 60 });
    expect(JSON.parse(v1.metadata.annotations['autoscaling.alpha.kubernetes.io/metrics'])).toEqual(spec.metrics);
    // A v1 client changes its one field; v2 sees it in place, with everything else kept. (Read
    // again on a conflict: the HPA controller writes the autoscaler's status meanwhile.)
    let put = 0;
    for (let attempt = 0, body = v1; attempt < 10; attempt++) {
      body.spec.targetCPUUtilizationPercentage = 70;
      put = (await request(server, 'PUT', `${path('v1')}/rt`, { body })).status;
      if (put !== 409) break;
      body = (await request(server, 'GET', `${path('v1')}/rt`)).json<typeof v1>();
    }
    expect(put).toBe(200);
    const v2 = (await request(server, 'GET', `${path('v2')}/rt`)).json<{ spec: unknown; metadata: { annotations?: unknown } }>();
    // The behavior given without scaleUp has it defaulted (SetDefaults_HorizontalPodAutoscalerBehavior).
    const scaleUp = {
      stabilizationWindowSeconds: 0,
      selectPolicy: 'Max',
      policies: [
        { type: 'Pods', value: 4, periodSeconds: 15 },
        { type: 'Percent', value: 100, periodSeconds: 15 },
      ],
    };
    expect(v2.spec).toEqual({
      ...spec,
      metrics: [spec.metrics[0], { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } }],
      behavior: { ...spec.behavior, scaleUp },
    });
    expect(v2.metadata.annotations).toBeUndefined();
    const table = await k(['get', 'hpa', 'rt']);
    expect(table.stdout).toMatch(/^rt\s+Deployment\/rt\s+memory: <unknown>\/500Mi, cpu: <unknown>\/70%\s+2\s+8\s+0\s+\d+s$/m);
    const bad = await request(server, 'POST', path('v2'), {
      body: { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: { name: 'bad' }, spec: { ...spec, metrics: [{ type: 'Pods' }] } },
    });
    expect(bad.json()).toMatchObject({
      code: 422,
      message:
        'HorizontalPodAutoscaler.autoscaling "bad" is invalid: spec.metrics[0].pods: Required value: must populate information for the given metric source',
    });
  });

  it('gives kubectl autoscale without --cpu-percent the default target of 80% CPU, at either version', async () => {
    await k(['create', 'deployment', 'auto', '--image=nginx']);
    await k(['autoscale', 'deployment', 'auto', '--min=1', '--max=4']);
    const table = await k(['get', 'hpa', 'auto']);
    // REPLICAS: 0 until the HPA controller's first look writes the status, then the Deployment's 1.
    expect(table.stdout).toMatch(/^auto\s+Deployment\/auto\s+cpu: <unknown>\/80%\s+1\s+4\s+[01]\s+\d+s$/m);
    const v1 = (await request(server, 'GET', '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers/auto')).json<{
      spec: Record<string, unknown>;
    }>();
    expect(v1.spec.targetCPUUtilizationPercentage).toBe(80);
    // A v1 client that leaves the target out gets the same default.
    const created = await request(server, 'POST', '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers', {
      body: {
        apiVersion: 'autoscaling/v1',
        kind: 'HorizontalPodAutoscaler',
        metadata: { name: 'auto-v1' },
        spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'auto' }, maxReplicas: 3 },
      },
    });
    expect(created.json()).toMatchObject({ spec: { minReplicas: 1, maxReplicas: 3, targetCPUUtilizationPercentage: 80 } });
    await k(['delete', 'hpa', 'auto', 'auto-v1']);
    await k(['delete', 'deployment', 'auto']);
  });
});

describe('--runtime-config', () => {
  let other: ServerHandle | undefined;
  afterAll(async () => {
    await other?.cleanup();
  });

  it('takes group-versions and resources out of discovery, OpenAPI, routes and APIServices, and enables alpha versions', async () => {
    await k(['create', '-f', '-'], { input: fixture('podsecuritypolicy') });
    await server.stop();
    other = await startServer({
      dataDir: server.dataDir,
      args: ['--runtime-config=policy/v1beta1=false,flowcontrol.apiserver.k8s.io/v1beta2=false,v1/componentstatuses=false,api/alpha=true'],
    });
    const ko = (args: string[], opts: { input?: string; expectFail?: boolean } = {}) => kubectl(other!, args, opts);
    const resources = (await ko(['api-resources'])).stdout;
    expect(resources).not.toMatch(/^podsecuritypolicies\s/m);
    expect(resources).not.toMatch(/^componentstatuses\s/m);
    expect(resources).toMatch(/^runtimeclasses\s+node\.k8s\.io\/v1\s/m);
    const versions = (await ko(['api-versions'])).stdout.split('\n');
    expect(versions).toEqual(expect.arrayContaining(['node.k8s.io/v1alpha1', 'flowcontrol.apiserver.k8s.io/v1beta3']));
    expect(versions).not.toContain('policy/v1beta1');
    expect(versions).not.toContain('flowcontrol.apiserver.k8s.io/v1beta2');
    expect((await request(other, 'GET', '/apis/policy/v1beta1/podsecuritypolicies')).status).toBe(404);
    expect((await request(other, 'GET', '/apis/flowcontrol.apiserver.k8s.io/v1beta2/flowschemas')).status).toBe(404);
    expect((await request(other, 'GET', '/api/v1/componentstatuses')).status).toBe(404);
    const openapi = (await request(other, 'GET', '/openapi/v3')).json<{ paths: Record<string, unknown> }>();
    expect(Object.keys(openapi.paths)).not.toContain('apis/policy/v1beta1');
    expect(Object.keys(openapi.paths)).toContain('apis/node.k8s.io/v1alpha1');
    const apiservices = (await ko(['get', 'apiservices'])).stdout;
    expect(apiservices).not.toContain('v1beta1.policy');
    expect(apiservices).not.toContain('v1beta2.flowcontrol.apiserver.k8s.io');
    expect(apiservices).toMatch(/^v1alpha1\.node\.k8s\.io\s+Local\s+True\s+/m);
    // The alpha shape reads and writes the same stored objects as v1.
    const alpha = await request(other, 'POST', '/apis/node.k8s.io/v1alpha1/runtimeclasses', {
      body: { apiVersion: 'node.k8s.io/v1alpha1', kind: 'RuntimeClass', metadata: { name: 'kata' }, spec: { runtimeHandler: 'kata' } },
    });
    expect(alpha.status).toBe(201);
    expect(JSON.parse((await ko(['get', 'runtimeclass.v1.node.k8s.io', 'kata', '-o', 'json'])).stdout)).toMatchObject({
      apiVersion: 'node.k8s.io/v1',
      handler: 'kata',
    });
  });

  it('refuses to start on a key it cannot parse or that names nothing served', async () => {
    await expect(startServer({ args: ['--runtime-config=apps/v1=maybe'], readyTimeoutMs: 10_000 })).rejects.toThrow(
      /code 2[\s\S]*error: --runtime-config: invalid value of apps\/v1: maybe/,
    );
    await expect(startServer({ args: ['--runtime-config=resource.k8s.io/v1=true'], readyTimeoutMs: 10_000 })).rejects.toThrow(
      /code 2[\s\S]*error: --runtime-config: unknown api groups or resources resource.k8s.io\/v1/,
    );
  });
});
