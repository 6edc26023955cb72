/**
 * Typed request options (Kubernetes' GetOptions, ListOptions, CreateOptions, UpdateOptions,
 * PatchOptions, DeleteOptions), parsed and validated in this one place: class-transformer
 * turns the query into a DTO, class-validator checks each parameter's form, and each DTO
 * resolves itself into the typed options the store takes (@app/registry request.options), with
 * the combination rules of read.options.ts. A bad value is a 400 BadRequest naming the
 * parameter (an invalid DeleteOptions combination a 422, as Kubernetes), never a crash
 * downstream; the store parses nothing again.
 */
import { plainToInstance } from 'class-transformer';
import { IsIn, IsOptional, IsString, Matches, MaxLength, validateSync, type ValidationError } from 'class-validator';
import { Errors, type FieldError } from '@app/apimachinery';
import {
  getConsistency,
  resolveListOptions,
  resolveWatchOptions,
  type DeleteOptions,
  type FieldValidation,
  type GetOptions,
  type ListOptions,
  type WatchOptions,
  type WriteParams,
} from '@app/registry';

const UINT = /^\d{1,15}$/;

/** First value of each query parameter. */
export type Query = Record<string, string | undefined>;

/**
 * A boolean query parameter as kube's parameter codec reads one (Convert_Slice_string_To_bool):
 * `0`, `f` and `false` (any case) are false, any other value true; it never fails to decode.
 * An empty value counts as unset here.
 */
export function queryBool(v: string | undefined): boolean {
  if (v === undefined || v === '') return false;
  return !(v === '0' || /^(f|false)$/i.test(v));
}

function optionalBool(v: string | undefined): boolean | undefined {
  if (v === undefined || v === '') return undefined;
  return queryBool(v);
}

function optionalInt(v: string | undefined): number | undefined {
  return v === undefined || v === '' ? undefined : Number(v);
}

/**
 * Every value of dryRun must be "All" (Kubernetes' ValidateDryRun, part of the options'
 * validation: 422). Checks every value, of the query (repeated parameters) or of a body.
 */
function dryRunErrors(values: readonly string[]): FieldError[] {
  return values
    .filter((v) => v !== 'All')
    .map((v) => ({ type: 'FieldValueNotSupported' as const, field: 'dryRun', value: v, detail: 'supported values: "All"' }));
}

/** Query parameters every verb accepts. */
class CommonOptions {
  @IsOptional()
  // Not validated: kube reads pretty with strconv.ParseBool and ignores anything else.
  @IsString()
  pretty?: string;
}

/** get */
export class GetOptionsDto extends CommonOptions {
  @IsOptional()
  @Matches(UINT, { message: 'resourceVersion: Invalid value: must be a non-negative integer' })
  resourceVersion?: string;

  /** The typed options. */
  toOptions(): GetOptions {
    return { consistency: getConsistency(this.resourceVersion) };
  }
}

/** list, watch, deletecollection */
export class ListOptionsDto extends CommonOptions {
  @IsOptional()
  @IsString()
  @MaxLength(64 * 1024, { message: 'labelSelector: Too long: must have at most 65536 bytes' })
  labelSelector?: string;

  @IsOptional()
  @IsString()
  @MaxLength(64 * 1024, { message: 'fieldSelector: Too long: must have at most 65536 bytes' })
  fieldSelector?: string;

  @IsOptional()
  @Matches(UINT, { message: 'resourceVersion: Invalid value: must be a non-negative integer' })
  resourceVersion?: string;

  @IsOptional()
  @IsIn(['Exact', 'NotOlderThan', ''], { message: 'resourceVersionMatch: Unsupported value: supported values: "Exact", "NotOlderThan"' })
  resourceVersionMatch?: string;

  @IsOptional()
  @Matches(UINT, { message: 'limit: Invalid value: must be a non-negative integer' })
  limit?: string;

  @IsOptional()
  @IsString()
  @MaxLength(8192, { message: 'continue: Too long: must have at most 8192 bytes' })
  continue?: string;

  @IsOptional()
  @Matches(UINT, { message: 'timeoutSeconds: Invalid value: must be a non-negative integer' })
  timeoutSeconds?: string;

  @IsOptional()
  @IsString()
  watch?: string;

  @IsOptional()
  @IsString()
  allowWatchBookmarks?: string;

  @IsOptional()
  @IsString()
  sendInitialEvents?: string;

  @IsOptional()
  @IsIn(['None', 'Metadata', 'Object', ''], { message: 'includeObject: Unsupported value: supported values: "None", "Metadata", "Object"' })
  includeObject?: string;

  /** The list options, read consistency resolved (400 on an invalid combination). */
  toListOptions(): ListOptions {
    return resolveListOptions({
      labelSelector: this.labelSelector,
      fieldSelector: this.fieldSelector,
      resourceVersion: this.resourceVersion,
      resourceVersionMatch: this.resourceVersionMatch,
      limit: optionalInt(this.limit),
      continue: this.continue,
    });
  }

