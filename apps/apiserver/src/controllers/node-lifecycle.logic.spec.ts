import type { KubeObject } from '@app/apimachinery';
import {
  evictionRate,
  evictionTime,
  noScheduleTaints,
  observeNode,
  podMarkedNotReady,
  TokenBucket,
  withNoExecuteTaint,
  zoneOf,
  zoneState,
} from './node-lifecycle.logic.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const grace = { startupMs: 60_000, monitorMs: 50_000 };

const node = (conditions?: Array<Record<string, unknown>>, spec: Record<string, unknown> = {}, labels?: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name: 'n1', creationTimestamp: '2026-01-01T00:00:00Z', ...(labels ? { labels } : {}) },
  spec,
  status: conditions ? { conditions } : {},
});
const ready = (status: string, heartbeat: string) => ({
  type: 'Ready',
  status,
  lastHeartbeatTime: heartbeat,
  lastTransitionTime: heartbeat,
  reason: 'KubeletReady',
});

describe('observeNode', () => {
  it('gives a node that never posted status the startup grace from its creation, then marks its conditions NodeStatusNeverUpdated', () => {
    const bare = node();
    expect(observeNode(bare, undefined, undefined, T0 + 59_000, grace).conditions).toBeUndefined();
    const obs = observeNode(bare, undefined, undefined, T0 + 61_000, grace);
    expect(obs.wasReady).toBe(false);
    expect(obs.conditions?.map((c) => [c.type, c.status, c.reason, c.message, c.lastHeartbeatTime])).toEqual(
      ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'].map((t) => [
        t,
        'Unknown',
        'NodeStatusNeverUpdated',
        'Kubelet never posted node status.',
        '2026-01-01T00:00:00Z',
      ]),
    );
    // What it wrote is not news on the next pass: nothing more to write.
    const after = observeNode({ ...bare, status: { conditions: obs.conditions } }, obs.health, undefined, T0 + 66_000, grace);
    expect(after.conditions).toBeUndefined();
  });

  it('counts a new heartbeat or a Lease renewal as hearing from the node, on its own clock', () => {
    const hb = '2026-01-01T00:00:10Z';
    // First seen (as after a failover): a whole grace period from now, whatever the heartbeat says.
    let obs = observeNode(node([ready('True', hb)]), undefined, undefined, T0 + 600_000, grace);
    expect(obs.health.probeMs).toBe(T0 + 600_000);
    expect(obs.conditions).toBeUndefined();
    // The same heartbeat 50 s later: silent past the grace.
    const silent = observeNode(node([ready('True', hb)]), obs.health, undefined, T0 + 650_001, grace);
    expect(silent.wasReady).toBe(true);
    expect(silent.conditions?.find((c) => c.type === 'Ready')).toEqual(
      expect.objectContaining({ status: 'Unknown', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.', lastHeartbeatTime: hb }),
    );
    // A Lease renewal keeps it alive; the same renewal again does not.
    obs = observeNode(node([ready('True', hb)]), obs.health, '2026-01-01T00:10:20Z', T0 + 640_000, grace);
    expect(obs.health.probeMs).toBe(T0 + 640_000);
    expect(observeNode(node([ready('True', hb)]), obs.health, '2026-01-01T00:10:20Z', T0 + 680_000, grace).conditions).toBeUndefined();
    expect(observeNode(node([ready('True', hb)]), obs.health, '2026-01-01T00:10:20Z', T0 + 690_001, grace).conditions).toBeDefined();
    // A new heartbeat does too.
    obs = observeNode(node([ready('True', '2026-01-01T00:11:00Z')]), obs.health, '2026-01-01T00:10:20Z', T0 + 689_000, grace);
    expect(obs.health.probeMs).toBe(T0 + 689_000);
  });

  it('leaves conditions already Unknown alone', () => {
    const hb = '2026-01-01T00:00:10Z';
    const unknown = node([
      { ...ready('Unknown', hb), reason: 'NodeStatusUnknown' },
      { type: 'MemoryPressure', status: 'Unknown' },
      { type: 'DiskPressure', status: 'Unknown' },
      { type: 'PIDPressure', status: 'Unknown' },
    ]);
    const first = observeNode(unknown, undefined, undefined, T0, grace);
    expect(observeNode(unknown, first.health, undefined, T0 + 100_000, grace).conditions).toBeUndefined();
  });
});

