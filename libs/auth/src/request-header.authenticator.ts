/**
 * Authenticating proxy (kube-apiserver's `--requestheader-*`): a front proxy that authenticated
 * the user itself passes the identity in headers (X-Remote-User, X-Remote-Uid when UID headers
 * are configured, X-Remote-Group, X-Remote-Extra-<key>). The headers are believed only on a connection whose client certificate
 * chains to the requestheader CA and whose CN is an allowed name (any, when none are listed);
 * on any other connection they are ignored, so the request is left to the next method.
 */
import type { X509Certificate } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { AuthenticationRequest, Authenticator } from './authenticator.port.js';
import { chainVerifies, commonName, peerChain } from './cert.chain.js';
import type { UserInfo } from './user.info.js';

/** What the request header method is configured with. */
export interface RequestHeaderOptions {
  /** The requestheader CA bundle (`--requestheader-client-ca-file`). */
  roots: readonly X509Certificate[];
  /** Allowed CNs of the proxy's certificate (`--requestheader-allowed-names`); empty = any. */
  allowedNames: readonly string[];
  /** Header names giving the user name, the first with a value wins (`--requestheader-username-headers`). */
  usernameHeaders: readonly string[];
  /** Header names giving the user's UID, the first with a value wins (`--requestheader-uid-headers`; empty: no UID). */
  uidHeaders?: readonly string[];
  /** Headers whose every value is a group (`--requestheader-group-headers`). */
  groupHeaders: readonly string[];
  /** Prefixes of headers carrying extra values (`--requestheader-extra-headers-prefix`). */
  extraHeaderPrefixes: readonly string[];
}

/** Every value of header `name` (Node joins repeated headers with ", " except set-cookie). */
function values(headers: IncomingHttpHeaders, name: string): string[] {
  const v = headers[name.toLowerCase()];
  if (v === undefined) return [];
  const all = Array.isArray(v) ? v : [v];
  return all
    .flatMap((x) => x.split(','))
    .map((x) => x.trim())
    .filter((x) => x !== '');
}

function percentDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** The first non-empty value of the first of `names` that has one. */
function firstValue(headers: IncomingHttpHeaders, names: readonly string[]): string | undefined {
  for (const h of names) {
    const v = headers[h.toLowerCase()];
    const first = Array.isArray(v) ? v[0] : v;
    if (first && first.trim() !== '') return first.trim();
  }
  return undefined;
}

/**
 * The identity the headers carry (pure: the connection is checked by the caller). Undefined when
 * no user-name header has a value.
 */
export function userFromHeaders(
  headers: IncomingHttpHeaders,
  opts: Pick<RequestHeaderOptions, 'usernameHeaders' | 'uidHeaders' | 'groupHeaders' | 'extraHeaderPrefixes'>,
): UserInfo | undefined {
  const username = firstValue(headers, opts.usernameHeaders);
  if (username === undefined) return undefined;
  const uid = firstValue(headers, opts.uidHeaders ?? []);
  const groups = opts.groupHeaders.flatMap((h) => values(headers, h));
  const extra: Record<string, string[]> = {};
  const prefixes = opts.extraHeaderPrefixes.map((p) => p.toLowerCase());
  for (const name of Object.keys(headers)) {
    const prefix = prefixes.find((p) => name.startsWith(p) && name.length > p.length);
    if (!prefix) continue;
    const key = percentDecode(name.slice(prefix.length)).toLowerCase();
    (extra[key] ??= []).push(...values(headers, name));
  }
  return { username, ...(uid !== undefined ? { uid } : {}), groups, ...(Object.keys(extra).length > 0 ? { extra } : {}) };
}

/** The request header method: verifies the proxy's certificate, then reads the headers. */
export class RequestHeaderAuthenticator implements Authenticator {
  /** Whether a connection's certificate is a trusted proxy's (a connection's certificate never changes). */
  private readonly trusted = new WeakMap<object, boolean>();

  constructor(private readonly opts: RequestHeaderOptions) {}

  private isTrustedProxy(req: AuthenticationRequest): boolean {
    const socket = req.socket;
    if (!socket) return false;
    const hit = this.trusted.get(socket);
    if (hit !== undefined) return hit;
    let ok = false;
    const chain = peerChain(socket);
    if (chain && chainVerifies(chain.leaf, chain.intermediates, this.opts.roots)) {
      ok = this.opts.allowedNames.length === 0 || this.opts.allowedNames.includes(commonName(chain.leaf));
    }
    this.trusted.set(socket, ok);
    return ok;
  }

  authenticate(req: AuthenticationRequest): UserInfo | undefined {
    if (!this.opts.usernameHeaders.some((h) => req.headers[h.toLowerCase()] !== undefined)) return undefined;
    if (!this.isTrustedProxy(req)) return undefined;
    return userFromHeaders(req.headers, this.opts);
  }
}