  /** The watch options (400 on a combination validateWatchOptions forbids). */
  toWatchOptions(): WatchOptions {
    return resolveWatchOptions({
      labelSelector: this.labelSelector,
      fieldSelector: this.fieldSelector,
      resourceVersion: this.resourceVersion,
      resourceVersionMatch: this.resourceVersionMatch,
      continue: this.continue,
      sendInitialEvents: optionalBool(this.sendInitialEvents),
      allowWatchBookmarks: queryBool(this.allowWatchBookmarks),
      timeoutSeconds: optionalInt(this.timeoutSeconds),
    });
  }
}

/** The options kind a write's parameters decode into (named by its 422). */
export type WriteOptionsKind = 'CreateOptions' | 'UpdateOptions' | 'PatchOptions';

const FIELD_VALIDATION = ['', 'Ignore', 'Strict', 'Warn'];

/**
 * create, update, patch. The decorators check only what decoding the query can fail on (400, as
 * ParameterCodec.DecodeParameters); the values are then validated as kube's
 * ValidateCreateOptions / ValidateUpdateOptions / ValidatePatchOptions do, one 422 naming the
 * options kind (`PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: ...`).
 */
export class WriteOptionsDto extends CommonOptions {
  @IsOptional()
  @IsString()
  dryRun?: string;

  @IsOptional()
  @IsString()
  fieldManager?: string;

  @IsOptional()
  @IsString()
  fieldValidation?: string;

  @IsOptional()
  @IsString()
  force?: string;

  /**
   * The write parameters; `dryRunValues`: every dryRun value sent (repeated parameters);
   * `kind`: which options the request decodes into; `apply`: a server-side apply patch.
   */
  toParams(dryRunValues: string[] | undefined, kind: WriteOptionsKind, apply = false): WriteParams {
    const dryRun = dryRunValues ?? (this.dryRun !== undefined ? [this.dryRun] : []);
    const errs: FieldError[] = [];
    if (kind === 'PatchOptions' && !apply && this.force !== undefined) {
      errs.push({ type: 'FieldValueForbidden', field: 'force', detail: 'may not be specified for non-apply patch' });
    }
    if (this.fieldManager !== undefined && this.fieldManager.length > 128) {
      errs.push({ type: 'FieldValueTooLong', field: 'fieldManager', value: this.fieldManager, detail: 'may not be more than 128 bytes' });
    }
    errs.push(...dryRunErrors(dryRun));
    if (this.fieldValidation !== undefined && !FIELD_VALIDATION.includes(this.fieldValidation)) {
      errs.push({
        type: 'FieldValueNotSupported',
        field: 'fieldValidation',
        value: this.fieldValidation,
        detail: 'supported values: "", "Ignore", "Strict", "Warn"',
      });
    }
    if (errs.length) throw Errors.invalid('meta.k8s.io', kind, '', errs);
    return {
      dryRun: dryRun.length > 0,
      fieldValidation: (this.fieldValidation || 'Warn') as FieldValidation,
      fieldManager: this.fieldManager,
      force: queryBool(this.force),
    };
  }
}

/** delete, deletecollection (query form of DeleteOptions) */
export class DeleteOptionsQueryDto extends ListOptionsDto {
  @IsOptional()
  @IsString()
  dryRun?: string;

  @IsOptional()
  @Matches(/^-?\d{1,15}$/, { message: 'gracePeriodSeconds: Invalid value: must be an integer' })
  gracePeriodSeconds?: string;

  // propagationPolicy values are checked with the DeleteOptions body (422 Invalid, as Kubernetes).
  @IsOptional()
  @IsString()
  propagationPolicy?: string;

  @IsOptional()
  @IsString()
  orphanDependents?: string;

  @IsOptional()
  @IsString()
  ignoreStoreReadErrorWithClusterBreakingPotential?: string;

  /**
   * DeleteOptions from the decoded body (or undefined) and these parameters, which override
   * the body (Kubernetes decodes both into one DeleteOptions), then metav1
   * ValidateDeleteOptions (422 DeleteOptions.meta.k8s.io "" is invalid).
   */
  toDeleteOptions(body: unknown, dryRunValues?: string[]): DeleteOptions {
    const queryDryRun = dryRunValues ?? (this.dryRun !== undefined ? [this.dryRun] : []);
    const opts = body === undefined ? {} : deleteOptionsBody(body);
    const grace = optionalInt(this.gracePeriodSeconds);
    if (grace !== undefined) opts.gracePeriodSeconds = grace;
    if (this.propagationPolicy) opts.propagationPolicy = this.propagationPolicy as DeleteOptions['propagationPolicy'];
    if (this.orphanDependents !== undefined && this.orphanDependents !== '') opts.orphanDependents = queryBool(this.orphanDependents);
    if (queryDryRun.length) opts.dryRun = queryDryRun;
    const unsafe = this.ignoreStoreReadErrorWithClusterBreakingPotential;
    if (unsafe !== undefined && unsafe !== '') opts.ignoreStoreReadErrorWithClusterBreakingPotential = queryBool(unsafe);
    const errs: FieldError[] = [];
    if (opts.orphanDependents !== undefined && opts.propagationPolicy !== undefined) {
      errs.push({
        type: 'FieldValueInvalid',
        field: 'propagationPolicy',
        value: opts.propagationPolicy,
        detail: 'orphanDependents and deletionPropagation cannot be both set',
      });
    }
    if (opts.propagationPolicy !== undefined && !['Orphan', 'Background', 'Foreground'].includes(opts.propagationPolicy)) {
      errs.push({
        type: 'FieldValueNotSupported',
        field: 'propagationPolicy',
        value: opts.propagationPolicy,
        detail: 'supported values: "Foreground", "Background", "Orphan", "nil"',
      });
    }
    errs.push(...dryRunErrors(opts.dryRun ?? []));
    if (errs.length) throw Errors.invalid('meta.k8s.io', 'DeleteOptions', '', errs);
    return opts;
  }
}

