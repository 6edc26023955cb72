import { listMergeInfo, schemaAt } from '@app/apimachinery';
import { ServiceAccountSchema } from './serviceaccount.schema.js';

describe('ServiceAccount schema', () => {
  it('carries the merge keys strategic merge patch needs', () => {
    expect(listMergeInfo(schemaAt(ServiceAccountSchema, ['secrets'])!)).toEqual({ listType: 'map', keys: ['name'] });
    expect(listMergeInfo(schemaAt(ServiceAccountSchema, ['imagePullSecrets'])!)).toEqual({ listType: 'atomic', keys: [] });
  });
});
