import type { KubeObject } from '@app/apimachinery';
import {
  daemonPod,
  daemonSetStatus,
  daemonTolerations,
  FailedPodBackoff,
  managePlan,
  nodeShouldRun,
  podsByNode,
  revisionsToDelete,
  rollingLimits,
  rollingUpdatePlan,
  targetNode,
} from './daemonset.logic.js';

type Obj = Record<string, unknown>;

const ds = (podSpec: Obj = {}, spec: Obj = {}): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'DaemonSet',
  metadata: { name: 'agent', namespace: 'default', uid: 'ds-uid', generation: 2, annotations: { 'deprecated.daemonset.template.generation': '2' } },
  spec: {
    selector: { matchLabels: { app: 'agent' } },
    template: { metadata: { labels: { app: 'agent' } }, spec: { containers: [{ name: 'c', image: 'agent:1' }], ...podSpec } },
    ...spec,
  },
});

const node = (name: string, labels: Record<string, string> = {}, spec: Obj = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name, labels },
  spec,
});

let seq = 0;
const pod = (nodeName: string, hash: string, opts: { ready?: boolean; phase?: string; bound?: boolean; created?: string } = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: `agent-${++seq}`,
    uid: `p${seq}`,
    creationTimestamp: opts.created ?? `2026-01-01T00:00:${String(seq % 60).padStart(2, '0')}Z`,
    labels: { app: 'agent', 'controller-revision-hash': hash },
  },
  spec: opts.bound
    ? { nodeName }
    : {
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [nodeName] }] }],
            },
          },
        },
      },
  status: { phase: opts.phase ?? 'Running', conditions: [{ type: 'Ready', status: opts.ready === false ? 'False' : 'True' }] },
});

const names = (ps: { pod: KubeObject }[]) => ps.map((d) => d.pod.metadata.name);

