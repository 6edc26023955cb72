import { applyDefaults, validateSchema } from '@app/apimachinery';
import { PriorityClassSchema } from './priorityclass.schema.js';

describe('PriorityClass schema', () => {
  it('requires value, defaults preemptionPolicy to PreemptLowerPriority and checks its values', () => {
    expect(validateSchema({ metadata: { name: 'p' } }, PriorityClassSchema)).toEqual([{ type: 'FieldValueRequired', field: 'value', detail: '' }]);
    const pc: Record<string, unknown> = { metadata: { name: 'p' }, value: 1 };
    applyDefaults(pc, PriorityClassSchema);
    expect(pc.preemptionPolicy).toBe('PreemptLowerPriority');
    expect(validateSchema(pc, PriorityClassSchema)).toEqual([]);
    expect(validateSchema({ metadata: { name: 'p' }, value: 1, preemptionPolicy: 'Sometimes' }, PriorityClassSchema)[0]).toMatchObject({
      type: 'FieldValueNotSupported',
      field: 'preemptionPolicy',
    });
    expect(validateSchema({ metadata: { name: 'p' }, value: 'high' }, PriorityClassSchema)[0]).toMatchObject({ field: 'value' });
  });
});
