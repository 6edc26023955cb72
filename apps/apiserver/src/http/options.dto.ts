/**
 * Typed request options (Kubernetes' GetOptions, ListOptions, CreateOptions, UpdateOptions,
 * PatchOptions, DeleteOptions as query parameters), validated with class-validator in one
 * place. A bad value is a 400 BadRequest naming the parameter, never a crash downstream.
 */
import { IsIn, IsOptional, IsString, Matches, MaxLength, validateSync, type ValidationError } from 'class-validator';
import { Errors } from '@app/apimachinery';

const UINT = /^\d{1,15}$/;
const BOOL = ['true', 'false', '1', '0', ''];

/** Query parameters every verb accepts. */
class CommonOptions {
  @IsOptional()
  @IsIn(['true', 'false', '1', '0', ''], { message: 'pretty: Unsupported value: must be true or false' })
  pretty?: string;
}

/** get */
export class GetOptionsDto extends CommonOptions {
  @IsOptional()
  @Matches(UINT, { message: 'resourceVersion: Invalid value: must be a non-negative integer' })
  resourceVersion?: string;
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
  @IsIn(BOOL, { message: 'watch: Unsupported value: must be true or false' })
  watch?: string;

  @IsOptional()
  @IsIn(BOOL, { message: 'allowWatchBookmarks: Unsupported value: must be true or false' })
  allowWatchBookmarks?: string;

  @IsOptional()
  @IsIn(BOOL, { message: 'sendInitialEvents: Unsupported value: must be true or false' })
  sendInitialEvents?: string;

  @IsOptional()
  @IsIn(['None', 'Metadata', 'Object', ''], { message: 'includeObject: Unsupported value: supported values: "None", "Metadata", "Object"' })
  includeObject?: string;
}

/** create, update, patch */
export class WriteOptionsDto extends CommonOptions {
  @IsOptional()
  @IsIn(['All'], { message: 'dryRun: Unsupported value: supported values: "All"' })
  dryRun?: string;

  @IsOptional()
  @IsString()
  @MaxLength(128, { message: 'fieldManager: Too long: must have at most 128 bytes' })
  fieldManager?: string;

  @IsOptional()
  @IsIn(['Strict', 'Warn', 'Ignore', ''], { message: 'fieldValidation: Unsupported value: supported values: "Ignore", "Strict", "Warn"' })
  fieldValidation?: string;

  @IsOptional()
  @IsIn(BOOL, { message: 'force: Unsupported value: must be true or false' })
  force?: string;
}

/** delete, deletecollection (query form of DeleteOptions) */
export class DeleteOptionsQueryDto extends ListOptionsDto {
  @IsOptional()
  @IsIn(['All'], { message: 'dryRun: Unsupported value: supported values: "All"' })
  dryRun?: string;

  @IsOptional()
  @Matches(/^-?\d{1,15}$/, { message: 'gracePeriodSeconds: Invalid value: must be an integer' })
  gracePeriodSeconds?: string;

  // propagationPolicy values are checked with the DeleteOptions body (422 Invalid, as Kubernetes).
  @IsOptional()
  @IsString()
  propagationPolicy?: string;

  @IsOptional()
  @IsIn(BOOL, { message: 'orphanDependents: Unsupported value: must be true or false' })
  orphanDependents?: string;
}

function messages(errs: ValidationError[]): string[] {
  return errs.flatMap((e) => Object.values(e.constraints ?? {}).concat(messages(e.children ?? [])));
}

/**
 * Validates the (first-value) query parameters against one options class. Unknown parameters
 * are ignored, as Kubernetes ignores them. Throws 400 BadRequest listing every problem.
 */
export function validateOptions<T extends object>(cls: new () => T, query: Record<string, string | undefined>): T {
  const dto = new cls();
  const target = dto as Record<string, unknown>;
  for (const [k, v] of Object.entries(query)) if (v !== undefined) target[k] = v;
  const errs = validateSync(dto, { skipMissingProperties: false, forbidUnknownValues: false, whitelist: false });
  if (errs.length) {
    const msgs = messages(errs);
    throw Errors.badRequest(msgs.length === 1 ? msgs[0] : `[${msgs.join(', ')}]`);
  }
  return dto;
}