describe('DaemonSet controller rules', () => {
  it('runs a pod on nodes matched by nodeSelector and required node affinity', () => {
    const sel = ds({ nodeSelector: { disk: 'ssd' } });
    expect(nodeShouldRun(node('a', { disk: 'ssd' }), sel)).toEqual({ shouldRun: true, shouldContinueRunning: true });
    expect(nodeShouldRun(node('b', { disk: 'hdd' }), sel)).toEqual({ shouldRun: false, shouldContinueRunning: false });
    expect(nodeShouldRun(node('b'), ds())).toEqual({ shouldRun: true, shouldContinueRunning: true });

    const affinity = (terms: Obj[]) => ds({ affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } } } });
    const run = (d: KubeObject, n: KubeObject) => nodeShouldRun(n, d).shouldRun;
    const exprs = affinity([
      {
        matchExpressions: [
          { key: 'zone', operator: 'In', values: ['z1', 'z2'] },
          { key: 'gpu', operator: 'DoesNotExist' },
          { key: 'cores', operator: 'Gt', values: ['4'] },
          { key: 'tier', operator: 'NotIn', values: ['edge'] },
        ],
      },
    ]);
    expect(run(exprs, node('n', { zone: 'z1', cores: '8' }))).toBe(true);
    expect(run(exprs, node('n', { zone: 'z3', cores: '8' }))).toBe(false);
    expect(run(exprs, node('n', { zone: 'z1', cores: '8', gpu: 'yes' }))).toBe(false);
    expect(run(exprs, node('n', { zone: 'z1', cores: '2' }))).toBe(false);
    expect(run(exprs, node('n', { zone: 'z1', cores: 'many' }))).toBe(false);
    expect(run(exprs, node('n', { zone: 'z1', cores: '8', tier: 'edge' }))).toBe(false);
    // Terms are ORed; matchFields compares the node's name; an empty term matches nothing.
    const fields = affinity([
      { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['x'] }] },
      { matchExpressions: [{ key: 'lt', operator: 'Lt', values: ['3'] }] },
    ]);
    expect(run(fields, node('x'))).toBe(true);
    expect(run(fields, node('y', { lt: '2' }))).toBe(true);
    expect(run(fields, node('y', { lt: '3' }))).toBe(false);
    expect(run(affinity([{}]), node('x'))).toBe(false);
    expect(run(affinity([{ matchExpressions: [{ key: 'k', operator: 'Bogus' }] }]), node('x', { k: 'v' }))).toBe(false);
    // A template naming another node rules every other node out.
    expect(run(ds({ nodeName: 'x' }), node('y'))).toBe(false);
  });

  it("skips tainted nodes unless tolerated, keeping pods on NoSchedule ones, with the controller's own tolerations", () => {
    const taint = (key: string, effect: string, value?: string) => ({ taints: [{ key, effect, ...(value ? { value } : {}) }] });
    expect(nodeShouldRun(node('t', {}, taint('dedicated', 'NoSchedule', 'db')), ds())).toEqual({ shouldRun: false, shouldContinueRunning: true });
    expect(nodeShouldRun(node('t', {}, taint('dedicated', 'NoExecute', 'db')), ds())).toEqual({ shouldRun: false, shouldContinueRunning: false });
    expect(nodeShouldRun(node('t', {}, taint('dedicated', 'PreferNoSchedule')), ds()).shouldRun).toBe(true);
    const tolerating = ds({ tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'db', effect: 'NoSchedule' }] });
    expect(nodeShouldRun(node('t', {}, taint('dedicated', 'NoSchedule', 'db')), tolerating).shouldRun).toBe(true);
    expect(nodeShouldRun(node('t', {}, taint('dedicated', 'NoSchedule', 'web')), tolerating).shouldRun).toBe(false);
    expect(nodeShouldRun(node('t', {}, taint('any', 'NoExecute')), ds({ tolerations: [{ operator: 'Exists' }] })).shouldRun).toBe(true);
    // Unschedulable and not-ready nodes still run daemons; network-unavailable only with hostNetwork.
    expect(nodeShouldRun(node('u', {}, { unschedulable: true, ...taint('node.kubernetes.io/unschedulable', 'NoSchedule') }), ds()).shouldRun).toBe(true);
    expect(nodeShouldRun(node('u', {}, taint('node.kubernetes.io/not-ready', 'NoExecute')), ds()).shouldRun).toBe(true);
    expect(nodeShouldRun(node('u', {}, taint('node.kubernetes.io/network-unavailable', 'NoSchedule')), ds()).shouldRun).toBe(false);
    expect(nodeShouldRun(node('u', {}, taint('node.kubernetes.io/network-unavailable', 'NoSchedule')), ds({ hostNetwork: true })).shouldRun).toBe(true);
    expect(daemonTolerations({ tolerations: [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' }] })).toHaveLength(6);
  });

  it('creates the pod of a node pinned by a node-name affinity term, labelled and owned', () => {
    const d = ds({
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['old'] }] }] },
        },
      },
    });
    const p = daemonPod(d, 'n1', 'h1');
    expect(p.metadata).toEqual({
      generateName: 'agent-',
      namespace: 'default',
      labels: { app: 'agent', 'controller-revision-hash': 'h1', 'pod-template-generation': '2' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'agent', uid: 'ds-uid', controller: true, blockOwnerDeletion: true }],
    });
    const spec = p.spec as Obj;
    expect(spec.nodeName).toBeUndefined();
    expect(spec.affinity).toEqual({
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] }] },
      },
    });
    expect(spec.tolerations).toContainEqual({ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' });
    expect(targetNode(p)).toBe('n1');
    expect(targetNode({ ...p, spec: { ...spec, nodeName: 'bound' } })).toBe('bound');
    expect(targetNode({ ...p, spec: {} })).toBeUndefined();
    // The template is not changed.
    expect((d.spec as { template: { spec: Obj } }).template.spec.tolerations).toBeUndefined();
  });

  it('plans one pod a node: creates the missing, deletes extras (the oldest stays), failed pods and pods of nodes ruled out', () => {
    const d = ds({ nodeSelector: { role: 'worker' } });
    const nodes = [node('a', { role: 'worker' }), node('b', { role: 'worker' }), node('c'), node('d', { role: 'worker' })];
    const old = pod('b', 'h', { created: '2026-01-01T00:00:00Z' });
    const extra = pod('b', 'h', { created: '2026-01-01T00:01:00Z' });
    const wrong = pod('c', 'h');
    const failed = pod('d', 'h', { phase: 'Failed' });
    const gone = pod('z', 'h');
    const plan = managePlan(d, nodes, podsByNode([old, extra, wrong, failed, gone]), 'h');
    expect(plan.create).toEqual(['a']);
    expect(names(plan.delete)).toEqual([extra.metadata.name, wrong.metadata.name, failed.metadata.name, gone.metadata.name]);
    expect(plan.delete.find((x) => x.pod === failed)?.failed).toBe(true);
    // A pod being deleted still occupies its node.
    const going = { ...pod('a', 'h'), metadata: { ...pod('a', 'h').metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } };
    expect(managePlan(d, [nodes[0]!], podsByNode([going]), 'h')).toEqual({ create: [], delete: [] });
  });

  it('replaces old pods within maxUnavailable, unavailable old pods first', () => {
    const nodes = ['a', 'b', 'c', 'd'].map((n) => node(n));
    const now = new Date();
    const d = ds();
    const olds = nodes.map((n) => pod(n.metadata.name!, 'old'));
    expect(names(rollingUpdatePlan(d, nodes, podsByNode(olds), 'new', now).delete)).toEqual([olds[0]!.metadata.name]);
    const two = ds({}, { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '50%' } } });
    expect(rollingUpdatePlan(two, nodes, podsByNode(olds), 'new', now).delete).toHaveLength(2);
    // A new pod not yet ready uses the budget; an old pod not ready is replaced anyway.
    const pending = pod('a', 'new', { ready: false });
    const sick = pod('d', 'old', { ready: false });
    const plan = rollingUpdatePlan(d, nodes, podsByNode([pending, olds[1]!, olds[2]!, sick]), 'new', now);
    expect(names(plan.delete)).toEqual([sick.metadata.name]);
    // A node without a pod counts as unavailable too.
    expect(rollingUpdatePlan(d, nodes, podsByNode([olds[1]!, olds[2]!]), 'new', now).delete).toEqual([]);
    // OnDelete: nothing.
    expect(rollingUpdatePlan(ds({}, { updateStrategy: { type: 'OnDelete' } }), nodes, podsByNode(olds), 'new', now)).toEqual({ create: [], delete: [] });
    expect(rollingLimits(ds({}, { updateStrategy: { rollingUpdate: { maxUnavailable: 0, maxSurge: 0 } } }), 4)).toEqual({ maxUnavailable: 1, maxSurge: 0 });
    expect(rollingLimits(ds({}, { updateStrategy: { rollingUpdate: { maxUnavailable: 'bad' } } }), 4)).toEqual({ maxUnavailable: 1, maxSurge: 0 });
  });

  it('surges new pods next to old ones within maxSurge and deletes an old pod once its successor is available', () => {
    const nodes = ['a', 'b', 'c'].map((n) => node(n));
    const d = ds({}, { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } } });
    const now = new Date();
    const olds = nodes.map((n) => pod(n.metadata.name!, 'old'));
    expect(rollingUpdatePlan(d, nodes, podsByNode(olds), 'new', now)).toEqual({ create: ['a'], delete: [] });
    const surging = pod('a', 'new', { ready: false });
    expect(rollingUpdatePlan(d, nodes, podsByNode([...olds, surging]), 'new', now)).toEqual({ create: [], delete: [] });
    const ready = pod('a', 'new');
    expect(rollingUpdatePlan(d, nodes, podsByNode([...olds, ready]), 'new', now)).toEqual({ create: ['b'], delete: [{ pod: olds[0] }] });
    // With surge, a node keeps an old and a new pod; manage leaves both.
    expect(managePlan(d, nodes, podsByNode([...olds, ready]), 'new').delete).toEqual([]);
  });

  it('counts the status by node', () => {
    const d = ds({ nodeSelector: { role: 'worker' } }, { minReadySeconds: 3600 });
    const nodes = [node('a', { role: 'worker' }), node('b', { role: 'worker' }), node('c', { role: 'worker' }), node('x')];
    const s = daemonSetStatus(
      { ...d, status: { collisionCount: 1 } },
      nodes,
      podsByNode([pod('a', 'new'), pod('b', 'old', { ready: false }), pod('x', 'new')]),
      'new',
      new Date(),
    );
    expect(s).toEqual({
      collisionCount: 1,
      desiredNumberScheduled: 3,
      currentNumberScheduled: 2,
      numberMisscheduled: 1,
      numberReady: 1,
      numberAvailable: 0,
      numberUnavailable: 3,
      updatedNumberScheduled: 1,
      observedGeneration: 2,
    });
  });

  it('deletes the oldest revisions beyond the history limit that no pod uses', () => {
    const rev = (n: number): KubeObject =>
      ({
        apiVersion: 'apps/v1',
        kind: 'ControllerRevision',
        metadata: { name: `r${n}`, labels: { 'controller-revision-hash': `h${n}` } },
        revision: n,
      }) as KubeObject;
    const old = [3, 1, 2, 4].map(rev);
    expect(revisionsToDelete(ds({}, { revisionHistoryLimit: 2 }), old, [pod('a', 'h1')]).map((r) => r.metadata.name)).toEqual(['r2', 'r3']);
    expect(revisionsToDelete(ds(), old, [])).toEqual([]);
  });
  it('backs off failed daemon pods per key: 1 s, doubled up to the maximum, starting over after twice the maximum', () => {
    const b = new FailedPodBackoff(1000, 8000);
    expect(b.remaining('ds/n1', 0)).toBe(0);
    b.next('ds/n1', 0);
    expect([b.remaining('ds/n1', 400), b.remaining('ds/n1', 1000), b.remaining('ds/n2', 400)]).toEqual([600, 0, 0]);
    b.next('ds/n1', 1000);
    expect(b.remaining('ds/n1', 1000)).toBe(2000);
    for (const t of [3000, 7000, 15000]) b.next('ds/n1', t);
    expect(b.remaining('ds/n1', 15000)).toBe(8000);
    // Quiet for more than twice the maximum: the next failure starts at 1 s again.
    b.next('ds/n1', 40000);
    expect(b.remaining('ds/n1', 40000)).toBe(1000);
    b.gc(60000);
    expect(b.remaining('ds/n1', 40500)).toBe(0);
  });
});
