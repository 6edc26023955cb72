/**
 * Schema-driven walks over objects for server-side apply, mirroring structured-merge-diff's
 * typed package: the field set of a value (tofieldset.go), the merge of an applied
 * configuration into the live object (merge.go), the comparison of two values (compare.go) and
 * the removal of paths (remove.go).
 *
 * Topology comes from the kind's schema (conventions, "Server-side apply" rule 6):
 * - scalars, atomic lists and atomic maps/structs are leaves: owned, merged and compared whole;
 * - granular maps/structs recurse by key (`f:<key>`); keys that are not declared properties
 *   (map entries) are themselves members of a field set, as SMD inserts them;
 * - `set` lists recurse by value (`v:`), `map` lists by their key fields (`k:`);
 * - where the schema says nothing (unknown fields, no schema, preserve-unknown-fields) the type
 *   is deduced from the value: objects are granular maps, lists are atomic.
 *
 * Values are JSON trees (as decoded from the request); walkers never mutate their inputs.
 */
import { ObjectMetaSchema } from '../schema/meta.schemas.js';
import { listMergeInfo, mapMergeType } from '../schema/schema.lookup.js';
import { resolveSchema } from '../schema/schema.resolve.js';
import type { JSONSchemaProps } from '../schema/schema.types.js';
import { fieldElement, FieldSet, type FieldSetNode, keyElement, pathToString, valueElement } from './ssa.fieldset.js';

/** A list or key problem in a value, with the SMD-style path where it was found. */
export class TypedValueError extends Error {
  constructor(
    readonly path: string,
    readonly detail: string,
  ) {
    super(path ? `${path}: ${detail}` : detail);
    this.name = 'TypedValueError';
  }
}

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function resolve(s: JSONSchemaProps | undefined): JSONSchemaProps | undefined {
  if (!s) return undefined;
  try {
    return resolveSchema(s);
  } catch {
    return undefined;
  }
}

/** How a map/struct node behaves. */
interface MapShape {
  t: 'map';
  atomic: boolean;
  schema?: JSONSchemaProps;
  /** True for the object root, whose `metadata` is ObjectMeta even when the schema is vague (CRDs). */
  root: boolean;
}

/** How a list node behaves; `lenient` lists that cannot be keyed fall back to atomic. */
interface ListShape {
  t: 'list';
  listType: 'atomic' | 'set' | 'map';
  keys: string[];
  item?: JSONSchemaProps;
}

type Shape = MapShape | ListShape | { t: 'scalar' };

const SCALAR: Shape = { t: 'scalar' };

function shapeOf(schema: JSONSchemaProps | undefined, value: unknown, root = false): Shape {
  if (Array.isArray(value)) {
    if (!schema || (schema.type !== undefined && schema.type !== 'array')) return { t: 'list', listType: 'atomic', keys: [] };
    const info = listMergeInfo(schema);
    return { t: 'list', listType: info.listType, keys: info.keys, item: resolve(schema.items) };
  }
  if (isObj(value)) {
    if (!schema || (schema.type !== undefined && schema.type !== 'object')) return { t: 'map', atomic: false, root };
    return { t: 'map', atomic: mapMergeType(schema) === 'atomic', schema, root };
  }
  return SCALAR;
}

/** Schema of a map child and whether the key is a declared struct field. */
function childOf(shape: MapShape, key: string): { schema?: JSONSchemaProps; field: boolean } {
  const s = shape.schema;
  const prop = s?.properties?.[key];
  if (prop) {
    const r = resolve(prop);
    if (shape.root && key === 'metadata' && !r?.properties) return { schema: ObjectMetaSchema, field: true };
    return { schema: r, field: true };
  }
  if (shape.root && key === 'metadata') return { schema: ObjectMetaSchema, field: true };
  if (s && typeof s.additionalProperties === 'object') return { schema: resolve(s.additionalProperties), field: false };
  if (s?.['x-kubernetes-embedded-resource'] && key === 'metadata') return { schema: ObjectMetaSchema, field: true };
  return { schema: undefined, field: false };
}

/** One keyed list item: its path element and value. */
interface Item {
  pe: string;
  v: unknown;
}

