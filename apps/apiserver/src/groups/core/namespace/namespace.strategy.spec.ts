import { StatusError, type KubeObject } from '@app/apimachinery';
import type { RequestContext } from '@app/registry';
import { namespaceStrategy } from './namespace.strategy.js';

const ctx: RequestContext = { user: { username: 'u', groups: [] }, dryRun: false, warnings: [], now: () => new Date() };

describe('Namespace strategy', () => {
  it('adds the kubernetes finalizer and phase Active on create', () => {
    const ns: KubeObject = { metadata: { name: 'a' }, spec: { finalizers: ['example.com/x'] } };
    namespaceStrategy.prepareForCreate!(ns, ctx);
    expect(ns.spec).toEqual({ finalizers: ['example.com/x', 'kubernetes'] });
    expect(ns.status).toEqual({ phase: 'Active' });
    expect(namespaceStrategy.pendingFinalizers!(ns)).toEqual(['example.com/x', 'kubernetes']);
  });

  it('keeps spec.finalizers on update (they change only through finalize)', () => {
    const old: KubeObject = { metadata: { name: 'a' }, spec: { finalizers: ['kubernetes'] } };
    const upd: KubeObject = { metadata: { name: 'a' }, spec: { finalizers: [] } };
    namespaceStrategy.prepareForUpdate!(upd, old, ctx);
    expect(upd.spec).toEqual({ finalizers: ['kubernetes'] });
  });

  it('requires a DNS label name', () => {
    expect(namespaceStrategy.validate!({ metadata: { name: 'ok-1' } }, ctx)).toEqual([]);
    expect(namespaceStrategy.validate!({ metadata: { name: 'Bad_Name' } }, ctx)[0]).toMatchObject({ type: 'FieldValueInvalid', field: 'metadata.name' });
    expect(namespaceStrategy.validate!({ metadata: { name: 'a'.repeat(64) } }, ctx)[0]).toMatchObject({ type: 'FieldValueTooLong', field: 'metadata.name' });
  });

  it('moves to Terminating on delete and refuses deleting the built-in namespaces', () => {
    const ns: KubeObject = { metadata: { name: 'a' }, status: { phase: 'Active' } };
    namespaceStrategy.prepareForDelete!(ns, ctx);
    expect(ns.status).toEqual({ phase: 'Terminating' });
    expect(() => namespaceStrategy.validateDelete!({ metadata: { name: 'a' } }, ctx)).not.toThrow();
    for (const name of ['default', 'kube-system', 'kube-public']) {
      let err: unknown;
      try {
        namespaceStrategy.validateDelete!({ metadata: { name } }, ctx);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(StatusError);
      expect((err as StatusError).code).toBe(403);
    }
  });
});
