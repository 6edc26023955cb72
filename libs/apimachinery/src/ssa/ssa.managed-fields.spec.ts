import { fieldElement as f } from './ssa.fieldset.js';
import { capUpdateManagers, decodeManagedFields, encodeManagedFields } from './ssa.managed-fields.js';

const entry = (i: number, extra: Record<string, unknown> = {}) => ({
  operation: 'Update',
  apiVersion: 'v1',
  fieldsType: 'FieldsV1',
  fieldsV1: { 'f:metadata': { 'f:labels': { [`f:l${i}`]: {} } } },
  ...extra,
});

describe('managed fields of many entries', () => {
  const n = 100_000;

  it('decodes repeats of one manager into one entry, its sets merged once', () => {
    const managed = decodeManagedFields(
      Array.from({ length: n }, (_, i) => entry(i, { manager: 'm', time: `2026-01-01T00:00:${String(i % 60).padStart(2, '0')}Z` })),
    );
    expect(managed.size).toBe(1);
    const [rec] = managed.values();
    expect(rec!.set.size()).toBe(n);
    expect(rec!.set.has([f('metadata'), f('labels'), f(`l${n - 1}`)])).toBe(true);
    // The record is the last entry's, with the merged set.
    expect(rec!.time).toBe(`2026-01-01T00:00:${String((n - 1) % 60).padStart(2, '0')}Z`);
  });

  it('caps 100,000 Update managers, the oldest merged into ancient-changes once', () => {
    const managed = decodeManagedFields(
      Array.from({ length: n }, (_, i) => entry(i, { manager: `m${i}`, time: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString().replace('.000', '') })),
    );
    capUpdateManagers(managed);
    const out = encodeManagedFields(managed);
    expect(out).toHaveLength(10);
    const ancient = out.find((e) => e.manager === 'ancient-changes')!;
    // The oldest n - 9 entries: m0 (which became the bucket) and the n - 10 merged into it.
    expect(Object.keys((ancient.fieldsV1 as { 'f:metadata': { 'f:labels': object } })['f:metadata']['f:labels'])).toHaveLength(n - 9);
    expect(out.filter((e) => e.manager !== 'ancient-changes').map((e) => e.manager)).toEqual(Array.from({ length: 9 }, (_, i) => `m${n - 9 + i}`));
  });
});