/**
 * Path elements of the items of a set or map list. In strict mode (an applied configuration)
 * a missing key field or a duplicate is an error, as in SMD; otherwise undefined is returned and
 * the caller treats the list as atomic, so live data never makes a write fail.
 */
function listItems(shape: ListShape, list: unknown[], path: string[], strict: boolean): Item[] | undefined {
  const out: Item[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < list.length; i++) {
    const v = list[i];
    let pe: string;
    if (shape.listType === 'set') {
      if (v !== null && typeof v === 'object') {
        if (strict) throw new TypedValueError(pathToString(path), `element ${i}: set items must be scalars`);
        return undefined;
      }
      pe = valueElement(v);
    } else {
      if (!isObj(v)) {
        if (strict) throw new TypedValueError(pathToString(path), `element ${i}: associative list with keys may only contain objects`);
        return undefined;
      }
      const key: Obj = {};
      for (const k of shape.keys) {
        let kv = v[k];
        if (kv === undefined) kv = shape.item?.properties?.[k] ? resolve(shape.item.properties[k])?.default : undefined;
        if (kv === undefined || kv === null) {
          if (strict) {
            throw new TypedValueError(
              pathToString(path),
              `element ${i}: associative list with keys has an element that omits key field ${JSON.stringify(k)} (and doesn't have default value)`,
            );
          }
          return undefined;
        }
        key[k] = kv;
      }
      pe = keyElement(key);
    }
    if (seen.has(pe)) {
      if (strict) throw new TypedValueError(pathToString(path), `duplicate entries for key ${pathToString([pe])}`);
      return undefined;
    }
    seen.add(pe);
    out.push({ pe, v });
  }
  return out;
}

function child(n: FieldSetNode, pe: string): FieldSetNode {
  if (!n.c) n.c = new Map();
  let c = n.c.get(pe);
  if (!c) {
    c = { m: false };
    n.c.set(pe, c);
  }
  return c;
}

/**
 * The set of paths a value sets (SMD ToFieldSet): leaves, list items, map entries and empty or
 * null fields. `strict` rejects lists that cannot be keyed (applied configurations).
 */
export function toFieldSet(value: unknown, schema: JSONSchemaProps | undefined, strict: boolean): FieldSet {
  const root: FieldSetNode = { m: false };
  if (isObj(value)) fieldsOfMap(value, shapeOf(resolve(schema), value, true) as MapShape, root, [], strict);
  return FieldSet.fromNode(root);
}

function fieldsOf(value: unknown, schema: JSONSchemaProps | undefined, node: FieldSetNode, path: string[], strict: boolean): void {
  const shape = shapeOf(schema, value);
  if (shape.t === 'scalar') {
    node.m = true;
    return;
  }
  if (shape.t === 'map') {
    if (shape.atomic) node.m = true;
    else fieldsOfMap(value as Obj, shape, node, path, strict);
    return;
  }
  if (shape.listType === 'atomic') {
    node.m = true;
    return;
  }
  const items = listItems(shape, value as unknown[], path, strict);
  if (!items) {
    node.m = true;
    return;
  }
  for (const it of items) {
    const c = child(node, it.pe);
    c.m = true;
    if (shape.listType === 'map') fieldsOf(it.v, shape.item, c, strict ? [...path, it.pe] : path, strict);
  }
}

function fieldsOfMap(value: Obj, shape: MapShape, node: FieldSetNode, path: string[], strict: boolean): void {
  for (const key of Object.keys(value)) {
    const v = value[key];
    if (v === undefined) continue;
    const { schema, field } = childOf(shape, key);
    const pe = fieldElement(key);
    const c = child(node, pe);
    if (v !== null) fieldsOf(v, schema, c, strict ? [...path, pe] : path, strict);
    if (v === null || !field || (isObj(v) && Object.keys(v).length === 0)) c.m = true;
    if (!c.m && !c.c?.size) node.c!.delete(pe);
  }
}

/**
 * Merges an applied configuration `rhs` into `lhs` (SMD merge): the configuration wins for
 * scalars and atomic values; granular maps merge by key; set and map lists merge by item, keeping
 * live-only items in place and configured items in configuration order. A `null` in the
 * configuration removes the field from the result (typed decoding in Kubernetes drops it).
 * `lhs` may be undefined (create).
 */
