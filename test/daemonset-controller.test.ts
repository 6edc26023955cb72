/**
 * The DaemonSet controller through kubectl: a DaemonSet gets one pod on every node its
 * nodeSelector matches (a tainted node only when tolerated), each pinned to its node by a
 * node-name affinity term (no scheduler here: the pod stays unbound until a binding names the
 * node); a node added gets a pod and a node relabelled out loses it; `kubectl get ds` shows the
 * counts, which move when the test plays the kubelet (pods written Ready through `/status`); a
 * rolling update replaces pods within maxUnavailable, OnDelete only replaces pods deleted by
 * someone else; ControllerRevisions back `kubectl rollout history`, `rollout undo` and `rollout
 * status`; Events record the creations and deletions.
 */
import { eventsOnceSeen } from './support/kubectl.helper.js';
import { waitFor } from './support/net.helper.js';
import { type ServerHandle, kubectl, request, startServer } from './support/server.js';

const NS = 'default';
const PODS = `/api/v1/namespaces/${NS}/pods`;

interface Pod {
  metadata: {
    name: string;
    uid: string;
    generateName?: string;
    creationTimestamp?: string;
    labels?: Record<string, string>;
    ownerReferences?: { kind: string; name: string; controller?: boolean; blockOwnerDeletion?: boolean }[];
  };
  spec: {
    nodeName?: string;
    tolerations?: { key?: string; effect?: string }[];
    affinity?: { nodeAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms: { matchFields?: { values: string[] }[] }[] } } };
  };
  status?: Record<string, unknown>;
}
interface Revision {
  metadata: { name: string; labels?: Record<string, string>; ownerReferences?: { kind: string; name: string }[] };
  revision: number;
  data: { spec: { template: { spec: { containers: { image: string }[] } } } };
}

const daemonSet = (name: string, pool: string, opts: { image?: string; tolerate?: string; strategy?: string; extra?: string } = {}) => `apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: ${name}
spec:
  selector:
    matchLabels:
      app: ${name}
  updateStrategy:
    type: ${opts.strategy ?? 'RollingUpdate'}
${opts.extra ?? ''}  template:
    metadata:
      labels:
        app: ${name}
    spec:
      nodeSelector:
        pool: ${pool}
${opts.tolerate ? `      tolerations:\n      - key: ${opts.tolerate}\n        operator: Exists\n        effect: NoSchedule\n` : ''}      containers:
      - name: c
        image: ${opts.image ?? 'agent:1'}
`;

/** The node a daemon pod is pinned to: its nodeName once bound, else its affinity term's. */
const nodeOf = (p: Pod): string | undefined =>
  p.spec.nodeName ?? p.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms[0]?.matchFields?.[0]?.values[0];
