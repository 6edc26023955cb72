/**
 * etcd's --listen-client-urls and --listen-metrics-urls, read once when the flags are parsed
 * (config/flags.ts: a bad value stops the start with the flag named) and again when the etcd
 * endpoint binds.
 */

/** A bad --listen-client-urls or TLS file: the node does not start. */
export class EtcdConfigError extends Error {}

/**
 * Parses etcd's --listen-client-urls or --listen-metrics-urls (`flag`): scheme, host and port.
 * One URL is served here; a list of several is refused rather than served in part.
 */
export function parseClientUrl(raw: string, flag = 'listen-client-urls'): { secure: boolean; host: string; port: number } {
  const urls = raw
    .split(',')
    .map((u) => u.trim())
    .filter((u) => u !== '');
  if (urls.length > 1)
    throw new EtcdConfigError(`--${flag}: one URL is served here, got ${urls.length} (${urls.join(', ')}); listen on 0.0.0.0 or [::] to take every address`);
  const first = urls[0] ?? '';
  let u: URL;
  try {
    u = new URL(first);
  } catch {
    throw new EtcdConfigError(`--${flag}: ${JSON.stringify(first)} is not a URL such as https://127.0.0.1:2379`);
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new EtcdConfigError(`--${flag}: the scheme must be https (or http without TLS)`);
  const port = Number(u.port || 2379);
  return { secure: u.protocol === 'https:', host: u.hostname.replace(/^\[|\]$/g, ''), port };
}
