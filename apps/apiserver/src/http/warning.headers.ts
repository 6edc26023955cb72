/**
 * The `Warning` headers of a response, as kube-apiserver's warning recorder writes them: each
 * text once, in the order recorded; up to 4,096 characters in all, past which every warning is
 * cut to 256 characters and the ones that no longer fit are dropped. So a request that gives
 * rise to many warnings (a long list of repeated entries, a ratcheted rule per item) answers with
 * bounded headers.
 */

/** Characters (code points) of warning text a response carries before it starts truncating. */
export const WARNING_TOTAL_CHARS = 4 * 1024;
/** Characters a warning keeps once the response truncates. */
export const WARNING_ITEM_CHARS = 256;

const chars = (text: string): number => {
  let n = 0;
  for (const _ of text) n++;
  return n;
};

const cut = (text: string, max: number): string => {
  let n = 0;
  let end = 0;
  for (const c of text) {
    if (n === max) break;
    n++;
    end += c.length;
  }
  return text.slice(0, end);
};

/** The `Warning` header values (`299 - "text"`) for the warnings a request recorded. */
export function warningHeaderValues(warnings: readonly string[]): string[] {
  const seen = new Set<string>();
  const recorded: string[] = [];
  let out: string[] = [];
  let written = 0;
  let truncating = false;
  const shortened = (text: string): [string, number] => {
    const n = chars(text);
    return n > WARNING_ITEM_CHARS ? [cut(text, WARNING_ITEM_CHARS), WARNING_ITEM_CHARS] : [text, n];
  };
  for (const text of warnings) {
    if (text === '') continue;
    if (truncating && written >= WARNING_TOTAL_CHARS) break;
    if (seen.has(text)) continue;
    seen.add(text);
    recorded.push(text);
    const [t, n] = truncating ? shortened(text) : [text, chars(text)];
    if (written + n <= WARNING_TOTAL_CHARS || truncating) {
      written += n;
      out.push(t);
      continue;
    }
    // Over the limit for the first time: everything recorded so far is written again, cut.
    truncating = true;
    written = 0;
    out = [];
    for (const r of recorded) {
      const [rt, rn] = shortened(r);
      written += rn;
      out.push(rt);
    }
  }
  return out.map((t) => `299 - ${JSON.stringify(t)}`);
}
