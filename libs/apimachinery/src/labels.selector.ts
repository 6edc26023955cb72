/**
 * Label selectors: the string syntax of `?labelSelector=` and the metav1.LabelSelector struct.
 * Grammar, lexer, validation and messages follow k8s.io/apimachinery/pkg/labels/selector.go
 * (Lexer, Parser, NewRequirement, Requirement.Matches) and
 * apimachinery/pkg/apis/meta/v1/helpers.go (LabelSelectorAsSelector).
 */
import { Errors } from './errors.js';
import { isQualifiedName, isValidLabelValue } from './validation.names.js';

/** selection.Operator values, spelled as Kubernetes spells them. */
export type LabelOperator = '=' | '==' | '!=' | 'in' | 'notin' | 'exists' | '!' | 'gt' | 'lt';

/** One ANDed term of a selector. `values` is sorted and deduplicated (a Go sets.String). */
export interface LabelRequirement {
  readonly key: string;
  readonly operator: LabelOperator;
  readonly values: readonly string[];
}

/** metav1.LabelSelectorRequirement. */
export interface LabelSelectorRequirementStruct {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | string;
  values?: string[];
}

/** metav1.LabelSelector as JSON. */
export interface LabelSelectorStruct {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirementStruct[];
}

/** Parses a Go `strconv.ParseInt(s, 10, 64)`; undefined when Go would fail. */
function parseInt64(s: string): bigint | undefined {
  if (!/^[+-]?[0-9]+$/.test(s)) return undefined;
  const v = BigInt(s);
  return v >= -(2n ** 63n) && v < 2n ** 63n ? v : undefined;
}

function requirementMatches(r: LabelRequirement, labels: Readonly<Record<string, string>>): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key);
  const v = has ? labels[r.key] : undefined;
  switch (r.operator) {
    case '=':
    case '==':
    case 'in':
      return has && r.values.includes(v as string);
    case '!=':
    case 'notin':
      // Kubernetes: a missing label satisfies != and notin.
      return !has || !r.values.includes(v as string);
    case 'exists':
      return has;
    case '!':
      return !has;
    case 'gt':
    case 'lt': {
      if (!has || r.values.length !== 1) return false;
      const lv = parseInt64(v as string);
      const rv = parseInt64(r.values[0]);
      if (lv === undefined || rv === undefined) return false;
      return r.operator === 'gt' ? lv > rv : lv < rv;
    }
  }
}

function requirementString(r: LabelRequirement): string {
  switch (r.operator) {
    case '!':
      return `!${r.key}`;
    case 'exists':
      return r.key;
    case 'in':
    case 'notin':
      return `${r.key} ${r.operator} (${r.values.join(',')})`;
    case 'gt':
      return `${r.key}>${r.values[0]}`;
    case 'lt':
      return `${r.key}<${r.values[0]}`;
    default:
      return `${r.key}${r.operator}${r.values[0] ?? ''}`;
  }
}

/**
 * An immutable, parsed label selector: the AND of its requirements, sorted by key as
 * Kubernetes' internalSelector is. The empty selector matches everything; `nothing` matches
 * nothing (what a nil metav1.LabelSelector converts to).
 */
export class LabelSelector {
  private constructor(
    readonly requirements: readonly LabelRequirement[],
    private readonly nothing: boolean,
  ) {}

  /** A selector from requirements (sorted stably by key, as labels.internalSelector.Add does). */
  static of(requirements: LabelRequirement[]): LabelSelector {
    const sorted = [...requirements].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    return new LabelSelector(sorted, false);
  }

  /** labels.Everything(). */
  static everything(): LabelSelector {
    return new LabelSelector([], false);
  }

  /** labels.Nothing(). */
  static nothing(): LabelSelector {
    return new LabelSelector([], true);
  }

  /** True when every requirement holds for `labels` (undefined = no labels). */
  matches(labels: Readonly<Record<string, string>> | undefined): boolean {
    if (this.nothing) return false;
    const l = labels ?? {};
    for (const r of this.requirements) if (!requirementMatches(r, l)) return false;
    return true;
  }

