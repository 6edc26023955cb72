/**
 * The links of HTML pages answered through a proxy subresource, rewritten to come back through
 * the proxy (kube's proxy transport does the same): a page of a pod served at
 * /api/v1/namespaces/ns/pods/web/proxy/ that links `/static/app.js` would otherwise send the
 * browser to the API server's own /static/app.js.
 *
 * The URL attributes kube rewrites (a href, img src, script src, form action, link href and the
 * others of its table) are found by an HTML tokenizer, so text, comments and script bodies are
 * never touched, and each value is replaced in place: the rest of the page stays byte for byte.
 * Which URLs change is the redirect rule (reverse-proxy.ts rewriteLocation): an absolute path,
 * or a URL on the backend's or the API server's host; relative paths and other hosts are kept.
 */
import { Tokenizer, QuoteType } from 'htmlparser2';

/** The attributes that hold URLs, by element (kube's atomsToAttrs). */
const URL_ATTRIBUTES: Readonly<Record<string, readonly string[]>> = {
  a: ['href'],
  applet: ['codebase'],
  area: ['href'],
  audio: ['src'],
  base: ['href'],
  blockquote: ['cite'],
  body: ['background'],
  button: ['formaction'],
  command: ['icon'],
  del: ['cite'],
  embed: ['src'],
  form: ['action'],
  frame: ['longdesc', 'src'],
  head: ['profile'],
  html: ['manifest'],
  iframe: ['longdesc', 'src'],
  img: ['longdesc', 'src', 'usemap'],
  input: ['src', 'usemap', 'formaction'],
  ins: ['cite'],
  link: ['href'],
  object: ['classid', 'codebase', 'data', 'usemap'],
  q: ['cite'],
  script: ['src'],
  source: ['src'],
  video: ['poster', 'src'],
};

const NAMED: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** The character references an attribute value may hold (numeric, and the few named ones URLs use). */
export function decodeAttribute(raw: string): string {
  return raw.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (whole: string, ref: string) => {
    if (ref[0] === '#') {
      const code = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return NAMED[ref.toLowerCase()] ?? whole;
  });
}

interface Edit {
  start: number;
  end: number;
  text: string;
}

/**
 * `html` with the URL attributes `rewrite` changes replaced (`rewrite` gets and gives decoded
 * values; the new one is escaped for its quotes, an unquoted one quoted).
 */
export function rewriteHtml(html: string, rewrite: (url: string) => string): string {
  const edits: Edit[] = [];
  let tag = '';
  let attribute = '';
  let valueStart = -1;
  let valueEnd = -1;
  const tokenizer = new Tokenizer(
    { decodeEntities: false },
    {
      onopentagname(start, end) {
        tag = html.slice(start, end).toLowerCase();
      },
      onattribname(start, end) {
        attribute = html.slice(start, end).toLowerCase();
        valueStart = -1;
      },
      onattribdata(start, end) {
        if (valueStart < 0) valueStart = start;
        valueEnd = end;
      },
      onattribend(quote) {
        if (valueStart < 0 || quote === QuoteType.NoValue || !URL_ATTRIBUTES[tag]?.includes(attribute)) return;
        const start = valueStart;
        const end = valueEnd;
        const before = decodeAttribute(html.slice(start, end));
        const after = rewrite(before);
        if (after === before) return;
        const escaped = after.replace(/&/g, '&amp;');
        if (quote === QuoteType.Single) edits.push({ start, end, text: escaped.replace(/'/g, '&#39;') });
        else if (quote === QuoteType.Double) edits.push({ start, end, text: escaped.replace(/"/g, '&#34;') });
        else edits.push({ start, end, text: `"${escaped.replace(/"/g, '&#34;')}"` });
      },
      onopentagend() {
        tag = '';
      },
      onselfclosingtag() {
        tag = '';
      },
      onattribentity() {},
      oncdata() {},
      onclosetag() {},
      oncomment() {},
      ondeclaration() {},
      onend() {},
      onprocessinginstruction() {},
      ontext() {},
      ontextentity() {},
    },
  );
  tokenizer.write(html);
  tokenizer.end();
  if (edits.length === 0) return html;
  let out = '';
  let at = 0;
  for (const e of edits) {
    out += html.slice(at, e.start) + e.text;
    at = e.end;
  }
  return out + html.slice(at);
}
