/**
 * Sets of field paths and their FieldsV1 JSON form, as structured-merge-diff (SMD) defines them
 * (sigs.k8s.io/structured-merge-diff fieldpath: PathElement, Set, serialize.go).
 *
 * A path is a list of path elements, each kept in its serialized FieldsV1 key form so that
 * equality is string equality:
 * - `f:<name>`   a struct field or map key;
 * - `k:<json>`   a list item of an associative (listType=map) list, the JSON object of its key
 *                fields with names sorted (SMD sorts value.FieldList by name);
 * - `v:<json>`   a list item of a set (listType=set), by its JSON value;
 * - `i:<index>`  a list item by position (SMD only emits it for deduced lists).
 * In the JSON form every path of the set maps to `{}` at its end; a node that is itself in the
 * set and also has descendants in the set carries `".": {}`. Keys are emitted in SMD's path
 * element order: fields by name, then keys, then values, then indexes; `.` first (what kubectl
 * and Kubernetes-shaped fixtures show).
 */

/** A node of the trie: `m` = this path itself is in the set; `c` = children by path element. */
export interface FieldSetNode {
  m: boolean;
  c?: Map<string, FieldSetNode>;
}

/** Malformed FieldsV1 JSON (not an object tree, or a `k:`/`v:` key whose JSON does not parse). */
export class FieldsV1Error extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FieldsV1Error';
  }
}

/** JSON with object keys sorted at every level: the canonical form used inside `k:` and `v:`. */
export function canonicalFieldJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map(canonicalFieldJson).join(',')}]`;
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalFieldJson(o[k])}`).join(',')}}`;
}

/** The `f:` element of a struct field or map key. */
export function fieldElement(name: string): string {
  return `f:${name}`;
}

/** The `k:` element of an associative-list item from its key fields (any order; sorted here). */
export function keyElement(keys: Record<string, unknown>): string {
  return `k:${canonicalFieldJson(keys)}`;
}

/** The `v:` element of a set item. */
export function valueElement(value: unknown): string {
  return `v:${canonicalFieldJson(value)}`;
}

/** The `i:` element of a list item by position. */
export function indexElement(i: number): string {
  return `i:${i}`;
}

/** Parses and canonicalizes one serialized path element; undefined for unknown prefixes (dropped, as SMD does). */
export function canonicalElement(key: string): string | undefined {
  const kind = key.slice(0, 2);
  const body = key.slice(2);
  switch (kind) {
    case 'f:':
      return key;
    case 'k:':
    case 'v:': {
      let parsed: unknown;
      try {
        parsed = JSON.parse(body);
      } catch {
        throw new FieldsV1Error(`invalid path element ${JSON.stringify(key)}: bad JSON`);
      }
      if (kind === 'k:' && (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))) {
        throw new FieldsV1Error(`invalid path element ${JSON.stringify(key)}: key must be an object`);
      }
      return kind + canonicalFieldJson(parsed);
    }
    case 'i:':
      if (!/^\d+$/.test(body)) throw new FieldsV1Error(`invalid path element ${JSON.stringify(key)}: bad index`);
      return `i:${Number(body)}`;
    default:
      return undefined;
  }
}

const KIND_RANK: Record<string, number> = { 'f:': 0, 'k:': 1, 'v:': 2, 'i:': 3 };

function valueRank(v: unknown): number {
  if (typeof v === 'number') return 0;
  if (typeof v === 'string') return 1;
  if (typeof v === 'boolean') return 2;
  if (Array.isArray(v)) return 3;
  if (v !== null && typeof v === 'object') return 4;
  return 5; // null sorts last (value.Compare)
}

function cmpStr(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** SMD value.Compare: numbers < strings < booleans < lists < maps < null, then by value. */
export function compareFieldValues(a: unknown, b: unknown): number {
  const ra = valueRank(a);
  const rb = valueRank(b);
  if (ra !== rb) return ra - rb;
  switch (ra) {
    case 0:
      return (a as number) - (b as number);
    case 1:
      return cmpStr(a as string, b as string);
    case 2:
      return Number(a) - Number(b);
    case 3: {
      const la = a as unknown[];
      const lb = b as unknown[];
      for (let i = 0; i < la.length && i < lb.length; i++) {
        const c = compareFieldValues(la[i], lb[i]);
        if (c !== 0) return c;
      }
      return la.length - lb.length;
    }
    case 4:
      return compareFieldLists(a as Record<string, unknown>, b as Record<string, unknown>);
    default:
      return 0;
  }
}

/** SMD value.FieldList.Compare over name-sorted fields: name, then value, then length. */
function compareFieldLists(a: Record<string, unknown>, b: Record<string, unknown>): number {
  const ka = Object.keys(a).sort();
  const kb = Object.keys(b).sort();
  for (let i = 0; i < ka.length && i < kb.length; i++) {
    const c = cmpStr(ka[i], kb[i]);
    if (c !== 0) return c;
    const d = compareFieldValues(a[ka[i]], b[kb[i]]);
    if (d !== 0) return d;
  }
  return ka.length - kb.length;
}

/** Total order of serialized path elements (SMD PathElement.Compare). */
export function compareElements(a: string, b: string): number {
  const ka = a.slice(0, 2);
  const kb = b.slice(0, 2);
  if (ka !== kb) return (KIND_RANK[ka] ?? 9) - (KIND_RANK[kb] ?? 9);
  if (ka === 'f:') return cmpStr(a, b);
  if (ka === 'i:') return Number(a.slice(2)) - Number(b.slice(2));
  return compareFieldValues(JSON.parse(a.slice(2)), JSON.parse(b.slice(2)));
}

/** Go's %v of a value inside a path string (value.ToString): strings quoted, others plain. */
function valueToString(v: unknown): string {
  if (v === null) return 'null';
  if (typeof v === 'string') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(valueToString).join(',')}]`;
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${k}=${valueToString(o[k])}`)
      .join(',')}}`;
  }
  return String(v);
}