  /** True for a selector that selects everything. */
  isEmpty(): boolean {
    return !this.nothing && this.requirements.length === 0;
  }

  /** Canonical string form (labels.Selector.String()). */
  toString(): string {
    return this.requirements.map(requirementString).join(',');
  }
}

// ---- lexer (labels.Lexer) ----

type Tok = 'ERROR' | 'EOS' | 'CPAR' | 'COMMA' | 'NOTEXIST' | 'DEQ' | 'EQ' | 'GT' | 'ID' | 'IN' | 'LT' | 'NEQ' | 'NOTIN' | 'OPAR';

const string2token: Record<string, Tok> = {
  ')': 'CPAR',
  ',': 'COMMA',
  '!': 'NOTEXIST',
  '==': 'DEQ',
  '=': 'EQ',
  '>': 'GT',
  in: 'IN',
  '<': 'LT',
  '!=': 'NEQ',
  notin: 'NOTIN',
  '(': 'OPAR',
};

const isWhitespace = (c: string): boolean => c === ' ' || c === '\t' || c === '\r' || c === '\n';
const isSpecial = (c: string): boolean => c === '=' || c === '!' || c === '(' || c === ')' || c === ',' || c === '>' || c === '<';

interface Scanned {
  tok: Tok;
  lit: string;
}

function lex(s: string): Scanned[] {
  const out: Scanned[] = [];
  let i = 0;
  for (;;) {
    while (i < s.length && isWhitespace(s[i])) i++;
    if (i >= s.length) {
      out.push({ tok: 'EOS', lit: '' });
      return out;
    }
    if (isSpecial(s[i])) {
      // Longest run of special symbols that still forms a token ("!=" over "!").
      let buf = '';
      let last: Scanned | undefined;
      while (i < s.length && isSpecial(s[i])) {
        buf += s[i];
        const t = string2token[buf];
        if (t) {
          last = { tok: t, lit: buf };
          i++;
        } else if (last) {
          break;
        } else {
          i++;
        }
      }
      out.push(last ?? { tok: 'ERROR', lit: `error expected: keyword found '${buf}'` });
    } else {
      const start = i;
      while (i < s.length && !isSpecial(s[i]) && !isWhitespace(s[i])) i++;
      const word = s.slice(start, i);
      out.push({ tok: string2token[word] ?? 'ID', lit: word });
    }
  }
}

// ---- parser (labels.Parser) ----

const BINARY_OPERATORS = 'in, notin, =, ==, !=, gt, lt';

class ParseError extends Error {}

/**
 * Renders a field.Error the way field.Error.Error() does for Invalid values; `field` may be
 * `<nil>` because Kubernetes' parser validates keys against a nil *field.Path.
 */
function invalid(field: string, value: string | readonly string[], detail: string): string {
  const shown = typeof value === 'string' ? JSON.stringify(value) : `[]string{${value.map((v) => JSON.stringify(v)).join(', ')}}`;
  return `${field}: Invalid value: ${shown}: ${detail}`;
}

/**
 * labels.NewRequirement's validation: the key is a qualified name, the value count fits the
 * operator, every value is a valid label value. Returns the aggregated message or undefined.
 */
