/**
 * Storage failures as Status errors naming the resource (Kubernetes' storeerr.InterpretXError).
 */
import { Errors } from '@app/apimachinery';
import { CorruptListError, StorageError } from '@app/storage';

/**
 * How Kubernetes words a storage error about an object that does not decode
 * (storage.StorageError of code ErrCodeCorruptObj, 7).
 */
export function corruptObjectMessage(key: string, detail: string): string {
  return `StorageError: corrupt object, Code: 7, Key: ${key}, ResourceVersion: 0, AdditionalErrorMsg: ${detail}`;
}

/** Maps a storage failure to a Status error naming `gr`/`name`; anything else is rethrown. */
export function mapStorageError(gr: { group: string; resource: string }, err: unknown, name: string): never {
  if (err instanceof StorageError) {
    switch (err.code) {
      case 'KeyExists':
        throw Errors.alreadyExists(gr, name);
      case 'KeyNotFound':
        throw Errors.notFound(gr, name);
      case 'Conflict':
        throw Errors.conflict(gr, name, err.message || 'the object has been modified; please apply your changes to the latest version and try again');
      case 'Compacted':
        throw Errors.gone(`The resourceVersion for the provided list is too old.`);
      case 'TooLargeResourceVersion':
        throw Errors.tooLargeResourceVersion(err.requestedRevision ?? 0, err.currentRevision ?? 0);
      case 'Unavailable':
        throw Errors.timeout(`Timeout: request did not complete within the allowed duration: ${err.message}`);
      case 'TooManyRequests':
        throw Errors.tooManyRequests(`${err.message}; please try again later`, 1);
      case 'CorruptObject':
        // A list names every undecodable key it met (up to 100); a single object, its own.
        if (err instanceof CorruptListError) {
          throw Errors.storageReadError(
            gr,
            err.objects.map((o) => ({ key: o.key, message: corruptObjectMessage(o.key, o.message) })),
            err.truncated,
          );
        }
        throw Errors.internal(corruptObjectMessage(err.key, err.message));
      case 'NoSpace':
      case 'Corrupt':
        // kube-apiserver on an etcd out of space answers the same: 500 with etcd's words.
        throw Errors.internal(err.message);
      default:
        throw Errors.internal(err.message);
    }
  }
  throw err;
}
