/**
 * The generic REST store: every verb implemented once, for every kind (Kubernetes'
 * genericregistry.Store). A kind plugs in its declaration (schema, strategy, subresources,
 * columns, field selectors, conversion, or a REST handler instead of storage).
 *
 * A write first gets the request-side steps of kube-apiserver's handlers (decode checks, field
 * validation, metadata defaults, schema defaults), then the one write pipeline
 * (write.pipeline.ts: mutating admission -> prepare -> validation -> validating admission ->
 * canonicalize), then storage. Updates run inside storage.guaranteedUpdate, so they are retried
 * with fresh state on conflict. Deletion lives in store.deletion.ts, read options in read.options.ts,
 * the watch filter in watch.filter.ts.
 */
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import {
  formatMetaTime,
  applyIntent,
  decodeQuantities,
  decodeTimes,
  dropNullFields,
  Errors,
  QuantityParseError,
  StatusError,
  TimeDecodeError,
  validateApplyFieldManager,
  type KubeObject,
} from '@app/apimachinery';
import { NO_CHANGE, StorageError, type Storage, type WatchHandle } from '@app/storage';
import type { Admission } from './admission.port.js';
import { deleteEach, deleteObject, removeIfFinalized, type StoreCore } from './store.deletion.js';
import { aliasedStorage } from './aliased.storage.js';
import { apiVersionOf, collectionPrefix, objectKey } from './kind.registry.js';
import type { KindDeclaration, RequestContext, SubresourceStrategy } from './kind.types.js';
import type { FieldMatcher, LabelMatcher, Machinery } from './machinery.port.js';
import { encodeContinue } from './read.options.js';
import type { ApplyOptions, DeleteOptions, GetOptions, ListOptions, ListResponse, WriteOptions } from './request.options.js';
import { mapStorageError } from './store.errors.js';
import { hasStatusSubresource, subresourceOf } from './subresource.strategies.js';
import { allocatingStorage } from './allocating.storage.js';
import { kindCheckedStorage } from './kind-checked.storage.js';
import { versionedStorage } from './versioned.storage.js';
import { filteredWatchSink, type WatchEventSink } from './watch.filter.js';
import { dedupOwnerReferences, WritePipeline, type WriteStep } from './write.pipeline.js';

/** Creates of an object with a generated name tried at most, each with a new name (kube's maxNameGenerationCreateAttempts). */
export const MAX_NAME_GENERATION_CREATE_ATTEMPTS = 8;

/** Dependencies of a store. */
export interface StoreDeps {
  storage: Storage;
  machinery: Machinery;
  admission: Admission;
}

const NOT_FOUND = (): StatusError => new StatusError(404, 'NotFound', 'the server could not find the requested resource', {});

/** The generic store of one kind at one served version. */
export class GenericStore implements StoreCore {
  readonly gr: { group: string; resource: string };
  /** The kind's storage, at the served version (converted for multi-version kinds). */
  readonly storage: Storage;
  readonly admission: Admission;
  private readonly apiVersion: string;
  private readonly pipeline: WritePipeline;

  constructor(
    readonly decl: KindDeclaration,
    private readonly deps: StoreDeps,
  ) {
    this.gr = { group: decl.group, resource: decl.plural };
    this.apiVersion = apiVersionOf(decl);
    this.admission = deps.admission;
    const conv = decl.conversion;
    // Stored objects of another kind are undecodable (kind-checked.storage.ts), looked at as
    // stored, before any conversion to the served version.
    const storedAt = conv?.storageVersion ?? decl.version;
    // A kind with a Go type (every kind with a protobuf message) is decoded into it on every read
    // in Kubernetes, and a field of the wrong type makes the object undecodable. The schema is the
    // served version's, so the check is made where that is the version stored.
    const schema = decl.schema;
    const typed = decl.protobufMessage !== undefined && storedAt === decl.version && schema !== undefined;
    const alias = decl.storedAs;
    const checked = alias
      ? aliasedStorage(
          kindCheckedStorage(deps.storage, {
            kind: alias.kind,
            group: alias.group,
            apiVersion: alias.apiVersion,
            decodeProblem: alias.schema ? (o) => deps.machinery.decodeProblem(o, alias.schema!, alias.kind) : undefined,
          }),
          {
            servedPrefix: collectionPrefix(decl, ''),
            storedPrefix: collectionPrefix({ group: alias.group, plural: alias.plural, namespaced: decl.namespaced }, ''),
            toStored: alias.toStored,
            toServed: alias.toServed,
          },
        )
      : kindCheckedStorage(deps.storage, {
          kind: decl.kind,
          group: decl.group,
          apiVersion: decl.group ? `${decl.group}/${storedAt}` : storedAt,
          decodeProblem: typed ? (o) => deps.machinery.decodeProblem(o, schema, decl.kind) : undefined,
        });
    const served = conv && (conv.storageVersion !== decl.version || conv.mixedStoredVersions) ? versionedStorage(checked, conv, decl.version) : checked;
    this.storage = decl.allocator ? allocatingStorage(served, decl.allocator) : served;
    this.pipeline = new WritePipeline(decl, deps.machinery, deps.admission, this.apiVersion);
  }

