/**
 * API errors. Handlers never build error responses ad hoc: they throw a `StatusError`, and the
 * HTTP edge turns it into a `Status` object (meta/v1) with the same code, reason and details.
 * Reasons and codes are Kubernetes' own (k8s.io/apimachinery/pkg/api/errors).
 */

/** Reasons used in `Status.reason` (metav1.StatusReason). */
export type StatusReason =
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Gone'
  | 'Invalid'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'UnsupportedMediaType'
  | 'RequestEntityTooLarge'
  | 'TooManyRequests'
  | 'InternalError'
  | 'Timeout'
  | 'ServerTimeout'
  | 'ServiceUnavailable'
  | 'Expired'
  | 'StorageReadError'
  | '';

/**
 * One cause of an error (metav1.StatusCause); for Invalid, `field` is the JSON path, for
 * StorageReadError the storage key of an object that could not be read.
 */
export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

/** metav1.StatusDetails. */
export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

/** metav1.Status as JSON. */
export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, unknown>;
  status: 'Success' | 'Failure';
  message?: string;
  reason?: StatusReason;
  details?: StatusDetails;
  code: number;
}

/** Group and resource of the object an error is about, e.g. `{group: '', resource: 'configmaps'}`. */
export interface GroupResource {
  group: string;
  resource: string;
}

function qualified(gr: GroupResource): string {
  return gr.group ? `${gr.resource}.${gr.group}` : gr.resource;
}

/** An error that is answered to the client as a `Status` object. */
export class StatusError extends Error {
  constructor(
    readonly code: number,
    readonly reason: StatusReason,
    message: string,
    readonly details?: StatusDetails,
    /** Extra response headers, e.g. Retry-After. */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'StatusError';
  }

  /** The `Status` body for this error. */
  toStatus(): Status {
    const s: Status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      code: this.code,
    };
    // Kubernetes omits an empty reason (StatusReasonUnknown).
    if (this.reason) s.reason = this.reason;
    if (this.details && Object.keys(this.details).length > 0) s.details = this.details;
    return s;
  }
}

/** Field error of a validation failure; `type` is Kubernetes' field.ErrorType reason. */
export interface FieldError {
  type:
    | 'FieldValueRequired'
    | 'FieldValueInvalid'
    | 'FieldValueNotSupported'
    | 'FieldValueDuplicate'
    | 'FieldValueNotFound'
    | 'FieldValueForbidden'
    | 'FieldValueTooLong'
    | 'FieldValueTooMany'
    | 'FieldValueTypeInvalid'
    | 'InternalError';
  field: string;
  /** The offending value, quoted in the message where Kubernetes quotes it. */
  value?: unknown;
  detail: string;
}

/**
 * A field error's value printed as field.Error prints a Go value with `%#v`: made by goSlice and
 * goStruct, for values whose Go form is not JSON's.
 */
export class GoValue {
  constructor(readonly text: string) {}

  toString(): string {
    return this.text;
  }
}

const goLiteral = (v: unknown): string =>
  v instanceof GoValue ? v.text : typeof v === 'number' || typeof v === 'boolean' ? String(v) : JSON.stringify(String(v));

/**
 * A slice of `goType` (default `[]string`): `[]string{"a", "b"}`, and `[]string(nil)` for an
 * absent one, as Go prints a nil slice.
 */
export function goSlice(items: readonly unknown[] | undefined | null, goType = '[]string'): GoValue {
  return new GoValue(items == null ? `${goType}(nil)` : `${goType}{${items.map(goLiteral).join(', ')}}`);
}

/**
 * A map of strings as Go prints it: keys sorted, `map[string]string{"a":"1", "b":"2"}`, and
 * `map[string]string(nil)` for an absent one.
 */
export function goMap(m: unknown, goType = 'map[string]string'): GoValue {
  if (m == null || typeof m !== 'object' || Array.isArray(m)) return new GoValue(`${goType}(nil)`);
  const o = m as Record<string, unknown>;
  const keys = Object.keys(o).sort();
  return new GoValue(`${goType}{${keys.map((k) => `${JSON.stringify(k)}:${goLiteral(o[k])}`).join(', ')}}`);
}

