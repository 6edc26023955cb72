import type { KubeObject } from '@app/apimachinery';
import { defaultIngressClass, ingressHasClass } from './ingress-class.provider.js';

const cls = (name: string, isDefault?: string): KubeObject => ({
  metadata: { name, ...(isDefault !== undefined ? { annotations: { 'ingressclass.kubernetes.io/is-default-class': isDefault } } : {}) },
  spec: { controller: 'example.com/c' },
});

describe('DefaultIngressClass', () => {
  it('finds the one class marked default, none, or refuses several', () => {
    expect(defaultIngressClass([cls('a'), cls('b', 'true'), cls('c', 'false')])).toMatchObject({ metadata: { name: 'b' } });
    expect(defaultIngressClass([cls('a'), cls('c', 'True')])).toBeUndefined();
    expect(defaultIngressClass([cls('a', 'true'), cls('b', 'true')])).toEqual({ error: '2 default IngressClasses were found, only 1 allowed' });
  });
  it('leaves an Ingress alone that chose a class, even none, or names one by the legacy annotation', () => {
    expect(ingressHasClass({ metadata: {}, spec: {} })).toBe(false);
    expect(ingressHasClass({ metadata: {}, spec: { ingressClassName: '' } })).toBe(true);
    expect(ingressHasClass({ metadata: { annotations: { 'kubernetes.io/ingress.class': 'nginx' } }, spec: {} })).toBe(true);
  });
});