describe('taints', () => {
  it('keeps the NoSchedule taints in line with the conditions and the cordon, and leaves others alone', () => {
    const other = { key: 'example.com/dedicated', value: 'db', effect: 'NoSchedule' };
    const n = node([ready('False', 'x'), { type: 'MemoryPressure', status: 'True' }, { type: 'DiskPressure', status: 'False' }], {
      unschedulable: true,
      taints: [other, { key: 'node.kubernetes.io/disk-pressure', effect: 'NoSchedule' }],
    });
    expect(noScheduleTaints(n)).toEqual([
      other,
      { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' },
      { key: 'node.kubernetes.io/memory-pressure', effect: 'NoSchedule' },
      { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' },
    ]);
    const done = node([ready('False', 'x')], { taints: [other, { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }] });
    expect(noScheduleTaints(done)).toBeUndefined();
    expect(noScheduleTaints(node([ready('True', 'x')], { taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }] }))).toEqual([]);
  });

  it('adds, swaps and removes the NoExecute readiness taint with the time it was added', () => {
    const now = T0 + 5_000;
    const added = withNoExecuteTaint(node([ready('Unknown', 'x')]), 'node.kubernetes.io/unreachable', now);
    expect(added).toEqual([{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: '2026-01-01T00:00:05Z' }]);
    const tainted = node([ready('Unknown', 'x')], { taints: added });
    expect(withNoExecuteTaint(tainted, 'node.kubernetes.io/unreachable', now + 1000)).toBeUndefined();
    expect(withNoExecuteTaint(tainted, 'node.kubernetes.io/not-ready', now)).toEqual([
      { key: 'node.kubernetes.io/not-ready', effect: 'NoExecute', timeAdded: '2026-01-01T00:00:05Z' },
    ]);
    expect(withNoExecuteTaint(tainted, undefined, now)).toEqual([]);
  });

  it('paces the NoExecute taints by zone', () => {
    expect(zoneOf(node())).toBe('');
    expect(zoneOf(node(undefined, {}, { 'topology.kubernetes.io/region': 'r', 'topology.kubernetes.io/zone': 'a' }))).toBe('r:\0:a');
    expect(zoneState(0, 1)).toBe('FullDisruption');
    expect(zoneState(3, 2)).toBe('Normal');
    expect(zoneState(2, 3)).toBe('PartialDisruption');
    expect(zoneState(10, 3)).toBe('Normal');
    expect(evictionRate('Normal', 3)).toBe(0.1);
    expect(evictionRate('PartialDisruption', 10)).toBe(0);
    expect(evictionRate('PartialDisruption', 51)).toBe(0.01);
    const bucket = new TokenBucket(0.1, T0);
    expect(bucket.take(T0)).toBe(true);
    expect(bucket.take(T0 + 9_000)).toBe(false);
    expect(bucket.take(T0 + 10_000)).toBe(true);
    bucket.setRate(0, T0 + 10_000);
    expect(bucket.take(T0 + 1_000_000)).toBe(false);
  });
});

describe('taint eviction', () => {
  const taints = [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute', timeAdded: '2026-01-01T00:00:10Z' }];
  const pod = (tolerations?: Array<Record<string, unknown>>): KubeObject => ({
    metadata: { name: 'p' },
    spec: { nodeName: 'n1', ...(tolerations ? { tolerations } : {}) },
  });

  it('evicts at once without a toleration, after the shortest tolerationSeconds from the taint, never when tolerated for ever', () => {
    const seen = T0 + 20_000;
    expect(evictionTime(pod(), taints, seen)).toBe(-Infinity);
    expect(evictionTime(pod([{ key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }]), taints, seen)).toBe(
      T0 + 310_000,
    );
    expect(
      evictionTime(
        pod([
          { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
          { operator: 'Exists', tolerationSeconds: 5 },
        ]),
        taints,
        seen,
      ),
    ).toBe(T0 + 15_000);
    expect(evictionTime(pod([{ key: 'node.kubernetes.io/unreachable', operator: 'Exists' }]), taints, seen)).toBeUndefined();
    expect(evictionTime(pod([{ key: 'node.kubernetes.io/not-ready', operator: 'Exists' }]), taints, seen)).toBe(-Infinity);
    // A NoSchedule taint evicts nobody; a taint without timeAdded counts from when the pod was seen.
    expect(evictionTime(pod(), [{ key: 'k', effect: 'NoSchedule' }], seen)).toBeUndefined();
    expect(evictionTime(pod([{ key: 'k', operator: 'Exists', tolerationSeconds: 1 }]), [{ key: 'k', effect: 'NoExecute' }], seen)).toBe(seen + 1_000);
  });

  it('marks a Ready pod not ready', () => {
    const p: KubeObject = {
      metadata: { name: 'p' },
      status: {
        conditions: [
          { type: 'Ready', status: 'True' },
          { type: 'PodScheduled', status: 'True' },
        ],
      },
    };
    expect((podMarkedNotReady(p, T0)?.status as { conditions: unknown[] }).conditions).toEqual([
      { type: 'Ready', status: 'False', lastTransitionTime: '2026-01-01T00:00:00Z' },
      { type: 'PodScheduled', status: 'True' },
    ]);
    expect(podMarkedNotReady({ metadata: { name: 'q' }, status: {} }, T0)).toBeUndefined();
  });
});