/**
 * A metav1.LabelSelector as Go prints the struct a pointer field holds:
 * `v1.LabelSelector{MatchLabels:map[string]string{"app":"x"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}`.
 */
export function goLabelSelector(sel: unknown): GoValue {
  const s = (sel ?? {}) as { matchLabels?: Record<string, unknown>; matchExpressions?: unknown };
  const exprs = Array.isArray(s.matchExpressions)
    ? s.matchExpressions.map((e: { key?: unknown; operator?: unknown; values?: unknown }) =>
        goStruct('v1.LabelSelectorRequirement', [
          ['Key', e?.key],
          ['Operator', e?.operator],
          ['Values', goSlice(Array.isArray(e?.values) ? e.values : undefined)],
        ]),
      )
    : undefined;
  return goStruct('v1.LabelSelector', [
    ['MatchLabels', goMap(s.matchLabels)],
    ['MatchExpressions', goSlice(exprs, '[]v1.LabelSelectorRequirement')],
  ]);
}

/**
 * A struct of string, number and GoValue fields: `rbac.RoleRef{APIGroup:"g", Kind:"Role",
 * Name:"x"}`. An absent string field prints as `""`, its Go zero value.
 */
export function goStruct(goType: string, fields: readonly (readonly [string, unknown])[]): GoValue {
  return new GoValue(`${goType}{${fields.map(([k, v]) => `${k}:${goLiteral(v ?? '')}`).join(', ')}}`);
}

/** Renders one field error the way field.Error.Error() does: `field: Invalid value: "v": detail`. */
export function fieldErrorMessage(e: FieldError): string {
  const label: Record<FieldError['type'], string> = {
    FieldValueRequired: 'Required value',
    FieldValueInvalid: 'Invalid value',
    FieldValueNotSupported: 'Unsupported value',
    FieldValueDuplicate: 'Duplicate value',
    FieldValueNotFound: 'Not found',
    FieldValueForbidden: 'Forbidden',
    FieldValueTooLong: 'Too long',
    FieldValueTooMany: 'Too many',
    FieldValueTypeInvalid: 'Invalid value',
    InternalError: 'Internal error',
  };
  const withValue =
    e.type === 'FieldValueInvalid' ||
    e.type === 'FieldValueNotSupported' ||
    e.type === 'FieldValueDuplicate' ||
    e.type === 'FieldValueNotFound' ||
    e.type === 'FieldValueTypeInvalid';
  let s = `${e.field}: ${label[e.type]}`;
  if (withValue && e.value !== undefined) {
    const v = e.value;
    s += `: ${v instanceof GoValue ? v.text : typeof v === 'string' ? JSON.stringify(v) : (JSON.stringify(v) ?? String(v))}`;
  }
  if (e.detail) s += `: ${e.detail}`;
  return s;
}

