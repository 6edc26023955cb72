/**
 * Continue tokens of paginated lists (conventions "Pagination"). The payload is Kubernetes' own
 * (k8s.io/apiserver/pkg/storage.EncodeContinue: base64 of `{"v":"meta.k8s.io/v1","rv":N,
 * "start":"<key relative to the list prefix>"}`), followed by `.` and an HMAC-SHA256 tag over the
 * payload, so a client can neither forge a token nor edit the revision or start key of one it was
 * given: anything that does not verify is 400, and the start key is always relative to the
 * collection prefix, so a token never reads other keys.
 *
 * `rv: -1` is Kubernetes' marker for "continue from this key at the latest revision": the token
 * the server hands out in the 410 of an expired continue token (etcd3 store
 * handleCompactedErrorForPaging).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** The token version Kubernetes writes (`v`). */
export const CONTINUE_TOKEN_VERSION = 'meta.k8s.io/v1';

/** Decoded continue token. */
export interface ContinueToken {
  /** Revision of the first page (the snapshot every page reads at); -1 = latest. */
  rv: number;
  /** Last key returned, relative to the collection prefix; the next page starts after it. */
  start: string;
}

/** Why a token was rejected; the message is the Kubernetes wording (`continue key is not valid: ...`). */
export class ContinueTokenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ContinueTokenError';
  }
}

const TAG_BYTES = 16;
let secret: Buffer = randomBytes(32);

/**
 * Sets the HMAC key of continue tokens. Default: 32 random bytes per process, so tokens do not
 * survive a restart (the client gets 400 and starts a new list, as after any expiry). Nodes of
 * one cluster that must accept each other's tokens set the same key (at least 16 bytes).
 */
export function setContinueTokenKey(key: Uint8Array): void {
  if (key.length < 16) throw new ContinueTokenError('continue token key must have at least 16 bytes');
  secret = Buffer.from(key);
}

function tag(payload: string): Buffer {
  return createHmac('sha256', secret).update(payload).digest().subarray(0, TAG_BYTES);
}

/** Encodes a token for the page after `start` of the list read at `rv` (-1 = latest). */
export function encodeContinueToken(rv: number, start: string): string {
  if (!Number.isSafeInteger(rv) || (rv <= 0 && rv !== -1)) throw new ContinueTokenError(`invalid continue revision ${rv}`);
  const payload = Buffer.from(JSON.stringify({ v: CONTINUE_TOKEN_VERSION, rv, start })).toString('base64url');
  return `${payload}.${tag(payload).toString('base64url')}`;
}

/**
 * Decodes and verifies a token. Throws ContinueTokenError (to be answered 400) when it is not
 * base64/JSON, the tag does not verify, the version is unknown, the revision is not a positive
 * integer (or -1), or the start key is empty, absolute or escapes the prefix.
 */
export function decodeContinueToken(token: string): ContinueToken {
  const dot = token.indexOf('.');
  if (dot <= 0 || dot !== token.lastIndexOf('.')) throw new ContinueTokenError('continue key is not valid: malformed token');
  const payload = token.slice(0, dot);
  const given = Buffer.from(token.slice(dot + 1), 'base64url');
  const want = tag(payload);
  if (given.length !== want.length || !timingSafeEqual(given, want)) {
    throw new ContinueTokenError('continue key is not valid: the token was not issued by this server or was modified');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw new ContinueTokenError('continue key is not valid: illegal base64 data or JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new ContinueTokenError('continue key is not valid: not an object');
  const t = parsed as { v?: unknown; rv?: unknown; start?: unknown };
  if (t.v !== CONTINUE_TOKEN_VERSION) {
    throw new ContinueTokenError(`continue key is not valid: server does not recognize this encoded version ${JSON.stringify(t.v)}`);
  }
  if (typeof t.rv !== 'number' || !Number.isSafeInteger(t.rv) || (t.rv <= 0 && t.rv !== -1)) {
    throw new ContinueTokenError('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  }
  // Same checks as Kubernetes' DecodeContinue: the key must stay inside the collection prefix.
  if (typeof t.start !== 'string' || t.start.length === 0) throw new ContinueTokenError('continue key is not valid: encoded start key empty');
  if (t.start.startsWith('/') || t.start.includes('\0') || t.start.split('/').some((s) => s === '..' || s === '.')) {
    throw new ContinueTokenError('continue key is not valid: encoded start key must be a relative path');
  }
  return { rv: t.rv, start: t.start };
}
