/**
 * Strategic merge patch (`application/strategic-merge-patch+json`), the patch kubectl's
 * client-side `apply`, `edit`, `diff` and `patch` (default type) send. The algorithm follows
 * k8s.io/apimachinery/pkg/util/strategicpatch/patch.go as the server runs it
 * (StrategicMergeMapPatch with MergeParallelList and IgnoreUnmatchedNulls):
 *   - maps merge recursively; `null` deletes a key;
 *   - lists whose field has `x-kubernetes-patch-strategy: merge` merge: lists of objects by
 *     `x-kubernetes-patch-merge-key`, lists of scalars as an ordered union; other lists are
 *     replaced. Without patch extensions `x-kubernetes-list-type` is the fallback (map -> merge
 *     by the first list-map key, set -> union, atomic -> replace); without a schema lists are
 *     replaced (unstructured);
 *   - directives: `$patch: replace|delete` on a map, `$patch: delete|replace` elements in a
 *     merging list, `$retainKeys`, `$deleteFromPrimitiveList/<f>`, `$setElementOrder/<f>`;
 *   - result order of a merged list: patch items in patch (or `$setElementOrder`) order,
 *     server-only items interleaved at their original relative positions (mergeSortedSlice).
 * Deviation, on purpose: where Go copies a patch value verbatim into a field the original
 * lacks (keeping directive keys and nulls inside it), this applies it to an empty value, so
 * no `$...` key or null is ever stored.
 */
import type { JSONSchemaProps } from './schema/schema.types.js';
import { Errors, StatusError } from './errors.js';
import { isJsonObject } from './patch.merge.js';
import { patchInvalidError } from './patch.json.js';

type JsonMap = Record<string, unknown>;

/** Options of `applyStrategicMergePatch`. */
export interface StrategicMergeOptions {
  /** Resolves a `$ref` (e.g. '#/components/schemas/io.k8s.api.core.v1.Container'); undefined = unknown. */
  resolveRef?: (ref: string) => JSONSchemaProps | undefined;
}

const DIRECTIVE = '$patch';
const RETAIN_KEYS = '$retainKeys';
const SET_ORDER_PREFIX = '$setElementOrder/';
const DELETE_PRIMITIVE_PREFIX = '$deleteFromPrimitiveList/';

// mergepatch/errors.go: which errors the apiserver answers with 400, 422, or (unmapped) 500.
const badRequest = (m: string): StatusError => Errors.badRequest(m);
/** Errors interpretStrategicMergePatchError does not map surface as a 500 with reason Unknown. */
const unknown = (m: string): StatusError => new StatusError(500, '', m);
const ERR_RETAIN_KEYS_FORMAT = 'invalid patch format of retainKeys';
const ERR_SET_ORDER_FORMAT = 'invalid patch format of setElementOrder list';
const ERR_PRIMITIVE_LIST_FORMAT = 'invalid patch format of primitive list';

/** Go's %v rendering of decoded JSON, used inside Kubernetes' error messages (`map[a:1 b:x]`). */
export function goFormat(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (Array.isArray(v)) return `[${v.map(goFormat).join(' ')}]`;
  if (isJsonObject(v)) {
    return `map[${Object.keys(v)
      .sort()
      .map((k) => `${k}:${goFormat(v[k])}`)
      .join(' ')}]`;
  }
  return String(v);
}

const errNoMergeKey = (m: JsonMap, k: string): StatusError => unknown(`map: ${goFormat(m)} does not contain declared merge key: ${k}`);
const errBadPatchType = (t: unknown, m: JsonMap): StatusError => unknown(`unknown patch type: ${goFormat(t)} in map: ${goFormat(m)}`);

// ---- schema lookup (PatchMetaFromOpenAPI) ----

interface ListMeta {
  merge: boolean;
  mergeKey: string;
  items: JSONSchemaProps | undefined;
}

class SchemaLookup {
  constructor(private readonly resolveRef?: (ref: string) => JSONSchemaProps | undefined) {}

  /** Follows $ref and single-schema allOf wrappers (OpenAPI v3 wraps refs as allOf:[{$ref}]). */
  resolve(s: JSONSchemaProps | undefined, depth = 0): JSONSchemaProps | undefined {
    if (!s || depth > 32) return s;
    if (s.$ref) {
      const target = this.resolveRef?.(s.$ref);
      return target ? this.resolve({ ...target, ...without(s, '$ref') }, depth + 1) : without(s, '$ref');
    }
    if (s.allOf && s.allOf.length > 0) {
      let merged: JSONSchemaProps = without(s, 'allOf');
      for (const part of s.allOf) {
        const r = this.resolve(part, depth + 1);
        if (r) merged = { ...r, ...merged, properties: merged.properties ?? r.properties, items: merged.items ?? r.items };
      }
      return merged;
    }
    return s;
  }

