import type { KubeObject } from '@app/apimachinery';
import type { AdmissionAttributes, KindDeclaration } from '@app/registry';
import { TaintNodesByConditionPlugin } from './taint-nodes-by-condition.provider.js';

const attrs = (object: KubeObject, over: Partial<AdmissionAttributes> = {}): AdmissionAttributes =>
  ({
    operation: 'CREATE',
    decl: { group: '', kind: 'Node' } as KindDeclaration,
    namespace: '',
    name: 'n',
    subresource: '',
    object,
    ctx: undefined as never,
    ...over,
  }) as AdmissionAttributes;

describe('TaintNodesByCondition', () => {
  const plugin = new TaintNodesByConditionPlugin();

  it('adds node.kubernetes.io/not-ready:NoSchedule to a new node, after its own taints, once', async () => {
    const n: KubeObject = { metadata: { name: 'n' }, spec: { taints: [{ key: 'a', effect: 'NoExecute' }] } };
    await plugin.admit(attrs(n));
    expect(n.spec).toEqual({
      taints: [
        { key: 'a', effect: 'NoExecute' },
        { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' },
      ],
    });
    await plugin.admit(attrs(n));
    expect((n.spec as { taints: unknown[] }).taints).toHaveLength(2);
  });

  it('leaves updates and other kinds alone', async () => {
    const n: KubeObject = { metadata: { name: 'n' } };
    await plugin.admit(attrs(n, { operation: 'UPDATE' }));
    await plugin.admit(attrs(n, { decl: { group: '', kind: 'Pod' } as KindDeclaration }));
    expect(n.spec).toBeUndefined();
  });
});
