/**
 * The parts of Go's net/url.Parse that a webhook URL's rules read (scheme, user info, host,
 * query, fragment) and the errors it reports, so `clientConfig.url` is refused with Kubernetes'
 * wording (`url must be a valid URL: parse "...": missing protocol scheme`). WHATWG URL parsing
 * normalises and rejects differently, so it is not used.
 */

/** A URL as Go's url.Parse splits it; `error` is its error text when it does not parse. */
export interface GoUrl {
  scheme: string;
  /** The user info as url.Userinfo.String() prints it; undefined without an `@`. */
  user?: string;
  host: string;
  rawQuery: string;
  fragment: string;
}

const HOST_OK = /[A-Za-z0-9\-._~!$&'()*+,;=:[\]<>"%]/;

/** Go's unescape check: every `%` followed by two hex digits. */
function badEscape(s: string): string | undefined {
  for (let i = 0; i < s.length; i++) {
    if (s[i] !== '%') continue;
    const hex = s.slice(i + 1, i + 3);
    if (!/^[0-9A-Fa-f]{2}$/.test(hex)) return `invalid URL escape ${JSON.stringify(s.slice(i, i + 3))}`;
  }
  return undefined;
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** getScheme: letters, then letters, digits, + - . up to the first ':'. */
function splitScheme(raw: string): { scheme: string; rest: string } | { error: string } {
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (/[A-Za-z]/.test(c)) continue;
    if (/[0-9+\-.]/.test(c)) {
      if (i === 0) return { scheme: '', rest: raw };
      continue;
    }
    if (c === ':') {
      if (i === 0) return { error: 'missing protocol scheme' };
      return { scheme: raw.slice(0, i).toLowerCase(), rest: raw.slice(i + 1) };
    }
    return { scheme: '', rest: raw };
  }
  return { scheme: '', rest: raw };
}

/** parseHost's checks: a port after the last ':' (outside brackets) is digits; host characters are allowed ones. */
function hostError(host: string): string | undefined {
  let name = host;
  if (host.startsWith('[')) {
    const end = host.lastIndexOf(']');
    if (end < 0) return "missing ']' in host";
    const port = host.slice(end + 1);
    if (port && !/^:[0-9]*$/.test(port)) return `invalid port ${JSON.stringify(port)} after host`;
    name = host.slice(0, end + 1);
  } else {
    const i = host.lastIndexOf(':');
    if (i >= 0) {
      const port = host.slice(i);
      if (!/^:[0-9]*$/.test(port)) return `invalid port ${JSON.stringify(port)} after host`;
      name = host.slice(0, i);
    }
  }
  for (const c of name) if (c.charCodeAt(0) < 0x80 && !HOST_OK.test(c)) return `invalid character ${JSON.stringify(c)} in host name`;
  return badEscape(name);
}

/** url.Parse(raw), or its error text (`parse "<raw>": <reason>`). */
export function parseGoUrl(raw: string): GoUrl | { error: string } {
  const fail = (reason: string) => ({ error: `parse ${JSON.stringify(raw)}: ${reason}` });
  const hash = raw.indexOf('#');
  const main = hash < 0 ? raw : raw.slice(0, hash);
  const fragmentRaw = hash < 0 ? '' : raw.slice(hash + 1);
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x1f\x7f]/.test(main)) return fail('net/url: invalid control character in URL');
  const split = splitScheme(main);
  if ('error' in split) return fail(split.error);
  const { scheme } = split;
  let rest = split.rest;
  let rawQuery = '';
  if (rest.endsWith('?') && rest.split('?').length === 2) rest = rest.slice(0, -1);
  else if (rest.includes('?')) {
    rawQuery = rest.slice(rest.indexOf('?') + 1);
    rest = rest.slice(0, rest.indexOf('?'));
  }
  const out: GoUrl = { scheme, host: '', rawQuery, fragment: '' };
  if (!rest.startsWith('/')) {
    // An opaque URL (`https:host`): no host.
    if (scheme === '') {
      const colon = rest.indexOf(':');
      const slash = rest.indexOf('/');
      if (colon >= 0 && (slash < 0 || colon < slash)) return fail('first path segment in URL cannot contain colon');
    }
  } else if (rest.startsWith('//') && (scheme !== '' || !rest.startsWith('///'))) {
    const afterSlashes = rest.slice(2);
    const slash = afterSlashes.indexOf('/');
    const authority = slash < 0 ? afterSlashes : afterSlashes.slice(0, slash);
    const path = slash < 0 ? '' : afterSlashes.slice(slash);
    const at = authority.lastIndexOf('@');
    let host = authority;
    if (at >= 0) {
      const userinfo = authority.slice(0, at);
      if (!/^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$/.test(userinfo) || badEscape(userinfo)) return fail('net/url: invalid userinfo');
      const colon = userinfo.indexOf(':');
      out.user = colon < 0 ? decode(userinfo) : `${decode(userinfo.slice(0, colon))}:${decode(userinfo.slice(colon + 1))}`;
      host = authority.slice(at + 1);
    }
    const he = hostError(host);
    if (he) return fail(he);
    out.host = decode(host);
    const pe = badEscape(path);
    if (pe) return fail(pe);
  } else {
    const pe = badEscape(rest);
    if (pe) return fail(pe);
  }
  const fe = badEscape(fragmentRaw);
  if (fe) return fail(fe);
  out.fragment = decode(fragmentRaw);
  return out;
}