/** Checks the shape of a DeleteOptions body (fields and types). */
function deleteOptionsBody(body: unknown): DeleteOptions {
  const v = body as Record<string, unknown>;
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw Errors.badRequest('DeleteOptions must be an object');
  if (v.kind !== undefined && v.kind !== 'DeleteOptions') {
    throw Errors.badRequest(`the body of the request was not a DeleteOptions: kind ${String(v.kind)}`);
  }
  const out: DeleteOptions = {};
  if (v.gracePeriodSeconds !== undefined && v.gracePeriodSeconds !== null) {
    if (typeof v.gracePeriodSeconds !== 'number' || !Number.isInteger(v.gracePeriodSeconds)) {
      throw Errors.badRequest('DeleteOptions.gracePeriodSeconds must be an integer');
    }
    out.gracePeriodSeconds = v.gracePeriodSeconds;
  }
  if (v.propagationPolicy !== undefined && v.propagationPolicy !== null) {
    if (typeof v.propagationPolicy !== 'string') throw Errors.badRequest('DeleteOptions.propagationPolicy must be a string');
    out.propagationPolicy = v.propagationPolicy as DeleteOptions['propagationPolicy'];
  }
  if (v.orphanDependents !== undefined && v.orphanDependents !== null) {
    if (typeof v.orphanDependents !== 'boolean') throw Errors.badRequest('DeleteOptions.orphanDependents must be a boolean');
    out.orphanDependents = v.orphanDependents;
  }
  if (v.preconditions !== undefined && v.preconditions !== null) {
    const p = v.preconditions as Record<string, unknown>;
    if (typeof p !== 'object' || Array.isArray(p)) throw Errors.badRequest('DeleteOptions.preconditions must be an object');
    out.preconditions = {};
    // metav1.Preconditions holds pointers: a field present (even "") is a condition, null is none.
    for (const f of ['uid', 'resourceVersion'] as const) {
      if (p[f] === undefined || p[f] === null) continue;
      if (typeof p[f] !== 'string') throw Errors.badRequest(`DeleteOptions.preconditions.${f} must be a string`);
      out.preconditions[f] = p[f] as string;
    }
  }
  if (v.dryRun !== undefined && v.dryRun !== null) {
    if (!Array.isArray(v.dryRun)) throw Errors.badRequest('DeleteOptions.dryRun must be a list of strings');
    out.dryRun = v.dryRun.map(String);
  }
  const unsafe = v.ignoreStoreReadErrorWithClusterBreakingPotential;
  if (unsafe !== undefined && unsafe !== null) {
    if (typeof unsafe !== 'boolean') throw Errors.badRequest('DeleteOptions.ignoreStoreReadErrorWithClusterBreakingPotential must be a boolean');
    out.ignoreStoreReadErrorWithClusterBreakingPotential = unsafe;
  }
  return out;
}

function messages(errs: ValidationError[]): string[] {
  return errs.flatMap((e) => Object.values(e.constraints ?? {}).concat(messages(e.children ?? [])));
}

/**
 * Builds one options DTO from the (first-value) query parameters and validates each parameter's
 * form. Unknown parameters are ignored, as Kubernetes ignores them. Throws 400 BadRequest
 * listing every problem. A request without parameters skips the validator.
 */
export function validateOptions<T extends object>(cls: new () => T, query: Query): T {
  const plain: Record<string, string> = {};
  for (const [k, v] of Object.entries(query)) if (v !== undefined) plain[k] = v;
  const dto = plainToInstance(cls, plain);
  if (Object.keys(plain).length === 0) return dto;
  const errs = validateSync(dto, { skipMissingProperties: false, forbidUnknownValues: false, whitelist: false });
  if (errs.length) {
    const msgs = messages(errs);
    throw Errors.badRequest(msgs.length === 1 ? msgs[0] : `[${msgs.join(', ')}]`);
  }
  return dto;
}