const isReady = (p: Pod): boolean =>
  ((p.status?.conditions as { type: string; status: string }[] | undefined) ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

describe('DaemonSet controller', () => {
  let server: ServerHandle;
  const k = (args: string[], opts: { input?: string; expectFail?: boolean } = {}) => kubectl(server, args, opts);
  const podsOf = async (ds: string): Promise<Pod[]> =>
    (JSON.parse((await k(['get', 'pods', '-n', NS, '-l', `app=${ds}`, '-o', 'json'])).stdout) as { items: Pod[] }).items;
  /** Waits until the DaemonSet's pods are exactly on `nodes` (one each). */
  const waitNodes = (ds: string, nodes: string[]) =>
    waitFor(
      `pods of ${ds} on ${nodes.join(',')}`,
      async () => {
        const ps = await podsOf(ds);
        const on = ps.map(nodeOf).sort();
        return JSON.stringify(on) === JSON.stringify([...nodes].sort()) ? ps : undefined;
      },
      30_000,
    );
  const addNode = async (name: string, labels: Record<string, string>, spec: Record<string, unknown> = {}) => {
    const r = await request(server, 'POST', '/api/v1/nodes', { body: { apiVersion: 'v1', kind: 'Node', metadata: { name, labels }, spec } });
    expect(r.status).toBe(201);
    // A new Node is tainted not-ready (NoSchedule) until it is ready; no daemon pod goes there
    // before. The node lifecycle controller takes the taint off a Node without conditions within
    // a pass; the test does not wait for it (and the taint may be gone already).
    await kubectl(server, ['taint', 'node', name, 'node.kubernetes.io/not-ready:NoSchedule-'], { expectFail: 'any' });
    const taints = ((await request(server, 'GET', `/api/v1/nodes/${name}`)).json() as { spec: { taints?: Array<{ key: string }> } }).spec.taints ?? [];
    expect(taints.map((t) => t.key)).not.toContain('node.kubernetes.io/not-ready');
  };
  /** Plays the kubelet: the pod runs and is Ready. */
  const makeReady = async (name: string) => {
    const cur = (await request(server, 'GET', `${PODS}/${name}`)).json() as Pod;
    cur.status = {
      ...cur.status,
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') }],
    };
    expect((await request(server, 'PUT', `${PODS}/${name}/status`, { body: cur })).status).toBe(200);
  };
  const dsRow = async (name: string): Promise<string> => (await k(['get', 'ds', name, '-n', NS, '--no-headers'])).stdout;
  const waitRow = (name: string, re: RegExp) => waitFor(`ds ${name} row ${re}`, async () => re.test(await dsRow(name)), 30_000);
  const revisionsOf = async (ds: string): Promise<Revision[]> =>
    (JSON.parse((await k(['get', 'controllerrevisions', '-n', NS, '-l', `app=${ds}`, '-o', 'json'])).stdout) as { items: Revision[] }).items.sort(
      (a, b) => a.revision - b.revision,
    );

  beforeAll(async () => {
    // Failed daemon pods on one node are deleted at most every 4 s at first (kube's 1 s, lengthened).
    server = await startServer({ env: { KAPI_DAEMONSET_FAILED_POD_BACKOFF_MS: '4000' } });
  });

  afterAll(async () => {
    await server?.cleanup();
  });

  it('runs one pod on every eligible node, follows nodes coming and going, and counts them', async () => {
    await addNode('a1', { pool: 'a' });
    await addNode('a2', { pool: 'a' });
    await addNode('b1', { pool: 'b' });
    await addNode('a3', { pool: 'a' }, { taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] });
    await addNode('a4', { pool: 'a' }, { unschedulable: true });

    expect((await k(['apply', '-f', '-'], { input: daemonSet('agent', 'a') })).stdout).toContain('daemonset.apps/agent created');
    const pods = await waitNodes('agent', ['a1', 'a2', 'a4']);
    const [revision] = await revisionsOf('agent');
    const hash = revision!.metadata.labels!['controller-revision-hash']!;
    expect(revision!.metadata.name).toBe(`agent-${hash}`);
    for (const p of pods) {
      expect(p.metadata.generateName).toBe('agent-');
      expect(p.metadata.labels).toEqual({ app: 'agent', 'controller-revision-hash': hash, 'pod-template-generation': '1' });
      expect(p.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'DaemonSet', name: 'agent', controller: true, blockOwnerDeletion: true })]);
      expect(p.spec.nodeName).toBeUndefined();
      expect(p.spec.tolerations).toContainEqual({ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' });
    }
    await waitRow('agent', /^agent\s+3\s+3\s+0\s+3\s+0\s+pool=a\s+/);

    // A DaemonSet tolerating the taint runs on the tainted node too.
    await k(['apply', '-f', '-'], { input: daemonSet('tolerant', 'a', { tolerate: 'dedicated' }) });
    await waitNodes('tolerant', ['a1', 'a2', 'a3', 'a4']);

    // The kubelet's part: pods become Ready; one is bound to its node.
    for (const p of pods) await makeReady(p.metadata.name);
    const bound = pods.find((p) => nodeOf(p) === 'a1')!;
    const binding = { apiVersion: 'v1', kind: 'Binding', metadata: { name: bound.metadata.name }, target: { kind: 'Node', name: 'a1' } };
    expect((await request(server, 'POST', `${PODS}/${bound.metadata.name}/binding`, { body: binding })).status).toBe(201);
    await waitRow('agent', /^agent\s+3\s+3\s+3\s+3\s+3\s+pool=a\s+/);
    const status = JSON.parse((await k(['get', 'ds', 'agent', '-o', 'jsonpath={.status}'])).stdout) as Record<string, number>;
    expect(status).toMatchObject({ desiredNumberScheduled: 3, currentNumberScheduled: 3, numberMisscheduled: 0, numberUnavailable: 0, observedGeneration: 1 });

    // A node joins the pool: a pod; a node leaves it: its pod goes.
    await addNode('a5', { pool: 'a' });
    await waitNodes('agent', ['a1', 'a2', 'a4', 'a5']);
    await k(['label', 'node', 'a2', 'pool=b', '--overwrite']);
    const after = await waitNodes('agent', ['a1', 'a4', 'a5']);
    expect(after.map((p) => p.metadata.name)).toContain(bound.metadata.name);
    await waitRow('agent', /^agent\s+3\s+3\s+2\s+3\s+2\s+pool=a\s+/);

    const gone = pods.find((p) => nodeOf(p) === 'a2')!.metadata.name;
    await eventsOnceSeen(server, NS, 'involvedObject.name=agent,reason=SuccessfulCreate', (out) => out.includes(`Created pod: ${pods[0]!.metadata.name}`));
    expect(await eventsOnceSeen(server, NS, 'involvedObject.name=agent,reason=SuccessfulDelete', (out) => out !== '')).toBe(`Deleted pod: ${gone}`);
    expect((await k(['get', 'events', '-n', NS, '--field-selector', 'involvedObject.name=agent', '-o', 'jsonpath={.items[0].source.component}'])).stdout).toBe(
      'daemonset-controller',
    );

    // A pod deleted by someone else comes back.
    await k(['delete', 'pod', '-n', NS, bound.metadata.name]);
    const back = await waitFor(
      'a new pod on a1',
      async () => (await podsOf('agent')).find((p) => nodeOf(p) === 'a1' && p.metadata.name !== bound.metadata.name),
      30_000,
    );
    expect(back.spec.nodeName).toBeUndefined();
  });

  it('replaces a failed daemon pod, and backs off on a node where they keep failing', async () => {
    await addNode('f1', { pool: 'f' });
    await k(['apply', '-f', '-'], { input: daemonSet('flaky', 'f') });
    const fail = async (name: string) => {
      const cur = (await request(server, 'GET', `${PODS}/${name}`)).json() as Pod;
      cur.status = { ...cur.status, phase: 'Failed' };
      expect((await request(server, 'PUT', `${PODS}/${name}/status`, { body: cur })).status).toBe(200);
    };
    const [first] = await waitNodes('flaky', ['f1']);
    await fail(first!.metadata.name);
    // The first failure: deleted and replaced at once.
    const second = await waitFor('a second pod', async () => (await podsOf('flaky')).find((p) => p.metadata.name !== first!.metadata.name));
    await eventsOnceSeen(server, NS, 'involvedObject.name=flaky,reason=FailedDaemonPod', (out) =>
      out.includes(`Found failed daemon pod ${NS}/${first!.metadata.name} on node f1, will try to kill it`),
    );
    // The next one on the same node within the back-off stays for now, then goes too.
    await fail(second.metadata.name);
    await new Promise((r) => setTimeout(r, 1000));
    expect((await podsOf('flaky')).map((p) => p.metadata.name)).toEqual([second.metadata.name]);
    const third = await waitFor('a third pod', async () =>
      (await podsOf('flaky')).find((p) => ![first!.metadata.name, second.metadata.name].includes(p.metadata.name)),
    );
    expect(nodeOf(third)).toBe('f1');
    await k(['delete', 'ds', 'flaky', '-n', NS]);
  });

  it('rolls an update out within maxUnavailable and keeps revisions for rollout history, undo and status', async () => {
    for (const n of ['r1', 'r2', 'r3']) await addNode(n, { pool: 'r' });
    await k(['apply', '-f', '-'], { input: daemonSet('roll', 'r') });
    for (const p of await waitNodes('roll', ['r1', 'r2', 'r3'])) await makeReady(p.metadata.name);
    await waitRow('roll', /^roll\s+3\s+3\s+3\s+3\s+3\s+/);
    expect((await k(['rollout', 'status', 'ds/roll', '-n', NS, '--timeout=30s'])).stdout).toContain('daemon set "roll" successfully rolled out');

    /** Plays the kubelet through a rollout to `image`: never more than one node without a ready pod. */
    const rollTo = async (image: string) => {
      const replaced = new Set<string>();
      while (replaced.size < 3) {
        const fresh = await waitFor(
          `a new ${image} pod`,
          async () => {
            const ps = await podsOf('roll');
            const pending = ps.find((p) => !isReady(p) && !replaced.has(p.metadata.name));
            return pending ? { pending, ps } : undefined;
          },
          30_000,
        );
        const image0 = (p: Pod) => (p as unknown as { spec: { containers: { image: string }[] } }).spec.containers[0]!.image;
        expect(image0(fresh.pending)).toBe(image);
        // The others are ready: the old pods not yet replaced and the new ones already.
        const others = fresh.ps.filter((p) => p !== fresh.pending);
        expect(others).toHaveLength(2);
        expect(others.every(isReady)).toBe(true);
        expect(others.filter((p) => image0(p) === image)).toHaveLength(replaced.size);
        replaced.add(fresh.pending.metadata.name);
        await makeReady(fresh.pending.metadata.name);
      }
    };

    await k(['set', 'image', 'ds/roll', 'c=agent:2', '-n', NS]);
    await rollTo('agent:2');
    await waitRow('roll', /^roll\s+3\s+3\s+3\s+3\s+3\s+/);
    expect((await k(['rollout', 'status', 'ds/roll', '-n', NS, '--timeout=30s'])).stdout).toContain('daemon set "roll" successfully rolled out');

    const revisions = await revisionsOf('roll');
    expect(revisions.map((r) => [r.revision, r.data.spec.template.spec.containers[0]!.image])).toEqual([
      [1, 'agent:1'],
      [2, 'agent:2'],
    ]);
    expect(revisions[1]!.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'DaemonSet', name: 'roll' })]);
    const hash2 = revisions[1]!.metadata.labels!['controller-revision-hash'];
    expect((await podsOf('roll')).map((p) => p.metadata.labels!['controller-revision-hash'])).toEqual([hash2, hash2, hash2]);
    const history = (await k(['rollout', 'history', 'ds/roll', '-n', NS])).stdout;
    expect(history).toMatch(/^REVISION\s+CHANGE-CAUSE\n1\s+<none>\n2\s+<none>$/m);
    expect((await k(['rollout', 'history', 'ds/roll', '-n', NS, '--revision=1'])).stdout).toMatch(/Image:\s+agent:1/);

    // Undo: the first revision's template comes back and moves to revision 3.
    expect((await k(['rollout', 'undo', 'ds/roll', '-n', NS])).stdout).toContain('daemonset.apps/roll rolled back');
    expect((await k(['get', 'ds', 'roll', '-n', NS, '-o', 'jsonpath={.spec.template.spec.containers[0].image}'])).stdout).toBe('agent:1');
    await rollTo('agent:1');
    await waitFor('revisions 2 and 3', async () => JSON.stringify((await revisionsOf('roll')).map((r) => r.revision)) === '[2,3]', 30_000);
    expect((await k(['rollout', 'history', 'ds/roll', '-n', NS])).stdout).toMatch(/^REVISION\s+CHANGE-CAUSE\n2\s+<none>\n3\s+<none>$/m);
    await eventsOnceSeen(server, NS, 'involvedObject.name=roll,reason=SuccessfulDelete', (out) => /^(Deleted pod: roll-\w+ ?){6}$/.test(out));
  });

  it('with OnDelete replaces only the pods someone deletes', async () => {
    for (const n of ['o1', 'o2']) await addNode(n, { pool: 'o' });
    await k(['apply', '-f', '-'], { input: daemonSet('ondel', 'o', { strategy: 'OnDelete' }) });
    const first = await waitNodes('ondel', ['o1', 'o2']);
    await k(['set', 'image', 'ds/ondel', 'c=agent:2', '-n', NS]);
    await waitFor('observed generation 2', async () => (await k(['get', 'ds', 'ondel', '-o', 'jsonpath={.status.observedGeneration}'])).stdout === '2');
    await waitRow('ondel', /^ondel\s+2\s+2\s+0\s+0\s+0\s+/);
    expect((await podsOf('ondel')).map((p) => p.metadata.name).sort()).toEqual(first.map((p) => p.metadata.name).sort());
    const victim = first.find((p) => nodeOf(p) === 'o1')!;
    await k(['delete', 'pod', '-n', NS, victim.metadata.name]);
    const fresh = await waitFor(
      'a new pod on o1',
      async () => (await podsOf('ondel')).find((p) => nodeOf(p) === 'o1' && p.metadata.name !== victim.metadata.name),
      30_000,
    );
    expect(fresh.metadata.labels!['pod-template-generation']).toBe('2');
    await waitRow('ondel', /^ondel\s+2\s+2\s+0\s+1\s+0\s+/);
  });
});
