import { StatusError } from '@app/apimachinery';
import { StorageError } from '@app/storage';
import { mapStorageError } from './store.errors.js';

describe('mapStorageError', () => {
  it('makes a write refused for too many pending proposals a 429 with Retry-After', () => {
    let thrown: unknown;
    try {
      mapStorageError(
        { group: '', resource: 'configmaps' },
        new StorageError('TooManyRequests', '/k', 'too many requests: proposals of 9 bytes are pending'),
        'a',
      );
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(StatusError);
    expect(thrown).toMatchObject({ code: 429, reason: 'TooManyRequests', headers: { 'Retry-After': '1' } });
    expect((thrown as Error).message).toBe('too many requests: proposals of 9 bytes are pending; please try again later');
  });

  it("makes a write refused for space a 500 with etcd's words, as kube-apiserver on a full etcd", () => {
    let thrown: unknown;
    try {
      mapStorageError({ group: '', resource: 'configmaps' }, new StorageError('NoSpace', '', 'etcdserver: mvcc: database space exceeded (...)'), 'a');
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(StatusError);
    expect(thrown).toMatchObject({ code: 500, reason: 'InternalError' });
    expect((thrown as Error).message).toBe('Internal error occurred: etcdserver: mvcc: database space exceeded (...)');
  });
});
