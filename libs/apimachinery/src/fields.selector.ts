/**
 * Field selectors (`?fieldSelector=`): `f=v`, `f==v`, `f!=v` joined by commas (AND), with
 * backslash escapes `\,` `\=` `\\` in values. Splitting, operator recognition, unescaping and
 * messages follow k8s.io/apimachinery/pkg/fields/selector.go (parseSelector, splitTerms,
 * splitTerm, UnescapeValue). Which fields exist is the caller's business: see
 * `FieldSelector.validateFields`.
 */
import { Errors } from './errors.js';

/** selection.Operator of a field requirement. */
export type FieldOperator = '=' | '==' | '!=';

/** One term of a field selector; `value` is unescaped. */
export interface FieldRequirement {
  readonly field: string;
  readonly operator: FieldOperator;
  readonly value: string;
}

/** Returns a field's value for matching, or undefined when the object has no such field. */
export type FieldGetter = (field: string) => string | undefined;

/** Escapes a value for use in a field selector (fields.EscapeValue). */
export function escapeFieldValue(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/,/g, '\\,').replace(/=/g, '\\=');
}

/** A parsed field selector; the empty selector matches everything. */
export class FieldSelector {
  constructor(private readonly reqs: readonly FieldRequirement[]) {}

  /** The terms, sorted as Kubernetes sorts the raw terms before parsing. */
  requirements(): readonly FieldRequirement[] {
    return this.reqs;
  }

  /** True when the selector has no terms. */
  isEmpty(): boolean {
    return this.reqs.length === 0;
  }

  /**
   * True when every term holds. A field the getter does not know reads as '' (Kubernetes'
   * fields.Set.Get returns "" for a missing key), so `f!=x` matches it and `f=x` does not.
   */
  matches(get: FieldGetter): boolean {
    for (const r of this.reqs) {
      const v = get(r.field) ?? '';
      if (r.operator === '!=' ? v === r.value : v !== r.value) return false;
    }
    return true;
  }

  /** The value required by an `=`/`==` term on `field` (fields.Selector.RequiresExactMatch). */
  requiresExactMatch(field: string): string | undefined {
    for (const r of this.reqs) if (r.field === field && r.operator !== '!=') return r.value;
    return undefined;
  }

  /**
   * Rejects terms on fields the kind does not support, with the message of the apiserver's
   * field label conversion func (`field label not supported: <f>`).
   * @throws StatusError 400 BadRequest.
   */
  validateFields(supported: ReadonlySet<string> | readonly string[]): this {
    const set = supported instanceof Set ? supported : new Set(supported as readonly string[]);
    for (const r of this.reqs) if (!set.has(r.field)) throw Errors.badRequest(`field label not supported: ${r.field}`);
    return this;
  }

  /**
   * The check for kinds without registered field labels (custom resources):
   * runtime.DefaultMetaV1FieldSelectorConversion accepts only metadata.name and
   * metadata.namespace, plus whatever `extra` selectable fields the kind declares.
   * @throws StatusError 400 BadRequest: `"f" is not a known field selector: only "metadata.name", "metadata.namespace"`.
   */
  validateDefaultFields(extra: readonly string[] = []): this {
    for (const r of this.reqs) {
      if (r.field === 'metadata.name' || r.field === 'metadata.namespace' || extra.includes(r.field)) continue;
      throw Errors.badRequest(`${JSON.stringify(r.field)} is not a known field selector: only "metadata.name", "metadata.namespace"`);
    }
    return this;
  }

  /** Canonical string form (values re-escaped). */
  toString(): string {
    return this.reqs.map((r) => `${r.field}${r.operator === '==' ? '=' : r.operator}${escapeFieldValue(r.value)}`).join(',');
  }
}

/** splitTerms: split on commas not preceded by a backslash escape (the escape stays in the term). */
function splitTerms(s: string): string[] {
  if (s.length === 0) return [];
  const terms: string[] = [];
  let start = 0;
  let inSlash = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (inSlash) inSlash = false;
    else if (c === '\\') inSlash = true;
    else if (c === ',') {
      terms.push(s.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(s.slice(start));
  return terms;
}

/** splitTerm: the first occurrence of `!=`, `==` or `=` (tried in that order at each index) splits. */
function splitTerm(term: string): [string, FieldOperator, string] | undefined {
  for (let i = 0; i < term.length; i++) {
    for (const op of ['!=', '==', '='] as const) {
      if (term.startsWith(op, i)) return [term.slice(0, i), op, term.slice(i + op.length)];
    }
  }
  return undefined;
}

/** UnescapeValue, with its exact messages (note Go prints the rune as its code point). */
function unescapeValue(s: string): string {
  if (!/[\\,=]/.test(s)) return s;
  let out = '';
  let inSlash = false;
  for (const c of s) {
    if (inSlash) {
      if (c === '\\' || c === ',' || c === '=') out += c;
      else throw Errors.badRequest(`invalid field selector: invalid escape sequence: \\${c}`);
      inSlash = false;
      continue;
    }
    if (c === '\\') inSlash = true;
    else if (c === ',' || c === '=') throw Errors.badRequest(`invalid field selector: unescaped character in value: ${c.codePointAt(0)}`);
    else out += c;
  }
  if (inSlash) throw Errors.badRequest('invalid field selector: invalid escape sequence: \\');
  return out;
}

/**
 * Parses a field selector (fields.ParseSelector). Empty terms are skipped; terms are sorted.
 * @throws StatusError 400 BadRequest, e.g. `invalid selector: 'x'; can't understand 'x'`.
 */
export function parseFieldSelector(text: string): FieldSelector {
  const parts = splitTerms(text).sort();
  const reqs: FieldRequirement[] = [];
  for (const part of parts) {
    if (part === '') continue;
    const split = splitTerm(part);
    if (!split) throw Errors.badRequest(`invalid selector: '${text}'; can't understand '${part}'`);
    const [field, operator, raw] = split;
    reqs.push({ field, operator, value: unescapeValue(raw) });
  }
  return new FieldSelector(reqs);
}
