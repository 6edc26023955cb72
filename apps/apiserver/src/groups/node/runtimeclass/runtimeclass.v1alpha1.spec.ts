import type { KubeObject } from '@app/apimachinery';
import type { RequestContext } from '@app/registry';
import { convertRuntimeClass, runtimeClassV1alpha1Kind } from './runtimeclass.v1alpha1.js';

const ctx: RequestContext = { user: { username: 'u', groups: [] }, dryRun: false, warnings: [], now: () => new Date() };
const v1: KubeObject = {
  apiVersion: 'node.k8s.io/v1',
  kind: 'RuntimeClass',
  metadata: { name: 'gvisor', labels: { a: 'b' } },
  handler: 'runsc',
  overhead: { podFixed: { cpu: '250m' } },
  scheduling: { nodeSelector: { x: 'y' }, tolerations: [{ key: 'k', operator: 'Exists' }] },
};

describe('RuntimeClass v1alpha1', () => {
  it('moves handler, overhead and scheduling under spec and back without loss', () => {
    const alpha = convertRuntimeClass(v1, 'v1alpha1');
    expect(alpha).toEqual({
      apiVersion: 'node.k8s.io/v1alpha1',
      kind: 'RuntimeClass',
      metadata: { name: 'gvisor', labels: { a: 'b' } },
      spec: { runtimeHandler: 'runsc', overhead: { podFixed: { cpu: '250m' } }, scheduling: v1.scheduling },
    });
    expect(convertRuntimeClass(alpha, 'v1')).toEqual(v1);
    expect(convertRuntimeClass(convertRuntimeClass(alpha, 'v1'), 'v1alpha1')).toEqual(alpha);
  });
  it('reports the v1 rules at the alpha field paths', () => {
    const bad = convertRuntimeClass({ ...v1, handler: 'Bad_Handler' }, 'v1alpha1');
    expect(runtimeClassV1alpha1Kind.strategy!.validate!(bad, ctx).map((e) => e.field)).toEqual(['spec.runtimeHandler']);
  });
});
