import { StatusError, type KubeObject } from '@app/apimachinery';
import type { RequestContext } from '@app/registry';
import {
  assignedPod,
  BindingPorts,
  BindingRefused,
  bindingSubresource,
  bindRequestOf,
  validatePodBinding,
  withPodCondition,
  type BindRequest,
} from './pod.binding.js';

const NOW = new Date('2026-12-01T12:00:00Z');
const EARLIER = '2026-11-30T08:00:00Z';
type Obj = Record<string, unknown>;

const pod = (spec: Obj = {}, meta: Obj = {}, status: Obj = { phase: 'Pending' }): KubeObject =>
  ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'ns', uid: 'u1', resourceVersion: '9', ...meta },
    spec: { containers: [{ name: 'c', image: 'nginx' }], ...spec },
    status,
  }) as KubeObject;
const binding = (target: Obj, meta: Obj = {}): KubeObject => ({ apiVersion: 'v1', kind: 'Binding', metadata: { name: 'p', ...meta }, target }) as KubeObject;
const req = (node: string, annotations: Record<string, string> = {}): BindRequest => ({ node, annotations });
const refusal = (f: () => unknown): Error => {
  try {
    f();
  } catch (e) {
    return e as Error;
  }
  throw new Error('not refused');
};
const ctx = (): RequestContext => ({ user: { username: 'u', groups: [] }, dryRun: false, warnings: [], now: () => NOW });

describe('ValidatePodBinding', () => {
  it('accepts a target of kind Node or of no kind, with a name', () => {
    expect(validatePodBinding(binding({ kind: 'Node', name: 'n1' }))).toEqual([]);
    expect(validatePodBinding(binding({ name: 'n1' }))).toEqual([]);
  });

  it('refuses another kind (NotSupported, Node or empty) and a missing name (Required)', () => {
    expect(validatePodBinding(binding({ kind: 'Pod', name: 'n1' }))).toEqual([
      { type: 'FieldValueNotSupported', field: 'target.kind', value: 'Pod', detail: 'supported values: "Node", "<empty>"' },
    ]);
    expect(validatePodBinding(binding({ kind: 'Node' }))).toEqual([{ type: 'FieldValueRequired', field: 'target.name', detail: '' }]);
    expect(validatePodBinding({ apiVersion: 'v1', kind: 'Binding', metadata: { name: 'p' } } as KubeObject).map((e) => e.field)).toEqual(['target.name']);
  });
});

describe('what a Binding asks for', () => {
  it('takes the node and the string annotations, and the uid and resourceVersion only when asked to', () => {
    const b = binding({ name: 'n1' }, { annotations: { a: '1' }, uid: 'u1', resourceVersion: '5' });
    expect(bindRequestOf(b, false)).toEqual({ node: 'n1', annotations: { a: '1' } });
    expect(bindRequestOf(b, true)).toEqual({ node: 'n1', annotations: { a: '1' }, preconditions: { uid: 'u1', resourceVersion: '5' } });
    expect(bindRequestOf(binding({ name: 'n1' }), true).preconditions).toBeUndefined();
  });
});

