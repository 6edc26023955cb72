/**
 * What the proxy subresources (nodes, pods and services/proxy) share about where a request
 * goes: the `[scheme:]name[:port]` of the path, the addresses a proxy may reach, and the path
 * below the proxy.
 */
import { lookup } from 'node:dns/promises';
import { isIPv4, isIPv6 } from 'node:net';
import { Errors, StatusError } from '@app/apimachinery';
import type { ConnectTarget, SubresourceDeclaration } from '@app/registry';

/** The parts of a proxy's name (kube's SplitSchemeNamePort). */
export interface SchemeNamePort {
  /** '', 'http' or 'https'. */
  scheme: string;
  name: string;
  port: string;
}

/**
 * Splits `name`, `name:port` or `scheme:name:port`; undefined when the name is empty, there are
 * more parts, or the scheme is neither http nor https.
 */
export function splitSchemeNamePort(id: string): SchemeNamePort | undefined {
  const parts = id.split(':');
  let r: SchemeNamePort;
  if (parts.length === 1) r = { scheme: '', name: parts[0]!, port: '' };
  else if (parts.length === 2) r = { scheme: '', name: parts[0]!, port: parts[1]! };
  else if (parts.length === 3) r = { scheme: parts[0]!, name: parts[1]!, port: parts[2]! };
  else return undefined;
  if (r.name === '' || !['', 'http', 'https'].includes(r.scheme)) return undefined;
  return r;
}

function ipv4Octets(ip: string): number[] | undefined {
  if (!isIPv4(ip)) return undefined;
  return ip.split('.').map(Number);
}

/**
 * True for a global unicast address (Go's IP.IsGlobalUnicast): not unspecified, loopback,
 * multicast, link-local or the IPv4 broadcast address. Only such addresses are proxied to: a
 * proxy must not reach the API server's own loopback services.
 */
export function isGlobalUnicast(ip: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  const v4 = ipv4Octets(mapped ? mapped[1]! : ip);
  if (v4) {
    const [a, b] = v4 as [number, number, number, number];
    if (v4.every((o) => o === 0) || v4.every((o) => o === 255)) return false;
    if (a === 127 || a >= 224) return false; // loopback, multicast and above
    if (a === 169 && b === 254) return false;
    return true;
  }
  if (!isIPv6(ip)) return false;
  const groups = expandIPv6(ip).map((g) => parseInt(g, 16));
  const first = groups[0]!;
  if (groups.slice(0, 7).every((g) => g === 0) && groups[7]! <= 1) return false; // :: and ::1
  if (first >> 8 === 0xff) return false; // multicast
  if ((first & 0xffc0) === 0xfe80) return false; // link-local
  return true;
}

function expandIPv6(ip: string): string[] {
  const [head, tail] = ip.includes('::') ? ip.split('::') : [ip, undefined];
  const h = head ? head.split(':') : [];
  if (tail === undefined) return h;
  const t = tail ? tail.split(':') : [];
  return [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
}

/** 400 `address not allowed` unless `ip` may be proxied to (kube's IsProxyableIP). */
export function checkProxyableIp(ip: string): void {
  if (!isGlobalUnicast(ip)) throw Errors.badRequest('address not allowed');
}

/** 400 unless every address `host` resolves to may be proxied to (kube's IsProxyableHostname). */
export async function checkProxyableHost(host: string): Promise<void> {
  let addresses: { address: string }[];
  try {
    addresses = isIPv4(host) || isIPv6(host) ? [{ address: host }] : await lookup(host, { all: true });
  } catch (e) {
    throw Errors.badRequest(`lookup ${host}: ${(e as Error).message}`);
  }
  if (addresses.length === 0) throw Errors.badRequest('No addresses for hostname');
  for (const a of addresses) checkProxyableIp(a.address);
}

/** `host:port` for a URL (an IPv6 address in brackets; no port when ''). */
export function hostPort(host: string, port: string | number): string {
  const h = host.includes(':') ? `[${host}]` : host;
  return port === '' ? h : `${h}:${port}`;
}

/**
 * The backend URL `scheme://host[:port]` with the proxy's path below it (kube's
 * JoinPreservingTrailingSlash), or a 503 for a port that is not a number: no backend can be
 * dialed at it.
 */
export function proxyUrl(scheme: string, host: string, port: string, path: string): URL {
  if (port !== '' && (!/^\d+$/.test(port) || Number(port) > 65535)) {
    throw new StatusError(503, 'ServiceUnavailable', `error trying to reach service: dial tcp: lookup tcp/${port}: unknown port`);
  }
  return new URL(`${scheme || 'http'}://${hostPort(host, port)}${path}`);
}

/** The verbs of the proxy subresources (kube's proxy methods: GET and HEAD are get, POST create, and so on). */
export const PROXY_VERBS = ['create', 'delete', 'get', 'patch', 'update'] as const;

/**
 * A `proxy` subresource of `what` (pod, service, node): the name in the path is split first (a
 * 400 `invalid <what> request "<name>"` when it does not split), then `locate` finds the backend
 * for the parts and the path below `proxy` (`id`: the name as the path gives it).
 */
export function proxySubresource(
  what: string,
  optionsKind: string,
  locate: (ns: string, where: SchemeNamePort, path: string, id: string) => Promise<ConnectTarget>,
): SubresourceDeclaration {
  return {
    verbs: [...PROXY_VERBS],
    connect: {
      optionsKind,
      proxy: true,
      connect(ns, id, _query, _ctx, path = '') {
        const where = splitSchemeNamePort(id);
        if (!where) throw Errors.badRequest(`invalid ${what} request ${JSON.stringify(id)}`);
        return locate(ns, where, path, id);
      },
    },
  };
}

/** The pool for `url`: plain or TLS. */
export function agentFor<H, S>(url: URL, pools: { http: H; https: S }): H | S {
  return url.protocol === 'https:' ? pools.https : pools.http;
}
