/**
 * apps/v1 Deployment end to end with real kubectl, as a stored kind (no controller, so status
 * stays empty and READY reads 0/<replicas>): `kubectl create deployment` (a protobuf body),
 * the columns of `get` and `get -o wide`, Kubernetes' defaults in `-o yaml`, `kubectl scale`
 * through the scale subresource, `apply`, `explain`, a selector mismatch refused with
 * Kubernetes' message, and `delete`. The other apps/v1 workloads the same way, and core/v1's
 * ReplicationController and PodTemplate, which `kubectl apply --prune` needs served.
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

/** Retries `check` (a set of expectations) until it passes or 20 s have passed. */
async function eventually(check: () => Promise<void>): Promise<void> {
  const end = Date.now() + 20_000;
  for (;;) {
    try {
      return await check();
    } catch (e) {
      if (Date.now() > end) throw e;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

const MANIFEST = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  replicas: 1
  selector:
    matchLabels:
      app: api
  strategy:
    type: Recreate
  template:
    metadata:
      labels:
        app: api
    spec:
      containers:
      - name: api
        image: example.com/api:1.0
`;

describe('Deployment', () => {
  it('is created, listed, scaled and deleted with kubectl', async () => {
    expect((await k(['create', 'deployment', 'web', '--image=nginx', '--replicas=2'])).stdout).toContain('deployment.apps/web created');
    const list = await k(['get', 'deploy']);
    expect(list.stdout).toMatch(/^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE$/m);
    // UP-TO-DATE is 0 until the deployment controller has counted the new ReplicaSet's pods.
    expect(list.stdout).toMatch(/^web\s+0\/2\s+[02]\s+0\s+\d+s$/m);
    const wide = await k(['get', 'deploy', 'web', '-o', 'wide']);
    expect(wide.stdout).toMatch(/^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\s+CONTAINERS\s+IMAGES\s+SELECTOR$/m);
    expect(wide.stdout).toMatch(/^web\s+0\/2\s+[02]\s+0\s+\d+s\s+nginx\s+nginx\s+app=web$/m);

    const yaml = (await k(['get', 'deploy', 'web', '-o', 'yaml'])).stdout;
    expect(yaml).toMatch(/progressDeadlineSeconds: 600/);
    expect(yaml).toMatch(/revisionHistoryLimit: 10/);
    expect(yaml).toMatch(/maxSurge: 25%\n\s+maxUnavailable: 25%\n\s+type: RollingUpdate/);
    expect(yaml).toMatch(/imagePullPolicy: Always/);
    expect(yaml).toMatch(/restartPolicy: Always/);
    expect(yaml).toMatch(/terminationGracePeriodSeconds: 30/);
    expect(yaml).toMatch(/generation: 1/);

    expect((await k(['scale', 'deployment', 'web', '--replicas=3'])).stdout).toContain('deployment.apps/web scaled');
    expect((await k(['get', 'deploy', 'web', '-o', 'jsonpath={.spec.replicas} {.metadata.generation}'])).stdout).toBe('3 2');
    // The deployment controller resizes the ReplicaSet, whose controller adds the pod.
    await eventually(async () => expect((await k(['get', 'deploy', 'web', '-o', 'jsonpath={.status.replicas} {.status.updatedReplicas}'])).stdout).toBe('3 3'));
    expect((await k(['get', '--raw', '/apis/apps/v1/namespaces/default/deployments/web/scale'])).stdout).toMatch(
      /"spec":\{"replicas":3\},"status":\{"replicas":3,"selector":"app=web"\}/,
    );
    expect((await k(['scale', 'deployment', 'web', '--current-replicas=3', '--replicas=1'])).stdout).toContain('deployment.apps/web scaled');
    expect((await k(['get', 'deploy', 'web', '-o', 'jsonpath={.spec.replicas}'])).stdout).toBe('1');

    expect((await k(['delete', 'deployment', 'web'])).stdout).toContain('deployment.apps "web" deleted');
    expect((await k(['get', 'deploy', 'web'], { expectFail: true })).stderr).toContain('deployments.apps "web" not found');
  });

  it('is applied, explained, patched and refused with Kubernetes messages', async () => {
    expect((await k(['apply', '-f', '-'], { input: MANIFEST })).stdout).toContain('deployment.apps/api created');
    expect((await k(['get', 'deploy', 'api', '-o', 'jsonpath={.spec.strategy}'])).stdout).toBe('{"type":"Recreate"}');
    expect((await k(['apply', '-f', '-'], { input: MANIFEST.replace('replicas: 1', 'replicas: 4') })).stdout).toContain('deployment.apps/api configured');
    expect((await k(['get', 'deploy', 'api', '-o', 'jsonpath={.spec.replicas}'])).stdout).toBe('4');
    expect((await k(['explain', 'deployment.spec.strategy'])).stdout).toMatch(/GROUP:\s+apps\nKIND:\s+Deployment\nVERSION:\s+v1/);

    const immutable = await k(['patch', 'deploy', 'api', '--type', 'merge', '-p', '{"spec":{"selector":{"matchLabels":{"app":"x"}}}}'], { expectFail: true });
    expect(immutable.stderr).toContain('spec.selector: Invalid value');
    expect(immutable.stderr).toContain('field is immutable');
    const mismatch = await k(['apply', '-f', '-'], {
      input: MANIFEST.replace(/name: api\n/, 'name: bad\n').replace('app: api\n    spec', 'app: other\n    spec'),
      expectFail: true,
    });
    expect(mismatch.stderr).toContain('spec.template.metadata.labels: Invalid value');
    expect(mismatch.stderr).toContain('`selector` does not match template `labels`');

    expect((await k(['delete', 'deploy', 'api'])).stdout).toContain('deployment.apps "api" deleted');
  });
});

const REPLICASET = `apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: frontend
spec:
  replicas: 2
  selector:
    matchLabels:
      tier: frontend
  template:
    metadata:
      labels:
        tier: frontend
    spec:
      containers:
      - name: php
        image: example.com/php:5
`;

describe('ReplicaSet', () => {
  it('is applied, listed, scaled and deleted with kubectl', async () => {
    expect((await k(['apply', '-f', '-'], { input: REPLICASET })).stdout).toContain('replicaset.apps/frontend created');
    const list = await k(['get', 'rs']);
    expect(list.stdout).toMatch(/^NAME\s+DESIRED\s+CURRENT\s+READY\s+AGE$/m);
    // CURRENT is 0 until the ReplicaSet controller has created the pods, then 2.
    expect(list.stdout).toMatch(/^frontend\s+2\s+[02]\s+0\s+\d+s$/m);
    const wide = await k(['get', 'replicasets', 'frontend', '-o', 'wide']);
    expect(wide.stdout).toMatch(/^frontend\s+2\s+[02]\s+0\s+\d+s\s+php\s+example\.com\/php:5\s+tier=frontend$/m);
    expect((await k(['get', 'rs', 'frontend', '-o', 'jsonpath={.spec.template.spec.containers[0].imagePullPolicy}'])).stdout).toBe('IfNotPresent');
    await eventually(async () =>
      expect((await k(['get', 'rs', 'frontend', '-o', 'jsonpath={.status}'])).stdout).toBe(
        '{"availableReplicas":0,"fullyLabeledReplicas":2,"observedGeneration":1,"readyReplicas":0,"replicas":2}',
      ),
    );

    expect((await k(['scale', 'rs', 'frontend', '--replicas=4'])).stdout).toContain('replicaset.apps/frontend scaled');
    expect((await k(['get', 'rs', 'frontend', '-o', 'jsonpath={.spec.replicas} {.metadata.generation}'])).stdout).toBe('4 2');
    const bad = await k(['apply', '-f', '-'], { input: REPLICASET.replace('replicas: 2', 'replicas: -1'), expectFail: true });
    expect(bad.stderr).toContain('spec.replicas: Invalid value: -1: must be greater than or equal to 0');

    expect((await k(['delete', 'rs', 'frontend'])).stdout).toContain('replicaset.apps "frontend" deleted');
  });
});

const STATEFULSET = `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  serviceName: db
  replicas: 1
  selector:
    matchLabels:
      app: db
  template:
    metadata:
      labels:
        app: db
    spec:
      containers:
      - name: postgres
        image: example.com/postgres:17
  volumeClaimTemplates:
  - metadata:
      name: data
    spec:
      accessModes: [ReadWriteOnce]
      resources:
        requests:
          storage: 1Gi
`;

describe('StatefulSet', () => {
  it('is applied, listed with ReplicaSets, scaled and refused a forbidden change with kubectl', async () => {
    expect((await k(['apply', '-f', '-'], { input: STATEFULSET })).stdout).toContain('statefulset.apps/db created');
    expect((await k(['apply', '-f', '-'], { input: REPLICASET })).stdout).toContain('replicaset.apps/frontend created');
    const list = (await k(['get', 'rs,sts'])).stdout;
    expect(list).toMatch(/^replicaset\.apps\/frontend\s+2\s+[02]\s+0\s+\d+s$/m);
    expect(list).toMatch(/^NAME\s+READY\s+AGE$/m);
    expect(list).toMatch(/^statefulset\.apps\/db\s+0\/1\s+\d+s$/m);
    expect((await k(['get', 'sts', 'db', '-o', 'wide'])).stdout).toMatch(/^db\s+0\/1\s+\d+s\s+postgres\s+example\.com\/postgres:17$/m);
    expect(
      (await k(['get', 'sts', 'db', '-o', 'jsonpath={.spec.podManagementPolicy} {.spec.updateStrategy} {.spec.persistentVolumeClaimRetentionPolicy}'])).stdout,
    ).toBe('OrderedReady {"rollingUpdate":{"partition":0},"type":"RollingUpdate"} {"whenDeleted":"Retain","whenScaled":"Retain"}');

    expect((await k(['scale', 'statefulset', 'db', '--replicas=3'])).stdout).toContain('statefulset.apps/db scaled');
    expect((await k(['get', 'sts', 'db', '-o', 'jsonpath={.spec.replicas} {.metadata.generation}'])).stdout).toBe('3 2');
    const forbidden = await k(['apply', '-f', '-'], { input: STATEFULSET.replace('serviceName: db', 'serviceName: other'), expectFail: true });
    expect(forbidden.stderr).toContain("spec: Forbidden: updates to statefulset spec for fields other than 'replicas'");

    expect((await k(['delete', 'sts', 'db'])).stdout).toContain('statefulset.apps "db" deleted');
    expect((await k(['delete', 'rs', 'frontend'])).stdout).toContain('replicaset.apps "frontend" deleted');
  });
});

const DAEMONSET = `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
spec:
  selector:
    matchLabels:
      app: agent
  template:
    metadata:
      labels:
        app: agent
    spec:
      nodeSelector:
        kubernetes.io/os: linux
      containers:
      - name: fluentd
        image: example.com/fluentd:1
`;

describe('DaemonSet', () => {
  it('is applied, listed with the other workloads and deleted with kubectl', async () => {
    expect((await k(['apply', '-f', '-'], { input: DAEMONSET })).stdout).toContain('daemonset.apps/agent created');
    const list = await k(['get', 'ds']);
    expect(list.stdout).toMatch(/^NAME\s+DESIRED\s+CURRENT\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+NODE SELECTOR\s+AGE$/m);
    expect(list.stdout).toMatch(/^agent\s+0\s+0\s+0\s+0\s+0\s+kubernetes\.io\/os=linux\s+\d+s$/m);
    const wide = await k(['get', 'ds', 'agent', '-o', 'wide']);
    expect(wide.stdout).toMatch(/\s+fluentd\s+example\.com\/fluentd:1\s+app=agent$/m);
    expect((await k(['get', 'ds', 'agent', '-o', 'jsonpath={.spec.updateStrategy}'])).stdout).toBe(
      '{"rollingUpdate":{"maxSurge":0,"maxUnavailable":1},"type":"RollingUpdate"}',
    );
    expect((await k(['apply', '-f', '-'], { input: STATEFULSET })).stdout).toContain('statefulset.apps/db created');
    const all = (await k(['get', 'rs,sts,ds', '-o', 'name'])).stdout;
    expect(all).toBe('statefulset.apps/db\ndaemonset.apps/agent\n');
    expect((await k(['delete', 'ds', 'agent'])).stdout).toContain('daemonset.apps "agent" deleted');
    expect((await k(['delete', 'sts', 'db'])).stdout).toContain('statefulset.apps "db" deleted');
  });
});

const RC = `apiVersion: v1
kind: ReplicationController
metadata:
  name: hello
spec:
  replicas: 2
  template:
    metadata:
      labels: {app: hello, tier: web}
    spec:
      containers:
      - name: hello
        image: example.com/hello:1
`;

describe('ReplicationController (core/v1)', () => {
  it('takes its selector and labels from the template, lists, scales and refuses with Kubernetes messages', async () => {
    expect((await k(['apply', '-f', '-'], { input: RC })).stdout).toContain('replicationcontroller/hello created');
    expect((await k(['get', 'rc', 'hello', '-o', 'jsonpath={.spec.selector} {.metadata.labels}'])).stdout).toBe(
      '{"app":"hello","tier":"web"} {"app":"hello","tier":"web"}',
    );
    // The ReplicationController controller creates the two pods and counts them.
    await eventually(async () => expect((await k(['get', 'rc', 'hello', '-o', 'jsonpath={.status.replicas}'])).stdout).toBe('2'));
    const wide = await k(['get', 'replicationcontrollers', '-o', 'wide']);
    expect(wide.stdout).toMatch(/^NAME\s+DESIRED\s+CURRENT\s+READY\s+AGE\s+CONTAINERS\s+IMAGES\s+SELECTOR$/m);
    expect(wide.stdout).toMatch(/^hello\s+2\s+2\s+0\s+\d+s\s+hello\s+example\.com\/hello:1\s+app=hello,tier=web$/m);
    expect((await k(['get', 'all'])).stdout).toContain('replicationcontroller/hello');

    expect((await k(['scale', 'rc', 'hello', '--replicas=3'])).stdout).toContain('replicationcontroller/hello scaled');
    const scale = JSON.parse((await k(['get', '--raw', '/api/v1/namespaces/default/replicationcontrollers/hello/scale'])).stdout) as Record<string, unknown>;
    expect(scale).toMatchObject({
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      spec: { replicas: 3 },
      status: { selector: 'app=hello,tier=web' },
    });
    // The status follows the pods: 2, or 3 once the controller has created the third.
    expect([2, 3]).toContain((scale.status as { replicas: number }).replicas);
    expect((await k(['get', 'rc', 'hello', '-o', 'jsonpath={.spec.replicas} {.metadata.generation}'])).stdout).toBe('3 2');
    await eventually(async () =>
      expect((await k(['get', 'rc', '--field-selector', 'status.replicas=3', '-o', 'name'])).stdout.trim()).toBe('replicationcontroller/hello'),
    );

    const never = await k(['apply', '-f', '-'], {
      input: RC.replace('image: example.com/hello:1', 'image: example.com/hello:1\n      restartPolicy: Never'),
      expectFail: true,
    });
    expect(never.stderr).toContain('spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"');
    const bare = await k(['create', '-f', '-'], {
      input: 'apiVersion: v1\nkind: ReplicationController\nmetadata: {name: bare}\nspec: {replicas: 1}\n',
      expectFail: true,
    });
    expect(bare.stderr).toContain('The ReplicationController "bare" is invalid: \n* spec.selector: Required value\n* spec.template: Required value');
    expect((await k(['delete', 'rc', 'hello'])).stdout).toContain('replicationcontroller "hello" deleted');
  });
});

describe('PodTemplate (core/v1)', () => {
  const TEMPLATE = `apiVersion: v1
kind: PodTemplate
metadata: {name: tpl}
template:
  metadata: {labels: {app: t}}
  spec:
    containers: [{name: c, image: example.com/c:1}]
`;
  it("is applied with a Pod's defaults, listed with kubectl's columns, and counts template changes in its generation", async () => {
    expect((await k(['apply', '-f', '-'], { input: TEMPLATE })).stdout).toContain('podtemplate/tpl created');
    const list = await k(['get', 'podtemplates']);
    expect(list.stdout).toMatch(/^NAME\s+CONTAINERS\s+IMAGES\s+POD LABELS$/m);
    expect(list.stdout).toMatch(/^tpl\s+c\s+example\.com\/c:1\s+app=t$/m);
    expect((await k(['get', 'podtemplate', 'tpl', '-o', 'jsonpath={.metadata.generation} {.template.spec.restartPolicy}'])).stdout).toBe('1 Always');
    await k(['apply', '-f', '-'], { input: TEMPLATE.replace('c:1', 'c:2') });
    await k(['label', 'podtemplate', 'tpl', 'x=y']);
    expect((await k(['get', 'podtemplate', 'tpl', '-o', 'jsonpath={.metadata.generation}'])).stdout).toBe('2');
    const bad = await k(['apply', '-f', '-'], { input: TEMPLATE.replace('name: c,', 'name: C_,'), expectFail: true });
    expect(bad.stderr).toContain('The PodTemplate "tpl" is invalid: template.spec.containers[0].name: Invalid value: "C_"');
  });
});

describe('kubectl apply --prune', () => {
  it('prunes with its default allowlist, which names every workload kind', async () => {
    const set = (names: string[]) => names.map((n) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${n}, labels: {set: prune}}\n`).join('---\n');
    await k(['apply', '-f', '-'], { input: set(['keep', 'drop']) });
    const r = await k(['apply', '--prune', '-l', 'set=prune', '-f', '-'], { input: set(['keep']) });
    expect(r.stdout).toContain('configmap/drop pruned');
    expect((await k(['get', 'cm', '-l', 'set=prune', '-o', 'name'])).stdout.trim()).toBe('configmap/keep');
  });
});