export function mergeApplied(lhs: unknown, rhs: unknown, schema: JSONSchemaProps | undefined): unknown {
  return mergeMap(isObj(lhs) ? lhs : {}, rhs as Obj, shapeOf(resolve(schema), rhs, true) as MapShape);
}

function mergeValue(lhs: unknown, rhs: unknown, schema: JSONSchemaProps | undefined): unknown {
  const shape = shapeOf(schema, rhs);
  if (shape.t === 'map') {
    if (shape.atomic) return rhs;
    // Merging into {} also drops the configuration's nulls below a new granular map.
    return mergeMap(isObj(lhs) ? lhs : {}, rhs as Obj, shape);
  }
  if (shape.t === 'list' && shape.listType !== 'atomic' && Array.isArray(lhs)) {
    return mergeList(lhs, rhs as unknown[], shape);
  }
  return rhs;
}

function mergeMap(lhs: Obj, rhs: Obj, shape: MapShape): Obj {
  const out: Obj = { ...lhs };
  for (const key of Object.keys(rhs)) {
    const rv = rhs[key];
    if (rv === undefined) continue;
    if (rv === null) {
      delete out[key];
      continue;
    }
    out[key] = mergeValue(lhs[key], rv, childOf(shape, key).schema);
  }
  return out;
}

/**
 * Item order follows SMD's mergingWalker.visitListItems: a two-pointer walk in which items of the
 * configuration keep their relative order, shared items are placed when the configuration
 * reaches them, and live-only items stay where they were relative to the shared ones.
 */
function mergeList(lhs: unknown[], rhs: unknown[], shape: ListShape): unknown[] {
  const rItems = listItems(shape, rhs, [], true)!;
  const lItems = listItems(shape, lhs, [], false);
  if (!lItems) return rhs; // live list cannot be keyed: the configuration replaces it
  const rIndex = new Set(rItems.map((it) => it.pe));
  const lIndex = new Map<string, unknown>();
  for (const it of lItems) lIndex.set(it.pe, it.v);
  const shared = rItems.filter((it) => lIndex.has(it.pe)).map((it) => it.pe);
  let s = 0;
  const done = new Set<string>();
  const out: unknown[] = [];
  const take = (pe: string, rv: unknown): void => {
    done.add(pe);
    const lv = lIndex.get(pe);
    out.push(shape.listType === 'map' && lv !== undefined ? mergeValue(lv, rv, shape.item) : rv);
  };
  let l = 0;
  let r = 0;
  while (l < lItems.length || r < rItems.length) {
    if (l < lItems.length && r < rItems.length) {
      const lpe = lItems[l].pe;
      if (lpe === rItems[r].pe) {
        take(lpe, rItems[r].v);
        l++;
        r++;
        s++;
        continue;
      }
      // A shared item that the configuration wants later: skip it here, it is placed then.
      if (rIndex.has(lpe) && s < shared.length && shared[s] !== lpe) {
        l++;
        continue;
      }
    }
    if (l < lItems.length) {
      const lpe = lItems[l].pe;
      if (!rIndex.has(lpe)) {
        out.push(lItems[l].v);
        l++;
        continue;
      }
      if (done.has(lpe)) {
        l++;
        continue;
      }
    }
    if (r < rItems.length) {
      const rpe = rItems[r].pe;
      take(rpe, rItems[r].v);
      r++;
      if (s < shared.length && shared[s] === rpe) s++;
    }
  }
  return out;
}

/** Result of comparing two values: paths added, modified (leaves only) and removed. */
export interface Comparison {
  added: FieldSet;
  modified: FieldSet;
  removed: FieldSet;
}

