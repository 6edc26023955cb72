/**
 * A JSON value as text with object keys sorted, for finding equal values through a hash set or
 * map instead of comparing every pair: values equal as JSON (whatever their key order) give the
 * same text. `-0` and `0` give the same text too; where they must be told apart, confirm a match
 * with a strict comparison (the text then only narrows the candidates).
 */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
      .join(',')}}`;
  }
  return v === undefined ? 'undefined' : JSON.stringify(v);
}