function validateRequirement(key: string, op: LabelOperator, vals: readonly string[], base: string): string | undefined {
  const errs: string[] = [];
  const keyPath = base ? `${base}.key` : 'key';
  const valuesPath = base ? `${base}.values` : 'values';
  const keyErrs = isQualifiedName(key);
  if (keyErrs.length) errs.push(invalid(keyPath, key, keyErrs.join('; ')));
  switch (op) {
    case 'in':
    case 'notin':
      if (vals.length === 0) errs.push(invalid(valuesPath, vals, "for 'in', 'notin' operators, values set can't be empty"));
      break;
    case '=':
    case '==':
    case '!=':
      if (vals.length !== 1) errs.push(invalid(valuesPath, vals, 'exact-match compatibility requires one single value'));
      break;
    case 'exists':
    case '!':
      if (vals.length !== 0) errs.push(invalid(valuesPath, vals, 'values set must be empty for exists and does not exist'));
      break;
    case 'gt':
    case 'lt':
      if (vals.length !== 1) errs.push(invalid(valuesPath, vals, "for 'Gt', 'Lt' operators, exactly one value is required"));
      vals.forEach((v, i) => {
        if (parseInt64(v) === undefined) errs.push(invalid(`${valuesPath}[${i}]`, v, "for 'Gt', 'Lt' operators, the value must be an integer"));
      });
      break;
  }
  vals.forEach((v, i) => {
    const ve = isValidLabelValue(v);
    if (ve.length) errs.push(invalid(`${valuesPath}[${i}][${key}]`, v, ve.join('; ')));
  });
  if (errs.length === 0) return undefined;
  // utilerrors.NewAggregate: one error prints bare, several as "[a, b]".
  return errs.length === 1 ? errs[0] : `[${errs.join(', ')}]`;
}

class Parser {
  private pos = 0;
  constructor(private readonly items: Scanned[]) {}

  /** In the Values context the keywords `in`/`notin` are plain identifiers. */
  private lookahead(values: boolean): Scanned {
    const it = this.items[this.pos];
    if (values && (it.tok === 'IN' || it.tok === 'NOTIN')) return { tok: 'ID', lit: it.lit };
    return it;
  }

  private consume(values: boolean): Scanned {
    const it = this.lookahead(values);
    this.pos++;
    return it;
  }

  parse(): LabelRequirement[] {
    const reqs: LabelRequirement[] = [];
    for (;;) {
      const { tok, lit } = this.lookahead(true);
      if (tok === 'ID' || tok === 'NOTEXIST') {
        let r: LabelRequirement;
        try {
          r = this.parseRequirement();
        } catch (e) {
          if (e instanceof ParseError) throw new ParseError(`unable to parse requirement: ${e.message}`);
          throw e;
        }
        reqs.push(r);
        const t = this.consume(true);
        if (t.tok === 'EOS') return reqs;
        if (t.tok === 'COMMA') {
          const t2 = this.lookahead(true);
          if (t2.tok !== 'ID' && t2.tok !== 'NOTEXIST') throw new ParseError(`found '${t2.lit}', expected: identifier after ','`);
        } else {
          throw new ParseError(`found '${t.lit}', expected: ',' or 'end of string'`);
        }
      } else if (tok === 'EOS') {
        return reqs;
      } else {
        throw new ParseError(`found '${lit}', expected: !, identifier, or 'end of string'`);
      }
    }
  }

  private parseRequirement(): LabelRequirement {
    let op: LabelOperator | undefined;
    let t = this.consume(true);
    if (t.tok === 'NOTEXIST') {
      op = '!';
      t = this.consume(true);
    }
    if (t.tok !== 'ID') throw new ParseError(`found '${t.lit}', expected: identifier`);
    const key = t.lit;
    const keyErrs = isQualifiedName(key);
    if (keyErrs.length) throw new ParseError(invalid('<nil>', key, keyErrs.join('; ')));
    const next = this.lookahead(true).tok;
    if (next === 'EOS' || next === 'COMMA') {
      if (op !== '!') op = 'exists';
    }
    if (op === 'exists' || op === '!') return this.build(key, op, []);
    const o = this.consume(false);
    const ops: Partial<Record<Tok, LabelOperator>> = { IN: 'in', NOTIN: 'notin', EQ: '=', DEQ: '==', NEQ: '!=', GT: 'gt', LT: 'lt' };
    const bop = ops[o.tok];
    if (!bop) throw new ParseError(`found '${o.lit}', expected: ${BINARY_OPERATORS}`);
    const values = bop === 'in' || bop === 'notin' ? this.parseValues() : this.parseExactValue();
    return this.build(key, bop, [...values].sort());
  }

  private build(key: string, op: LabelOperator, values: string[]): LabelRequirement {
    const err = validateRequirement(key, op, values, '');
    if (err) throw new ParseError(err);
    return { key, operator: op, values };
  }

