import { NAMESPACE_CONDITION_TYPES, namespaceConditions, type ContentTotals } from './namespace.controller.js';

const empty = (): ContentTotals => ({ remaining: new Map(), finalizers: new Map(), errors: [] });

describe('namespaceConditions', () => {
  it('reports all five Kubernetes condition types in order, False with the OK reasons when done', () => {
    const c = namespaceConditions(empty(), [], '2026-01-01T00:00:00Z');
    expect(c.map((x) => x.type)).toEqual(NAMESPACE_CONDITION_TYPES.map((t) => t.type));
    expect(c).toContainEqual({
      type: 'NamespaceContentRemaining',
      status: 'False',
      reason: 'ContentRemoved',
      message: 'All content successfully removed',
      lastTransitionTime: '2026-01-01T00:00:00Z',
    });
    expect(c.find((x) => x.type === 'NamespaceFinalizersRemaining')).toMatchObject({
      status: 'False',
      reason: 'ContentHasNoFinalizers',
      message: 'All content-preserving finalizers finished',
    });
  });

  it('formats remaining resources and finalizers like Kubernetes, sorted', () => {
    const t = empty();
    t.remaining.set('secrets.', 1);
    t.remaining.set('configmaps.', 2);
    t.remaining.set('widgets.example.com', 3);
    t.finalizers.set('example.com/hold', 2);
    t.finalizers.set('a.io/x', 1);
    const c = namespaceConditions(t, [], 'now');
    expect(c.find((x) => x.type === 'NamespaceContentRemaining')).toMatchObject({
      status: 'True',
      reason: 'SomeResourcesRemain',
      message:
        'Some resources are remaining: configmaps. has 2 resource instances, secrets. has 1 resource instances, widgets.example.com has 3 resource instances',
    });
    expect(c.find((x) => x.type === 'NamespaceFinalizersRemaining')).toMatchObject({
      status: 'True',
      reason: 'SomeFinalizersRemain',
      message: 'Some content in the namespace has finalizers remaining: a.io/x in 1 resource instances, example.com/hold in 2 resource instances',
    });
  });

  it('aggregates content deletion errors as Go does', () => {
    const one = empty();
    one.errors.push('boom');
    expect(namespaceConditions(one, [], 'now').find((x) => x.type === 'NamespaceDeletionContentFailure')).toMatchObject({
      status: 'True',
      reason: 'ContentDeletionFailed',
      message: 'Failed to delete all resource types, 1 remaining: boom',
    });
    const two = empty();
    two.errors.push('a', 'b');
    expect(namespaceConditions(two, [], 'now').find((x) => x.type === 'NamespaceDeletionContentFailure')!.message).toBe(
      'Failed to delete all resource types, 2 remaining: [a, b]',
    );
  });

  it('keeps lastTransitionTime while a condition keeps its status', () => {
    const t = empty();
    t.remaining.set('configmaps.', 1);
    const first = namespaceConditions(t, [], 't1');
    const t2 = empty();
    t2.remaining.set('configmaps.', 2);
    const second = namespaceConditions(t2, first, 't2');
    expect(second.find((x) => x.type === 'NamespaceContentRemaining')!.lastTransitionTime).toBe('t1');
    const third = namespaceConditions(empty(), second, 't3');
    expect(third.find((x) => x.type === 'NamespaceContentRemaining')!.lastTransitionTime).toBe('t3');
    expect(third.find((x) => x.type === 'NamespaceDeletionDiscoveryFailure')!.lastTransitionTime).toBe('t1');
  });
});
