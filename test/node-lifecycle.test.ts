/**
 * The node lifecycle and taint eviction controllers end to end, with real kubectl, on a server
 * whose node passes run every 200 ms with grace periods of 5 s (a node that posted status) and
 * 6 s (one that never did): long enough that heartbeats every 300 ms keep a node alive on a
 * loaded host. The test plays the kubelets: one node keeps renewing its Lease in
 * kube-node-lease, one posts status once and goes silent, one never posts anything.
 */
import { jest } from '@jest/globals';
import { kubectl, request, startServer, waitFor, type ServerHandle } from './support/server.js';
import { eventsOnceSeen } from './support/kubectl.helper.js';

jest.setTimeout(120_000);

let server: ServerHandle;
const NS = 'lifecycle';
let heartbeat: NodeJS.Timeout | undefined;
let beating = new Set<string>();

type Taint = { key: string; effect: string; timeAdded?: string };
type Condition = { type: string; status: string; reason?: string; message?: string };
type Node = { spec: { taints?: Taint[] }; status?: { conditions?: Condition[] } };

const k = (args: string[], input?: string) => kubectl(server, args, input === undefined ? {} : { input });
const getNode = async (name: string): Promise<Node> => JSON.parse((await k(['get', 'node', name, '-o', 'json'])).stdout) as Node;
const taintsOf = async (name: string): Promise<string[]> => ((await getNode(name)).spec.taints ?? []).map((t) => `${t.key}:${t.effect}`).sort();
const conditionOf = async (name: string, type: string): Promise<Condition | undefined> =>
  (await getNode(name)).status?.conditions?.find((c) => c.type === type);
const podNames = async (): Promise<string[]> =>
  (await k(['get', 'pods', '-n', NS, '-o', 'jsonpath={.items[*].metadata.name}'])).stdout.split(' ').filter(Boolean).sort();

/** Posts the node's Ready condition with a new heartbeat, as a kubelet does. */
async function postReady(name: string): Promise<void> {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const body = {
    status: {
      conditions: [
        { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status', lastHeartbeatTime: now, lastTransitionTime: now },
      ],
    },
  };
  const res = await request(server, 'PATCH', `/api/v1/nodes/${name}/status`, { body, headers: { 'content-type': 'application/strategic-merge-patch+json' } });
  if (res.status !== 200) throw new Error(`posting status of ${name}: ${res.status} ${res.body}`);
}

/** Renews the node's Lease (created on first use), as a kubelet does every 10 s. */
async function renewLease(name: string): Promise<void> {
  const renewTime = new Date().toISOString().replace('Z', '000Z');
  const path = `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${name}`;
  const body = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name }, spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime } };
  const res = await request(server, 'PATCH', `${path}?fieldManager=kubelet&force=true`, { body, headers: { 'content-type': 'application/apply-patch+yaml' } });
  if (res.status !== 200 && res.status !== 201) throw new Error(`renewing the lease of ${name}: ${res.status} ${res.body}`);
}

async function createNode(name: string, zone: string): Promise<void> {
  await k(['create', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'topology.kubernetes.io/zone': zone } } }));
}

async function createPod(name: string, node: string, extra: Record<string, unknown> = {}, finalizers?: string[]): Promise<void> {
  await k(
    ['create', '-n', NS, '-f', '-'],
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, ...(finalizers ? { finalizers } : {}) },
      spec: { nodeName: node, containers: [{ name: 'c', image: 'busybox' }], ...extra },
    }),
  );
  await k([
    'patch',
    'pod',
    name,
    '-n',
    NS,
    '--subresource=status',
    '--type=merge',
    '-p',
    '{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}',
  ]);
}

beforeAll(async () => {
  server = await startServer({ env: { KAPI_NODE_MONITOR_PERIOD_MS: '200', KAPI_NODE_MONITOR_GRACE_MS: '5000', KAPI_NODE_STARTUP_GRACE_MS: '6000' } });
  await k(['create', 'namespace', NS]);
  heartbeat = setInterval(() => {
    for (const n of beating) void renewLease(n).catch(() => undefined);
  }, 300);
});

afterAll(async () => {
  if (heartbeat) clearInterval(heartbeat);
  await server?.cleanup();
});

