/**
 * JSON patch, RFC 6902 (`application/json-patch+json`), applied with fast-json-patch and
 * answered the way kube-apiserver answers it (staging/src/k8s.io/apiserver/pkg/endpoints/
 * handlers/patch.go, jsonPatcher.applyJSPatch):
 *   - a body that does not decode as a list of operations: 400 BadRequest;
 *   - more than 10000 operations: 413 RequestEntityTooLarge;
 *   - an operation that fails to apply (test mismatch, missing path, bad index, unknown op):
 *     422 Invalid via errors.NewGenericServerResponse, whose message is fixed and whose single
 *     cause (reason UnexpectedServerResponse) carries the evanphx/json-patch error text.
 */
// fast-json-patch is CommonJS: Node's ESM loader exposes it only as a default export.
import fastJsonPatch, { type Operation, type Validator } from 'fast-json-patch';
import { Errors, StatusError } from './errors.js';
import { isJsonObject } from './patch.merge.js';

const { applyOperation, getValueByPointer, JsonPatchError, validator } = fastJsonPatch;

/** One RFC 6902 operation as decoded from the request. */
export interface JsonPatchOperation {
  op: string;
  path: string;
  value?: unknown;
  from?: string;
}

/** apiserver maxJSONPatchOperations. */
export const MAX_JSON_PATCH_OPERATIONS = 10000;

/**
 * How much `copy` operations may add to a document in one patch, in bytes of the copied values'
 * JSON (kube-apiserver's JSONPatchMaxCopyBytes default): without it, a few dozen copies of the
 * document into itself would double it each time.
 */
export const JSON_PATCH_MAX_COPY_BYTES = 3 * 1024 * 1024;

/**
 * errors.NewGenericServerResponse(422, ...) as patch handlers use it: reason Invalid, a fixed
 * message, and the real error text in `details.causes[0].message`.
 */
export function patchInvalidError(message: string): StatusError {
  return new StatusError(422, 'Invalid', 'the server rejected our request due to an error in our request', {
    causes: [{ reason: 'UnexpectedServerResponse', message }],
  });
}

/**
 * Checks the decoded body is a list of operation objects (jsonpatch.DecodePatch) and within
 * the operation limit.
 * @throws StatusError 400 for a non-list body or non-object element, 413 over the limit.
 */
export function decodeJsonPatch(body: unknown): JsonPatchOperation[] {
  if (!Array.isArray(body)) {
    const kind = isJsonObject(body) ? 'object' : body === null ? 'null' : typeof body;
    throw Errors.badRequest(`json: cannot unmarshal ${kind} into Go value of type jsonpatch.Patch`);
  }
  for (const op of body) {
    if (!isJsonObject(op))
      throw Errors.badRequest(`json: cannot unmarshal ${Array.isArray(op) ? 'array' : typeof op} into Go value of type jsonpatch.operation`);
  }
  if (body.length > MAX_JSON_PATCH_OPERATIONS) {
    throw Errors.tooLarge(`The allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPERATIONS}, got ${body.length}`);
  }
  return body as unknown as JsonPatchOperation[];
}

/** The evanphx/json-patch (v4) wording for a failed operation. */
function describe(op: JsonPatchOperation, e: InstanceType<typeof JsonPatchError>): string {
  const path = String(op.path);
  switch (e.name) {
    case 'TEST_OPERATION_FAILED':
      return `testing value ${path} failed: test failed`;
    case 'OPERATION_OP_INVALID':
      return `Unexpected kind: ${String(op.op)}`;
    case 'OPERATION_FROM_UNRESOLVABLE':
    case 'OPERATION_FROM_REQUIRED':
      return `${op.op} operation does not apply: doc is missing from path: ${String(op.from)}: missing value`;
    case 'OPERATION_VALUE_OUT_OF_BOUNDS':
    case 'OPERATION_PATH_ILLEGAL_ARRAY_INDEX':
      return `Unable to access invalid index: ${path.slice(path.lastIndexOf('/') + 1)}: invalid index referenced`;
    case 'OPERATION_VALUE_REQUIRED':
    case 'OPERATION_VALUE_CANNOT_CONTAIN_UNDEFINED':
      return `${op.op} operation missing value field`;
    case 'OPERATION_PATH_INVALID':
      return `${op.op} operation has invalid path: ${JSON.stringify(path)}`;
    default:
      if (op.op === 'replace') return `replace operation does not apply: doc is missing key: ${path}: missing value`;
      return `${op.op} operation does not apply: doc is missing path: ${JSON.stringify(path)}: missing value`;
  }
}

/**
 * fast-json-patch's validator for one operation, with the check that a move or copy's `from`
 * exists made on the document itself: the library makes it by applying a `_get` to a deep copy
 * of the whole document, so each of 10,000 operations would copy it once. The `_get` here is
 * the same read (with the same checks and errors), and reads do not change the document.
 * applyOperation calls its validator first without the document's checks (as it calls its own)
 * and then with them, once the path is resolved as far as it exists.
 */
function documentValidator(): Validator<unknown> {
  let first = true;
  return (operation, index, document, existingPath) => {
    if (first) {
      first = false;
      validator(operation, 0);
      return;
    }
    if (operation.op !== 'move' && operation.op !== 'copy') {
      validator(operation, index, document, existingPath);
      return;
    }
    validator(operation, index, undefined, existingPath);
    if (!document) return;
    try {
      applyOperation(document, { op: '_get', path: operation.from, value: undefined } as unknown as Operation, true, true, true, 0);
    } catch (e) {
      if (!(e instanceof JsonPatchError)) throw e;
      if (e.name === 'OPERATION_PATH_UNRESOLVABLE')
        throw new JsonPatchError('Cannot perform the operation from a path that does not exist', 'OPERATION_FROM_UNRESOLVABLE', index, operation, document);
    }
  };
}

/** Bytes of JSON a copy from `from` would add (0 when there is nothing there: the copy then fails as it would). */
function copySize(doc: unknown, from: unknown): number {
  if (typeof from !== 'string') return 0;
  try {
    const value: unknown = getValueByPointer(doc, from);
    return value === undefined ? 0 : Buffer.byteLength(JSON.stringify(value));
  } catch {
    return 0;
  }
}

/**
 * Applies `ops` to a copy of `doc` in order; the first failing operation aborts the whole
 * patch (RFC 6902 section 5). Prototype-polluting paths (`__proto__`) are refused.
 * @throws StatusError 400/413 from decodeJsonPatch, 422 for an operation that does not apply.
 */
export function applyJsonPatch(doc: unknown, ops: unknown): unknown {
  const list = decodeJsonPatch(ops);
  let current: unknown = structuredClone(doc);
  let copied = 0;
  list.forEach((op, index) => {
    if (op.op === 'copy') {
      copied += copySize(current, op.from);
      if (copied > JSON_PATCH_MAX_COPY_BYTES)
        throw patchInvalidError(
          `Unable to complete the copy, the accumulated size increase of copy is ${copied}, exceeding the limit ${JSON_PATCH_MAX_COPY_BYTES}`,
        );
    }
    try {
      current = applyOperation(current, op as Operation, documentValidator(), true, true, index).newDocument;
    } catch (e) {
      if (e instanceof JsonPatchError) throw patchInvalidError(describe(op, e));
      if (e instanceof TypeError) throw patchInvalidError(`${op.op} operation does not apply: ${e.message}`); // e.g. banned __proto__
      throw e;
    }
  });
  return current;
}
