import { foreignKind, ListDecoder } from './storage.codec.js';
import { CorruptListError } from './storage.interface.js';

const CM = { kind: 'ConfigMap', group: '', apiVersion: 'v1' };
const DEPLOY = { kind: 'Deployment', group: 'apps', apiVersion: 'apps/v1' };
const bytes = (v: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(v));

describe('foreignKind', () => {
  it('takes the kind and group of the apiVersion into account, not the version', () => {
    expect(foreignKind(CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: {} })).toBeUndefined();
    expect(foreignKind(DEPLOY, { apiVersion: 'apps/v1beta2', kind: 'Deployment', metadata: {} })).toBeUndefined();
    expect(foreignKind(CM, { apiVersion: 'v1', kind: 'Secret', metadata: {} })).toBe(
      'object not decodable: the stored object is apiVersion v1, kind Secret, not a ConfigMap',
    );
    expect(foreignKind(DEPLOY, { apiVersion: 'extensions/v1beta1', kind: 'Deployment', metadata: {} })).toMatch(/not a apps\/Deployment$/);
    expect(foreignKind(CM, { apiVersion: 'apps/v1', kind: 'ConfigMap', metadata: {} })).toBeDefined();
    expect(foreignKind(CM, { apiVersion: 7, kind: ['ConfigMap'], metadata: {} } as never)).toBe(
      'object not decodable: the stored object is apiVersion 7, kind ["ConfigMap"], not a ConfigMap',
    );
  });

  it('gives an object without kind or apiVersion those of the expected kind', () => {
    const o = { metadata: { name: 'a' } };
    expect(foreignKind(DEPLOY, o)).toBeUndefined();
    expect(o).toEqual({ kind: 'Deployment', apiVersion: 'apps/v1', metadata: { name: 'a' } });
  });
});

describe('ListDecoder', () => {
  it('with an expected kind, gathers objects of another kind with the undecodable values, named as the backend names keys', () => {
    const d = new ListDecoder((k) => `/pfx${k.slice('/registry'.length)}`, CM);
    expect(d.decode('/registry/core/configmaps/a/ok', bytes({ kind: 'ConfigMap', metadata: { name: 'ok' } }), 3)?.metadata.resourceVersion).toBe('3');
    expect(d.decode('/registry/core/configmaps/a/s', bytes({ kind: 'Secret', metadata: { name: 's' } }), 4)).toBeUndefined();
    expect(d.decode('/registry/core/configmaps/a/x', new TextEncoder().encode('x'), 5)).toBeUndefined();
    let thrown: unknown;
    try {
      d.check('/registry/core/configmaps/a/');
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(CorruptListError);
    expect((thrown as CorruptListError).objects.map((o) => o.key)).toEqual(['/pfx/core/configmaps/a/s', '/pfx/core/configmaps/a/x']);
    expect((thrown as CorruptListError).objects[0]!.message).toMatch(/kind Secret, not a ConfigMap$/);
  });
});
