import { StatusError } from '@app/apimachinery';
import { ListDecoder, MAX_REPORTED_CORRUPT_VALUES, StorageError } from '@app/storage';
import { mapStorageError } from './store.errors.js';

const CONFIGMAPS = { group: '', resource: 'configmaps' };

/** What mapStorageError throws for `err`. */
function mapped(err: unknown, gr = CONFIGMAPS, name = 'a'): unknown {
  try {
    mapStorageError(gr, err, name);
  } catch (e) {
    return e;
  }
}

describe('mapStorageError', () => {
  it('makes a write refused for too many pending proposals a 429 with Retry-After', () => {
    const thrown = mapped(new StorageError('TooManyRequests', '/k', 'too many requests: proposals of 9 bytes are pending'));
    expect(thrown).toBeInstanceOf(StatusError);
    expect(thrown).toMatchObject({ code: 429, reason: 'TooManyRequests', headers: { 'Retry-After': '1' } });
    expect((thrown as Error).message).toBe('too many requests: proposals of 9 bytes are pending; please try again later');
  });

  it("makes a write refused for space a 500 with etcd's words, as kube-apiserver on a full etcd", () => {
    const thrown = mapped(new StorageError('NoSpace', '', 'etcdserver: mvcc: database space exceeded (...)'));
    expect(thrown).toBeInstanceOf(StatusError);
    expect(thrown).toMatchObject({ code: 500, reason: 'InternalError' });
    expect((thrown as Error).message).toBe('Internal error occurred: etcdserver: mvcc: database space exceeded (...)');
  });

  it('makes a list that met undecodable values a StorageReadError naming at most 100 keys, then FieldValueTooMany', () => {
    const decoder = new ListDecoder();
    const good = new TextEncoder().encode('{"metadata":{"name":"ok"}}');
    expect(decoder.decode('/registry/core/configmaps/ns/ok', good, 7)?.metadata).toEqual({ name: 'ok', resourceVersion: '7' });
    const keys = Array.from({ length: MAX_REPORTED_CORRUPT_VALUES + 5 }, (_, i) => `/registry/core/configmaps/ns/bad-${String(i).padStart(3, '0')}`);
    for (const k of keys) expect(decoder.decode(k, new TextEncoder().encode('nope'), 8)).toBeUndefined();
    let listError: unknown;
    try {
      decoder.check('/registry/core/configmaps/ns/');
    } catch (e) {
      listError = e;
    }
    const thrown = mapped(listError, CONFIGMAPS, '');
    expect(thrown).toBeInstanceOf(StatusError);
    const status = (thrown as StatusError).toStatus();
    expect(status).toMatchObject({ code: 500, reason: 'StorageReadError', message: 'failed to read one or more configmaps from the storage' });
    expect(status.details).toMatchObject({ name: 'list', kind: 'configmaps' });
    const causes = status.details?.causes ?? [];
    expect(causes).toHaveLength(MAX_REPORTED_CORRUPT_VALUES + 1);
    expect(causes.slice(0, -1).map((c) => c.field)).toEqual(keys.slice(0, MAX_REPORTED_CORRUPT_VALUES));
    expect(causes[0]).toMatchObject({ reason: 'UnexpectedServerResponse' });
    expect(causes[0]?.message).toMatch(
      /^StorageError: corrupt object, Code: 7, Key: \/registry\/core\/configmaps\/ns\/bad-000, ResourceVersion: 0, AdditionalErrorMsg: object not decodable/,
    );
    expect(causes.at(-1)).toEqual({ reason: 'FieldValueTooMany', message: 'too many errors, the list is truncated' });
  });

  it('makes one undecodable object a 500 naming its key, and a list that met none pass', () => {
    expect(() => new ListDecoder().check('/registry/core/configmaps/')).not.toThrow();
    const thrown = mapped(
      new StorageError('CorruptObject', '/registry/apps/deployments/ns/d', 'object not decodable: x'),
      { group: 'apps', resource: 'deployments' },
      'd',
    );
    expect(thrown).toMatchObject({ code: 500, reason: 'InternalError' });
    expect((thrown as Error).message).toBe(
      'Internal error occurred: StorageError: corrupt object, Code: 7, Key: /registry/apps/deployments/ns/d, ResourceVersion: 0, AdditionalErrorMsg: object not decodable: x',
    );
  });
});