  /** The raw (unresolved) schema of field `key` of an object schema. */
  field(parent: JSONSchemaProps | undefined, key: string): JSONSchemaProps | undefined {
    if (!parent) return undefined;
    const p = parent.properties?.[key];
    if (p) return p;
    return typeof parent.additionalProperties === 'object' ? parent.additionalProperties : undefined;
  }

  /** Strategies of a field (the raw schema's extensions win over the referenced one's). */
  strategies(raw: JSONSchemaProps | undefined, resolved: JSONSchemaProps | undefined): string[] {
    const s = raw?.['x-kubernetes-patch-strategy'] ?? resolved?.['x-kubernetes-patch-strategy'];
    if (!s) return [];
    const list = s
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean);
    // extractRetainKeysPatchStrategy: at most two strategies, the second only retainKeys.
    return list.filter((x) => x !== 'retainKeys');
  }

  mapField(parent: JSONSchemaProps | undefined, key: string): { schema: JSONSchemaProps | undefined; replace: boolean } {
    const raw = this.field(parent, key);
    const schema = this.resolve(raw);
    return { schema, replace: this.strategies(raw, schema).includes('replace') };
  }

  listField(parent: JSONSchemaProps | undefined, key: string): ListMeta {
    const raw = this.field(parent, key);
    const schema = this.resolve(raw);
    const items = this.resolve(schema?.items);
    const strategies = this.strategies(raw, schema);
    let mergeKey = String(raw?.['x-kubernetes-patch-merge-key'] ?? schema?.['x-kubernetes-patch-merge-key'] ?? '');
    let merge = strategies.includes('merge');
    if (strategies.length === 0) {
      // Fallback for schemas that only carry structural-merge markers (CRDs).
      const lt = raw?.['x-kubernetes-list-type'] ?? schema?.['x-kubernetes-list-type'];
      const keys = raw?.['x-kubernetes-list-map-keys'] ?? schema?.['x-kubernetes-list-map-keys'];
      if (lt === 'map' && keys && keys.length > 0) {
        merge = true;
        mergeKey = keys[0];
      } else if (lt === 'set') {
        merge = true;
        mergeKey = '';
      }
    }
    return { merge, mergeKey, items };
  }
}

function without<T extends object, K extends keyof T>(o: T, k: K): T {
  const c = { ...o };
  delete c[k];
  return c;
}

// ---- list helpers ----

type Kind = 'map' | 'scalar';

/** sliceElementType: all elements share one kind; lists of lists are unsupported. */
function elementKind(...lists: unknown[][]): Kind | undefined {
  let kind: Kind | undefined;
  let prevType: string | undefined;
  for (const l of lists) {
    for (const v of l) {
      if (Array.isArray(v)) throw patchInvalidError('lists of lists are not supported');
      const t = isJsonObject(v) ? 'map' : v === null ? 'null' : typeof v;
      if (prevType === undefined) prevType = t;
      else if (prevType !== t) throw unknown(`list element types are not identical: ${goFormat(lists)}`);
      kind = t === 'map' ? 'map' : 'scalar';
    }
  }
  return kind;
}

/**
 * Where the items of a list are, by merge key (maps) or by value (scalars), first occurrence
 * first: built once per list, so that merging, partitioning and ordering a list of n items
 * against one of m costs n + m lookups, not n x m comparisons (a patch or an object is bounded
 * by its size, not by its item count).
 */
class Positions {
  private readonly at = new Map<unknown, number>();

  constructor(
    list: readonly unknown[],
    private readonly mergeKey: string,
    private readonly kind: Kind,
  ) {
    list.forEach((x, i) => this.add(x, i));
  }

  /** Records `item` at index `i` unless its key is already there. */
  add(item: unknown, i: number): void {
    if (this.kind === 'map' && !(isJsonObject(item) && Object.prototype.hasOwnProperty.call(item, this.mergeKey))) return;
    const k = this.kind === 'scalar' ? item : (item as JsonMap)[this.mergeKey];
    if (!this.at.has(k)) this.at.set(k, i);
  }

  /** The index of the first item with `item`'s key (value for scalars), or -1. */
  of(item: unknown): number {
    const k = this.kind === 'scalar' ? item : (item as JsonMap)[this.mergeKey];
    return this.at.get(k) ?? -1;
  }
}

