/**
 * CEL for the server's expressions (CRD validation rules, admission match conditions and
 * policies): one shared environment, CEL's standard library on `@marcbachmann/cel-js` plus kube's
 * lists library and the strings extension functions the library lacks, kube's quantity, URL and
 * semver libraries (cel.quantity.ts), its IP, CIDR and format libraries (cel.network.ts) and
 * cel-go's extensions (cel.extensions.ts); `matches` on RE2
 * (`re2js`, linear time, as cel-go: the library's own uses a backtracking JavaScript
 * RegExp, which a crafted value can keep busy for minutes, so parseCel rewrites calls to it); a
 * budget of list element reads in place of kube's cost accounting, so no expression keeps a
 * request busy; and the error text cel-go gives (`ERROR: <input>:1:N: ...`).
 */
import { isDeepStrictEqual } from 'node:util';
import { RE2JS } from 're2js';
import { Environment, type ASTNode } from '@marcbachmann/cel-js';
import { registerCelExtensions } from './cel.extensions.js';
import { registerCelNetwork } from './cel.network.js';
import { registerCelQuantity } from './cel.quantity.js';

type Obj = Record<string, unknown>;

/** Counts list element reads against the validation's budget. */
export class Budget {
  used = 0;
  constructor(readonly limit: number) {}
  spend(): void {
    if (++this.used > this.limit) throw new BudgetExceeded();
  }
}

export class BudgetExceeded extends Error {
  constructor() {
    super('validation failed due to running out of cost budget, no further validation rules will be run');
  }
}

export function budgetedList(items: unknown[], budget: Budget): unknown[] {
  return new Proxy(items, {
    get(target, p, receiver) {
      if (typeof p === 'string' && p.length > 0 && p.charCodeAt(0) >= 48 && p.charCodeAt(0) <= 57) budget.spend();
      return Reflect.get(target, p, receiver) as unknown;
    },
  });
}

function listOf(v: unknown): unknown[] {
  if (!Array.isArray(v)) throw new Error('no such overload');
  return v;
}

function compareCel(a: unknown, b: unknown): number {
  if ((typeof a === 'bigint' || typeof a === 'number') && (typeof b === 'bigint' || typeof b === 'number')) return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  throw new Error('no such overload');
}

function indexOfCel(list: unknown[], v: unknown, last: boolean): bigint {
  const n = list.length;
  for (let k = 0; k < n; k++) {
    const i = last ? n - 1 - k : k;
    if (isDeepStrictEqual(list[i], v)) return BigInt(i);
  }
  return -1n;
}

function codePoints(s: string): string[] {
  return Array.from(s);
}

let baseEnv: Environment | undefined;

/** The name `matches` is rewritten to. */
const RE2_MATCHES = 're2Matches';

/** The shared environment (built once): standard CEL with kube's lists, strings and regex libraries. */
export function celBase(): Environment {
  if (baseEnv) return baseEnv;
  const env = new Environment({ homogeneousAggregateLiterals: false, enableOptionalTypes: true, unlistedVariablesAreDyn: false });
  // lists (kube's library/lists.go)
  env.registerFunction('list.isSorted(): bool', (l: unknown) => {
    const a = listOf(l);
    for (let i = 1; i < a.length; i++) if (compareCel(a[i - 1], a[i]) > 0) return false;
    return true;
  });
  env.registerFunction('list.sum(): dyn', (l: unknown) => {
    const a = listOf(l);
    if (a.length === 0) return 0n;
    return a.reduce((x: unknown, y: unknown) => {
      if (typeof x === 'bigint' && typeof y === 'bigint') return x + y;
      if (typeof x === 'number' && typeof y === 'number') return x + y;
      throw new Error('no such overload');
    });
  });
  const extreme = (sign: number) => (l: unknown) => {
    const a = listOf(l);
    if (a.length === 0) throw new Error('min/max called on empty list');
    return a.reduce((x, y) => (compareCel(y, x) * sign > 0 ? y : x));
  };
  env.registerFunction('list.min(): dyn', extreme(-1));
  env.registerFunction('list.max(): dyn', extreme(1));
  env.registerFunction('list.indexOf(dyn): int', (l: unknown, v: unknown) => indexOfCel(listOf(l), v, false));
  env.registerFunction('list.lastIndexOf(dyn): int', (l: unknown, v: unknown) => indexOfCel(listOf(l), v, true));
  // strings (cel-go's strings extension, the functions the library does not have)
  env.registerFunction('string.charAt(int): string', (s: string, i: bigint) => {
    const cps = codePoints(s);
    if (i < 0n || i > BigInt(cps.length)) throw new Error(`index out of range: ${i}`);
    return cps[Number(i)] ?? '';
  });
  env.registerFunction('string.replace(string, string): string', (s: string, a: string, b: string) => s.split(a).join(b));
  env.registerFunction('string.replace(string, string, int): string', (s: string, a: string, b: string, n: bigint) => {
    if (n < 0n) return s.split(a).join(b);
    const parts = s.split(a);
    const k = Number(n);
    return parts.length <= k + 1 ? parts.join(b) : parts.slice(0, k + 1).join(b) + a + parts.slice(k + 1).join(a);
  });
  env.registerFunction('string.reverse(): string', (s: string) => codePoints(s).reverse().join(''));
  // CEL's matches on RE2 (parseCel points calls of `matches` here).
  const re2 = (s: string, re: string): boolean => {
    let compiled: RE2JS;
    try {
      compiled = RE2JS.compile(re);
    } catch (e) {
      throw new Error(`invalid regular expression: ${(e as Error).message}`, { cause: e });
    }
    return compiled.test(s);
  };
  env.registerFunction(`string.${RE2_MATCHES}(string): bool`, re2);
  env.registerFunction(`${RE2_MATCHES}(string, string): bool`, re2);
  // kube's regex library: the first match, and the matches in turn (at most `limit` of them
  // when it is not negative), both on RE2.
  env.registerFunction('string.find(string): string', (s: string, re: string) => findMatches(s, re, 1)[0] ?? '');
  env.registerFunction('string.findAll(string): list<string>', (s: string, re: string) => findMatches(s, re, -1));
  env.registerFunction('string.findAll(string, int): list<string>', (s: string, re: string, limit: bigint) => findMatches(s, re, limit));
  registerCelQuantity(env);
  registerCelNetwork(env);
  registerCelExtensions(env);
  baseEnv = env;
  return env;
}

