import { listMergeInfo, schemaAt, validateSchema } from '@app/apimachinery';
import { NamespaceSchema } from './namespace.schema.js';

describe('Namespace schema', () => {
  it('checks the phase enum', () => {
    expect(validateSchema({ status: { phase: 'Gone' } }, NamespaceSchema)[0]).toMatchObject({ type: 'FieldValueNotSupported', field: 'status.phase' });
    expect(validateSchema({ status: { phase: 'Terminating' }, spec: { finalizers: ['kubernetes'] } }, NamespaceSchema)).toEqual([]);
  });

  it('merges status.conditions by type', () => {
    expect(listMergeInfo(schemaAt(NamespaceSchema, ['status', 'conditions'])!)).toEqual({ listType: 'map', keys: ['type'] });
  });
});
