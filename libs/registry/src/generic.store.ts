/**
 * The generic REST store: every verb implemented once, for every kind (Kubernetes'
 * genericregistry.Store). A kind plugs in its declaration (schema, strategy, columns, field
 * selectors). Hook order is fixed: decode checks -> field validation (unknown/duplicate fields)
 * -> metadata defaults -> strategy.prepareFor* -> mutating admission -> schema defaults ->
 * validation (metadata, schema, strategy) -> validating admission -> canonicalize -> storage.
 * Updates run inside storage.guaranteedUpdate, so they are retried with fresh state on conflict.
 */
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import {
  applyIntent,
  Errors,
  FieldSet,
  setManagedFields,
  StatusError,
  trackUpdate,
  validateApplyFieldManager,
  type FieldError,
} from '@app/apimachinery';
import {
  NO_CHANGE,
  StorageError,
  type KubeObject,
  type ReadConsistency,
  type Storage,
  type StorageEvent,
  type WatchHandle,
} from '@app/storage';
import type { Admission } from './admission.port.js';
import { apiVersionOf, collectionPrefix, objectKey } from './kind.registry.js';
import type { KindDeclaration, RequestContext } from './kind.types.js';
import type { FieldMatcher, LabelMatcher, Machinery } from './machinery.port.js';

/** fieldValidation query parameter values (conventions "Query parameters"). */
export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

/** Options shared by writes. */
export interface WriteOptions {
  ctx: RequestContext;
  fieldValidation: FieldValidation;
  /** Duplicate fields the decoder found (paths), judged by fieldValidation. */
  duplicateFields?: string[];
  subresource?: string;
  /** The field manager of this write (fieldManager parameter, else from the User-Agent). */
  fieldManager?: string;
  /** Set by apply: managedFields were computed by server-side apply, do not track an Update. */
  managedFieldsDone?: boolean;
}

/** Options of server-side apply (PATCH application/apply-patch+yaml). */
export interface ApplyOptions extends WriteOptions {
  /** The fieldManager query parameter as sent (required for apply). */
  fieldManagerParam?: string;
  force: boolean;
}

/** Parsed list/watch query (conventions "Query parameters"). */
export interface ListQuery {
  labelSelector?: string;
  fieldSelector?: string;
  resourceVersion?: string;
  resourceVersionMatch?: string;
  limit?: number;
  continue?: string;
}

/** metav1.DeleteOptions (the fields the store acts on). */
export interface DeleteOptions {
  gracePeriodSeconds?: number;
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  orphanDependents?: boolean;
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: string[];
}

/** Result of a list. */
export interface ListResponse {
  items: KubeObject[];
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

/** A watch event after selector filtering. */
export interface WatchEventOut {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: KubeObject | Record<string, unknown>;
  revision: number;
}

/** Dependencies of a store. */
export interface StoreDeps {
  storage: Storage;
  machinery: Machinery;
  admission: Admission;
}

interface ContinueToken {
  v: string;
  rv: number;
  start: string;
}

const CONTINUE_VERSION = 'meta.k8s.io/v1';

/** Encodes a continue token: opaque base64url JSON holding the list revision and the last key. */
export function encodeContinue(rv: number, start: string): string {
  return Buffer.from(JSON.stringify({ v: CONTINUE_VERSION, rv, start } satisfies ContinueToken)).toString('base64url');
}

/** Decodes and checks a continue token; malformed or forged tokens are 400, never a read elsewhere. */
export function decodeContinue(token: string): ContinueToken {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw Errors.badRequest(`continue key is not valid: illegal base64 data or JSON`);
  }
  const t = parsed as Partial<ContinueToken>;
  if (
    !t ||
    typeof t !== 'object' ||
    t.v !== CONTINUE_VERSION ||
    typeof t.rv !== 'number' ||
    !Number.isSafeInteger(t.rv) ||
    t.rv <= 0 ||
    typeof t.start !== 'string' ||
    t.start.length === 0 ||
    t.start.includes('\0') ||
    t.start.split('/').some((s) => s === '..' || s === '.')
  ) {
    throw Errors.badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  }
  return t as ContinueToken;
}

function deepClone<T>(v: T): T {
  return structuredClone(v);
}

