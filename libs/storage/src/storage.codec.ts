/**
 * The value encoding every storage backend uses (docs/storage-backends.md "Layout"): an object
 * is stored as the UTF-8 JSON of the object without `metadata.resourceVersion`, which is never
 * stored but derived on read from the key's modRevision (the etcd revision of its last write).
 * MvccStorage writes the same bytes, so one layout serves the built-in store and etcd.
 */
import type { KubeObject } from '@app/apimachinery';
import { CorruptListError, MAX_REPORTED_CORRUPT_VALUES, StorageError, type CorruptValue, type Preconditions } from './storage.interface.js';

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
 * StorageError('CorruptObject') when the bytes are not a JSON object with metadata (a value
 * written around the API, through the etcd API or by a damaged disk), naming the key as
 * `nameOf` gives it (the backend's own key; default `key`).
 */
export function decodeStoredObject(
  key: string,
  bytes: Uint8Array,
  resourceVersion: number | undefined,
  nameOf: (key: string) => string = (k) => k,
): KubeObject {
  let obj: unknown;
  try {
    obj = JSON.parse(textDecoder.decode(bytes));
  } catch (e) {
    throw new StorageError('CorruptObject', nameOf(key), `object not decodable: the stored value is not valid JSON (${(e as Error).message})`);
  }
  if (!isRecord(obj) || !isRecord(obj.metadata)) {
    throw new StorageError('CorruptObject', nameOf(key), 'object not decodable: the stored value is not a JSON object with metadata');
  }
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

/** The kind the values of a collection must be (ListOptions.kind). */
export interface ExpectedKind {
  kind: string;
  /** API group ('' for the core group). */
  group: string;
  /** The apiVersion the kind is stored at: given to a value that has none. */
  apiVersion: string;
  /**
   * What the kind's decoder refuses in an object of the kind (a field of the wrong type), as
   * its message; such an object is as undecodable as one of another kind. Absent: only the kind
   * is checked.
   */
  decodeProblem?: (o: KubeObject) => string | undefined;
}

/**
 * Why `o` is not an object of `expected` (its `kind`, or the group of its `apiVersion`, is
 * another), or undefined when it may be one. A value without `kind` or `apiVersion` is taken as
 * the expected kind's and given them, as Kubernetes defaults them from the type it decodes into;
 * one of another kind fails Kubernetes' decoder (it cannot convert a Secret into a ConfigMap), so
 * it is as undecodable as a value that is not JSON. So is an object of the kind that its decoder
 * refuses (`expected.decodeProblem`: a field of the wrong type).
 */
export function foreignKind(expected: ExpectedKind, o: KubeObject): string | undefined {
  if (o.kind === undefined) o.kind = expected.kind;
  if (o.apiVersion === undefined) o.apiVersion = expected.apiVersion;
  const kind: unknown = o.kind;
  const apiVersion: unknown = o.apiVersion;
  const group = typeof apiVersion === 'string' ? apiVersion.slice(0, Math.max(0, apiVersion.lastIndexOf('/'))) : undefined;
  if ((kind === undefined || kind === expected.kind) && (apiVersion === undefined || group === expected.group)) {
    const problem = expected.decodeProblem?.(o);
    return problem === undefined ? undefined : `object not decodable: ${problem}`;
  }
  const show = (v: unknown): string => (typeof v === 'string' ? v : (JSON.stringify(v) ?? 'none'));
  return `object not decodable: the stored object is apiVersion ${show(apiVersion)}, kind ${show(kind)}, not a ${expected.group ? `${expected.group}/` : ''}${expected.kind}`;
}

/** True when `e` says a stored value does not decode into an object. */
export function isCorruptObject(e: unknown): e is StorageError {
  return e instanceof StorageError && e.code === 'CorruptObject';
}

/**
 * Decodes the values of one list, gathering those that do not decode instead of failing at the
 * first (Kubernetes' corrupt-object aggregation), so the error names every undecodable key the
 * list met, up to MAX_REPORTED_CORRUPT_VALUES.
 */
export class ListDecoder {
  private readonly corrupt: CorruptValue[] = [];
  private truncated = false;

  /**
   * `nameOf` names an undecodable value's key as the backend stores it (default: as given);
   * with `kind`, an object of another kind is undecodable too (foreignKind).
   */
  constructor(
    private readonly nameOf: (key: string) => string = (k) => k,
    private readonly kind?: ExpectedKind,
  ) {}

  /** The object, or undefined when the value does not decode (remembered for `check`). */
  decode(key: string, bytes: Uint8Array, resourceVersion: number | undefined): KubeObject | undefined {
    try {
      const obj = decodeStoredObject(key, bytes, resourceVersion, this.nameOf);
      const why = this.kind && foreignKind(this.kind, obj);
      if (why) throw new StorageError('CorruptObject', this.nameOf(key), why);
      return obj;
    } catch (e) {
      if (!isCorruptObject(e)) throw e;
      if (this.corrupt.length < MAX_REPORTED_CORRUPT_VALUES) this.corrupt.push({ key: e.key, message: e.message });
      else this.truncated = true;
      return undefined;
    }
  }

  /** Throws CorruptListError for `prefix` when any value did not decode. */
  check(prefix: string): void {
    if (this.corrupt.length > 0) throw new CorruptListError(prefix, this.corrupt, this.truncated);
  }
}