/**
 * The human form of a path (SMD Path.String), used in conflict messages and `field` of causes:
 * `.spec.containers[name="nginx"].image`, `.metadata.finalizers[="a"]`, `.spec.args[0]`.
 */
export function pathToString(path: readonly string[]): string {
  let out = '';
  for (const pe of path) {
    const kind = pe.slice(0, 2);
    const body = pe.slice(2);
    if (kind === 'f:') out += `.${body}`;
    else if (kind === 'k:') {
      const o = JSON.parse(body) as Record<string, unknown>;
      out += `[${Object.keys(o)
        .sort()
        .map((k) => `${k}=${valueToString(o[k])}`)
        .join(',')}]`;
    } else if (kind === 'v:') out += `[=${valueToString(JSON.parse(body))}]`;
    else if (kind === 'i:') out += `[${body}]`;
    else out += '{{invalid path element}}';
  }
  return out;
}

function cloneNode(n: FieldSetNode): FieldSetNode {
  const out: FieldSetNode = { m: n.m };
  if (n.c) {
    out.c = new Map();
    for (const [k, v] of n.c) out.c.set(k, cloneNode(v));
  }
  return out;
}

function nodeEmpty(n: FieldSetNode): boolean {
  return !n.m && (!n.c || n.c.size === 0);
}

function unionNodes(a: FieldSetNode, b: FieldSetNode): FieldSetNode {
  const out: FieldSetNode = { m: a.m || b.m };
  if (a.c || b.c) {
    const c = new Map<string, FieldSetNode>();
    if (a.c) for (const [k, v] of a.c) c.set(k, v);
    if (b.c) {
      for (const [k, v] of b.c) {
        const mine = c.get(k);
        c.set(k, mine ? unionNodes(mine, v) : v);
      }
    }
    out.c = c;
  }
  return out;
}

/** A copy of `n` that `mergeInto` may change (its children map copied, the children shared). */
function ownCopy(n: FieldSetNode, owned: WeakSet<FieldSetNode>): FieldSetNode {
  const out: FieldSetNode = { m: n.m };
  if (n.c) out.c = new Map(n.c);
  owned.add(out);
  return out;
}

/**
 * Adds `b` to `a` in place, as unionNodes(a, b) would build it: `a` and the nodes in `owned` are
 * this fold's own (changed in place), any other node is shared with an input set and copied
 * before it changes. So a fold over many sets costs their total size, where a chain of
 * unionNodes copies the growing result once per set.
 */
