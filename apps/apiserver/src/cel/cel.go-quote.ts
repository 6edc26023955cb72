/**
 * Go's strconv.Quote (what `%q` prints in kube's and cel-go's error texts), over a JavaScript
 * string: named escapes, printable characters as they are, other control characters as `\xNN`,
 * other code points as `\uNNNN` or `\UNNNNNNNN`; a lone surrogate reads as U+FFFD, as Go decodes
 * invalid UTF-8.
 */

const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

const ESCAPES: Record<string, string> = {
  '\x07': '\\a',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\v': '\\v',
  '\\': '\\\\',
  '"': '\\"',
};

/** `s` with each lone surrogate replaced by U+FFFD. */
export function wellFormed(s: string): string {
  return s.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
}

/** Go's strconv.Quote of `s`. */
export function goQuote(s: string): string {
  let out = '"';
  for (const c of wellFormed(s)) {
    const esc = ESCAPES[c];
    if (esc) out += esc;
    else if (PRINTABLE.test(c)) out += c;
    else {
      const cp = c.codePointAt(0)!;
      if (cp < 0x20 || cp === 0x7f) out += `\\x${cp.toString(16).padStart(2, '0')}`;
      else if (cp < 0x10000) out += `\\u${cp.toString(16).padStart(4, '0')}`;
      else out += `\\U${cp.toString(16).padStart(8, '0')}`;
    }
  }
  return `${out}"`;
}

/** cel-go's strings.quote: `s` in double quotes with the escapes CEL's parser reads back. */
export function celQuote(s: string): string {
  let out = '"';
  for (const c of wellFormed(s)) out += ESCAPES[c] ?? c;
  return `${out}"`;
}