  /** Storage key of an object of this kind. */
  key(ns: string, name: string): string {
    return objectKey(this.decl, ns, name);
  }

  /** Maps storage failures to Status errors naming this resource. */
  mapError(err: unknown, name: string): never {
    return mapStorageError(this.gr, err, name);
  }

  /** The kind's read-side cleanup (strategy.decorate), applied to a copy. */
  decorate(obj: KubeObject): KubeObject {
    if (this.decl.strategy?.decorate) {
      const copy = structuredClone(obj);
      this.decl.strategy.decorate(copy);
      return copy;
    }
    return obj;
  }

  /** A REST-only kind serves only what its handler does: every stored verb is 405. */
  private storedOnly(verb: string): void {
    if (this.decl.rest) throw Errors.methodNotAllowed(verb, this.gr);
  }

  /** get verb. */
  async get(ns: string, name: string, opts: GetOptions = {}): Promise<KubeObject> {
    this.storedOnly('get');
    let obj: KubeObject | undefined;
    try {
      obj = await this.storage.get(this.key(ns, name), opts.consistency ?? { mode: 'MostRecent' });
    } catch (e) {
      this.mapError(e, name);
    }
    if (!obj) throw Errors.notFound(this.gr, name);
    return this.decorate(obj);
  }

  /** Builds the predicate of label and field selectors; unsupported fields are 400. */
  selectorPredicate(q: Pick<ListOptions, 'labelSelector' | 'fieldSelector'>): { predicate?: (o: KubeObject) => boolean; filtered: boolean } {
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
          if (!this.fieldGetter(f)) throw Errors.badRequest(`field label not supported: ${f}`);
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

  /**
   * The one object a list or watch in `ns` can be narrowed to: the name an `=` term of the field
   * selector requires of metadata.name, when the request names the namespace or the kind is
   * cluster-scoped (kube's registry store reads the key alone then: SelectionPredicate's
   * MatchesSingle). The selector still filters; this only spares walking the collection.
   */
  singleName(ns: string, fieldSelector: string | undefined): string | undefined {
    if (!fieldSelector || (this.decl.namespaced && ns === '')) return undefined;
    const name = this.deps.machinery.parseFieldSelector(fieldSelector).requiresExactMatch('metadata.name');
    return name ? name : undefined;
  }

  private fieldGetter(field: string): ((o: KubeObject) => string | undefined) | undefined {
    if (field === 'metadata.name') return (o) => o.metadata.name ?? '';
    if (field === 'metadata.namespace') return this.decl.namespaced ? (o) => o.metadata.namespace ?? '' : undefined;
    return this.decl.fieldSelectors?.[field];
  }

  /**
   * list verb (namespace '' = all namespaces for namespaced kinds). Pages read at the first
   * page's revision; an expired continue token is 410 with Kubernetes' "inconsistent continue"
   * message and, in the Status' metadata.continue, a token resuming at the latest revision.
   */
  async list(ns: string, opts: ListOptions): Promise<ListResponse> {
    this.storedOnly('list');
    const { predicate, filtered } = this.selectorPredicate(opts);
    const prefix = collectionPrefix(this.decl, ns);
    const after = opts.continueAfter;
    const single = this.singleName(ns, opts.fieldSelector);
    let res;
    try {
      res = await this.storage.list(prefix, {
        consistency: opts.consistency ?? { mode: 'MostRecent' },
        limit: opts.limit && opts.limit > 0 ? opts.limit : undefined,
        startAfterKey: after !== undefined ? prefix + after : undefined,
        predicate,
        ...(single !== undefined ? { key: this.key(ns, single) } : {}),
      });
    } catch (e) {
      if (e instanceof StorageError && e.code === 'Compacted' && after !== undefined) {
        // k8s.io/apiserver etcd3 store: handleCompactedErrorForPaging.
        const err = Errors.gone(
          'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
        );
        const status = err.toStatus();
        status.metadata = { continue: encodeContinue(-1, after) };
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

  /** Decode check: rejects objects whose apiVersion/kind do not match the endpoint. */
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

  /**
   * The decode step: what kube-apiserver's decoder refuses before anything validates the object.
   * A value of the wrong JSON type (Go's json.Unmarshal), a Time or MicroTime that does not parse
   * (schema.times.ts), and with fieldValidation=Strict an unknown or duplicate field. How the
   * failure is answered depends on where the object came from, as in kube's handlers:
   *   body   (create, update) 400 `<Kind> in version "<v>" cannot be handled as a <Kind>: <err>`
   *   patch  (JSON, merge, strategic patch result) 422 on the field `patch`
   *   apply  (the applied intent) 400; its types are checked by validation (see conformance.md)
   * Warn records warnings, Ignore drops unknown fields silently; either way they are pruned.
   */
  private decode(obj: KubeObject, opts: WriteOptions, source: 'body' | 'patch' | 'apply'): void {
    const kind = this.decl.kind;
    const fail = (err: string): never => {
      if (source === 'patch') throw Errors.invalid('', '', '', [{ type: 'FieldValueInvalid', field: 'patch', value: JSON.stringify(obj), detail: err }]);
      if (source === 'apply') throw Errors.badRequest(err);
      throw Errors.badRequest(`${kind} in version "${this.decl.version}" cannot be handled as a ${kind}: ${err}`);
    };
    if (source !== 'apply') {
      // A kind with a Go type decodes JSON null as the field's zero value: as if it were absent.
      // A custom resource, decoded as unstructured, loses JSON null where its schema does not
      // allow it (apiextensions' pruning of nulls).
      if ((this.decl.protobufMessage !== undefined || this.decl.untyped) && this.decl.schema) dropNullFields(obj, this.decl.schema);
      // Wrong JSON types, []byte fields that are not base64, times that do not parse: what the
      // kind's Go type cannot hold, in Go's words (the same check reads make on stored objects).
      // A custom resource has no Go type: its schema's validation reports them (422).
      const problem = this.decl.untyped ? undefined : this.deps.machinery.decodeProblem(obj, this.decl.schema, kind);
      if (problem) fail(problem);
    }
    try {
      decodeTimes(obj, this.decl.schema);
      decodeQuantities(obj, this.decl.schema);
    } catch (e) {
      if (!(e instanceof TimeDecodeError) && !(e instanceof QuantityParseError)) throw e;
      fail(e.message);
    }
    const unknown = this.deps.machinery.findUnknownFields(obj, this.decl.schema);
    const dups = opts.duplicateFields ?? [];
    if (unknown.length || dups.length) {
      const msgs = [...dups.map((d) => `duplicate field "${d}"`), ...unknown.map((u) => `unknown field "${u}"`)];
      if (opts.fieldValidation === 'Strict') fail(`strict decoding error: ${msgs.join(', ')}`);
      if (opts.fieldValidation === 'Warn') opts.ctx.warnings.push(...msgs);
      if (unknown.length) this.deps.machinery.prune(obj, this.decl.schema);
    }
    if (source === 'body') dedupOwnerReferences(obj, opts.ctx.warnings, false);
  }

  private checkNamespace(meta: KubeObject['metadata'], ns: string): void {
    if (this.decl.namespaced) {
      if (meta.namespace && meta.namespace !== ns) {
        throw Errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
      }
      meta.namespace = ns;
    } else if (meta.namespace) {
      delete meta.namespace;
    }
  }

  /**
   * create verb. `ns` is the namespace from the URL ('' for cluster-scoped kinds). A REST-only
   * kind's answer comes from its handler after the same pipeline; nothing is stored.
   */
  async create(ns: string, input: KubeObject, opts: WriteOptions): Promise<KubeObject> {
    const obj = input;
    if (!obj || typeof obj !== 'object' || Array.isArray(obj)) throw Errors.badRequest('the body of the request must be an object');
    if (!obj.metadata || typeof obj.metadata !== 'object' || Array.isArray(obj.metadata)) obj.metadata = {};
    this.checkTypeMeta(obj);
    this.decode(obj, opts, 'body');
    const meta = obj.metadata;
    // The create handler's metadata defaults (WipeObjectMetaSystemFields, the namespace check),
    // then the decoder's schema defaults: all before admission sees the object.
    this.checkNamespace(meta, ns);
    if (meta.resourceVersion) throw Errors.badRequest('resourceVersion should not be set on objects to be created');
    for (const f of ['uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'selfLink']) delete meta[f];
    this.deps.machinery.applyDefaults(obj, this.decl.schema);
    const generateName = !meta.name && typeof meta.generateName === 'string' && meta.generateName !== '' ? meta.generateName : undefined;
    // With a generated name, the object as mutating admission left it, for another attempt.
    let admitted: KubeObject | undefined;
    const step: WriteStep = {
      operation: 'CREATE',
      ns,
      name: meta.name ?? '',
      obj,
      opts,
      prepare: (o) => {
        if (generateName !== undefined && !this.decl.rest) admitted = structuredClone(o);
        this.prepareForCreate(o, opts.ctx);
      },
    };
    await this.pipeline.run(step);
    if (this.decl.rest) return this.decl.rest.create(ns, obj, opts.ctx);
    for (let attempt = 1; ; attempt++) {
      const name = step.obj.metadata.name as string;
      try {
        const stored = await this.storage.create(this.key(ns, name), step.obj, { dryRun: opts.ctx.dryRun });
        return this.decorate(stored);
      } catch (e) {
        // A generated name that is taken is generated again (kube's RetryGenerateName, on by
        // default since 1.30): each attempt starts again from the object as mutating admission
        // left it, prepared for create under the new name (a new uid, and whatever the kind
        // derives from them, such as a Job's selector), validated and shown to validating
        // admission again. The client sees AlreadyExists only after every attempt collided.
        if (generateName !== undefined && admitted && attempt < MAX_NAME_GENERATION_CREATE_ATTEMPTS && e instanceof StorageError && e.code === 'KeyExists') {
          const again = structuredClone(admitted);
          // The fields the first attempt recorded as managed name no value that changes.
          if (step.obj.metadata.managedFields !== undefined) again.metadata.managedFields = step.obj.metadata.managedFields;
          this.prepareForCreate(again, opts.ctx);
          step.obj = again;
          await this.pipeline.validateAndCanonicalize(step);
          continue;
        }
        this.mapError(e, name);
      }
    }
  }

  /** Pipeline step 2 of a create (Store.Create + BeforeCreate): system metadata, then the strategy. */
  private prepareForCreate(obj: KubeObject, ctx: RequestContext): void {
    const meta = obj.metadata;
    if (!this.decl.rest) {
      meta.uid = randomUUID();
      meta.creationTimestamp = formatMetaTime(ctx.now());
      if (!meta.name && typeof meta.generateName === 'string' && meta.generateName) {
        meta.name = this.deps.machinery.generateName(meta.generateName);
      }
      const mode = this.decl.generation ?? 'spec';
      if (mode === 'create' || mode === 'content' || (mode === 'spec' && 'spec' in obj)) meta.generation = 1;
      else delete meta.generation;
    }
    this.decl.strategy?.prepareForCreate?.(obj, ctx);
  }

  /**
   * Turns a desired object into the next stored state of `current` (update, patch and apply
   * share it). Throws Conflict on a stale resourceVersion; returns NO_CHANGE when nothing would
   * change.
   */
  private async nextState(current: KubeObject, desired: KubeObject, ns: string, name: string, opts: WriteOptions): Promise<KubeObject | typeof NO_CHANGE> {
    const obj = structuredClone(desired);
    if (!obj.metadata || typeof obj.metadata !== 'object' || Array.isArray(obj.metadata)) obj.metadata = {};
    this.checkTypeMeta(obj);
    const meta = obj.metadata;
    if (meta.name !== undefined && meta.name !== '' && meta.name !== name) {
      throw Errors.badRequest(`the name of the object (${meta.name}) does not match the name on the URL (${name})`);
    }
    meta.name = name;
    if (this.decl.namespaced) this.checkNamespace(meta, ns);
    const sub = opts.subresource ?? '';
    const subStrategy = sub ? subresourceOf(this.decl, sub)?.strategy : undefined;
    if (sub && !subStrategy) throw NOT_FOUND();
    this.deps.machinery.applyDefaults(obj, this.decl.schema);
    await this.pipeline.run({
      operation: 'UPDATE',
      ns,
      name,
      obj,
      old: current,
      opts,
      subresource: subStrategy,
      prepare: (o) => this.prepareForUpdate(o, current, subStrategy, opts.ctx),
    });
    const a = { ...obj, metadata: { ...obj.metadata, resourceVersion: undefined } };
    const b = { ...current, metadata: { ...current.metadata, resourceVersion: undefined } };
    if (isDeepStrictEqual(a, b)) return NO_CHANGE;
    delete obj.metadata.resourceVersion;
    return obj;
  }

  /**
   * Pipeline step 2 of an update (Store.Update + BeforeUpdate): preconditions from the object,
   * system metadata carried over from the stored object, then the subresource's strategy or
   * the kind's (status kept from storage when the kind has /status; generation bumped when
   * spec changed).
   */
  private prepareForUpdate(obj: KubeObject, current: KubeObject, sub: SubresourceStrategy | undefined, ctx: RequestContext): void {
    const meta = obj.metadata;
    const cm = current.metadata;
    const name = cm.name ?? '';
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
    if (sub) sub.prepareForUpdate(obj, current, ctx);
    else {
      if (hasStatusSubresource(this.decl)) {
        if (current.status === undefined) delete obj.status;
        else obj.status = structuredClone(current.status);
      }
      this.decl.strategy?.prepareForUpdate?.(obj, current, ctx);
      const mode = this.decl.generation ?? 'spec';
      if (mode === 'content' && contentChanged(obj, current, hasStatusSubresource(this.decl))) {
        obj.metadata.generation = ((cm.generation as number | undefined) ?? 0) + 1;
      } else if (mode === 'spec' && ('spec' in obj || 'spec' in current)) {
        if (!isDeepStrictEqual(obj.spec, current.spec)) obj.metadata.generation = ((cm.generation as number | undefined) ?? 0) + 1;
      }
    }
    // Validation sees the resourceVersion the update is based on (a client may omit it).
    obj.metadata.resourceVersion = cm.resourceVersion;
  }

  /** update verb (PUT), also on update-style subresources. Returns whether it created. */
  async update(ns: string, name: string, input: KubeObject, opts: WriteOptions): Promise<{ object: KubeObject; created: boolean }> {
    this.storedOnly('update');
    if (!input || typeof input !== 'object' || Array.isArray(input)) throw Errors.badRequest('the body of the request must be an object');
    if (!input.metadata || typeof input.metadata !== 'object') input.metadata = {};
    this.checkTypeMeta(input);
    this.decode(input, opts, 'body');
    if ((this.decl.allowCreateOnUpdate ?? false) && !opts.subresource) {
      const existing = await this.storage.get(this.key(ns, name), { mode: 'MostRecent' }).catch((e) => this.mapError(e, name));
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
    return this.guaranteedWrite(ns, name, opts, (cur) => {
      // Store.Update: an update without resourceVersion of a kind that allows no unconditional update.
      if (this.decl.allowUnconditionalUpdate === false && !opts.subresource && !input.metadata.resourceVersion) {
        throw Errors.invalid(this.decl.group, this.decl.kind, name, [
          { type: 'FieldValueInvalid', field: 'metadata.resourceVersion', value: 0, detail: 'must be specified for an update' },
        ]);
      }
      return this.nextState(cur, input, ns, name, opts);
    });
  }

  /** Runs one read-modify-write, then removes the object if that write finalized it. */
  private async guaranteedWrite(
    ns: string,
    name: string,
    opts: WriteOptions,
    tryUpdate: (cur: KubeObject) => Promise<KubeObject | typeof NO_CHANGE>,
  ): Promise<{ object: KubeObject; created: boolean }> {
    try {
      const res = await this.storage.guaranteedUpdate(this.key(ns, name), tryUpdate, { dryRun: opts.ctx.dryRun });
      const obj = await removeIfFinalized(this, ns, name, res.object, opts.ctx.dryRun);
      return { object: this.decorate(obj), created: res.created };
    } catch (e) {
      this.mapError(e, name);
    }
  }

  /**
   * patch verb (JSON, merge and strategic merge patch; apply is `apply`). The patch is applied
   * to the current object (with its resourceVersion, so a patch that sets one is a
   * precondition), then the result goes through the update path.
   */
  async patch(
    ns: string,
    name: string,
    patchType: 'merge-patch' | 'json-patch' | 'strategic-merge-patch',
    patch: unknown,
    opts: WriteOptions,
  ): Promise<KubeObject> {
    this.storedOnly('patch');
    const m = this.deps.machinery;
    const res = await this.guaranteedWrite(ns, name, opts, async (cur) => {
      let patched: unknown;
      const base = structuredClone(cur);
      try {
        if (patchType === 'merge-patch') patched = m.mergePatch(base, patch);
        else if (patchType === 'json-patch') patched = m.jsonPatch(base, patch);
        else patched = m.strategicMergePatch(base, patch, this.decl.schema);
      } catch (e) {
        if (e instanceof StatusError) throw e;
        throw new StatusError(422, 'Invalid', `the server rejected our request due to an error in our request: ${(e as Error).message}`);
      }
      if (!patched || typeof patched !== 'object' || Array.isArray(patched)) throw Errors.badRequest('the patch result must be an object');
      const obj = patched as KubeObject;
      this.decode(obj, opts, 'patch');
      return this.nextState(cur, obj, ns, name, opts);
    });
    return res.object;
  }

  /**
   * Server-side apply (conventions "Server-side apply"): merges the intent into the live object
   * (or creates it), records ownership, and fails with 409 on conflicts unless `force`.
   */
  async apply(ns: string, name: string, intent: KubeObject, opts: ApplyOptions): Promise<{ object: KubeObject; created: boolean }> {
    this.storedOnly('patch');
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
    this.decode(intent, opts, 'apply');
    const manager = opts.fieldManagerParam as string;
    const base = {
      apiVersion: this.apiVersion,
      schema: this.decl.schema,
      manager,
      force: opts.force,
      subresource: opts.subresource || undefined,
      ignoredFields: this.pipeline.ignoredFields(opts.subresource),
    };
    const wopts: WriteOptions = { ...opts, fieldManager: manager, managedFieldsDone: true, duplicateFields: [] };
    for (let attempt = 0; attempt < 10; attempt++) {
      let live: KubeObject | undefined;
      try {
        live = await this.storage.get(this.key(ns, name), { mode: 'MostRecent' });
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
        const res = await this.storage.guaranteedUpdate(
          this.key(ns, name),
          (cur) => this.nextState(cur, applyIntent({ ...base, live: cur, intent, now: opts.ctx.now() }).object as KubeObject, ns, name, wopts),
          { dryRun: opts.ctx.dryRun },
        );
        const obj = await removeIfFinalized(this, ns, name, res.object, opts.ctx.dryRun);
        return { object: this.decorate(obj), created: false };
      } catch (e) {
        if (e instanceof StorageError && e.code === 'KeyNotFound') continue; // deleted meanwhile: create
        this.mapError(e, name);
      }
    }
    throw Errors.conflict(this.gr, name, 'the object kept changing; try again');
  }

  /** delete verb (store.deletion.ts). */
  /** delete verb; `object` is undefined after the unsafe deletion of an undecodable object. */
  async delete(ns: string, name: string, options: DeleteOptions, ctx: RequestContext): Promise<{ object: KubeObject | undefined; deleted: boolean }> {
    this.storedOnly('delete');
    return deleteObject(this, ns, name, options, ctx);
  }

  /**
   * deletecollection verb (Kubernetes Store.DeleteCollection): the objects the selectors match
   * at the latest revision, each deleted with the same options (store.deletion.ts deleteEach).
   */
  async deleteCollection(ns: string, q: Pick<ListOptions, 'labelSelector' | 'fieldSelector'>, options: DeleteOptions, ctx: RequestContext): Promise<number> {
    const list = await this.list(ns, { labelSelector: q.labelSelector, fieldSelector: q.fieldSelector });
    return deleteEach(this, ns, list.items, options, ctx);
  }

  /**
   * watch verb. Starts after `afterRevision`; `predicate` filters events the way the watch
   * cache does (watch.filter.ts). `name` restricts to one object.
   */
  watch(ns: string, name: string | undefined, afterRevision: number, predicate: ((o: KubeObject) => boolean) | undefined, sink: WatchEventSink): WatchHandle {
    this.storedOnly('watch');
    const key = name ? this.key(ns, name) : collectionPrefix(this.decl, ns);
    return this.storage.watch(
      { key, recursive: !name, afterRevision },
      filteredWatchSink(
        predicate,
        (o) => this.decorate(o),
        sink,
        () => ({ requested: afterRevision, oldest: this.storage.compactedRevision() }),
      ),
    );
  }
}

/** Whether anything but metadata (and status, for a kind with /status) differs: a custom resource's generation rule. */
function contentChanged(obj: KubeObject, old: KubeObject, statusApart: boolean): boolean {
  const keys = new Set([...Object.keys(obj), ...Object.keys(old)]);
  for (const k of keys) {
    if (k === 'metadata' || (statusApart && k === 'status')) continue;
    if (!isDeepStrictEqual(obj[k], old[k])) return true;
  }
  return false;
}