function mergeInto(a: FieldSetNode, b: FieldSetNode, owned: WeakSet<FieldSetNode>): FieldSetNode {
  a.m = a.m || b.m;
  if (b.c) {
    const c = (a.c ??= new Map());
    for (const [k, v] of b.c) {
      const mine = c.get(k);
      c.set(k, mine ? mergeInto(owned.has(mine) ? mine : ownCopy(mine, owned), v, owned) : v);
    }
  }
  return a;
}

type Op = 'and' | 'minus' | 'rminus';

/** Intersection, difference, or recursive difference (drop everything under a member of b). */
function combine(a: FieldSetNode, b: FieldSetNode | undefined, op: Op): FieldSetNode {
  if (!b) return op === 'and' ? { m: false } : a;
  const out: FieldSetNode = { m: op === 'and' ? a.m && b.m : a.m && !b.m };
  if (a.c) {
    const c = new Map<string, FieldSetNode>();
    for (const [k, v] of a.c) {
      const other = b.c?.get(k);
      if (op === 'rminus' && other?.m) continue;
      if (op === 'and' && !other) continue;
      const r: FieldSetNode = other ? combine(v, other, op) : v;
      if (!nodeEmpty(r)) c.set(k, r);
    }
    if (c.size > 0) out.c = c;
  }
  return out;
}

/**
 * An immutable-by-convention set of field paths. Operations return new sets and share unchanged
 * subtrees with their inputs, so callers must not mutate a set after handing it to another; use
 * `insert` only while building a fresh set.
 */
export class FieldSet {
  private constructor(readonly root: FieldSetNode) {}

  /** A new empty set. */
  static empty(): FieldSet {
    return new FieldSet({ m: false });
  }

  /** Wraps a trie node (used by the walkers that build sets). */
  static fromNode(node: FieldSetNode): FieldSet {
    return new FieldSet(node);
  }

  /** A set holding exactly the given paths (each a list of serialized path elements). */
  static of(...paths: (readonly string[])[]): FieldSet {
    const s = FieldSet.empty();
    for (const p of paths) s.insert(p);
    return s;
  }

  /**
   * Decodes a FieldsV1 JSON object. Unknown element prefixes are dropped (SMD ignores them so a
   * newer format does not break older readers). Throws `FieldsV1Error` for a malformed tree.
   */
  static fromFieldsV1(json: unknown): FieldSet {
    if (json === null || typeof json !== 'object' || Array.isArray(json)) throw new FieldsV1Error('fieldsV1 must be a JSON object');
    const root: FieldSetNode = { m: false };
    const children = readChildren(json as Record<string, unknown>);
    if (children) root.c = children.c;
    return new FieldSet(root);
  }

  /** Adds a path (mutates; only for sets under construction). */
  insert(path: readonly string[]): this {
    let n = this.root;
    for (const pe of path) {
      if (!n.c) n.c = new Map();
      let next = n.c.get(pe);
      if (!next) {
        next = { m: false };
        n.c.set(pe, next);
      }
      n = next;
    }
    n.m = true;
    return this;
  }

  /** Whether `path` itself is in the set. */
  has(path: readonly string[]): boolean {
    const n = this.node(path);
    return n?.m ?? false;
  }

  /** The trie node at `path` (its own membership and descendants), if any path goes through it. */
  node(path: readonly string[]): FieldSetNode | undefined {
    let n: FieldSetNode | undefined = this.root;
    for (const pe of path) {
      n = n.c?.get(pe);
      if (!n) return undefined;
    }
    return n;
  }

  /** True when no path is in the set. */
  isEmpty(): boolean {
    return isEmptyDeep(this.root);
  }

  /** Paths in either set. */
  union(other: FieldSet): FieldSet {
    return new FieldSet(unionNodes(this.root, other.root));
  }

  /**
   * Paths in any of `sets` (empty for none): the same set as `a.union(b).union(c)...`, built in
   * one pass over them (a chain of `union` copies the growing result at each step).
   */
  static unionAll(sets: readonly FieldSet[]): FieldSet {
    if (sets.length === 0) return FieldSet.empty();
    if (sets.length === 1) return sets[0]!;
    const owned = new WeakSet<FieldSetNode>();
    const root = ownCopy(sets[0]!.root, owned);
    for (let i = 1; i < sets.length; i++) mergeInto(root, sets[i]!.root, owned);
    return new FieldSet(root);
  }

  /** Paths in both sets. */
  intersection(other: FieldSet): FieldSet {
    return new FieldSet(combine(this.root, other.root, 'and'));
  }

