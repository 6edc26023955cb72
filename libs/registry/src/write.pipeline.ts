/**
 * The write pipeline, in the one place it is written: every create, update, patch, apply and
 * subresource write of every kind runs these steps in kube-apiserver's order
 * (apiserver endpoints/handlers create.go and update.go, registry/generic/registry store.go):
 *
 *   (decoded, field-validated, schema-defaulted request object; system metadata wiped on create)
 *   1. mutating admission                      handlers: Admit before Store.Create / in the
 *                                              update's object-info transformers
 *   2. prepare: system metadata, then the      rest.BeforeCreate / BeforeUpdate:
 *      strategy's prepareForCreate/Update      FillObjectMetaSystemFields, PrepareFor*
 *      (or the subresource's strategy)
 *   3. managed fields (Update operations)      the field manager's transformer: what the
 *                                              request sent is decoded (`[{}]` resets), the
 *                                              writer's ownership recorded, the list re-encoded
 *   4. validation: strategy, object meta,      strategy.Validate*, ValidateObjectMeta*
 *      schema
 *   5. validating admission                    createValidation / updateValidation
 *   6. canonicalize                            strategy.Canonicalize
 *   then storage (or a REST-only kind's handler).
 *
 * Managed fields come before validation, as in kube-apiserver, where the field manager rewrites
 * the request's managedFields before the store validates: validation then only ever sees an
 * encoded list, so the documented reset `[{}]` (and a list the decoder ignores) never fails
 * ValidateManagedFields.
 */
import { isDeepStrictEqual } from 'node:util';
import { canonicalJson, Errors, FieldSet, setManagedFields, trackUpdate, type FieldError, type KubeObject } from '@app/apimachinery';
import type { Admission, AdmissionAttributes } from './admission.port.js';
import type { KindDeclaration, SubresourceStrategy } from './kind.types.js';
import type { Machinery } from './machinery.port.js';
import type { WriteOptions } from './request.options.js';
import { hasStatusSubresource } from './subresource.strategies.js';

const DUPLICATE_OWNERS = '.metadata.ownerReferences contains duplicate entries';
const DUPLICATE_OWNERS_TAIL =
  'API server dedups owner references in 1.20+, and may reject such requests as early as 1.24; please fix your requests; duplicate UID(s) observed: ';

/**
 * Drops repeated ownerReferences (an entry equal to an earlier one with the same uid) and warns,
 * as kube's handlers do (dedupOwnerReferencesAndAddWarning): create and update bodies before
 * mutating admission, every write again after it, with its own wording. The kept entries are
 * indexed by uid and canonical text (a match confirmed as before), so each entry is checked
 * in one lookup, not against every kept one.
 */
export function dedupOwnerReferences(obj: KubeObject, warnings: string[], afterMutatingAdmission: boolean): void {
  const refs = obj.metadata?.ownerReferences;
  if (!Array.isArray(refs) || refs.length < 2) return;
  const kept: unknown[] = [];
  const byUid = new Map<unknown, Map<string, unknown[]>>();
  const dups: string[] = [];
  for (const r of refs) {
    const uid = (r as { uid?: unknown } | null)?.uid;
    const text = canonicalJson(r);
    let byText = byUid.get(uid);
    if (!byText) byUid.set(uid, (byText = new Map()));
    const same = byText.get(text);
    if (same?.some((k) => (k as { uid?: unknown } | null)?.uid === uid && isDeepStrictEqual(k, r))) dups.push(String(uid));
    else {
      kept.push(r);
      if (same) same.push(r);
      else byText.set(text, [r]);
    }
  }
  if (!dups.length) return;
  obj.metadata.ownerReferences = kept;
  const head = afterMutatingAdmission ? `${DUPLICATE_OWNERS} after mutating admission happens; ` : `${DUPLICATE_OWNERS}; `;
  warnings.push(`${head}${DUPLICATE_OWNERS_TAIL}${dups.join(', ')}`);
}

/** One write going through the pipeline. */
export interface WriteStep {
  operation: 'CREATE' | 'UPDATE';
  ns: string;
  /** The name from the URL or the object ('' while a generateName is pending). */
  name: string;
  /** The object to write; every step mutates this one object. */
  obj: KubeObject;
  /** The stored object an update starts from. */
  old?: KubeObject;
  opts: WriteOptions;
  /** Step 2 for this write: system metadata and the (subresource's) strategy hook. */
  prepare(obj: KubeObject): void;
  /** The subresource strategy, for its validation (undefined: the kind's own). */
  subresource?: SubresourceStrategy;
}

