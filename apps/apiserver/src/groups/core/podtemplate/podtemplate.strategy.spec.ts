import type { KubeObject } from '@app/apimachinery';
import { podTemplateStrategy } from './podtemplate.strategy.js';

const fields = (errs: { field: string; detail?: string }[]) => errs.map((e) => `${e.field}: ${e.detail ?? ''}`);

describe('PodTemplate', () => {
  const pt = (image: string): KubeObject => ({
    metadata: { name: 't', generation: 3 },
    template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image }] } },
  });
  it('bumps generation when the template changes, and only then', () => {
    const next = pt('x:2');
    podTemplateStrategy.prepareForUpdate!(next, pt('x:1'), undefined as never);
    expect(next.metadata.generation).toBe(4);
    const same = pt('x:1');
    const old = pt('x:1');
    podTemplateStrategy.prepareForUpdate!(old, old, undefined as never);
    podTemplateStrategy.prepareForUpdate!(same, old, undefined as never);
    expect(same.metadata.generation).toBe(3);
  });
  it('validates the template at `template`', () => {
    expect(fields(podTemplateStrategy.validate!(pt(''), undefined as never))).toContain('template.spec.containers[0].image: ');
  });
});
