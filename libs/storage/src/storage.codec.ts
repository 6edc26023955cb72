/**
 * The value encoding every storage backend uses (docs/storage-backends.md "Layout"): an object
 * is stored as the UTF-8 JSON of the object without `metadata.resourceVersion`, which is never
 * stored but derived on read from the key's modRevision (the etcd revision of its last write).
 * MvccStorage writes the same bytes, so one layout serves the built-in store and etcd.
 */
import type { KubeObject } from '@app/apimachinery';
import { StorageError, type Preconditions } from './storage.interface.js';

const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder();

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** JSON bytes of `obj` without metadata.resourceVersion. StorageError('Internal') when it has no metadata or is not serializable. */
export function encodeStoredObject(key: string, obj: KubeObject): Uint8Array {
  if (!isRecord(obj) || !isRecord(obj.metadata)) throw new StorageError('Internal', key, 'object to store has no metadata');
  const { resourceVersion: _rv, ...metadata } = obj.metadata;
  try {
    return textEncoder.encode(JSON.stringify({ ...obj, metadata }));
  } catch (e) {
    throw new StorageError('Internal', key, `object is not serializable: ${(e as Error).message}`);
  }
}

/**
 * Parses stored bytes and sets metadata.resourceVersion to `resourceVersion` (undefined: none).
 * StorageError('Internal') when the bytes are not a JSON object with metadata.
 */
export function decodeStoredObject(key: string, bytes: Uint8Array, resourceVersion: number | undefined): KubeObject {
  let obj: unknown;
  try {
    obj = JSON.parse(textDecoder.decode(bytes));
  } catch {
    throw new StorageError('Internal', key, 'stored value is not valid JSON');
  }
  if (!isRecord(obj) || !isRecord(obj.metadata)) throw new StorageError('Internal', key, 'stored value has no metadata');
  const o = obj as KubeObject;
  if (resourceVersion === undefined) delete o.metadata.resourceVersion;
  else o.metadata.resourceVersion = String(resourceVersion);
  return o;
}

/**
 * Checks `p` against the stored object (kube's storage.Preconditions.Check, with its messages):
 * StorageError('Conflict') when the uid or the resourceVersion differs.
 */
export function checkPreconditions(key: string, current: KubeObject, p: Preconditions | undefined): void {
  if (!p) return;
  if (p.uid !== undefined && p.uid !== current.metadata.uid) {
    throw new StorageError('Conflict', key, `Precondition failed: UID in precondition: ${p.uid}, UID in object meta: ${current.metadata.uid ?? ''}`);
  }
  if (p.resourceVersion !== undefined && p.resourceVersion !== current.metadata.resourceVersion) {
    throw new StorageError(
      'Conflict',
      key,
      `Precondition failed: ResourceVersion in precondition: ${p.resourceVersion}, ResourceVersion in object meta: ${current.metadata.resourceVersion ?? ''}`,
    );
  }
}