/** SMD Compare of `lhs` (before) and `rhs` (after); either may be undefined (absent object). */
export function compareObjects(lhs: unknown, rhs: unknown, schema: JSONSchemaProps | undefined): Comparison {
  const acc = { added: { m: false } as FieldSetNode, modified: { m: false } as FieldSetNode, removed: { m: false } as FieldSetNode };
  const l = isObj(lhs) ? lhs : {};
  const r = isObj(rhs) ? rhs : {};
  const shape = shapeOf(resolve(schema), isObj(rhs) ? rhs : l, true) as MapShape;
  compareMap(l, r, shape, [], acc);
  return { added: FieldSet.fromNode(acc.added), modified: FieldSet.fromNode(acc.modified), removed: FieldSet.fromNode(acc.removed) };
}

interface Acc {
  added: FieldSetNode;
  modified: FieldSetNode;
  removed: FieldSetNode;
}

function mark(root: FieldSetNode, path: string[]): void {
  let n = root;
  for (const pe of path) n = child(n, pe);
  n.m = true;
}

function isEmptyContainer(v: unknown): boolean {
  if (v === undefined || v === null) return true;
  if (Array.isArray(v)) return v.length === 0;
  if (isObj(v)) return Object.keys(v).length === 0;
  return false;
}

type ValueKind = 'none' | 'obj' | 'arr' | 'scalar';

function kindOf(v: unknown): ValueKind {
  if (v === undefined || v === null) return 'none';
  if (Array.isArray(v)) return 'arr';
  return typeof v === 'object' ? 'obj' : 'scalar';
}

function compareValue(lhs: unknown, rhs: unknown, schema: JSONSchemaProps | undefined, path: string[], acc: Acc): void {
  const leaf = (): void => {
    if (lhs === undefined) mark(acc.added, path);
    else if (rhs === undefined) mark(acc.removed, path);
    else if (!jsonValuesEqual(lhs, rhs)) mark(acc.modified, path);
  };
  const lk = kindOf(lhs);
  const rk = kindOf(rhs);
  // A value that changed type (e.g. scalar to object) is compared whole.
  if (lk !== 'none' && rk !== 'none' && lk !== rk) return leaf();
  const shape = shapeOf(schema, rk !== 'none' ? rhs : lhs);
  if (shape.t === 'scalar') return leaf();
  // Both sides empty or null: a leaf, to keep the empty/null distinction (SMD emptyPromoteToLeaf).
  if (isEmptyContainer(lhs) && isEmptyContainer(rhs)) return leaf();
  if (shape.t === 'map') {
    if (shape.atomic) return leaf();
    compareMap(isObj(lhs) ? lhs : {}, isObj(rhs) ? rhs : {}, shape, path, acc);
  } else {
    if (shape.listType === 'atomic') return leaf();
    const li = Array.isArray(lhs) ? listItems(shape, lhs, path, false) : [];
    const ri = Array.isArray(rhs) ? listItems(shape, rhs, path, false) : [];
    if (!li || !ri) return leaf();
    const lm = new Map(li.map((it) => [it.pe, it.v]));
    const rm = new Map(ri.map((it) => [it.pe, it.v]));
    for (const it of ri) compareItem(lm.get(it.pe), it.v, shape, [...path, it.pe], acc);
    for (const it of li) if (!rm.has(it.pe)) compareItem(it.v, undefined, shape, [...path, it.pe], acc);
  }
  // A granular value that appears or disappears as a whole is itself added or removed.
  if (lhs === undefined) mark(acc.added, path);
  else if (rhs === undefined) mark(acc.removed, path);
}

function compareItem(lhs: unknown, rhs: unknown, shape: ListShape, path: string[], acc: Acc): void {
  if (shape.listType === 'set') {
    if (lhs === undefined) mark(acc.added, path);
    else if (rhs === undefined) mark(acc.removed, path);
    return;
  }
  compareValue(lhs, rhs, shape.item, path, acc);
}

function compareMap(lhs: Obj, rhs: Obj, shape: MapShape, path: string[], acc: Acc): void {
  for (const key of Object.keys(rhs)) {
    if (rhs[key] === undefined) continue;
    compareValue(lhs[key], rhs[key], childOf(shape, key).schema, [...path, fieldElement(key)], acc);
  }
  for (const key of Object.keys(lhs)) {
    if (lhs[key] === undefined || (key in rhs && rhs[key] !== undefined)) continue;
    compareValue(lhs[key], undefined, childOf(shape, key).schema, [...path, fieldElement(key)], acc);
  }
}