/** partitionPrimitivesByPresentInList / partitionMapsByPresentInList. */
function partition(merged: unknown[], by: unknown[], mergeKey: string, kind: Kind): [unknown[], unknown[]] {
  const inPatch: unknown[] = [];
  const serverOnly: unknown[] = [];
  const positions = new Positions(by, mergeKey, kind);
  for (const v of merged) {
    if (kind === 'map') {
      if (!isJsonObject(v)) throw unknown(`expected a map[string]interface {}, but received a ${typeof v}`);
      if (!(mergeKey in v)) throw errNoMergeKey(v, mergeKey);
    }
    (positions.of(v) >= 0 ? inPatch : serverOnly).push(v);
  }
  return [inPatch, serverOnly];
}

/** normalizeSliceOrder: stable sort by position in `order` (items absent from it keep last). */
function sortByOrder(items: unknown[], order: unknown[], mergeKey: string, kind: Kind): unknown[] {
  const positions = new Positions(order, mergeKey, kind);
  const pos = (v: unknown): number => {
    const i = positions.of(v);
    return i < 0 ? Number.MAX_SAFE_INTEGER : i;
  };
  return items
    .map((v, i) => ({ v, i, p: pos(v) }))
    .sort((a, b) => a.p - b.p || a.i - b.i)
    .map((x) => x.v);
}

/**
 * normalizeElementOrder + mergeSortedSlice: patch items in `patchOrder`, server-only items in
 * `serverOrder`, then interleaved: a server-only item goes first only when both it and the next
 * patch item appear in `serverOrder` and it comes earlier there.
 */
function normalizeElementOrder(
  patchItems: unknown[],
  serverOnly: unknown[],
  patchOrder: unknown[],
  serverOrder: unknown[],
  mergeKey: string,
  kind: Kind,
): unknown[] {
  const right = sortByOrder(patchItems, patchOrder, mergeKey, kind);
  const left = sortByOrder(serverOnly, serverOrder, mergeKey, kind);
  const server = new Positions(serverOrder, mergeKey, kind);
  const out: unknown[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    if (i >= left.length) out.push(right[j++]);
    else if (j >= right.length) out.push(left[i++]);
    else {
      const li = server.of(left[i]);
      const ri = server.of(right[j]);
      if (li >= 0 && ri >= 0 && li < ri) out.push(left[i++]);
      else out.push(right[j++]);
    }
  }
  return out;
}

// ---- the merge ----

class Merger {
  constructor(private readonly lookup: SchemaLookup) {}

  /** Applies a patch value to "no value": strips directives and nulls from what gets stored. */
  fresh(patchV: unknown, schema: JSONSchemaProps | undefined, list?: ListMeta): unknown {
    if (isJsonObject(patchV)) return this.mergeMap({}, patchV, schema);
    if (Array.isArray(patchV) && list?.merge) return this.mergeSlice([], patchV, list, false);
    return patchV;
  }

  mergeMap(original: JsonMap, patch: JsonMap, schema: JSONSchemaProps | undefined): JsonMap {
    if (DIRECTIVE in patch) {
      const d = patch[DIRECTIVE];
      if (d === 'replace') return this.mergeMap({}, without(patch, DIRECTIVE), schema);
      if (d === 'delete') return {};
      throw errBadPatchType(d, patch);
    }
    this.applyRetainKeys(original, patch);
    this.mergeOrderedLists(original, patch, schema);

    for (const rawKey of Object.keys(patch)) {
      const patchV = patch[rawKey];
      let key = rawKey;
      let isDeleteList = false;
      if (rawKey.startsWith(DELETE_PRIMITIVE_PREFIX)) {
        key = rawKey.slice(DELETE_PRIMITIVE_PREFIX.length);
        isDeleteList = true;
        if (!Array.isArray(patchV)) throw badRequest(ERR_PRIMITIVE_LIST_FORMAT);
      }
      if (patchV === null) {
        delete original[key];
        continue;
      }
      const has = Object.prototype.hasOwnProperty.call(original, key);
      const origV = has ? original[key] : undefined;
      if (!has || kindOf(origV) !== kindOf(patchV)) {
        // Absent in the original, or of another kind: the patch value is taken (delete lists are no-ops).
        if (!isDeleteList) {
          if (isJsonObject(patchV)) setKey(original, key, this.fresh(patchV, this.lookup.mapField(schema, key).schema));
          else if (Array.isArray(patchV)) setKey(original, key, this.fresh(patchV, undefined, this.lookup.listField(schema, key)));
          else setKey(original, key, patchV);
        }
        continue;
      }
      const bothMaps = isJsonObject(origV);
      const bothLists = Array.isArray(origV);
      if (bothMaps) {
        const { schema: sub, replace } = this.lookup.mapField(schema, key);
        setKey(original, key, replace ? this.fresh(patchV, sub) : this.mergeMap(origV as JsonMap, patchV as JsonMap, sub));
      } else if (bothLists) {
        const meta = this.lookup.listField(schema, key);
        setKey(original, key, this.mergeSliceHandler(origV as unknown[], patchV as unknown[], meta, isDeleteList));
      } else {
        setKey(original, key, patchV);
      }
    }
    return original;
  }