  private parseValues(): Set<string> {
    const t = this.consume(true);
    if (t.tok !== 'OPAR') throw new ParseError(`found '${t.lit}' expected: '('`);
    const la = this.lookahead(true);
    if (la.tok === 'ID' || la.tok === 'COMMA') {
      const s = this.parseIdentifiersList();
      if (this.consume(true).tok !== 'CPAR') throw new ParseError(`found '${la.lit}', expected: ')'`);
      return s;
    }
    if (la.tok === 'CPAR') {
      this.consume(true);
      return new Set(['']); // "()" is the set holding the empty value
    }
    throw new ParseError(`found '${la.lit}', expected: ',', ')' or identifier`);
  }

  private parseIdentifiersList(): Set<string> {
    const s = new Set<string>();
    for (;;) {
      const t = this.consume(true);
      if (t.tok === 'ID') {
        s.add(t.lit);
        const t2 = this.lookahead(true);
        if (t2.tok === 'COMMA') continue;
        if (t2.tok === 'CPAR') return s;
        throw new ParseError(`found '${t2.lit}', expected: ',' or ')'`);
      } else if (t.tok === 'COMMA') {
        // Empty members: "(,a" "a,)" "a,,b" each contribute the empty value.
        if (s.size === 0) s.add('');
        const t2 = this.lookahead(true);
        if (t2.tok === 'CPAR') {
          s.add('');
          return s;
        }
        if (t2.tok === 'COMMA') {
          this.consume(true);
          s.add('');
        }
      } else {
        throw new ParseError(`found '${t.lit}', expected: ',', or identifier`);
      }
    }
  }

  private parseExactValue(): Set<string> {
    const la = this.lookahead(true);
    if (la.tok === 'EOS' || la.tok === 'COMMA') return new Set(['']);
    const t = this.consume(true);
    if (t.tok === 'ID') return new Set([t.lit]);
    throw new ParseError(`found '${t.lit}', expected: identifier`);
  }
}

/**
 * Parses the `labelSelector` query syntax (labels.Parse): `a=b`, `a==b`, `a!=b`,
 * `a in (x,y)`, `a notin (x)`, `a`, `!a`, `a>1`, `a<1`, joined by commas (AND). An empty or
 * blank string selects everything.
 * @throws StatusError 400 BadRequest with Kubernetes' parser message.
 */
export function parseLabelSelector(text: string): LabelSelector {
  try {
    return LabelSelector.of(new Parser(lex(text)).parse());
  } catch (e) {
    if (e instanceof ParseError) throw Errors.badRequest(e.message);
    throw e;
  }
}

/**
 * metav1.LabelSelectorAsSelector: undefined/null selects nothing, `{}` everything;
 * matchLabels are `=` requirements, matchExpressions map In/NotIn/Exists/DoesNotExist.
 * @throws StatusError 400 BadRequest for an unknown operator or an invalid key/value.
 */
export function labelSelectorFromStruct(ls: LabelSelectorStruct | null | undefined): LabelSelector {
  if (ls === null || ls === undefined) return LabelSelector.nothing();
  const reqs: LabelRequirement[] = [];
  const add = (key: string, op: LabelOperator, values: string[]): void => {
    const err = validateRequirement(key, op, values, '');
    if (err) throw Errors.badRequest(err);
    reqs.push({ key, operator: op, values: [...new Set(values)].sort() });
  };
  for (const [k, v] of Object.entries(ls.matchLabels ?? {})) add(k, '=', [v]);
  for (const e of ls.matchExpressions ?? []) {
    const map: Record<string, LabelOperator> = { In: 'in', NotIn: 'notin', Exists: 'exists', DoesNotExist: '!' };
    const op = map[e.operator];
    if (!op) throw Errors.badRequest(`${JSON.stringify(e.operator)} is not a valid label selector operator`);
    add(e.key, op, [...(e.values ?? [])]);
  }
  return reqs.length === 0 ? LabelSelector.everything() : LabelSelector.of(reqs);
}
