import type { KubeObject } from '@app/apimachinery';
import { admitPodPriority, defaultPriorityClass, keepPodPriority, resolvedFrom } from './priority.provider.js';

const pod = (spec: Record<string, unknown>): KubeObject => ({ metadata: { name: 'p' }, spec: { containers: [{ name: 'a', image: 'x' }], ...spec } });
const pc = (name: string, value: number, extra: Record<string, unknown> = {}): KubeObject => ({ metadata: { name }, value, ...extra });

describe('Priority admission', () => {
  it('takes the default class with the smallest value, and none when no class is default', () => {
    expect(defaultPriorityClass([pc('a', 5), pc('b', 7)])).toBeUndefined();
    expect(defaultPriorityClass([pc('a', 5, { globalDefault: true }), pc('b', 3, { globalDefault: true }), pc('c', 1)])?.metadata.name).toBe('b');
    expect(resolvedFrom(undefined)).toEqual({ className: '', priority: 0, preemptionPolicy: 'PreemptLowerPriority' });
    expect(resolvedFrom(pc('x', 10, { preemptionPolicy: 'Never' }))).toEqual({ className: 'x', priority: 10, preemptionPolicy: 'Never' });
  });

  it("sets a new pod's priority and preemption policy, and the default class's name", () => {
    const p = pod({});
    expect(admitPodPriority(p, resolvedFrom(pc('base', 100, { globalDefault: true })), true)).toBeUndefined();
    expect(p.spec).toMatchObject({ priorityClassName: 'base', priority: 100, preemptionPolicy: 'PreemptLowerPriority' });
    const none = pod({});
    expect(admitPodPriority(none, resolvedFrom(undefined), true)).toBeUndefined();
    expect(none.spec).toMatchObject({ priority: 0, preemptionPolicy: 'PreemptLowerPriority' });
    expect((none.spec as Record<string, unknown>).priorityClassName).toBeUndefined();
    // A value equal to the computed one is accepted.
    expect(admitPodPriority(pod({ priorityClassName: 'hi', priority: 10 }), resolvedFrom(pc('hi', 10)), false)).toBeUndefined();
  });

  it('refuses a priority or preemption policy other than the computed one', () => {
    expect(admitPodPriority(pod({ priority: 5 }), resolvedFrom(undefined), true)).toBe(
      'the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 0 from the given PriorityClass name',
    );
    expect(
      admitPodPriority(
        pod({ priorityClassName: 'n', preemptionPolicy: 'PreemptLowerPriority' }),
        resolvedFrom(pc('n', 1, { preemptionPolicy: 'Never' })),
        false,
      ),
    ).toBe(
      'the string value of PreemptionPolicy (PreemptLowerPriority) must not be provided in pod spec; priority admission controller computed Never from the given PriorityClass name',
    );
  });

  it('keeps the old priority and policy on an update that leaves them out', () => {
    const p = pod({});
    keepPodPriority(p, pod({ priority: 7, preemptionPolicy: 'Never' }));
    expect(p.spec).toMatchObject({ priority: 7, preemptionPolicy: 'Never' });
    const own = pod({ priority: 1 });
    keepPodPriority(own, pod({ priority: 7 }));
    expect((own.spec as Record<string, unknown>).priority).toBe(1);
  });
});