  /** applyRetainKeysDirective: drop original keys not listed; the patch may only touch listed keys. */
  private applyRetainKeys(original: JsonMap, patch: JsonMap): void {
    if (!(RETAIN_KEYS in patch)) return;
    const retain = patch[RETAIN_KEYS];
    delete patch[RETAIN_KEYS];
    if (!Array.isArray(retain) || retain.some((k) => typeof k !== 'string')) throw badRequest(ERR_RETAIN_KEYS_FORMAT);
    const keep = new Set(retain as string[]);
    for (const [k, v] of Object.entries(patch)) {
      if (v === null || k.startsWith(DELETE_PRIMITIVE_PREFIX) || k.startsWith(SET_ORDER_PREFIX)) continue;
      if (!keep.has(k)) throw patchInvalidError("patch content doesn't match retainKeys list");
    }
    for (const k of Object.keys(original)) if (!keep.has(k)) delete original[k];
  }

  /** mergePatchIntoOriginal: each `$setElementOrder/<f>` with its list `<f>`, merged then reordered. */
  private mergeOrderedLists(original: JsonMap, patch: JsonMap, schema: JSONSchemaProps | undefined): void {
    for (const dkey of Object.keys(patch)) {
      if (!dkey.startsWith(SET_ORDER_PREFIX)) continue;
      const order = patch[dkey];
      delete patch[dkey];
      if (!Array.isArray(order)) throw badRequest(ERR_SET_ORDER_FORMAT);
      const key = dkey.slice(SET_ORDER_PREFIX.length);
      const hasOrig = Object.prototype.hasOwnProperty.call(original, key) && original[key] !== null;
      const hasPatch = Object.prototype.hasOwnProperty.call(patch, key);
      const origV = hasOrig ? original[key] : undefined;
      const patchV = hasPatch ? patch[key] : undefined;
      if (hasPatch && patchV === null) continue; // the field is being deleted; ordering is moot
      if ((hasOrig && !Array.isArray(origV)) || (hasPatch && !Array.isArray(patchV))) {
        throw unknown(`expected a []interface {}, but received a ${typeof (hasOrig && !Array.isArray(origV) ? origV : patchV)}`);
      }
      if (!hasOrig && !hasPatch) continue;
      const meta = this.lookup.listField(schema, key);
      const origList = (origV as unknown[] | undefined) ?? [];
      const patchList = (patchV as unknown[] | undefined) ?? [];
      let merged: unknown[];
      if (!hasOrig) merged = this.fresh(patchList, undefined, meta) as unknown[];
      else if (!hasPatch) merged = origList;
      else merged = this.mergeSliceHandler(origList, patchList, meta, false);
      const kind = elementKind(origList, patchList);
      if (kind !== undefined && merged.length > 0) {
        // A list of objects without a merge key is not merged, so there is nothing to order by.
        if (kind === 'map' && !meta.mergeKey) {
          original[key] = merged;
          delete patch[key];
          continue;
        }
        const [inOrder, serverOnly] = partition(merged, order, meta.mergeKey, kind);
        merged = normalizeElementOrder(inOrder, serverOnly, order, origList, meta.mergeKey, kind);
      }
      original[key] = merged;
      delete patch[key];
    }
  }

  private mergeSliceHandler(original: unknown[], patch: unknown[], meta: ListMeta, isDeleteList: boolean): unknown[] {
    if (meta.merge || isDeleteList) return this.mergeSlice(original, patch, meta, isDeleteList);
    return patch;
  }

