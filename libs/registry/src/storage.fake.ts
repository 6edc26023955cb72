/**
 * Test helpers for the registry's specs: an in-memory Storage that keeps revisions like the
 * real one, and a Machinery on the real @app/apimachinery functions; both append every call to
 * a shared log so a spec can pin the order of the hooks. Not exported from the library.
 */
import {
  applyDefaults,
  applyJsonPatch,
  applyMergePatch,
  applyStrategicMergePatch,
  findUnknownFields,
  generateName,
  parseFieldSelector,
  parseLabelSelector,
  prune,
  validateObjectMetaCreate,
  validateObjectMetaUpdate,
  validateSchema,
  decodeProblem,
  type KubeObject,
} from '@app/apimachinery';
import {
  NO_CHANGE,
  StorageError,
  type ListOptions,
  type ListResult,
  type Preconditions,
  type ReadConsistency,
  type Storage,
  type StorageEvent,
  type TryUpdate,
  type WatchOptions,
  type WatchSink,
} from '@app/storage';
import type { Machinery } from './machinery.port.js';

/** An in-memory Storage recording `storage.<call>` (and `storage.commit` per write) in `log`. */
export class FakeStorage implements Storage {
  /** Stored objects by key, exactly as written (no resourceVersion inside). */
  readonly data = new Map<string, { obj: KubeObject; rev: number }>();
  private rev = 1;
  private readonly watchers = new Set<{ opts: WatchOptions; sink: WatchSink }>();

  constructor(readonly log: string[]) {}

  private out(key: string): KubeObject | undefined {
    const e = this.data.get(key);
    if (!e) return undefined;
    const o = structuredClone(e.obj);
    o.metadata.resourceVersion = String(e.rev);
    return o;
  }

  private check(key: string, pre: Preconditions | undefined): void {
    const cur = this.out(key);
    if (!cur) throw new StorageError('KeyNotFound', key, 'not found');
    if (pre?.uid !== undefined && pre.uid !== cur.metadata.uid) throw new StorageError('Conflict', key, 'uid precondition failed');
    if (pre?.resourceVersion !== undefined && pre.resourceVersion !== cur.metadata.resourceVersion)
      throw new StorageError('Conflict', key, 'rv precondition failed');
  }

  private emit(e: Omit<StorageEvent, 'revision'>): void {
    for (const w of this.watchers) {
      if (w.opts.recursive ? e.key.startsWith(w.opts.key) : e.key === w.opts.key) w.sink.event({ ...e, revision: this.rev });
    }
  }

  private write(key: string, obj: KubeObject, dryRun: boolean | undefined): KubeObject {
    const prev = this.out(key);
    if (dryRun) {
      const o = structuredClone(obj);
      o.metadata.resourceVersion = prev?.metadata.resourceVersion ?? '0';
      return o;
    }
    this.log.push('storage.commit');
    this.rev++;
    const stored = structuredClone(obj);
    delete stored.metadata.resourceVersion;
    this.data.set(key, { obj: stored, rev: this.rev });
    const now = this.out(key)!;
    this.emit({ type: prev ? 'MODIFIED' : 'ADDED', key, object: now, prevObject: prev });
    return now;
  }

  async get(key: string, _c: ReadConsistency): Promise<KubeObject | undefined> {
    this.log.push('storage.get');
    return this.out(key);
  }

  async list(prefix: string, opts: ListOptions): Promise<ListResult> {
    this.log.push('storage.list');
    const keys = [...this.data.keys()]
      .filter((k) => k.startsWith(prefix) && (opts.key === undefined || k === opts.key) && (opts.startAfterKey === undefined || k > opts.startAfterKey))
      .sort();
    const items: KubeObject[] = [];
    let last: string | undefined;
    for (const k of keys) {
      const o = this.out(k)!;
      if (opts.predicate && !opts.predicate(o)) continue;
      if (opts.limit && items.length === opts.limit) return { items, revision: this.rev, continueAfterKey: last, remaining: keys.length - keys.indexOf(k) };
      items.push(o);
      last = k;
    }
    return { items, revision: this.rev };
  }

  async create(key: string, obj: KubeObject, opts?: { dryRun?: boolean }): Promise<KubeObject> {
    this.log.push(`storage.create${opts?.dryRun ? ' dryRun' : ''}`);
    if (this.data.has(key)) throw new StorageError('KeyExists', key, 'exists');
    return this.write(key, obj, opts?.dryRun);
  }

