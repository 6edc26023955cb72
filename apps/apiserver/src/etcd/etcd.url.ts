/**
 * etcd's --listen-client-urls, --listen-metrics-urls and --advertise-client-urls, read once when
 * the flags are parsed (config/flags.ts: a bad value stops the start with the flag named) and
 * again when the etcd endpoint binds.
 */

/** A bad --listen-client-urls or TLS file: the node does not start. */
export class EtcdConfigError extends Error {}

/** One URL of etcd's --listen-client-urls, --listen-metrics-urls or --advertise-client-urls. */
export interface ClientUrl {
  /** The URL as given (trimmed). */
  url: string;
  secure: boolean;
  host: string;
  port: number;
}

/**
 * Parses a comma-separated list of etcd's client URLs (`flag` names the flag in errors): each
 * https://HOST:PORT (http:// without TLS; the port defaults to 2379), at least one, no two for
 * the same host and port.
 */
export function parseClientUrls(raw: string, flag = 'listen-client-urls'): ClientUrl[] {
  const urls = raw
    .split(',')
    .map((u) => u.trim())
    .filter((u) => u !== '');
  if (urls.length === 0) throw new EtcdConfigError(`--${flag}: name at least one URL such as https://127.0.0.1:2379`);
  const out = urls.map((one) => parseOne(one, flag));
  const seen = new Set<string>();
  for (const u of out) {
    const at = hostPort(u);
    if (seen.has(at)) throw new EtcdConfigError(`--${flag}: ${at} is named twice`);
    seen.add(at);
  }
  return out;
}

/** `host:port` of a URL, with an IPv6 host in brackets (as in messages and URLs). */
export function hostPort(u: Pick<ClientUrl, 'host' | 'port'>): string {
  return u.host.includes(':') ? `[${u.host}]:${u.port}` : `${u.host}:${u.port}`;
}

function parseOne(url: string, flag: string): ClientUrl {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new EtcdConfigError(`--${flag}: ${JSON.stringify(url)} is not a URL such as https://127.0.0.1:2379`);
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new EtcdConfigError(`--${flag}: the scheme must be https (or http without TLS)`);
  const port = Number(u.port || 2379);
  return { url, secure: u.protocol === 'https:', host: u.hostname.replace(/^\[|\]$/g, ''), port };
}
