import type { KubeObject } from '@app/apimachinery';
import { addDefaultTolerations } from './default-toleration-seconds.provider.js';

const pod = (tolerations?: unknown[]): KubeObject => ({
  metadata: { name: 'p' },
  spec: { containers: [{ name: 'a', image: 'x' }], ...(tolerations ? { tolerations } : {}) },
});
const tolerationsOf = (p: KubeObject) => (p.spec as { tolerations?: unknown[] }).tolerations;
const NOT_READY = { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 };
const UNREACHABLE = { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 };

describe('DefaultTolerationSeconds admission', () => {
  it('adds the not-ready and unreachable NoExecute tolerations, after the pod own', () => {
    const p = pod([{ key: 'a', operator: 'Exists' }]);
    addDefaultTolerations(p, 300, 300);
    expect(tolerationsOf(p)).toEqual([{ key: 'a', operator: 'Exists' }, NOT_READY, UNREACHABLE]);
    const bare = pod();
    addDefaultTolerations(bare, 60, 90);
    expect(tolerationsOf(bare)).toEqual([
      { ...NOT_READY, tolerationSeconds: 60 },
      { ...UNREACHABLE, tolerationSeconds: 90 },
    ]);
  });

  it('adds nothing a toleration of the pod already covers: the same key, any key, or any effect', () => {
    const own = { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 10 };
    const p = pod([own]);
    addDefaultTolerations(p, 300, 300);
    expect(tolerationsOf(p)).toEqual([own, UNREACHABLE]);
    const all = pod([{ operator: 'Exists' }]);
    addDefaultTolerations(all, 300, 300);
    expect(tolerationsOf(all)).toEqual([{ operator: 'Exists' }]);
    const anyEffect = pod([{ key: 'node.kubernetes.io/unreachable', operator: 'Exists' }]);
    addDefaultTolerations(anyEffect, 300, 300);
    expect(tolerationsOf(anyEffect)).toEqual([{ key: 'node.kubernetes.io/unreachable', operator: 'Exists' }, NOT_READY]);
    // A NoSchedule toleration of the key does not cover the NoExecute taint.
    const noSchedule = pod([{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoSchedule' }]);
    addDefaultTolerations(noSchedule, 300, 300);
    expect(tolerationsOf(noSchedule)).toHaveLength(3);
  });
});