/** Constructors mirroring k8s.io/apimachinery/pkg/api/errors, with the same messages. */
export const Errors = {
  notFound(gr: GroupResource, name: string): StatusError {
    return new StatusError(404, 'NotFound', `${qualified(gr)} "${name}" not found`, { name, group: gr.group, kind: gr.resource });
  },
  alreadyExists(gr: GroupResource, name: string): StatusError {
    return new StatusError(409, 'AlreadyExists', `${qualified(gr)} "${name}" already exists`, { name, group: gr.group, kind: gr.resource });
  },
  conflict(gr: GroupResource, name: string, detail: string): StatusError {
    return new StatusError(409, 'Conflict', `Operation cannot be fulfilled on ${qualified(gr)} "${name}": ${detail}`, {
      name,
      group: gr.group,
      kind: gr.resource,
    });
  },
  /**
   * 422 with one cause per field error. `kind` is the Kind (e.g. ConfigMap), `group` its API group.
   * The message lists each distinct error once, as field.ErrorList.ToAggregate does (a rule the
   * schema and the strategy both check reads once).
   */
  invalid(group: string, kind: string, name: string, errs: FieldError[]): StatusError {
    const qk = group ? `${kind}.${group}` : kind;
    const msgs = [...new Set(errs.map(fieldErrorMessage))];
    const agg = msgs.length === 1 ? msgs[0] : `[${msgs.join(', ')}]`;
    return new StatusError(422, 'Invalid', `${qk} "${name}" is invalid: ${agg}`, {
      name: name || undefined,
      group,
      kind,
      causes: errs.map((e) => ({ reason: e.type, message: fieldErrorMessage(e).slice(e.field.length + 2), field: e.field })),
    });
  },
  badRequest(message: string, causes?: StatusCause[]): StatusError {
    return new StatusError(400, 'BadRequest', message, causes ? { causes } : undefined);
  },
  unauthorized(message = 'Unauthorized'): StatusError {
    return new StatusError(401, 'Unauthorized', message);
  },
  forbidden(gr: GroupResource, name: string, detail: string): StatusError {
    const what = name ? `${qualified(gr)} "${name}"` : qualified(gr);
    return new StatusError(403, 'Forbidden', `${what} is forbidden: ${detail}`, { name: name || undefined, group: gr.group || undefined, kind: gr.resource });
  },
  methodNotAllowed(verb: string, gr: GroupResource): StatusError {
    return new StatusError(405, 'MethodNotAllowed', `${verb} is not supported on resources of kind "${qualified(gr)}"`, {
      group: gr.group,
      kind: gr.resource,
    });
  },
  notAcceptable(accepted: string[]): StatusError {
    return new StatusError(406, 'NotAcceptable', `only the following media types are accepted: ${accepted.join(', ')}`);
  },
  unsupportedMediaType(contentType: string, supported: string[]): StatusError {
    return new StatusError(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: ${supported.join(', ')}`,
      {
        causes: [{ reason: 'UnsupportedMediaType', message: contentType }],
      },
    );
  },
  tooLarge(message = 'the server has received a request that is too large'): StatusError {
    return new StatusError(413, 'RequestEntityTooLarge', message);
  },
  gone(message: string): StatusError {
    return new StatusError(410, 'Expired', message);
  },
  /** 504 for a resourceVersion the server has not reached in time ("Too large resource version"). */
  tooLargeResourceVersion(requested: number, current: number, retryAfterSeconds = 1): StatusError {
    return new StatusError(
      504,
      'Timeout',
      `Timeout: Too large resource version: ${requested}, current: ${current}`,
      { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds },
      { 'Retry-After': String(retryAfterSeconds) },
    );
  },
  /**
   * 500 StorageReadError (metav1.StatusReasonStoreReadError): a list met stored values that do
   * not decode. One UnexpectedServerResponse cause per value (`field` its storage key), and a
   * FieldValueTooMany cause when the list of them was cut short.
   */
  storageReadError(gr: GroupResource, objects: { key: string; message: string }[], truncated: boolean): StatusError {
    const causes: StatusCause[] = objects.map((o) => ({ reason: 'UnexpectedServerResponse', message: o.message, field: o.key }));
    if (truncated) causes.push({ reason: 'FieldValueTooMany', message: 'too many errors, the list is truncated' });
    return new StatusError(500, 'StorageReadError', `failed to read one or more ${qualified(gr)} from the storage`, {
      name: 'list',
      group: gr.group,
      kind: gr.resource,
      causes,
    });
  },
  internal(message: string): StatusError {
    return new StatusError(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] });
  },
  serviceUnavailable(message: string, retryAfterSeconds = 1): StatusError {
    return new StatusError(503, 'ServiceUnavailable', message, { retryAfterSeconds }, { 'Retry-After': String(retryAfterSeconds) });
  },
  timeout(message: string, retryAfterSeconds = 1): StatusError {
    return new StatusError(504, 'Timeout', message, { retryAfterSeconds }, { 'Retry-After': String(retryAfterSeconds) });
  },
  tooManyRequests(message: string, retryAfterSeconds = 1): StatusError {
    return new StatusError(429, 'TooManyRequests', message, { retryAfterSeconds }, { 'Retry-After': String(retryAfterSeconds) });
  },
};