describe('setPodNodeNameAndAnnotations', () => {
  it('sets spec.nodeName, merges the annotations and adds PodScheduled=True, leaving the input alone', () => {
    const before = pod({}, { annotations: { keep: 'k', over: 'old' } });
    const copy = structuredClone(before);
    const next = assignedPod(before, req('n1', { over: 'new', added: 'a' }), NOW);
    expect(before).toEqual(copy);
    expect((next.spec as Obj).nodeName).toBe('n1');
    expect(next.metadata.annotations).toEqual({ keep: 'k', over: 'new', added: 'a' });
    expect((next.status as Obj).conditions).toEqual([
      { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: '2026-12-01T12:00:00Z' },
    ]);
    expect((next.status as Obj).phase).toBe('Pending');
    expect(next.metadata.resourceVersion).toBe('9');
  });

  it('creates the annotations of a pod that has none', () => {
    expect(assignedPod(pod(), req('n1', { a: '1' }), NOW).metadata.annotations).toEqual({ a: '1' });
    expect(assignedPod(pod(), req('n1'), NOW).metadata.annotations).toEqual({});
  });

  it('refuses a pod being deleted, one already on a node and one with scheduling gates, in kube words', () => {
    expect(refusal(() => assignedPod(pod({}, { deletionTimestamp: EARLIER }), req('n1'), NOW))).toEqual(
      new BindingRefused('pod p is being deleted, cannot be assigned to a host'),
    );
    const assigned = refusal(() => assignedPod(pod({ nodeName: 'n0' }), req('n1'), NOW));
    expect(assigned).toBeInstanceOf(BindingRefused);
    expect(assigned.message).toBe('pod p is already assigned to node "n0"');
    expect(refusal(() => assignedPod(pod({ schedulingGates: [{ name: 'g' }] }), req('n1'), NOW)).message).toBe('pod p has non-empty .spec.schedulingGates');
    expect(assignedPod(pod({ schedulingGates: [] }), req('n1'), NOW).spec).toMatchObject({ nodeName: 'n1' });
  });
});

describe('UpdatePodCondition', () => {
  it('replaces the condition of its type; the transition time is kept while the status stays', () => {
    const same = withPodCondition(
      {
        conditions: [
          { type: 'Ready', status: 'False' },
          { type: 'PodScheduled', status: 'True', reason: 'R', lastTransitionTime: EARLIER },
        ],
      },
      { type: 'PodScheduled', status: 'True' },
      NOW,
    );
    expect(same.conditions).toEqual([
      { type: 'Ready', status: 'False' },
      { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: EARLIER },
    ]);
    const changed = withPodCondition(
      { conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: 'm', lastTransitionTime: EARLIER }] },
      { type: 'PodScheduled', status: 'True' },
      NOW,
    );
    expect(changed.conditions).toEqual([{ type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: '2026-12-01T12:00:00Z' }]);
  });
});

describe('the binding subresource handler', () => {
  const wired = () => {
    const ports = new BindingPorts();
    const calls: Array<[string, string, BindRequest, boolean]> = [];
    ports.deps = {
      bind: async (ns, name, r, c) => {
        calls.push([ns, name, r, c.dryRun]);
      },
    };
    return { create: bindingSubresource(ports).rest!.create!, calls };
  };
  const status = async (p: Promise<unknown>): Promise<StatusError> => {
    try {
      await p;
    } catch (e) {
      return e as StatusError;
    }
    throw new Error('not refused');
  };

  it('answers a Status of Success and binds with the Binding uid and resourceVersion as preconditions', async () => {
    const { create, calls } = wired();
    const out = await create('ns', 'p', binding({ kind: 'Node', name: 'n1' }, { uid: 'u1' }), ctx());
    expect(out).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
    expect(calls).toEqual([['ns', 'p', { node: 'n1', annotations: {}, preconditions: { uid: 'u1' } }, false]]);
  });

  it('refuses a name that is not the URL one (400) and an invalid target (422 naming the field)', async () => {
    const { create, calls } = wired();
    const bad = await status(create('ns', 'p', binding({ name: 'n1' }, { name: 'q' }), ctx()));
    expect([bad.code, bad.reason, bad.message]).toEqual([400, 'BadRequest', 'name in URL does not match name in Binding object']);
    const invalid = await status(create('ns', 'p', binding({ kind: 'Pod' }), ctx()));
    expect([invalid.code, invalid.reason]).toEqual([422, 'Invalid']);
    expect(invalid.message).toBe(
      'Binding "p" is invalid: [target.kind: Unsupported value: "Pod": supported values: "Node", "<empty>", target.name: Required value]',
    );
    expect(invalid.details?.causes?.map((c) => c.field)).toEqual(['target.kind', 'target.name']);
    const ns = await status(create('ns', 'p', binding({ name: 'n1' }, { namespace: 'other' }), ctx()));
    expect(ns.code).toBe(400);
    expect(calls).toEqual([]);
  });
});