/** Structural equality of JSON values (key order ignored). */
export function jsonValuesEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonValuesEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ao = a as Obj;
  const bo = b as Obj;
  const ak = Object.keys(ao).filter((k) => ao[k] !== undefined);
  const bk = Object.keys(bo).filter((k) => bo[k] !== undefined);
  if (ak.length !== bk.length) return false;
  for (const k of ak) if (!(k in bo) || !jsonValuesEqual(ao[k], bo[k])) return false;
  return true;
}

/**
 * Removes from `merged` what the applier owned before (`last`) and owns no longer, unless some
 * manager (`owned`: the union of every manager's set, the applier's new one included) still
 * owns it. This is SMD's Updater.prune with addBackOwnedItems/addBackDanglingItems folded into
 * one walk: a path goes when it is in `last` (a named struct field counts when it has owned
 * descendants, EnsureNamedFieldsAreMembers) and not in `owned` under the same rule; removing a
 * path removes its whole subtree. Emptied maps and lists are dropped, as SMD leaves them null.
 */
export function pruneRemoved(merged: Obj, schema: JSONSchemaProps | undefined, last: FieldSet, owned: FieldSet): Obj {
  const shape = shapeOf(resolve(schema), merged, true) as MapShape;
  return pruneMap(merged, shape, last.root, owned.root) ?? {};
}

function inEnsured(n: FieldSetNode | undefined, named: boolean): boolean {
  if (!n) return false;
  return n.m || (named && !!n.c && n.c.size > 0);
}

function pruneValue(v: unknown, schema: JSONSchemaProps | undefined, last: FieldSetNode, owned: FieldSetNode | undefined): unknown {
  const shape = shapeOf(schema, v);
  if (shape.t === 'map') {
    if (shape.atomic) return v;
    return pruneMap(v as Obj, shape, last, owned);
  }
  if (shape.t === 'list' && shape.listType !== 'atomic') {
    const items = listItems(shape, v as unknown[], [], false);
    if (!items) return v;
    const out: unknown[] = [];
    let changed = false;
    for (const it of items) {
      const l = last.c?.get(it.pe);
      if (!l) {
        out.push(it.v);
        continue;
      }
      const o = owned?.c?.get(it.pe);
      if (l.m && !inEnsured(o, false)) {
        changed = true;
        continue;
      }
      if (l.c && shape.listType === 'map') {
        const nv = pruneValue(it.v, shape.item, l, o);
        if (nv !== it.v) changed = true;
        out.push(nv ?? {});
      } else out.push(it.v);
    }
    if (!changed) return v;
    return out.length > 0 ? out : undefined;
  }
  return v;
}

function pruneMap(value: Obj, shape: MapShape, last: FieldSetNode, owned: FieldSetNode | undefined): Obj | undefined {
  if (!last.c) return value;
  let out: Obj | undefined;
  for (const [pe, l] of last.c) {
    if (!pe.startsWith('f:')) continue;
    const key = pe.slice(2);
    if (!(key in value) || value[key] === undefined) continue;
    const { schema, field } = childOf(shape, key);
    const o = owned?.c?.get(pe);
    const v = value[key];
    // An empty granular list at a named field is not in SMD's field set of the object, so it is
    // never pruned.
    const presentInObject = !(field && Array.isArray(v) && v.length === 0);
    if (inEnsured(l, field) && presentInObject && !inEnsured(o, field)) {
      out ??= { ...value };
      delete out[key];
      continue;
    }
    if (l.c && v !== null) {
      const nv = pruneValue(v, schema, l, o);
      if (nv !== v) {
        out ??= { ...value };
        // A map emptied by pruning stays (as `{}`) when the applier still applies the field
        // itself (an intent of `data: {}`): dropping it would make the next identical apply add
        // it back, so apply would not be idempotent.
        if (nv === undefined && o?.m && isObj(v)) out[key] = {};
        else if (nv === undefined) delete out[key];
        else out[key] = nv;
      }
    }
  }
  if (!out) return value;
  return Object.keys(out).length > 0 ? out : undefined;
}
