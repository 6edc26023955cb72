import { fieldErrorMessage } from '@app/apimachinery';
import { validatePodSpecUpdate } from './pod.validation.js';

describe('validatePodSpecUpdate', () => {
  const containers = [{ name: 'app', image: 'nginx:1.27' }];

  it('keeps tolerations by value in one pass: 100,000 old ones found among as many new ones in another order', () => {
    const n = 100_000;
    // Keys in another order, so only a comparison by value finds them.
    const old = Array.from({ length: n }, (_, i) => ({ key: `k${i}`, operator: 'Exists', effect: 'NoSchedule' }));
    const reordered = old.map((t) => ({ effect: t.effect, operator: t.operator, key: t.key })).reverse();
    expect(validatePodSpecUpdate({ containers, tolerations: [...reordered, { key: 'added', operator: 'Exists' }] }, { containers, tolerations: old })).toEqual(
      [],
    );
    // One old toleration changed (its key): the update is refused.
    const changed = reordered.map((t) => (t.key === 'k0' ? { ...t, key: 'k0-changed' } : t));
    expect(validatePodSpecUpdate({ containers, tolerations: changed }, { containers, tolerations: old }).map(fieldErrorMessage)).toEqual([
      expect.stringMatching(/^spec: Forbidden: pod updates may not change fields other than /),
    ]);
  });

  it('compares tolerations as values: -0 is not 0, and duplicates count once', () => {
    const kept = (now: unknown[], before: unknown[]) =>
      validatePodSpecUpdate({ containers, tolerations: now }, { containers, tolerations: before }).length === 0;
    expect(kept([{ key: 'a', tolerationSeconds: -0 }], [{ key: 'a', tolerationSeconds: 0 }])).toBe(false);
    expect(kept([{ tolerationSeconds: 0, key: 'a' }], [{ key: 'a', tolerationSeconds: 0 }])).toBe(true);
    expect(kept([{ key: 'a' }], [{ key: 'a' }, { key: 'a' }])).toBe(true);
    expect(kept([{ key: 'a', value: undefined }], [{ key: 'a' }])).toBe(false);
  });
});