/** Runs the pipeline of one kind. */
export class WritePipeline {
  private readonly apiVersion: string;

  constructor(
    private readonly decl: KindDeclaration,
    private readonly machinery: Machinery,
    private readonly admission: Admission,
    apiVersion: string,
  ) {
    this.apiVersion = apiVersion;
  }

  /** Runs steps 1-6 on `step.obj`; the caller stores the result. */
  async run(step: WriteStep): Promise<void> {
    const { obj, old, opts } = step;
    const admitted = opts.ctx.admitted === true;
    if (!admitted) await this.admission.admit(this.attributesOf(step));
    dedupOwnerReferences(obj, opts.ctx.warnings, true);
    step.prepare(obj);
    if (!opts.managedFieldsDone && !this.decl.rest) this.trackManagedFields(old, obj, opts);
    await this.validateAndCanonicalize(step);
  }

  /**
   * Steps 4-6 alone, for a create whose generated name was taken: the object under its new name
   * goes through validation and validating admission again, as kube-apiserver's store does on
   * each attempt (mutating admission is not repeated there either).
   */
  async validateAndCanonicalize(step: WriteStep): Promise<void> {
    const { obj, old, opts } = step;
    this.validate(obj, old, step);
    if (opts.ctx.admitted !== true) await this.admission.validate(this.attributesOf(step));
    this.decl.strategy?.canonicalize?.(obj);
  }

  /** What admission is told about the write, the object as it is now. */
  private attributesOf(step: WriteStep): AdmissionAttributes {
    const { obj, opts } = step;
    return {
      operation: step.operation,
      decl: this.decl,
      namespace: step.ns,
      name: obj.metadata.name ?? step.name,
      subresource: opts.subresource ?? '',
      object: obj,
      oldObject: step.old,
      ctx: opts.ctx,
    };
  }

  /**
   * Step 4: object meta (which includes Kubernetes' ValidateNoNewFinalizers for terminating
   * objects), schema and strategy validation, one 422 listing every error.
   */
  private validate(obj: KubeObject, old: KubeObject | undefined, step: WriteStep): void {
    const m = this.machinery;
    const ctx = step.opts.ctx;
    const errs: FieldError[] = [];
    const generic = this.decl.genericObjectMeta === true;
    if (old) errs.push(...m.validateObjectMetaUpdate(obj.metadata, old.metadata, generic));
    else if (!this.decl.rest) errs.push(...m.validateObjectMetaCreate(obj.metadata, this.decl.namespaced, this.decl.nameValidation === 'pathSegment', generic));
    // kube checks the uniqueness of set and map lists against the schema for custom resources
    // only, and not in their metadata (ObjectMeta has its own validation, which lets repeated
    // finalizers through): a built-in kind's own validation says which repeats it refuses
    // (container names, volume names) and accepts the rest (repeated env names or container
    // ports, with warnings).
    const schemaErrs = m.validateSchema(obj, this.decl.schema);
    errs.push(...schemaErrs.filter((e) => e.type !== 'FieldValueDuplicate' || (this.decl.untyped && !e.field.startsWith('metadata.'))));
    const s = this.decl.strategy;
    if (old) {
      const sub = step.subresource?.validateUpdate;
      errs.push(...(sub ? sub(obj, old, ctx) : (s?.validateUpdate?.(obj, old, ctx) ?? s?.validate?.(obj, ctx) ?? [])));
    } else errs.push(...(s?.validate?.(obj, ctx) ?? []));
    if (errs.length) {
      const name = obj.metadata.name || (obj.metadata.generateName as string | undefined) || '';
      throw Errors.invalid(this.decl.group, this.decl.kind, name, errs);
    }
  }

  /** Fields a write to this endpoint never owns (status on the main resource of a kind with /status). */
  ignoredFields(subresource: string | undefined): FieldSet | undefined {
    if (!hasStatusSubresource(this.decl)) return undefined;
    return subresource === 'status' ? undefined : FieldSet.of(['f:status']);
  }

  /** Step 3: records an Update operation's field ownership (conventions, apply rules 4-5, 8). */
  private trackManagedFields(old: KubeObject | undefined, obj: KubeObject, opts: WriteOptions): void {
    // An empty manager (a request without User-Agent or fieldManager) still records, as kube's
    // field manager does; only writes that name no manager at all (internal ones) skip it.
    if (opts.fieldManager === undefined) return;
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
}