  private mergeSlice(original: unknown[], patch: unknown[], meta: ListMeta, isDeleteList: boolean): unknown[] {
    if (original.length === 0 && patch.length === 0) return original;
    const kind = elementKind(original, patch) as Kind;
    const mergeKey = kind === 'map' ? meta.mergeKey : '';
    let merged: unknown[];
    let orderRef = patch;
    let serverRef = original;
    if (kind === 'scalar') {
      if (isDeleteList) {
        const del = new Set(patch);
        return original.filter((x) => !del.has(x));
      }
      merged = [...new Set([...original, ...patch])];
    } else {
      if (!mergeKey) throw unknown('cannot merge lists without merge key');
      const special = this.specialElements(original, patch, mergeKey, meta.items);
      serverRef = special.original;
      orderRef = special.patch;
      merged = this.mergeByKey(special.original.slice(), special.patch, mergeKey, meta.items);
    }
    const [inPatch, serverOnly] = partition(merged, orderRef, mergeKey, kind);
    return normalizeElementOrder(inPatch, serverOnly, orderRef, serverRef, mergeKey, kind);
  }

  /** mergeSliceWithSpecialElements: `$patch: delete` removes by key, `$patch: replace` drops the original. */
  private specialElements(
    original: unknown[],
    patch: unknown[],
    mergeKey: string,
    items: JSONSchemaProps | undefined,
  ): { original: unknown[]; patch: unknown[] } {
    const plain: unknown[] = [];
    let replace = false;
    // Keys to delete, removed in one pass once all are known (one pass per key would cost the
    // list's length for every delete directive).
    const deleted = new Set<unknown>();
    for (const v of patch) {
      const m = v as JsonMap;
      if (!(DIRECTIVE in m)) {
        plain.push(v);
        continue;
      }
      const d = m[DIRECTIVE];
      if (d === 'delete') {
        if (!(mergeKey in m)) throw errNoMergeKey(m, mergeKey);
        deleted.add(m[mergeKey]);
      } else if (d === 'replace') {
        replace = true;
      } else if (d === 'merge') {
        throw unknown('merging lists cannot yet be specified in the patch');
      } else {
        throw errBadPatchType(d, m);
      }
    }
    const orig = deleted.size === 0 ? original : original.filter((x) => !(isJsonObject(x) && mergeKey in x && deleted.has(x[mergeKey])));
    // With replace, the plain items become the whole list (and no item counts as "from the patch").
    return replace ? { original: plain.map((x) => this.fresh(x, items)), patch: [] } : { original: orig, patch: plain };
  }

  /** mergeSliceWithoutSpecialElements: merge items sharing the merge key, append the rest. */
  private mergeByKey(original: unknown[], patch: unknown[], mergeKey: string, items: JSONSchemaProps | undefined): unknown[] {
    const positions = new Positions(original, mergeKey, 'map');
    for (const v of patch) {
      const m = v as JsonMap;
      if (!(mergeKey in m)) throw errNoMergeKey(m, mergeKey);
      const i = positions.of(m);
      if (i >= 0) original[i] = this.mergeMap(original[i] as JsonMap, m, items);
      else positions.add(m, original.push(this.mergeMap({}, m, items)) - 1);
    }
    return original;
  }
}

/** Go reflect kind of a decoded JSON value: maps and slices merge, scalars of another type replace. */
function kindOf(v: unknown): string {
  return isJsonObject(v) ? 'map' : Array.isArray(v) ? 'slice' : v === null ? 'null' : typeof v;
}

function setKey(o: JsonMap, k: string, v: unknown): void {
  if (k === '__proto__') Object.defineProperty(o, k, { value: v, writable: true, enumerable: true, configurable: true });
  else o[k] = v;
}

/**
 * Applies a strategic merge patch to `original` guided by the kind's schema (undefined =
 * unstructured: maps merge, lists are replaced). Inputs are not mutated.
 * @throws StatusError as kube-apiserver answers: 400 for malformed directives, 422 for
 *   lists of lists and retainKeys mismatches, 500 (reason Unknown) for the errors Kubernetes
 *   leaves unmapped, e.g. a missing merge key:
 *   `map: map[image:x] does not contain declared merge key: name`.
 */
export function applyStrategicMergePatch(
  original: Record<string, unknown>,
  patch: Record<string, unknown>,
  schema: JSONSchemaProps | undefined,
  opts: StrategicMergeOptions = {},
): Record<string, unknown> {
  if (!isJsonObject(patch)) throw badRequest('invalid JSON document');
  const lookup = new SchemaLookup(opts.resolveRef);
  const merger = new Merger(lookup);
  const orig = isJsonObject(original) ? structuredClone(original) : {};
  return merger.mergeMap(orig, structuredClone(patch), lookup.resolve(schema));
}