  /** Paths of this set that are not in `other` (exact paths; descendants are kept). */
  difference(other: FieldSet): FieldSet {
    return new FieldSet(combine(this.root, other.root, 'minus'));
  }

  /** Paths of this set that neither are in `other` nor lie below a path of `other` (SMD RecursiveDifference). */
  recursiveDifference(other: FieldSet): FieldSet {
    return new FieldSet(combine(this.root, other.root, 'rminus'));
  }

  /** Equal path contents. */
  equals(other: FieldSet): boolean {
    return nodesEqual(this.root, other.root);
  }

  /** Every path of the set, in FieldsV1 (SMD) order, parents before their descendants. */
  *paths(): Generator<string[]> {
    yield* walkPaths(this.root, []);
  }

  /** Number of paths in the set. */
  size(): number {
    let n = 0;
    for (const _ of this.paths()) n++;
    return n;
  }

  /** A deep copy that may be mutated freely. */
  clone(): FieldSet {
    return new FieldSet(cloneNode(this.root));
  }

  /** The FieldsV1 JSON object of this set (see the module comment for the format). */
  toFieldsV1(): Record<string, unknown> {
    return emit(this.root, false);
  }
}

function isEmptyDeep(n: FieldSetNode): boolean {
  if (n.m) return false;
  if (!n.c) return true;
  for (const v of n.c.values()) if (!isEmptyDeep(v)) return false;
  return true;
}

function nodesEqual(a: FieldSetNode, b: FieldSetNode): boolean {
  if (a.m !== b.m) return false;
  const ac = a.c?.size ?? 0;
  const bc = b.c?.size ?? 0;
  if (ac !== bc) return false;
  if (ac === 0) return true;
  for (const [k, v] of a.c!) {
    const o = b.c!.get(k);
    if (!o || !nodesEqual(v, o)) return false;
  }
  return true;
}

function sortedKeys(n: FieldSetNode): string[] {
  if (!n.c) return [];
  const keys = [...n.c.keys()];
  // Fast path: all `f:` keys compare as plain strings.
  if (keys.every((k) => k.startsWith('f:'))) return keys.sort();
  return keys.sort(compareElements);
}

function* walkPaths(n: FieldSetNode, prefix: string[]): Generator<string[]> {
  for (const k of sortedKeys(n)) {
    const child = n.c!.get(k)!;
    const p = [...prefix, k];
    if (child.m) yield p;
    yield* walkPaths(child, p);
  }
}

function emit(n: FieldSetNode, includeSelf: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const keys = sortedKeys(n).filter((k) => !isEmptyDeep(n.c!.get(k)!));
  if (includeSelf && keys.length > 0) out['.'] = {};
  for (const k of keys) {
    const child = n.c!.get(k)!;
    out[k] = emit(child, child.m);
  }
  return out;
}

/** Reads the children of one FieldsV1 object; returns a node whose `m` tells if "." or `{}` made it a member. */
function readChildren(obj: Record<string, unknown>): FieldSetNode | undefined {
  let member = false;
  let c: Map<string, FieldSetNode> | undefined;
  let owned: WeakSet<FieldSetNode> | undefined;
  for (const [key, val] of Object.entries(obj)) {
    if (key === '.') {
      member = true;
      continue;
    }
    const pe = canonicalElement(key);
    if (pe === undefined) continue;
    if (val === null || typeof val !== 'object' || Array.isArray(val)) {
      throw new FieldsV1Error(`invalid fieldsV1 value under ${JSON.stringify(key)}: must be an object`);
    }
    const sub = readChildren(val as Record<string, unknown>);
    const node: FieldSetNode = sub ?? { m: true };
    if (!c) c = new Map();
    const prev = c.get(pe);
    if (!prev) c.set(pe, node);
    else {
      // One element spelled several ways (`v:1`, `v:1.0`, `i:01`...): the nodes are merged into
      // one this parse owns, in place, rather than each union copying the growing node.
      owned ??= new WeakSet();
      if (owned.has(prev)) mergeInto(prev, node, owned);
      else c.set(pe, mergeInto(ownCopy(prev, owned), node, owned));
    }
  }
  // An empty object (no children) means the path itself is in the set.
  if (!c) return undefined;
  return { m: member, c };
}
