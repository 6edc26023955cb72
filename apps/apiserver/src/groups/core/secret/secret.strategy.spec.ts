import type { RequestContext } from '@app/registry';
import { secretStrategy } from './secret.strategy.js';
import type { KubeObject } from '@app/apimachinery';

const ctx: RequestContext = { user: { username: 'u', groups: [] }, dryRun: false, warnings: [], now: () => new Date() };

describe('Secret strategy', () => {
  it('merges stringData into data (stringData wins) and defaults the type to Opaque', () => {
    const s: KubeObject = { metadata: { name: 's' }, data: { a: 'eA==', b: 'eQ==' }, stringData: { b: 'plain' } };
    secretStrategy.prepareForCreate!(s, ctx);
    expect(s).toEqual({ metadata: { name: 's' }, type: 'Opaque', data: { a: 'eA==', b: Buffer.from('plain').toString('base64') } });
  });

  it('requires the keys of the well-known types', () => {
    const tls = secretStrategy.validate!({ metadata: { name: 's' }, type: 'kubernetes.io/tls', data: { 'tls.crt': 'eA==' } }, ctx);
    expect(tls).toEqual([{ type: 'FieldValueRequired', field: 'data[tls.key]', detail: '' }]);
    const sat = secretStrategy.validate!({ metadata: { name: 's' }, type: 'kubernetes.io/service-account-token' }, ctx);
    expect(sat.map((e) => e.field)).toEqual(['metadata.annotations[kubernetes.io/service-account.name]']);
    const basic = secretStrategy.validate!({ metadata: { name: 's' }, type: 'kubernetes.io/basic-auth', data: {} }, ctx);
    expect(basic.map((e) => e.field)).toEqual(['data[username]']);
    expect(secretStrategy.validate!({ metadata: { name: 's' }, type: 'kubernetes.io/basic-auth', data: { password: 'eA==' } }, ctx)).toEqual([]);
  });

  it('keeps the type and, once immutable, the data', () => {
    const old = { metadata: { name: 's' }, type: 'Opaque', immutable: true, data: { a: 'eA==' } };
    expect(
      secretStrategy.validateUpdate!({ ...old, type: 'kubernetes.io/ssh-auth', data: { 'ssh-privatekey': 'eA==' } }, old, ctx).map((e) => e.field),
    ).toEqual(['type', 'data']);
    expect(secretStrategy.validateUpdate!({ ...old }, old, ctx)).toEqual([]);
  });

  it('never returns stringData', () => {
    const s: KubeObject = { metadata: { name: 's' }, stringData: { a: 'x' } };
    secretStrategy.decorate!(s);
    expect(s.stringData).toBeUndefined();
  });
});
