import { findUnknownFields, listMergeInfo, prune, schemaAt, validateSchema } from '@app/apimachinery';
import { ConfigMapSchema } from './configmap.schema.js';

describe('ConfigMap schema', () => {
  it('accepts what kubectl create --dry-run=client -o yaml produces (creationTimestamp: null) after pruning', () => {
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', creationTimestamp: null }, data: { 'app.properties': 'a=b' } };
    expect(findUnknownFields(cm, ConfigMapSchema)).toEqual([]);
    prune(cm, ConfigMapSchema);
    expect(cm.metadata).toEqual({ name: 'c' });
    expect(validateSchema(cm, ConfigMapSchema)).toEqual([]);
  });

  it('checks value types of data and binaryData, in document order', () => {
    const errs = validateSchema({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { n: 1 }, binaryData: { b: '%%' } }, ConfigMapSchema);
    expect(errs.map((e) => e.field)).toEqual(['data[n]', 'binaryData[b]']);
  });

  it('carries the ownerReferences merge key of ObjectMeta', () => {
    expect(listMergeInfo(schemaAt(ConfigMapSchema, ['metadata', 'ownerReferences'])!)).toEqual({ listType: 'map', keys: ['uid'] });
  });
});
