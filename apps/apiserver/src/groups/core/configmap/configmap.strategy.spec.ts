import type { RequestContext } from '@app/registry';
import { configMapStrategy } from './configmap.strategy.js';

const ctx: RequestContext = { user: { username: 'u', groups: [] }, dryRun: false, warnings: [], now: () => new Date() };

describe('ConfigMap strategy', () => {
  it('validates keys across data and binaryData', () => {
    expect(configMapStrategy.validate!({ metadata: { name: 'c' }, data: { ok: 'v' }, binaryData: { 'b.bin': 'aGk=' } }, ctx)).toEqual([]);
    const errs = configMapStrategy.validate!({ metadata: { name: 'c' }, data: { 'bad key': 'v', k: 'v' }, binaryData: { k: 'aGk=' } }, ctx);
    expect(errs.map((e) => e.field)).toEqual(['data[bad key]', 'data[k]']);
  });

  it('refuses changing data or binaryData of an immutable config map, but allows metadata changes', () => {
    const old = { metadata: { name: 'c' }, immutable: true, data: { a: '1' }, binaryData: { b: 'aGk=' } };
    expect(configMapStrategy.validateUpdate!({ ...old, metadata: { name: 'c', labels: { x: 'y' } } }, old, ctx)).toEqual([]);
    expect(configMapStrategy.validateUpdate!({ ...old, binaryData: {} }, old, ctx).map((e) => e.field)).toEqual(['binaryData']);
    expect(configMapStrategy.validateUpdate!({ ...old, immutable: false }, old, ctx).map((e) => e.field)).toEqual(['immutable']);
  });
});
