/**
 * The one place errors become answers: any thrown value is mapped to a StatusError (Fastify's
 * own errors included) and written as a `Status` body.
 */
import type { FastifyReply } from 'fastify';
import { stringify as yamlStringify } from 'yaml';
import { encodeProtobuf, Errors, StatusError } from '@app/apimachinery';
import { negotiateOutput, PROTOBUF, YAML_TYPE } from './negotiation.js';

/**
 * Writes `err` as a Status with its code and headers, in the media type the request accepts
 * (kube's ErrorNegotiated): protobuf for a client that accepts only protobuf, YAML for one that
 * accepts only YAML, JSON otherwise (and whenever nothing it lists can carry a Status).
 */
export function sendStatus(reply: FastifyReply, err: StatusError): void {
  if (err.headers) for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
  const status = err.toStatus() as unknown as Record<string, unknown>;
  let kind = 'json';
  try {
    kind = negotiateOutput(reply.request?.headers.accept, true, { allowTable: false }).kind;
  } catch {
    // Nothing acceptable (the 406 itself): JSON.
  }
  if (kind === 'protobuf') {
    reply
      .code(err.code)
      .header('Content-Type', PROTOBUF)
      .send(Buffer.from(encodeProtobuf({ ...status, apiVersion: 'v1', kind: 'Status' } as never)));
  } else if (kind === 'yaml') {
    reply.code(err.code).header('Content-Type', YAML_TYPE).send(yamlStringify(status));
  } else {
    reply.code(err.code).header('Content-Type', 'application/json').send(JSON.stringify(status));
  }
}

/** The 404 of a path nothing serves. */
export function notFoundError(): StatusError {
  return new StatusError(404, 'NotFound', 'the server could not find the requested resource', {});
}

/** Maps any thrown value to a StatusError (Fastify's own errors included). */
export function toStatusError(err: unknown): StatusError {
  if (err instanceof StatusError) return err;
  const e = err as { code?: string; statusCode?: number; message?: string };
  switch (e?.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return Errors.tooLarge('the server has received a request that is too large');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return Errors.unsupportedMediaType('', ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf']);
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return Errors.badRequest(e.message ?? 'bad request');
  }
  if (typeof e?.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    return new StatusError(e.statusCode, 'BadRequest', e.message ?? 'bad request');
  }
  return Errors.internal(e?.message ?? String(err));
}

/** Sends a JSON (or other textual) document as a Buffer, so Fastify keeps the media type's parameters as given. */
export function sendDocument(reply: FastifyReply, body: string, contentType = 'application/json'): void {
  reply.code(200).header('Content-Type', contentType).send(Buffer.from(body));
}