/**
 * Characters findAll may scan in one call. Each match after the first is a new search of the
 * rest of the string, so a pattern that must read to the end before it settles on a short match
 * (`a.*b|a` over a long run of `a`) costs the string's length per match: quadratic. Each search
 * is charged that worst case, and past the limit the call ends as the validation's budget does
 * (about half a second of the worst pattern here). A string of up to about 4,400 characters can
 * be searched for any number of matches; a longer one for fewer.
 */
export const FIND_ALL_SCAN_LIMIT = 10_000_000;

/**
 * The successive non-overlapping matches of `re` in `s` as Go's FindAllString returns them:
 * leftmost first, and an empty match right where the previous match ended is not one. At most
 * `limit` of them unless it is negative. The pattern's syntax error comes as kube words it.
 */
function findMatches(s: string, re: string, limit: number | bigint): string[] {
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(re);
  } catch (e) {
    throw new Error(`Illegal regex: ${(e as Error).message}`, { cause: e });
  }
  const out: string[] = [];
  if (limit === 0 || limit === 0n) return out;
  const m = compiled.matcher(s);
  let prevEnd = -1;
  let scanned = 0;
  while (m.find()) {
    const start = m.start();
    const end = m.end();
    const abutting = start === end && start === prevEnd;
    prevEnd = end;
    if (!abutting) {
      out.push(m.group() ?? '');
      if (limit >= 0 && out.length >= Number(limit)) break;
    }
    // The next search may read the rest of the string (the first one is linear, as matches).
    scanned += s.length - end;
    if (scanned > FIND_ALL_SCAN_LIMIT) throw new BudgetExceeded();
  }
  return out;
}

/** The line and column of a position in an expression, as cel-go reports them (`<input>:1:N`). */
export function celPosition(expr: string, pos: number | undefined): string {
  const p = typeof pos === 'number' ? Math.max(0, Math.min(pos, expr.length)) : 0;
  const before = expr.slice(0, p);
  const line = before.split('\n').length;
  const col = p - (before.lastIndexOf('\n') + 1) + 1;
  return `<input>:${line}:${col}`;
}

/** The first line of a library error (its summary), with cel-go's casing of "no such key". */
export function celErrorText(e: unknown): string {
  const err = e as { summary?: unknown; message?: unknown };
  const text = typeof err.summary === 'string' && err.summary ? err.summary : String(err.message ?? e);
  return text
    .split('\n')[0]!
    .replace(/^No such key/, 'no such key')
    .replaceAll(RE2_MATCHES, 'matches');
}

/** A compile error as cel-go words it: `ERROR: <input>:L:C: message`. */
export function celCompileError(expr: string, e: unknown): string {
  const pos = (e as { node?: { pos?: unknown } } | undefined)?.node?.pos;
  return `ERROR: ${celPosition(expr, typeof pos === 'number' ? pos : undefined)}: ${celErrorText(e)}`;
}

/** A JSON value without a schema as CEL sees it: whole numbers as int, others as double; lists count against the budget. */
export function jsonToCel(v: unknown, budget: Budget): unknown {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  if (Array.isArray(v))
    return budgetedList(
      v.map((e) => jsonToCel(e, budget)),
      budget,
    );
  if (typeof v === 'object') {
    const out: Obj = Object.create(null) as Obj;
    for (const [k, val] of Object.entries(v as Obj)) out[k] = jsonToCel(val, budget);
    return out;
  }
  return v;
}

function walk(node: unknown, visit: (n: ASTNode) => void): void {
  if (Array.isArray(node)) {
    for (const n of node) walk(n, visit);
    return;
  }
  if (!node || typeof node !== 'object' || typeof (node as { op?: unknown }).op !== 'string') return;
  visit(node as ASTNode);
  walk((node as ASTNode).args, visit);
}

/**
 * Parses an expression in `env` with every call of `matches` (method or function form) sent to
 * the RE2 implementation: the calls are found in the parsed tree and their names replaced in
 * the source, which is parsed again. Throws the library's parse errors.
 */
export function parseCel(env: Environment, expr: string): ReturnType<Environment['parse']> {
  const first = env.parse(expr);
  const at: number[] = [];
  walk(first.ast, (n) => {
    if ((n.op !== 'rcall' && n.op !== 'call') || n.args[0] !== 'matches') return;
    // A method call names the function after its receiver; a function call starts with it.
    const from = n.op === 'rcall' ? (n.args[1] as ASTNode).range.end : n.range.start;
    const i = expr.indexOf('matches', from);
    if (i >= 0) at.push(i);
  });
  if (at.length === 0) return first;
  let out = expr;
  for (const i of at.sort((a, b) => b - a)) out = out.slice(0, i) + RE2_MATCHES + out.slice(i + 'matches'.length);
  return env.parse(out);
}