  async guaranteedUpdate(
    key: string,
    tryUpdate: TryUpdate,
    opts?: { preconditions?: Preconditions; dryRun?: boolean; createIfMissing?: () => KubeObject | undefined },
  ): Promise<{ object: KubeObject; created: boolean; changed: boolean }> {
    this.log.push(`storage.guaranteedUpdate${opts?.dryRun ? ' dryRun' : ''}`);
    this.check(key, opts?.preconditions);
    const cur = this.out(key)!;
    const next = await tryUpdate(structuredClone(cur));
    if (next === NO_CHANGE) return { object: cur, created: false, changed: false };
    return { object: this.write(key, next, opts?.dryRun), created: false, changed: true };
  }

  async delete(
    key: string,
    opts?: { preconditions?: Preconditions; dryRun?: boolean; validate?: (current: KubeObject) => void | Promise<void> },
  ): Promise<KubeObject> {
    this.log.push(`storage.delete${opts?.dryRun ? ' dryRun' : ''}`);
    this.check(key, opts?.preconditions);
    const cur = this.out(key)!;
    await opts?.validate?.(cur);
    if (opts?.dryRun) return cur;
    this.data.delete(key);
    this.rev++;
    const last = { ...cur, metadata: { ...cur.metadata, resourceVersion: String(this.rev) } };
    this.emit({ type: 'DELETED', key, object: last, prevObject: cur });
    return last;
  }

  /** Every value here decodes (objects are kept as objects): readable, or KeyNotFound. */
  async deleteUndecodable(key: string): Promise<{ readable: true }> {
    this.log.push('storage.deleteUndecodable');
    if (!this.data.has(key)) throw new StorageError('KeyNotFound', key, 'not found');
    return { readable: true };
  }

  watch(opts: WatchOptions, sink: WatchSink) {
    this.log.push('storage.watch');
    const w = { opts, sink };
    this.watchers.add(w);
    return { stop: () => void this.watchers.delete(w) };
  }

  currentRevision(): number {
    return this.rev;
  }

  compactedRevision(): number {
    return 0;
  }

  async close(): Promise<void> {
    this.watchers.clear();
  }
}

/** The real machinery functions, each call appended to `log` as `machinery.<name>`. */
export function recordingMachinery(log: string[]): Machinery {
  const rec =
    <A extends unknown[], R>(name: string, f: (...a: A) => R) =>
    (...a: A): R => {
      log.push(`machinery.${name}`);
      return f(...a);
    };
  return {
    validateSchema: rec('validateSchema', (obj, schema) => validateSchema(obj, schema)),
    decodeProblem: rec('decodeProblem', (obj, schema, kind) => decodeProblem(obj, schema, kind)),
    findUnknownFields: rec('findUnknownFields', (obj, schema) => findUnknownFields(obj, schema)),
    prune: rec('prune', (obj, schema) => void prune(obj, schema)),
    applyDefaults: rec('applyDefaults', (obj, schema) => void applyDefaults(obj, schema)),
    validateObjectMetaCreate: rec('validateObjectMetaCreate', (meta, namespaced: boolean) => validateObjectMetaCreate(meta, { namespaced })),
    validateObjectMetaUpdate: rec('validateObjectMetaUpdate', (meta, old) => validateObjectMetaUpdate(meta, old)),
    generateName: rec('generateName', (base: string) => generateName(base)),
    parseLabelSelector: (s) => {
      const sel = parseLabelSelector(s);
      return { empty: () => sel.isEmpty(), matches: (labels) => sel.matches(labels) };
    },
    parseFieldSelector: (s) => {
      const sel = parseFieldSelector(s);
      return {
        empty: () => sel.isEmpty(),
        fields: () => sel.requirements().map((r) => r.field),
        matches: (get) => sel.matches(get),
        requiresExactMatch: (field) => sel.requiresExactMatch(field),
      };
    },
    mergePatch: rec('mergePatch', (t, p) => applyMergePatch(t, p)),
    jsonPatch: rec('jsonPatch', (t, p) => applyJsonPatch(t, p)),
    strategicMergePatch: rec('strategicMergePatch', (t, p, schema) =>
      applyStrategicMergePatch(t as Record<string, unknown>, p as Record<string, unknown>, schema),
    ),
  };
}
