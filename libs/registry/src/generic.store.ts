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
  ContinueTokenError,
  decodeContinueToken,
  encodeContinueToken,
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

/**
 * Encodes a continue token (Kubernetes' payload plus an HMAC tag: @app/storage continue.token).
 * `rv` -1 means "continue at the latest revision" (the token of an expired-continue 410).
 */
export function encodeContinue(rv: number, start: string): string {
  return encodeContinueToken(rv, start);
}

/** Decodes and verifies a continue token; malformed or forged tokens are 400, never a read elsewhere. */
export function decodeContinue(token: string): ContinueToken {
  try {
    const t = decodeContinueToken(token);
    return { v: CONTINUE_VERSION, rv: t.rv, start: t.start };
  } catch (e) {
    if (e instanceof ContinueTokenError) throw Errors.badRequest(e.message);
    throw e;
  }
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
   * (conventions "Resource versions", list table), with the invalid cells answered 400. The
   * messages are Kubernetes' (ValidateListOptions; etcd3 store for rv + continue).
   */
  listConsistency(q: ListQuery): { consistency: ReadConsistency; startAfterKey?: string } {
    const rv = parseResourceVersion(q.resourceVersion);
    const match = q.resourceVersionMatch || undefined;
    const forbidden = (detail: string): StatusError =>
      Errors.badRequest(`ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: ${detail}`);
    if (match !== undefined && match !== 'Exact' && match !== 'NotOlderThan') {
      throw Errors.badRequest(
        `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Unsupported value: ${JSON.stringify(match)}: supported values: "Exact", "NotOlderThan", ""`,
      );
    }
    if (match !== undefined && rv === undefined) throw forbidden('resourceVersionMatch is forbidden unless resourceVersion is provided');
    if (q.continue) {
      if (match !== undefined) throw forbidden('resourceVersionMatch is forbidden when continue is provided');
      // Table: limit and continue with rv non-zero is invalid (400); rv "0" is treated as unset.
      if (rv !== undefined && rv !== 0) throw Errors.badRequest('specifying resource version is not allowed when using continue');
      const t = decodeContinue(q.continue);
      // rv -1: the token of an expired-continue 410, continuing at the latest revision.
      return { consistency: t.rv === -1 ? { mode: 'MostRecent' } : { mode: 'Exact', revision: t.rv }, startAfterKey: t.start };
    }
    if (match === 'Exact') {
      if (rv === 0) throw forbidden('resourceVersionMatch "exact" is forbidden for resourceVersion "0"');
      return { consistency: { mode: 'Exact', revision: rv! } };
    }
    if (match === 'NotOlderThan') {
      return { consistency: rv === 0 ? { mode: 'Any' } : { mode: 'NotOlderThan', revision: rv! } };
    }
    if (rv === undefined) return { consistency: { mode: 'MostRecent' } };
    if (rv === 0) return { consistency: { mode: 'Any' } };
    // Legacy (no resourceVersionMatch): a limit makes a non-zero rv Exact, else Not older than.
    return { consistency: q.limit ? { mode: 'Exact', revision: rv } : { mode: 'NotOlderThan', revision: rv } };
  }

  /**
   * list verb (namespace '' = all namespaces for namespaced kinds). Pages read at the first
   * page's revision; an expired continue token is 410 with Kubernetes' "inconsistent continue"
   * message and, in the Status' metadata.continue, a token resuming at the latest revision.
   */
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
      if (e instanceof StorageError && e.code === 'Compacted' && q.continue && startAfterKey !== undefined) {
        // k8s.io/apiserver etcd3 store: handleCompactedErrorForPaging.
        const err = Errors.gone(
          'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
        );
        const status = err.toStatus();
        status.metadata = { continue: encodeContinue(-1, startAfterKey) };
        throw Object.assign(err, { toStatus: () => status });
      }
      this.mapError(e, '');
    }
    const out: ListResponse = {
      items: this.decl.strategy?.decorate ? res.items.map((o) => this.decorate(o)) : res.items,
      resourceVersion: String(res.revision),
    };
    if (res.continueAfterKey !== undefined) {
      out.continue = encodeContinue(res.revision, res.continueAfterKey.slice(prefix.length));
      // Conventions "Pagination" 4: omitted with a selector and on the last page.
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
    // Only deletion sets deletionTimestamp: an update may not set it on a live object
    // (ValidateObjectMetaUpdate: immutable); on a terminating one the stored value wins (BeforeUpdate).
    if (cm.deletionTimestamp === undefined && meta.deletionTimestamp !== undefined && meta.deletionTimestamp !== null) {
      throw Errors.invalid(this.decl.group, this.decl.kind, name, [
        { type: 'FieldValueInvalid', field: 'metadata.deletionTimestamp', value: meta.deletionTimestamp, detail: 'field is immutable' },
      ]);
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
      // Kubernetes ValidateNoNewFinalizers (apimachinery objectmeta validation): once terminating,
      // the finalizer list may shrink or be reordered but never gain an entry. It is a field
      // Forbidden error inside a 422 Invalid, the new names sorted and printed as Go's %#v.
      const before = new Set((current.metadata.finalizers as string[] | undefined) ?? []);
      const added = [...new Set(((obj.metadata.finalizers as string[] | undefined) ?? []).filter((f) => !before.has(f)))].sort();
      if (added.length) {
        throw Errors.invalid(this.decl.group, this.decl.kind, name, [
          {
            type: 'FieldValueForbidden',
            field: 'metadata.finalizers',
            detail: `no new finalizers can be added if the object is being deleted, found new finalizers []string{${added.map((f) => JSON.stringify(f)).join(', ')}}`,
          },
        ]);
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

  /**
   * True when a terminating object has no finalizers left and must now be removed
   * (conventions "Deletion of an object": Terminating -> Removed when the list becomes empty;
   * kind-specific pending finalizers such as Namespace spec.finalizers count too).
   */
  private readyToRemove(obj: KubeObject): boolean {
    if (obj.metadata.deletionTimestamp === undefined || obj.metadata.deletionTimestamp === null) return false;
    const f = (obj.metadata.finalizers as string[] | undefined) ?? [];
    const pending = this.decl.strategy?.pendingFinalizers?.(obj) ?? [];
    return f.length === 0 && pending.length === 0;
  }

  /**
   * Removes a terminating object whose last finalizer went away, and returns its last state.
   * The removal is conditional on the uid and resourceVersion that were judged ready, so a
   * concurrent write is never lost; on such a conflict the fresh state is judged again (a
   * conflict must not leave a finalized object behind forever). Dry run removes nothing.
   */
  private async removeIfFinalized(ns: string, name: string, obj: KubeObject, dryRun: boolean): Promise<KubeObject> {
    if (dryRun) return obj;
    const key = this.key(ns, name);
    let cur: KubeObject | undefined = obj;
    for (let attempt = 0; attempt < 8 && cur && this.readyToRemove(cur); attempt++) {
      try {
        return await this.deps.storage.delete(key, { preconditions: { uid: cur.metadata.uid, resourceVersion: cur.metadata.resourceVersion } });
      } catch (e) {
        if (e instanceof StorageError && e.code === 'KeyNotFound') return cur;
        if (!(e instanceof StorageError && e.code === 'Conflict')) this.mapError(e, name);
      }
      try {
        const fresh: KubeObject | undefined = await this.deps.storage.get(key, { mode: 'MostRecent' });
        if (!fresh || fresh.metadata.uid !== obj.metadata.uid) return cur;
        cur = fresh;
      } catch (e) {
        this.mapError(e, name);
      }
    }
    return cur ?? obj;
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
   * delete verb (conventions "Deletion of an object"; Kubernetes' genericregistry.Store.Delete).
   *
   * - Preconditions (uid, resourceVersion) are checked first and again atomically with the write;
   *   a mismatch is 409 Conflict with Kubernetes' "Precondition failed: ..." message.
   * - The garbage-collection finalizers follow the propagation policy first
   *   (deletionFinalizersForGarbageCollection): Orphan adds `orphan`, Foreground adds
   *   `foregroundDeletion`, Background removes both; an explicit orphanDependents wins; with no
   *   option the finalizers already present decide, else the kind's default policy.
   * - An object left with finalizers (or kind-specific pending ones, or a kind with a
   *   prepareForDelete hook such as Namespace) becomes Terminating: deletionTimestamp is set once
   *   (never moved later), deletionGracePeriodSeconds becomes 0 (these kinds have no graceful
   *   period; it only ever decreases), generation is bumped as markAsDeleting does; the object
   *   stays readable and `deleted` is false. A repeated delete may still change the GC finalizers.
   * - Otherwise the object is removed and its last state returned with `deleted` true.
   * Dry run computes the same answer and writes nothing.
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

    const gc = this.deletionFinalizers(current, options);
    const pending = this.decl.strategy?.pendingFinalizers?.(current) ?? [];
    const graceful = gc.finalizers.length > 0 || pending.length > 0 || this.decl.strategy?.prepareForDelete !== undefined;
    if (graceful) {
      let res: { object: KubeObject };
      try {
        res = await this.deps.storage.guaranteedUpdate(
          key,
          (cur) => {
            this.checkPreconditions(cur, pre, name);
            const next = deepClone(cur);
            const m = next.metadata;
            const fins = this.deletionFinalizers(cur, options);
            if (fins.changed) {
              if (fins.finalizers.length) m.finalizers = fins.finalizers;
              else delete m.finalizers;
            }
            if (m.deletionTimestamp === undefined || m.deletionTimestamp === null) {
              // markAsDeleting: the first delete bumps generation and stamps the time once.
              if (typeof m.generation === 'number' && m.generation > 0) m.generation = m.generation + 1;
              m.deletionTimestamp = nowRfc3339(ctx.now());
              this.decl.strategy?.prepareForDelete?.(next, ctx);
            }
            const grace = m.deletionGracePeriodSeconds;
            if (typeof grace !== 'number' || grace > 0) m.deletionGracePeriodSeconds = 0;
            if (isDeepStrictEqual(next, cur)) return NO_CHANGE;
            delete m.resourceVersion;
            return next;
          },
          { dryRun: ctx.dryRun },
        );
      } catch (e) {
        this.mapError(e, name);
      }
      if (!this.readyToRemove(res.object)) return { object: this.decorate(res.object), deleted: false };
      if (ctx.dryRun) return { object: this.decorate(res.object), deleted: true };
      const last = await this.removeIfFinalized(ns, name, res.object, false);
      return { object: this.decorate(last), deleted: this.readyToRemove(last) };
    }
    try {
      const last = await this.deps.storage.delete(key, {
        dryRun: ctx.dryRun,
        // Checked on the state actually deleted, so a concurrent write cannot slip past.
        validate: (cur) => this.checkPreconditions(cur, pre, name),
      });
      return { object: this.decorate(last), deleted: true };
    } catch (e) {
      this.mapError(e, name);
    }
  }

  /**
   * The finalizer list a delete with these options leaves (Kubernetes'
   * deletionFinalizersForGarbageCollection with shouldOrphanDependents/shouldDeleteDependents).
   * The kind's default policy is `decl.defaultGarbageCollectionPolicy` when declared
   * ('OrphanDependents' | 'DeleteDependents' | 'Unsupported'), else DeleteDependents, which is
   * what every kind without a GarbageCollectionDeleteStrategy gets (orphanDependents defaults false).
   */
  private deletionFinalizers(obj: KubeObject, options: DeleteOptions): { changed: boolean; finalizers: string[] } {
    const ORPHAN = 'orphan';
    const FOREGROUND = 'foregroundDeletion';
    const existing = Array.isArray(obj.metadata.finalizers) ? (obj.metadata.finalizers as string[]) : [];
    const policy = this.decl.defaultGarbageCollectionPolicy;
    if (policy === 'Unsupported') return { changed: false, finalizers: existing };
    const fromFinalizers = (): 'orphan' | 'foreground' | undefined => {
      for (const f of existing) {
        if (f === ORPHAN) return 'orphan';
        if (f === FOREGROUND) return 'foreground';
      }
      return undefined;
    };
    let orphan: boolean;
    let foreground: boolean;
    if (options.orphanDependents !== undefined) {
      orphan = options.orphanDependents;
      foreground = false;
    } else if (options.propagationPolicy !== undefined) {
      orphan = options.propagationPolicy === 'Orphan';
      foreground = options.propagationPolicy === 'Foreground';
    } else {
      const f = fromFinalizers();
      orphan = f === 'orphan' || (f === undefined && policy === 'OrphanDependents');
      foreground = f === 'foreground';
    }
    const next = existing.filter((f) => f !== ORPHAN && f !== FOREGROUND);
    if (orphan) next.push(ORPHAN);
    if (foreground) next.push(FOREGROUND);
    const same = new Set(next).size === new Set(existing).size && next.every((f) => existing.includes(f));
    return same ? { changed: false, finalizers: existing } : { changed: true, finalizers: next };
  }

  /**
   * DeleteOptions preconditions (metav1.Preconditions, checked like storage.Preconditions.Check):
   * a set uid or resourceVersion that differs from the stored object is 409 Conflict with
   * Kubernetes' messages.
   */
  private checkPreconditions(cur: KubeObject, pre: DeleteOptions['preconditions'], name: string): void {
    if (pre?.uid !== undefined && pre.uid !== cur.metadata.uid) {
      throw Errors.conflict(this.gr, name, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${cur.metadata.uid ?? ''}`);
    }
    if (pre?.resourceVersion !== undefined && pre.resourceVersion !== cur.metadata.resourceVersion) {
      throw Errors.conflict(
        this.gr,
        name,
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${cur.metadata.resourceVersion ?? ''}`,
      );
    }
  }

  /**
   * deletecollection verb (Kubernetes Store.DeleteCollection): lists the objects the label and
   * field selectors match at the latest revision, then deletes each with the same options
   * (propagation policy, dry run; per-object preconditions make no sense for a collection and
   * are dropped). Objects already gone are skipped; the first other error stops the call.
   * Returns how many objects were deleted or marked Terminating.
   */
  async deleteCollection(ns: string, q: ListQuery, options: DeleteOptions, ctx: RequestContext): Promise<number> {
    const list = await this.list(ns, { labelSelector: q.labelSelector, fieldSelector: q.fieldSelector });
    let n = 0;
    for (const item of list.items) {
      try {
        await this.delete(this.decl.namespaced ? (item.metadata.namespace ?? ns) : '', item.metadata.name as string, { ...options, preconditions: undefined }, ctx);
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
          // Kubernetes' cacheWatcher.convertToWatchEvent: judged on the old and new state.
          if (e.type === 'ADDED') {
            if (predicate(e.object)) sink.event({ type: 'ADDED', object: dec(e.object), revision: e.revision });
            return;
          }
          const before = e.prevObject ? predicate(e.prevObject) : false;
          if (e.type === 'DELETED') {
            // The last state already carries the deletion's revision.
            if (before) sink.event({ type: 'DELETED', object: dec(e.object), revision: e.revision });
            return;
          }
          const now = predicate(e.object);
          if (now && before) sink.event({ type: 'MODIFIED', object: dec(e.object), revision: e.revision });
          else if (now && !before) sink.event({ type: 'ADDED', object: dec(e.object), revision: e.revision });
          else if (!now && before && e.prevObject) {
            // Leaving the selection: DELETED with the previous (matching) content at this revision.
            const prev = e.prevObject;
            sink.event({ type: 'DELETED', object: dec({ ...prev, metadata: { ...prev.metadata, resourceVersion: String(e.revision) } }), revision: e.revision });
          }
        },
        error: (err: StorageError) => {
          if (err.code === 'Compacted') {
            // The watch cache's wording: "too old resource version: <requested> (<oldest kept>)".
            sink.error(new StatusError(410, 'Expired', `too old resource version: ${afterRevision} (${this.deps.storage.compactedRevision()})`));
          } else sink.error(Errors.internal(err.message));
        },
      },
    );
  }
}