function nowRfc3339(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Parses a resourceVersion parameter: '' -> undefined, '0' -> 0, else a positive integer or 400. */
export function parseResourceVersion(rv: string | undefined, what = 'resourceVersion'): number | undefined {
  if (rv === undefined || rv === '') return undefined;
  if (!/^\d+$/.test(rv) || !Number.isSafeInteger(Number(rv))) {
    throw Errors.badRequest(`invalid ${what}: ${JSON.stringify(rv)}`);
  }
  return Number(rv);
}

/** The generic store of one kind. */
export class GenericStore {
  readonly gr: { group: string; resource: string };
  private readonly apiVersion: string;

  constructor(
    readonly decl: KindDeclaration,
    private readonly deps: StoreDeps,
  ) {
    this.gr = { group: decl.group, resource: decl.plural };
    this.apiVersion = apiVersionOf(decl);
  }

  private key(ns: string, name: string): string {
    return objectKey(this.decl, ns, name);
  }

  /** Maps storage failures to Status errors naming this resource. */
  private mapError(err: unknown, name: string): never {
    if (err instanceof StorageError) {
      switch (err.code) {
        case 'KeyExists':
          throw Errors.alreadyExists(this.gr, name);
        case 'KeyNotFound':
          throw Errors.notFound(this.gr, name);
        case 'Conflict':
          throw Errors.conflict(this.gr, name, err.message || 'the object has been modified; please apply your changes to the latest version and try again');
        case 'Compacted':
          throw Errors.gone(`The resourceVersion for the provided list is too old.`);
        case 'TooLargeResourceVersion':
          throw Errors.tooLargeResourceVersion(err.requestedRevision ?? 0, err.currentRevision ?? 0);
        case 'Unavailable':
          throw Errors.timeout(`Timeout: request did not complete within the allowed duration: ${err.message}`);
        default:
          throw Errors.internal(err.message);
      }
    }
    throw err;
  }

  /** Read consistency for get (conventions: unset Most Recent, "0" Any, other Not older than). */
  getConsistency(resourceVersion: string | undefined): ReadConsistency {
    const rv = parseResourceVersion(resourceVersion);
    if (rv === undefined) return { mode: 'MostRecent' };
    if (rv === 0) return { mode: 'Any' };
    return { mode: 'NotOlderThan', revision: rv };
  }

  /** get verb. */
  async get(ns: string, name: string, resourceVersion?: string): Promise<KubeObject> {
    let obj: KubeObject | undefined;
    try {
      obj = await this.deps.storage.get(this.key(ns, name), this.getConsistency(resourceVersion));
    } catch (e) {
      this.mapError(e, name);
    }
    if (!obj) throw Errors.notFound(this.gr, name);
    return this.decorate(obj);
  }

  private decorate(obj: KubeObject): KubeObject {
    if (this.decl.strategy?.decorate) {
      const copy = deepClone(obj);
      this.decl.strategy.decorate(copy);
      return copy;
    }
    return obj;
  }

  /** Builds the predicate of label and field selectors; unsupported fields are 400. */
  selectorPredicate(q: Pick<ListQuery, 'labelSelector' | 'fieldSelector'>): { predicate?: (o: KubeObject) => boolean; filtered: boolean } {
    let lm: LabelMatcher | undefined;
    let fm: FieldMatcher | undefined;
    if (q.labelSelector) {
      lm = this.deps.machinery.parseLabelSelector(q.labelSelector);
      if (lm.empty()) lm = undefined;
    }
    if (q.fieldSelector) {
      fm = this.deps.machinery.parseFieldSelector(q.fieldSelector);
      if (fm.empty()) fm = undefined;
      else {
        for (const f of fm.fields()) {
          if (!this.fieldGetter(f)) {
            throw Errors.badRequest(`field label not supported: ${f}`);
          }
        }
      }
    }
    if (!lm && !fm) return { filtered: false };
    const predicate = (o: KubeObject): boolean => {
      if (lm && !lm.matches((o.metadata.labels as Record<string, string>) ?? {})) return false;
      if (fm && !fm.matches((f) => this.fieldGetter(f)?.(o))) return false;
      return true;
    };
    return { predicate, filtered: true };
  }

  private fieldGetter(field: string): ((o: KubeObject) => string | undefined) | undefined {
    if (field === 'metadata.name') return (o) => o.metadata.name ?? '';
    if (field === 'metadata.namespace') return this.decl.namespaced ? (o) => o.metadata.namespace ?? '' : undefined;
    return this.decl.fieldSelectors?.[field];
  }

  /**
   * Read consistency of a list from resourceVersion, resourceVersionMatch, limit and continue
   * (conventions "Resource versions", list table), with the invalid cells answered 400.
   */
  listConsistency(q: ListQuery): { consistency: ReadConsistency; startAfterKey?: string } {
    const rv = parseResourceVersion(q.resourceVersion);
    const match = q.resourceVersionMatch || undefined;
    if (match !== undefined && match !== 'Exact' && match !== 'NotOlderThan') {
      throw Errors.badRequest(`resourceVersionMatch: Unsupported value: ${JSON.stringify(match)}: supported values: "Exact", "NotOlderThan"`);
    }
    if (q.continue) {
      if (match !== undefined) throw Errors.badRequest(`resourceVersionMatch is forbidden when continue is provided`);
      if (rv !== undefined && rv !== 0) throw Errors.badRequest('specifying resource version is not allowed when using continue');
      const t = decodeContinue(q.continue);
      return { consistency: { mode: 'Exact', revision: t.rv }, startAfterKey: t.start };
    }
    if (match !== undefined && rv === undefined) {
      throw Errors.badRequest('resourceVersionMatch is forbidden unless resourceVersion is provided');
    }
    if (match === 'Exact') {
      if (rv === 0) throw Errors.badRequest('resourceVersionMatch "exact" is forbidden for resourceVersion "0"');
      return { consistency: { mode: 'Exact', revision: rv! } };
    }
    if (match === 'NotOlderThan') {
      return { consistency: rv === 0 ? { mode: 'Any' } : { mode: 'NotOlderThan', revision: rv! } };
    }
    if (rv === undefined) return { consistency: { mode: 'MostRecent' } };
    if (rv === 0) return { consistency: { mode: 'Any' } };
    return { consistency: q.limit ? { mode: 'Exact', revision: rv } : { mode: 'NotOlderThan', revision: rv } };
  }

  /** list verb (namespace '' = all namespaces for namespaced kinds). */
  async list(ns: string, q: ListQuery): Promise<ListResponse> {
    const { predicate, filtered } = this.selectorPredicate(q);
    const { consistency, startAfterKey } = this.listConsistency(q);
    const prefix = collectionPrefix(this.decl, ns);
    let res;
    try {
      res = await this.deps.storage.list(prefix, {
        consistency,
        limit: q.limit && q.limit > 0 ? q.limit : undefined,
        startAfterKey: startAfterKey !== undefined ? prefix + startAfterKey : undefined,
        predicate,
      });
    } catch (e) {
      if (e instanceof StorageError && e.code === 'Compacted' && q.continue) {
        throw Errors.gone(
          'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.',
        );
      }
      this.mapError(e, '');
    }
    const out: ListResponse = {
      items: this.decl.strategy?.decorate ? res.items.map((o) => this.decorate(o)) : res.items,
      resourceVersion: String(res.revision),
    };
    if (res.continueAfterKey !== undefined) {
      out.continue = encodeContinue(res.revision, res.continueAfterKey.slice(prefix.length));
      if (!filtered && res.remaining !== undefined && res.remaining > 0) out.remainingItemCount = res.remaining;
    }
    return out;
  }

  /** Rejects objects whose apiVersion/kind do not match the endpoint. */
  private checkTypeMeta(obj: KubeObject): void {
    if (obj.kind !== undefined && obj.kind !== '' && obj.kind !== this.decl.kind) {
      throw Errors.badRequest(
        `the object provided is unrecognized (must be of type ${this.decl.kind}): couldn't get version/kind; json parse error: kind ${obj.kind} does not match ${this.decl.kind}`,
      );
    }
    if (obj.apiVersion !== undefined && obj.apiVersion !== '' && obj.apiVersion !== this.apiVersion) {
      throw Errors.badRequest(`the API version in the data (${obj.apiVersion}) does not match the expected API version (${this.apiVersion})`);
    }
    obj.apiVersion = this.apiVersion;
    obj.kind = this.decl.kind;
  }

  /** Applies fieldValidation to unknown and duplicate fields, then prunes unknown fields. */
  private fieldValidation(obj: KubeObject, opts: WriteOptions): void {
    const unknown = this.deps.machinery.findUnknownFields(obj, this.decl.schema);
    const dups = opts.duplicateFields ?? [];
    if (unknown.length || dups.length) {
      const msgs = [...dups.map((d) => `duplicate field "${d}"`), ...unknown.map((u) => `unknown field "${u}"`)];
      if (opts.fieldValidation === 'Strict') {
        throw Errors.badRequest(`strict decoding error: ${msgs.join(', ')}`);
      }
      if (opts.fieldValidation === 'Warn') opts.ctx.warnings.push(...msgs);
      if (unknown.length) this.deps.machinery.prune(obj, this.decl.schema);
    }
  }

  private validateAll(obj: KubeObject, old: KubeObject | undefined, ctx: RequestContext): void {
    const m = this.deps.machinery;
    const errs: FieldError[] = [];
    errs.push(...(old ? m.validateObjectMetaUpdate(obj.metadata, old.metadata) : m.validateObjectMetaCreate(obj.metadata, this.decl.namespaced)));
    errs.push(...m.validateSchema(obj, this.decl.schema));
    const s = this.decl.strategy;
    if (old) errs.push(...(s?.validateUpdate?.(obj, old, ctx) ?? s?.validate?.(obj, ctx) ?? []));
    else errs.push(...(s?.validate?.(obj, ctx) ?? []));
    if (errs.length) {
      const name = obj.metadata.name || (obj.metadata.generateName as string | undefined) || '';
      throw Errors.invalid(this.decl.group, this.decl.kind, name, errs);
    }
  }

  /** create verb. `ns` is the namespace from the URL ('' for cluster-scoped kinds). */
  async create(ns: string, input: KubeObject, opts: WriteOptions): Promise<KubeObject> {
    const obj = input;
    if (!obj || typeof obj !== 'object' || Array.isArray(obj)) throw Errors.badRequest('the body of the request must be an object');
    if (!obj.metadata || typeof obj.metadata !== 'object' || Array.isArray(obj.metadata)) obj.metadata = {};
    this.checkTypeMeta(obj);
    this.fieldValidation(obj, opts);
    const meta = obj.metadata;
    if (this.decl.namespaced) {
      if (meta.namespace && meta.namespace !== ns) {
        throw Errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
      }
      meta.namespace = ns;
    } else if (meta.namespace) {
      delete meta.namespace;
    }
    if (meta.resourceVersion) {
      throw Errors.badRequest('resourceVersion should not be set on objects to be created');
    }
    if (!meta.name && typeof meta.generateName === 'string' && meta.generateName) {
      meta.name = this.deps.machinery.generateName(meta.generateName);
    }
    const now = opts.ctx.now();
    meta.uid = randomUUID();
    meta.creationTimestamp = nowRfc3339(now);
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    delete meta.selfLink;
    if ('spec' in obj) meta.generation = 1;
    else delete meta.generation;
    this.decl.strategy?.prepareForCreate?.(obj, opts.ctx);
    await this.deps.admission.admit({ operation: 'CREATE', decl: this.decl, namespace: ns, name: meta.name ?? '', subresource: '', object: obj, ctx: opts.ctx });
    this.deps.machinery.applyDefaults(obj, this.decl.schema);
    this.validateAll(obj, undefined, opts.ctx);
    await this.deps.admission.validate({ operation: 'CREATE', decl: this.decl, namespace: ns, name: meta.name ?? '', subresource: '', object: obj, ctx: opts.ctx });
    this.decl.strategy?.canonicalize?.(obj);
    if (!opts.managedFieldsDone) this.trackManagedFields(undefined, obj, opts);
    try {
      const stored = await this.deps.storage.create(this.key(ns, meta.name as string), obj, { dryRun: opts.ctx.dryRun });
      return this.decorate(stored);
    } catch (e) {
      this.mapError(e, meta.name as string);
    }
  }

  /**
   * Turns a desired object into the next stored state of `current` (update and patch share it).
   * Throws Conflict on a stale resourceVersion; returns NO_CHANGE when nothing would change.
   */
  private async nextState(current: KubeObject, desired: KubeObject, ns: string, name: string, opts: WriteOptions): Promise<KubeObject | typeof NO_CHANGE> {
    const obj = deepClone(desired);
    if (!obj.metadata || typeof obj.metadata !== 'object' || Array.isArray(obj.metadata)) obj.metadata = {};
    this.checkTypeMeta(obj);
    const meta = obj.metadata;
    if (meta.name !== undefined && meta.name !== '' && meta.name !== name) {
      throw Errors.badRequest(`the name of the object (${meta.name}) does not match the name on the URL (${name})`);
    }
    meta.name = name;
    if (this.decl.namespaced) {
      if (meta.namespace && meta.namespace !== ns) {
        throw Errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
      }
      meta.namespace = ns;
    }
    const cm = current.metadata;
    if (meta.resourceVersion && meta.resourceVersion !== cm.resourceVersion) {
      throw Errors.conflict(this.gr, name, 'the object has been modified; please apply your changes to the latest version and try again');
    }
    if (meta.uid && meta.uid !== cm.uid) {
      throw Errors.conflict(this.gr, name, `Precondition failed: UID in precondition: ${meta.uid}, UID in object meta: ${cm.uid}`);
    }
    // System-owned metadata is carried over from the stored object.
    meta.uid = cm.uid;
    meta.creationTimestamp = cm.creationTimestamp;
    if (cm.deletionTimestamp !== undefined) {
      meta.deletionTimestamp = cm.deletionTimestamp;
      meta.deletionGracePeriodSeconds = cm.deletionGracePeriodSeconds;
    } else {
      delete meta.deletionTimestamp;
      delete meta.deletionGracePeriodSeconds;
    }
    if (cm.generation !== undefined) meta.generation = cm.generation;
    else delete meta.generation;
    delete meta.selfLink;

    const sub = opts.subresource ?? '';
    if (sub === 'finalize') {
      // Namespace finalize: only spec.finalizers changes (resources doc, Namespace).
      const next = deepClone(current);
      const spec = (obj.spec && typeof obj.spec === 'object' ? obj.spec : {}) as Record<string, unknown>;
      next.spec = { ...((current.spec as Record<string, unknown> | undefined) ?? {}), finalizers: Array.isArray(spec.finalizers) ? spec.finalizers : [] };
      return this.finishUpdate(current, next, ns, name, opts);
    }
    if (this.decl.subresources?.status) {
      if (sub === 'status') {
        // Only status changes through /status (metadata labels/annotations too, as Kubernetes allows).
        const next = deepClone(current);
        next.status = obj.status;
        next.metadata = { ...next.metadata, labels: meta.labels, annotations: meta.annotations };
        if (next.metadata.labels === undefined) delete next.metadata.labels;
        if (next.metadata.annotations === undefined) delete next.metadata.annotations;
        return this.finishUpdate(current, next, ns, name, opts);
      }
      if (current.status === undefined) delete obj.status;
      else obj.status = deepClone(current.status);
    }
    this.decl.strategy?.prepareForUpdate?.(obj, current, opts.ctx);
    if ('spec' in obj || 'spec' in current) {
      if (!isDeepStrictEqual(obj.spec, current.spec)) meta.generation = ((cm.generation as number | undefined) ?? 0) + 1;
    }
    return this.finishUpdate(current, obj, ns, name, opts);
  }

  private async finishUpdate(current: KubeObject, obj: KubeObject, ns: string, name: string, opts: WriteOptions): Promise<KubeObject | typeof NO_CHANGE> {
    if (current.metadata.deletionTimestamp !== undefined) {
      const before = new Set((current.metadata.finalizers as string[] | undefined) ?? []);
      const added = ((obj.metadata.finalizers as string[] | undefined) ?? []).filter((f) => !before.has(f));
      if (added.length) {
        throw Errors.forbidden(this.gr, name, `no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`);
      }
    }
    await this.deps.admission.admit({ operation: 'UPDATE', decl: this.decl, namespace: ns, name, subresource: opts.subresource ?? '', object: obj, oldObject: current, ctx: opts.ctx });
    this.deps.machinery.applyDefaults(obj, this.decl.schema);
    // Validation sees the resourceVersion the update is based on (a client may omit it).
    obj.metadata.resourceVersion = current.metadata.resourceVersion;
    this.validateAll(obj, current, opts.ctx);
    await this.deps.admission.validate({ operation: 'UPDATE', decl: this.decl, namespace: ns, name, subresource: opts.subresource ?? '', object: obj, oldObject: current, ctx: opts.ctx });
    this.decl.strategy?.canonicalize?.(obj);
    if (!opts.managedFieldsDone) this.trackManagedFields(current, obj, opts);
    const a = { ...obj, metadata: { ...obj.metadata, resourceVersion: undefined } };
    const b = { ...current, metadata: { ...current.metadata, resourceVersion: undefined } };
    if (isDeepStrictEqual(a, b)) return NO_CHANGE;
    delete obj.metadata.resourceVersion;
    return obj;
  }

  /** Fields a write to this endpoint never owns (status on the main resource of a kind with /status). */
  private ignoredFields(subresource: string | undefined): FieldSet | undefined {
    if (!this.decl.subresources?.status) return undefined;
    return subresource === 'status' ? undefined : FieldSet.of(['f:status']);
  }

  /** Records an Update operation's field ownership in metadata.managedFields (conventions, apply rule 4-5, 8). */
  private trackManagedFields(old: KubeObject | undefined, obj: KubeObject, opts: WriteOptions): void {
    if (!opts.fieldManager) return;
    const entries = trackUpdate({
      old,
      new: obj,
      manager: opts.fieldManager,
      schema: this.decl.schema,
      apiVersion: this.apiVersion,
      now: opts.ctx.now(),
      subresource: opts.subresource || undefined,
      ignoredFields: this.ignoredFields(opts.subresource),
    });
    setManagedFields(obj, entries);
  }

  /**
   * Server-side apply (conventions "Server-side apply"): merges the intent into the live object
   * (or creates it), records ownership, and fails with 409 on conflicts unless `force`.
   */
  async apply(ns: string, name: string, intent: KubeObject, opts: ApplyOptions): Promise<{ object: KubeObject; created: boolean }> {
    const fmErr = validateApplyFieldManager(opts.fieldManagerParam);
    if (fmErr) throw fmErr;
    if (!intent || typeof intent !== 'object' || Array.isArray(intent)) throw Errors.badRequest('the body of an apply patch must be an object');
    if (!intent.metadata || typeof intent.metadata !== 'object' || Array.isArray(intent.metadata)) intent.metadata = {};
    if (intent.metadata.name !== undefined && intent.metadata.name !== name) {
      throw Errors.badRequest(`the name of the object (${String(intent.metadata.name)}) does not match the name on the URL (${name})`);
    }
    if (this.decl.namespaced && intent.metadata.namespace && intent.metadata.namespace !== ns) {
      throw Errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    this.fieldValidation(intent, opts);
    const manager = opts.fieldManagerParam as string;
    const base = { apiVersion: this.apiVersion, schema: this.decl.schema, manager, force: opts.force, subresource: opts.subresource || undefined, ignoredFields: this.ignoredFields(opts.subresource) };
    const wopts: WriteOptions = { ...opts, fieldManager: manager, managedFieldsDone: true, duplicateFields: [] };
    for (let attempt = 0; attempt < 10; attempt++) {
      let live: KubeObject | undefined;
      try {
        live = await this.deps.storage.get(this.key(ns, name), { mode: 'MostRecent' });
      } catch (e) {
        this.mapError(e, name);
      }
      if (!live) {
        if (opts.subresource) throw Errors.notFound(this.gr, name);
        const res = applyIntent({ ...base, intent: { ...intent, metadata: { ...intent.metadata, name } }, now: opts.ctx.now() });
        try {
          return { object: await this.create(ns, res.object as KubeObject, wopts), created: true };
        } catch (e) {
          if (e instanceof StatusError && e.reason === 'AlreadyExists') continue; // lost a race: apply to it
          throw e;
        }
      }
      try {
        const res = await this.deps.storage.guaranteedUpdate(
          this.key(ns, name),
          (cur) => {
            const merged = applyIntent({ ...base, live: cur, intent, now: opts.ctx.now() });
            return this.nextState(cur, merged.object as KubeObject, ns, name, wopts);
          },
          { dryRun: opts.ctx.dryRun },
        );
        const obj = await this.removeIfFinalized(ns, name, res.object, opts.ctx.dryRun);
        return { object: this.decorate(obj), created: false };
      } catch (e) {
        if (e instanceof StorageError && e.code === 'KeyNotFound') continue; // deleted meanwhile: create
        this.mapError(e, name);
      }
    }
    throw Errors.conflict(this.gr, name, 'the object kept changing; try again');
  }

  /** True when a terminating object has no finalizers left and must now be removed. */
  private readyToRemove(obj: KubeObject): boolean {
    if (obj.metadata.deletionTimestamp === undefined) return false;
    const f = (obj.metadata.finalizers as string[] | undefined) ?? [];
    const pending = this.decl.strategy?.pendingFinalizers?.(obj) ?? [];
    return f.length === 0 && pending.length === 0;
  }

  /** Removes a terminating object whose last finalizer went away. */
  private async removeIfFinalized(ns: string, name: string, obj: KubeObject, dryRun: boolean): Promise<KubeObject> {
    if (!this.readyToRemove(obj) || dryRun) return obj;
    try {
      return await this.deps.storage.delete(this.key(ns, name), { preconditions: { resourceVersion: obj.metadata.resourceVersion } });
    } catch (e) {
      if (e instanceof StorageError && (e.code === 'KeyNotFound' || e.code === 'Conflict')) return obj;
      this.mapError(e, name);
    }
  }

  /** update verb (PUT), optionally on the status subresource. Returns whether it created. */
  async update(ns: string, name: string, input: KubeObject, opts: WriteOptions): Promise<{ object: KubeObject; created: boolean }> {
    if (!input || typeof input !== 'object' || Array.isArray(input)) throw Errors.badRequest('the body of the request must be an object');
    if (!input.metadata || typeof input.metadata !== 'object') input.metadata = {};
    this.checkTypeMeta(input);
    this.fieldValidation(input, opts);
    const canCreate = (this.decl.allowCreateOnUpdate ?? false) && !opts.subresource;
    if (canCreate) {
      const existing = await this.deps.storage.get(this.key(ns, name), { mode: 'MostRecent' }).catch((e) => this.mapError(e, name));
      if (!existing) {
        if (input.metadata.name && input.metadata.name !== name) {
          throw Errors.badRequest(`the name of the object (${input.metadata.name}) does not match the name on the URL (${name})`);
        }
        input.metadata.name = name;
        delete input.metadata.resourceVersion;
        const created = await this.create(ns, input, { ...opts, duplicateFields: [] });
        return { object: created, created: true };
      }
    }
    try {
      const res = await this.deps.storage.guaranteedUpdate(this.key(ns, name), (cur) => this.nextState(cur, input, ns, name, opts), { dryRun: opts.ctx.dryRun });
      const obj = await this.removeIfFinalized(ns, name, res.object, opts.ctx.dryRun);
      return { object: this.decorate(obj), created: res.created };
    } catch (e) {
      this.mapError(e, name);
    }
  }

  /**
   * patch verb. `apply-patch` (server-side apply) is not served by this store. The patch is
   * applied to the current object (with its resourceVersion, so a patch that sets one is a
   * precondition), then the result goes through the update path.
   */
  async patch(
    ns: string,
    name: string,
    patchType: 'merge-patch' | 'json-patch' | 'strategic-merge-patch',
    patch: unknown,
    opts: WriteOptions,
  ): Promise<KubeObject> {
    const m = this.deps.machinery;
    try {
      const res = await this.deps.storage.guaranteedUpdate(
        this.key(ns, name),
        async (cur) => {
          let patched: unknown;
          const base = deepClone(cur);
          try {
            if (patchType === 'merge-patch') patched = m.mergePatch(base, patch);
            else if (patchType === 'json-patch') patched = m.jsonPatch(base, patch);
            else patched = m.strategicMergePatch(base, patch, this.decl.schema);
          } catch (e) {
            if (e instanceof StatusError) throw e;
            throw new StatusError(422, 'Invalid', `the server rejected our request due to an error in our request: ${(e as Error).message}`);
          }
          if (!patched || typeof patched !== 'object' || Array.isArray(patched)) {
            throw Errors.badRequest('the patch result must be an object');
          }
          const obj = patched as KubeObject;
          this.fieldValidation(obj, { ...opts, duplicateFields: opts.duplicateFields });
          return this.nextState(cur, obj, ns, name, opts);
        },
        { dryRun: opts.ctx.dryRun },
      );
      const obj = await this.removeIfFinalized(ns, name, res.object, opts.ctx.dryRun);
      return this.decorate(obj);
    } catch (e) {
      this.mapError(e, name);
    }
  }

  /**
   * delete verb. Objects with finalizers (or kind-specific pending finalizers) become
   * Terminating (deletionTimestamp set, still readable) and `deleted` is false; otherwise the
   * object is removed and its last state returned.
   */
  async delete(ns: string, name: string, options: DeleteOptions, ctx: RequestContext): Promise<{ object: KubeObject; deleted: boolean }> {
    const key = this.key(ns, name);
    const pre = options.preconditions;
    let current: KubeObject | undefined;
    try {
      current = await this.deps.storage.get(key, { mode: 'MostRecent' });
    } catch (e) {
      this.mapError(e, name);
    }
    if (!current) throw Errors.notFound(this.gr, name);
    this.checkPreconditions(current, pre, name);
    this.decl.strategy?.validateDelete?.(current, ctx);
    await this.deps.admission.validate({ operation: 'DELETE', decl: this.decl, namespace: ns, name, subresource: '', oldObject: current, ctx });

    const finalizers = (current.metadata.finalizers as string[] | undefined) ?? [];
    const pending = this.decl.strategy?.pendingFinalizers?.(current) ?? [];
    if (finalizers.length || pending.length || this.decl.strategy?.prepareForDelete) {
      // Graceful deletion: mark Terminating; removal happens when the last finalizer goes.
      try {
        const res = await this.deps.storage.guaranteedUpdate(
          key,
          (cur) => {
            this.checkPreconditions(cur, pre, name);
            if (cur.metadata.deletionTimestamp !== undefined) return NO_CHANGE;
            const next = deepClone(cur);
            next.metadata.deletionTimestamp = nowRfc3339(ctx.now());
            next.metadata.deletionGracePeriodSeconds = 0;
            this.decl.strategy?.prepareForDelete?.(next, ctx);
            delete next.metadata.resourceVersion;
            return next;
          },
          { dryRun: ctx.dryRun },
        );
        if (this.readyToRemove(res.object)) {
          if (ctx.dryRun) return { object: this.decorate(res.object), deleted: true };
          const last = await this.deps.storage.delete(key, { preconditions: { resourceVersion: res.object.metadata.resourceVersion } });
          return { object: this.decorate(last), deleted: true };
        }
        return { object: this.decorate(res.object), deleted: false };
      } catch (e) {
        this.mapError(e, name);
      }
    }
    try {
      const last = await this.deps.storage.delete(key, {
        dryRun: ctx.dryRun,
        preconditions: { uid: pre?.uid, resourceVersion: pre?.resourceVersion },
      });
      return { object: this.decorate(last), deleted: true };
    } catch (e) {
      this.mapError(e, name);
    }
  }

  private checkPreconditions(cur: KubeObject, pre: DeleteOptions['preconditions'], name: string): void {
    if (pre?.uid && pre.uid !== cur.metadata.uid) {
      throw Errors.conflict(this.gr, name, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${cur.metadata.uid}`);
    }
    if (pre?.resourceVersion && pre.resourceVersion !== cur.metadata.resourceVersion) {
      throw Errors.conflict(
        this.gr,
        name,
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${cur.metadata.resourceVersion}`,
      );
    }
  }

  /** deletecollection verb: deletes every object the selectors match; returns how many. */
  async deleteCollection(ns: string, q: ListQuery, options: DeleteOptions, ctx: RequestContext): Promise<number> {
    const list = await this.list(ns, { labelSelector: q.labelSelector, fieldSelector: q.fieldSelector });
    let n = 0;
    for (const item of list.items) {
      try {
        await this.delete(item.metadata.namespace ?? '', item.metadata.name as string, { ...options, preconditions: undefined }, ctx);
        n++;
      } catch (e) {
        if (e instanceof StatusError && e.code === 404) continue;
        throw e;
      }
    }
    return n;
  }

  /**
   * watch verb. Starts after `afterRevision`; label/field selectors filter events, turning a
   * MODIFIED that enters the selection into ADDED and one that leaves it into DELETED
   * (Kubernetes' cacher semantics). `name` restricts to one object.
   */
  watch(
    ns: string,
    name: string | undefined,
    afterRevision: number,
    predicate: ((o: KubeObject) => boolean) | undefined,
    sink: { event(e: WatchEventOut): void; error(err: StatusError): void },
  ): WatchHandle {
    const key = name ? this.key(ns, name) : collectionPrefix(this.decl, ns);
    const dec = (o: KubeObject): KubeObject => this.decorate(o);
    return this.deps.storage.watch(
      { key, recursive: !name, afterRevision },
      {
        event: (e: StorageEvent) => {
          if (!predicate) {
            sink.event({ type: e.type, object: dec(e.object), revision: e.revision });
            return;
          }
          const now = predicate(e.object);
          const before = e.prevObject ? predicate(e.prevObject) : false;
          if (e.type === 'ADDED') {
            if (now) sink.event({ type: 'ADDED', object: dec(e.object), revision: e.revision });
          } else if (e.type === 'DELETED') {
            if (before || now) sink.event({ type: 'DELETED', object: dec(e.object), revision: e.revision });
          } else if (now && before) sink.event({ type: 'MODIFIED', object: dec(e.object), revision: e.revision });
          else if (now && !before) sink.event({ type: 'ADDED', object: dec(e.object), revision: e.revision });
          else if (!now && before) sink.event({ type: 'DELETED', object: dec(e.object), revision: e.revision });
        },
        error: (err: StorageError) => {
          if (err.code === 'Compacted') {
            sink.error(new StatusError(410, 'Expired', `too old resource version: ${afterRevision} (${err.currentRevision ?? ''})`));
          } else sink.error(Errors.internal(err.message));
        },
      },
    );
  }
}