it('marks a node that stops posting status Unknown, taints it, marks its pods not ready and evicts those whose toleration runs out', async () => {
  await createNode('steady', 'a');
  await createNode('flaky', 'a');
  await postReady('steady');
  await postReady('flaky');
  beating = new Set(['steady', 'flaky']);
  await renewLease('steady');
  await renewLease('flaky');
  // A pod with the default tolerations (300 s, added at admission), one tolerating unreachable
  // for 1 s and holding a finalizer, one tolerating it for ever.
  await createPod('default', 'flaky');
  await createPod(
    'brief',
    'flaky',
    { tolerations: [{ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 1 }] },
    ['example.com/hold'],
  );
  await createPod('forever', 'flaky', { tolerations: [{ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' }] });
  // Heartbeats keep both nodes Ready past the grace period.
  await new Promise((r) => setTimeout(r, 6_000));
  expect((await conditionOf('flaky', 'Ready'))?.status).toBe('True');
  expect(await taintsOf('flaky')).toEqual([]);

  beating = new Set(['steady']);
  await waitFor('flaky Unknown', async () => (await conditionOf('flaky', 'Ready'))?.status === 'Unknown');
  const ready = await conditionOf('flaky', 'Ready');
  expect(ready).toEqual(expect.objectContaining({ reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.' }));
  expect((await conditionOf('flaky', 'MemoryPressure'))?.status).toBe('Unknown');
  expect((await conditionOf('steady', 'Ready'))?.status).toBe('True');
  await waitFor('flaky tainted', async () => (await taintsOf('flaky')).length === 2);
  expect(await taintsOf('flaky')).toEqual(['node.kubernetes.io/unreachable:NoExecute', 'node.kubernetes.io/unreachable:NoSchedule']);
  const noExecute = (await getNode('flaky')).spec.taints!.find((t) => t.effect === 'NoExecute')!;
  expect(Number.isFinite(Date.parse(noExecute.timeAdded ?? ''))).toBe(true);
  // kubectl shows the node NotReady.
  expect((await k(['get', 'node', 'flaky', '--no-headers'])).stdout).toMatch(/^flaky\s+NotReady/);

  // Its pods are no longer ready.
  const podReady = async (name: string) => (await k(['get', 'pod', name, '-n', NS, '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}'])).stdout;
  await waitFor('pods marked not ready', async () => (await podReady('default')) === 'False' && (await podReady('forever')) === 'False');

  // The pod tolerating unreachable for 1 s is evicted: the DisruptionTarget condition, then its deletion (held by its finalizer).
  await waitFor('brief evicted', async () => (await k(['get', 'pod', 'brief', '-n', NS, '-o', 'jsonpath={.metadata.deletionTimestamp}'])).stdout !== '');
  const brief = JSON.parse((await k(['get', 'pod', 'brief', '-n', NS, '-o', 'json'])).stdout) as { status: { conditions: Condition[] } };
  expect(brief.status.conditions).toContainEqual(
    expect.objectContaining({
      type: 'DisruptionTarget',
      status: 'True',
      reason: 'DeletionByTaintManager',
      message: 'Taint manager: deleting due to NoExecute taint',
    }),
  );
  await k(['patch', 'pod', 'brief', '-n', NS, '--type=json', '-p', '[{"op":"remove","path":"/metadata/finalizers"}]']);
  await waitFor('brief gone', async () => !(await podNames()).includes('brief'));
  expect(await podNames()).toEqual(['default', 'forever']);
  await eventsOnceSeen(server, NS, 'reason=TaintManagerEviction', (out) => out.includes(`Marking for deletion Pod ${NS}/brief`));
  await eventsOnceSeen(
    server,
    'default',
    'involvedObject.name=flaky',
    (out) => out.includes('NodeNotReady') && out.includes('RegisteredNode'),
    '{.items[*].reason}',
  );

  // The kubelet comes back: the taints go, the pods tolerating unreachable stay.
  await postReady('flaky');
  beating = new Set(['steady', 'flaky']);
  await waitFor('flaky untainted', async () => (await taintsOf('flaky')).length === 0);
  expect((await conditionOf('flaky', 'Ready'))?.status).toBe('True');
  expect(await podNames()).toEqual(['default', 'forever']);
  // The eviction the default toleration had set for 300 s later is called off.
  await waitFor('cancellation event', async () =>
    (await k(['get', 'events', '-n', NS, '--field-selector', 'reason=TaintManagerEviction', '-o', 'jsonpath={.items[*].message}'])).stdout.includes(
      `Cancelling deletion of Pod ${NS}/default`,
    ),
  );
  const cancelled = (await k(['get', 'events', '-n', NS, '--field-selector', 'reason=TaintManagerEviction', '-o', 'jsonpath={.items[*].message}'])).stdout;
  expect(cancelled).not.toContain(`Cancelling deletion of Pod ${NS}/forever`);
});

it('marks a node that never posted status NodeStatusNeverUpdated after the startup grace period', async () => {
  await createNode('bare', 'b');
  // Within the startup grace period: untouched.
  await new Promise((r) => setTimeout(r, 1_000));
  expect((await getNode('bare')).status?.conditions ?? []).toEqual([]);
  await waitFor('bare Unknown', async () => (await conditionOf('bare', 'Ready'))?.status === 'Unknown');
  expect(await conditionOf('bare', 'Ready')).toEqual(
    expect.objectContaining({ reason: 'NodeStatusNeverUpdated', message: 'Kubelet never posted node status.' }),
  );
  expect((await getNode('bare')).status!.conditions!.map((c) => c.type).sort()).toEqual(['DiskPressure', 'MemoryPressure', 'PIDPressure', 'Ready']);
  // Its zone is all down, but not every zone: it is tainted like any other.
  await waitFor('bare tainted', async () => (await taintsOf('bare')).length === 2);
  await k(['delete', 'node', 'bare']);
  // The controller says it registered the node, and that it removed it.
  const messages = async () =>
    (await k(['get', 'events', '-n', 'default', '--field-selector', 'involvedObject.name=bare', '-o', 'jsonpath={.items[*].message}'])).stdout;
  await waitFor('RemovingNode', async () => (await messages()).includes('Node bare event: Removing Node bare from Controller'));
  expect(await messages()).toContain('Node bare event: Registered Node bare in Controller');
});

it('taints a cordoned node unschedulable, and evicts pods that do not tolerate a NoExecute taint at once', async () => {
  await k(['cordon', 'steady']);
  await waitFor('unschedulable taint', async () => (await taintsOf('steady')).includes('node.kubernetes.io/unschedulable:NoSchedule'));
  await k(['uncordon', 'steady']);
  await waitFor('unschedulable taint gone', async () => !(await taintsOf('steady')).includes('node.kubernetes.io/unschedulable:NoSchedule'));

  await createPod('plain', 'steady');
  await createPod('tolerant', 'steady', { tolerations: [{ key: 'example.com/maintenance', operator: 'Exists', effect: 'NoExecute' }] });
  await k(['taint', 'nodes', 'steady', 'example.com/maintenance=true:NoExecute']);
  await waitFor('plain evicted', async () => !(await podNames()).includes('plain'));
  expect(await podNames()).toContain('tolerant');
  // Other taints are the operator's: the controller leaves this one in place.
  expect(await taintsOf('steady')).toEqual(['example.com/maintenance:NoExecute']);
});

it('evicts nothing while every node is down: the NoExecute readiness taints are taken off', async () => {
  await waitFor('flaky Ready and untainted', async () => (await conditionOf('flaky', 'Ready'))?.status === 'True' && (await taintsOf('flaky')).length === 0);
  await createPod('short', 'flaky', {
    tolerations: [{ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 3 }],
  });
  beating = new Set();
  await waitFor(
    'both Unknown',
    async () => (await conditionOf('steady', 'Ready'))?.status === 'Unknown' && (await conditionOf('flaky', 'Ready'))?.status === 'Unknown',
  );
  await waitFor('only NoSchedule readiness taints', async () => {
    const all = [...(await taintsOf('steady')), ...(await taintsOf('flaky'))];
    return all.includes('node.kubernetes.io/unreachable:NoSchedule') && !all.some((t) => t.startsWith('node.kubernetes.io/unreachable:NoExecute'));
  });
  // Past its 3 s toleration: the pod stays (a node that went down a pass before the other was
  // tainted for a moment, well within those 3 s).
  await new Promise((r) => setTimeout(r, 3_500));
  expect(await taintsOf('flaky')).toEqual(['node.kubernetes.io/unreachable:NoSchedule']);
  expect(await podNames()).toContain('short');
});
