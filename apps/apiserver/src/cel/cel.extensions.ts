/**
 * cel-go's extension libraries (google/cel-go ext/) on `@marcbachmann/cel-js`, for the functions
 * the library and cel.environment.ts lack: sets (ext/sets.go), math (ext/math.go, version 2),
 * lists (ext/lists.go, version 3, plus the optional library's `first()`/`last()`), base64
 * (ext/encoders.go), `strings.quote` and `string.format` (ext/strings.go version 2 with
 * ext/formatting.go and the en_US locale), `existsOne(x, p)` (cel-go's parser macros) and the
 * two-variable comprehensions (ext/comprehensions.go) with `sortBy` as macros. The semantics and
 * error texts follow cel-go.
 *
 * Namespaced functions (`math.greatest(...)`) are methods of a constant of a namespace type, as
 * the library does for `optional.of(...)`: the type carries the namespace's name, so an error
 * reads `found no matching overload for 'math.abs(string)'`.
 */
import { Environment, EvaluationError, Optional, ParseError, type ASTNode } from '@marcbachmann/cel-js';
import { Duration, UnsignedInt } from '@marcbachmann/cel-js/evaluator';
import { celQuote, goQuote } from './cel.go-quote.js';

// ---------------------------------------------------------------------------------------------
// Values

/** The class of the library's `type` values (not exported by the library). */
const TypeValue = (new Environment().evaluate('type(1)') as object).constructor;

const MIN_INT = -(2n ** 63n);
/** Above this many elements a function refuses to build a list (kube's per-call cost limit). */
const MAX_LIST = 1_000_000;
/** The largest precision `string.format` accepts (cel-go's strings version 5 allows 100). */
const MAX_PRECISION = 1000;

type CelMap = Map<unknown, unknown> | Record<string, unknown>;

function fail(message: string): EvaluationError {
  return new EvaluationError(message);
}

function isList(v: unknown): v is unknown[] | Set<unknown> {
  return Array.isArray(v) || v instanceof Set;
}

function toArray(v: unknown[] | Set<unknown>): unknown[] {
  return Array.isArray(v) ? v : [...v];
}

function isMap(v: unknown): v is CelMap {
  if (typeof v !== 'object' || v === null) return false;
  const c = (v as { constructor?: unknown }).constructor;
  return c === undefined || c === Object || c === Map;
}

function mapEntries(m: CelMap): [unknown, unknown][] {
  if (m instanceof Map) return [...m.entries()];
  return Object.keys(m).map((k) => [k, m[k]]);
}

function mapGet(m: CelMap, k: unknown): unknown {
  if (m instanceof Map) {
    const v = m.get(k);
    if (v !== undefined || typeof k === 'string') return v;
    return m.get(String(k));
  }
  const key = typeof k === 'string' ? k : String(k);
  return Object.hasOwn(m, key) ? m[key] : undefined;
}

/** The CEL type name of a runtime value, as cel-go prints it in errors. */
function typeName(v: unknown): string {
  switch (typeof v) {
    case 'bigint':
      return 'int';
    case 'number':
      return 'double';
    case 'string':
      return 'string';
    case 'boolean':
      return 'bool';
  }
  if (v === null || v === undefined) return 'null_type';
  if (v instanceof UnsignedInt) return 'uint';
  if (v instanceof Uint8Array) return 'bytes';
  if (isList(v)) return 'list';
  if (v instanceof Date) return 'google.protobuf.Timestamp';
  if (v instanceof Duration) return 'google.protobuf.Duration';
  if (v instanceof TypeValue) return 'type';
  if (v instanceof Optional) return 'optional_type';
  if (isMap(v)) return 'map';
  return (v as { constructor?: { name?: string } }).constructor?.name ?? typeof v;
}

/** An int, uint or double as a bigint or number; undefined for other values. */
function numeric(v: unknown): bigint | number | undefined {
  if (typeof v === 'bigint' || typeof v === 'number') return v;
  if (v instanceof UnsignedInt) return v.valueOf();
  return undefined;
}

/** Compares two numbers across int, uint and double exactly; undefined when one is NaN. */
function compareNumbers(a: bigint | number, b: bigint | number): number | undefined {
  if (typeof a === 'bigint' && typeof b === 'bigint') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'number' && typeof b === 'number') {
    if (Number.isNaN(a) || Number.isNaN(b)) return undefined;
    return a < b ? -1 : a > b ? 1 : 0;
  }
  if (typeof a === 'number') {
    const c = compareNumbers(b, a);
    return c === undefined ? undefined : -c;
  }
  // a bigint, b double
  const d = b as number;
  if (Number.isNaN(d)) return undefined;
  if (d === Infinity) return -1;
  if (d === -Infinity) return 1;
  const f = Math.floor(d);
  const bf = BigInt(f);
  if (a < bf) return -1;
  if (a > bf) return 1;
  return d === f ? 0 : -1;
}

/** Compares strings by code point, as Go compares UTF-8. */
function compareStrings(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates (astral code points) sort above U+E000..U+FFFF.
    x = x >= 0xe000 ? x - 0x800 : x >= 0xd800 ? x + 0x2000 : x;
    y = y >= 0xe000 ? y - 0x800 : y >= 0xd800 ? y + 0x2000 : y;
    return x < y ? -1 : 1;
  }
  return a.length - b.length;
}

/** CEL's ordering of two values of one comparable type (numbers across types); undefined otherwise. */
function celCompare(a: unknown, b: unknown): number | undefined {
  const na = numeric(a);
  const nb = numeric(b);
  if (na !== undefined && nb !== undefined) return compareNumbers(na, nb);
  if (typeof a === 'string' && typeof b === 'string') return Math.sign(compareStrings(a, b));
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  if (a instanceof Uint8Array && b instanceof Uint8Array) {
    const n = Math.min(a.length, b.length);
    for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
    return Math.sign(a.length - b.length);
  }
  if (a instanceof Date && b instanceof Date) return Math.sign(a.getTime() - b.getTime());
  if (a instanceof Duration && b instanceof Duration) {
    if (a.seconds !== b.seconds) return a.seconds < b.seconds ? -1 : 1;
    return Math.sign(a.nanos - b.nanos);
  }
  return undefined;
}

/** CEL equality (heterogeneous: numbers compare by value across int, uint and double). */
function celEquals(a: unknown, b: unknown): boolean {
  if (a === b) return typeof a !== 'number' || !Number.isNaN(a);
  const na = numeric(a);
  const nb = numeric(b);
  if (na !== undefined || nb !== undefined) return na !== undefined && nb !== undefined && compareNumbers(na, nb) === 0;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (a instanceof Uint8Array) return b instanceof Uint8Array && celCompare(a, b) === 0;
  if (isList(a)) {
    if (!isList(b)) return false;
    const x = toArray(a);
    const y = toArray(b);
    return x.length === y.length && x.every((v, i) => celEquals(v, y[i]));
  }
  if (a instanceof Date) return b instanceof Date && a.getTime() === b.getTime();
  if (a instanceof Duration) return b instanceof Duration && a.seconds === b.seconds && a.nanos === b.nanos;
  if (a instanceof TypeValue) return b instanceof TypeValue && (a as { name: string }).name === (b as { name: string }).name;
  if (a instanceof Optional) {
    if (!(b instanceof Optional) || a.hasValue() !== b.hasValue()) return false;
    return !a.hasValue() || celEquals(a.value(), b.value());
  }
  if (isMap(a)) {
    if (!isMap(b)) return false;
    const ea = mapEntries(a);
    if (ea.length !== mapEntries(b).length) return false;
    return ea.every(([k, v]) => {
      const w = mapGet(b, k);
      return w !== undefined && celEquals(v, w);
    });
  }
  return false;
}

function listArg(v: unknown): unknown[] {
  if (!isList(v)) throw fail(`no such overload: ${typeName(v)}`);
  return toArray(v);
}

// ---------------------------------------------------------------------------------------------
// Namespaces: `math.abs(x)` is a method call on a constant `math` of the namespace type `math`.

function namespace(env: Environment, name: string): void {
  const Ns = { [name]: class {} }[name]!;
  env.registerType(name, Ns);
  env.registerConstant(name, name, new Ns());
}

// ---------------------------------------------------------------------------------------------
// sets (ext/sets.go)

function setsContains(list: unknown, sub: unknown): boolean {
  const l = listArg(list);
  return listArg(sub).every((v) => l.some((w) => celEquals(v, w)));
}

function registerSets(env: Environment): void {
  namespace(env, 'sets');
  env.registerFunction('sets.contains(list, list): bool', (_ns: unknown, a: unknown, b: unknown) => setsContains(a, b));
  env.registerFunction('sets.equivalent(list, list): bool', (_ns: unknown, a: unknown, b: unknown) => setsContains(a, b) && setsContains(b, a));
  env.registerFunction('sets.intersects(list, list): bool', (_ns: unknown, a: unknown, b: unknown) => {
    const y = listArg(b);
    return listArg(a).some((v) => y.some((w) => celEquals(v, w)));
  });
}

// ---------------------------------------------------------------------------------------------
// math (ext/math.go)

const asInt = (v: bigint): bigint => BigInt.asIntN(64, v);
const uint = (v: bigint): UnsignedInt => new UnsignedInt(BigInt.asUintN(64, v));

function registerMath(env: Environment): void {
  namespace(env, 'math');
  const fn = (sig: string, handler: (...args: never[]) => unknown) =>
    env.registerFunction(`math.${sig}`, (_ns: unknown, ...args: unknown[]) => (handler as (...a: unknown[]) => unknown)(...args));

  fn('ceil(double): double', (x: number) => Math.ceil(x));
  fn('floor(double): double', (x: number) => Math.floor(x));
  // Go's math.Round rounds half away from zero.
  fn('round(double): double', (x: number) => (x < 0 ? -Math.round(-x) : Math.round(x)));
  fn('trunc(double): double', (x: number) => Math.trunc(x));
  fn('isInf(double): bool', (x: number) => x === Infinity || x === -Infinity);
  fn('isNaN(double): bool', (x: number) => Number.isNaN(x));
  fn('isFinite(double): bool', (x: number) => Number.isFinite(x));
  fn('abs(double): double', (x: number) => Math.abs(x));
  fn('abs(int): int', (x: bigint) => {
    if (x === MIN_INT) throw fail('integer overflow');
    return x < 0n ? -x : x;
  });
  fn('abs(uint): uint', (x: UnsignedInt) => x);
  fn('sign(double): double', (x: number) => (Number.isNaN(x) ? x : x > 0 ? 1 : x < 0 ? -1 : 0));
  fn('sign(int): int', (x: bigint) => (x > 0n ? 1n : x < 0n ? -1n : 0n));
  fn('sign(uint): uint', (x: UnsignedInt) => new UnsignedInt(x.valueOf() === 0n ? 0n : 1n));
  fn('sqrt(double): double', (x: number) => Math.sqrt(x));
  fn('sqrt(int): double', (x: bigint) => Math.sqrt(Number(x)));
  fn('sqrt(uint): double', (x: UnsignedInt) => Math.sqrt(Number(x.valueOf())));

  const bitwise = (name: string, op: (a: bigint, b: bigint) => bigint) => {
    fn(`${name}(int, int): int`, (a: bigint, b: bigint) => asInt(op(a, b)));
    fn(`${name}(uint, uint): uint`, (a: UnsignedInt, b: UnsignedInt) => uint(op(a.valueOf(), b.valueOf())));
  };
  bitwise('bitAnd', (a, b) => a & b);
  bitwise('bitOr', (a, b) => a | b);
  bitwise('bitXor', (a, b) => a ^ b);
  fn('bitNot(int): int', (a: bigint) => asInt(~a));
  fn('bitNot(uint): uint', (a: UnsignedInt) => uint(~a.valueOf()));
  const offset = (name: string, n: bigint): bigint => {
    if (n < 0n) throw fail(`math.${name}() negative offset: ${n}`);
    return n;
  };
  fn('bitShiftLeft(int, int): int', (a: bigint, n: bigint) => (offset('bitShiftLeft', n) >= 64n ? 0n : asInt(a << n)));
  fn('bitShiftLeft(uint, int): uint', (a: UnsignedInt, n: bigint) => uint(offset('bitShiftLeft', n) >= 64n ? 0n : a.valueOf() << n));
  // A logical shift: the int's bits as an unsigned value, shifted.
  fn('bitShiftRight(int, int): int', (a: bigint, n: bigint) => (offset('bitShiftRight', n) >= 64n ? 0n : asInt(BigInt.asUintN(64, a) >> n)));
  fn('bitShiftRight(uint, int): uint', (a: UnsignedInt, n: bigint) => uint(offset('bitShiftRight', n) >= 64n ? 0n : a.valueOf() >> n));

  registerExtreme(env, 'greatest', '@max', 1);
  registerExtreme(env, 'least', '@min', -1);
}

// ---------------------------------------------------------------------------------------------
// Macros: the library expands a macro at parse time into an object whose typeCheck and evaluate
// hooks run in place of the call (see the library's macros.js). The checker, evaluator and scopes
// are the library's own (not in its typings), used through these shapes.

interface CelType {
  readonly kind: string;
  readonly name: string;
  readonly valueType?: CelType;
  readonly keyType?: CelType;
}

interface Scope {
  forkWithVariable(name: string, type: CelType): BoundScope;
}

interface BoundScope extends Scope {
  setIterValue(v: unknown, ev: Evaluator): BoundScope;
}

interface Checker {
  check(node: ASTNode, scope: Scope): CelType;
  createError(code: string, message: string, node: ASTNode): Error;
  formatType(t: CelType): string;
  getType(name: string): CelType;
  readonly registry: { getListType(t: CelType): CelType; getMapType(k: CelType, v: CelType): CelType };
}

interface Evaluator {
  run(node: ASTNode, scope: Scope): unknown;
  tryEval(node: ASTNode, scope: Scope): unknown;
  createError(code: string, message: string, node: ASTNode): Error;
}

interface MacroInput {
  ast: ASTNode;
  args: ASTNode[];
  receiver: ASTNode;
}

const ACCUMULATORS = new Set(['__result__', '@result']);

function identOf(node: ASTNode): string | undefined {
  return node.op === 'id' ? (node.args as string) : undefined;
}

function isDynOr(t: CelType, ...names: string[]): boolean {
  return t.kind === 'dyn' || t.kind === 'param' || names.includes(t.name);
}

/** A value the evaluator gave back; the environment's functions are synchronous. */
function settled(ev: Evaluator, v: unknown, node: ASTNode): unknown {
  if (v instanceof Promise) throw ev.createError('async_unsupported', 'asynchronous functions are not supported in this macro', node);
  return v;
}

// math.greatest / math.least (cel-go: macros over math.@max / math.@min)

const NUMERIC = ['int', 'uint', 'double'];

function isNumericArg(node: ASTNode): boolean {
  if (node.op === 'value') {
    const v = node.args as unknown;
    return typeof v === 'bigint' || typeof v === 'number' || v instanceof UnsignedInt;
  }
  return node.op !== 'list' && node.op !== 'map';
}

interface ExtremeMacro {
  ast: ASTNode;
  receiver: ASTNode;
  args: ASTNode[];
  async: false;
  typeCheck(chk: Checker, m: ExtremeMacro, scope: Scope): CelType;
  evaluate(ev: Evaluator, m: ExtremeMacro, scope: Scope): unknown;
}

function registerExtreme(env: Environment, name: string, impl: string, sign: number): void {
  const desc = `math.${name}()`;
  env.registerFunction(`math.${name}(): dyn`, () => {
    throw fail(`${desc} requires at least one argument`);
  });

  const typeCheck = (chk: Checker, m: ExtremeMacro, scope: Scope): CelType => {
    const types = m.args.map((a) => chk.check(a, scope));
    const recv = identOf(m.receiver) === 'math' ? 'math' : chk.formatType(chk.check(m.receiver, scope));
    const noOverload = () =>
      chk.createError('no_matching_overload', `found no matching overload for '${recv}.${name}(${types.map((t) => chk.formatType(t)).join(', ')})'`, m.ast);
    if (recv !== 'math') throw noOverload();
    if (types.length === 1 && types[0]!.kind === 'list') {
      const el = types[0]!.valueType!;
      if (!isDynOr(el, ...NUMERIC)) throw noOverload();
      return isDynOr(el) ? chk.getType('dyn') : el;
    }
    if (!types.every((t) => isDynOr(t, ...NUMERIC))) throw noOverload();
    const first = types[0]!;
    return !isDynOr(first) && types.every((t) => t === first) ? first : chk.getType('dyn');
  };

  const evaluate = (ev: Evaluator, m: ExtremeMacro, scope: Scope): unknown => {
    let values = m.args.map((a) => settled(ev, ev.run(a, scope), a));
    if (values.length === 1 && isList(values[0])) {
      values = toArray(values[0]);
      if (values.length === 0) throw ev.createError('invalid_argument', `math.${impl}(list) argument must not be empty`, m.ast);
    }
    const noOverload = () => ev.createError('no_such_overload', `no such overload: math.${impl}`, m.ast);
    let best = values[0];
    if (numeric(best) === undefined) throw noOverload();
    for (let i = 1; i < values.length; i++) {
      const nb = numeric(values[i]);
      if (nb === undefined) throw noOverload();
      if (compareNumbers(nb, numeric(best)!) === sign) best = values[i];
    }
    return best;
  };

  for (let n = 1; n <= 32; n++) {
    const sig = `math.${name}(${Array.from({ length: n }, () => 'ast').join(', ')}): dyn`;
    env.registerFunction(sig, ({ ast, args, receiver }: MacroInput): ExtremeMacro => {
      if (identOf(receiver) === 'math') {
        if (
          n === 1 &&
          !(isNumericArg(args[0]!) || (args[0]!.op === 'list' && (args[0]!.args as ASTNode[]).length > 0 && (args[0]!.args as ASTNode[]).every(isNumericArg)))
        )
          throw new ParseError(`${desc} invalid single argument value`, args[0]);
        if (n > 1) {
          const bad = args.find((a) => !isNumericArg(a));
          if (bad) throw new ParseError(`${desc} simple literal arguments must be numeric`, bad);
        }
      }
      return { ast, receiver, args, async: false, typeCheck, evaluate };
    });
  }
}

// Comprehensions: existsOne(x, p), sortBy(x, key) and the two-variable forms.

type ComprehensionKind = 'all' | 'exists' | 'existsOne' | 'transformList' | 'transformMap' | 'transformMapEntry' | 'sortBy';

interface ComprehensionMacro {
  ast: ASTNode;
  receiver: ASTNode;
  kind: ComprehensionKind;
  desc: string;
  vars: string[];
  filter: ASTNode | undefined;
  step: ASTNode;
  types: CelType[];
  async: false;
  typeCheck(chk: Checker, m: ComprehensionMacro, scope: Scope): CelType;
  evaluate(ev: Evaluator, m: ComprehensionMacro, scope: Scope): unknown;
}

const COMPARABLE = ['int', 'uint', 'double', 'bool', 'string', 'bytes', 'google.protobuf.Duration', 'google.protobuf.Timestamp'];

function rangeError(range: string): string {
  return `Expression of type '${range}' cannot be range of a comprehension (must be list, map, or dynamic).`;
}

function checkComprehension(chk: Checker, m: ComprehensionMacro, scope: Scope): CelType {
  const rangeType = chk.check(m.receiver, scope);
  const dyn = chk.getType('dyn');
  const plain = (t: CelType | undefined): CelType => (!t || t.kind === 'param' ? dyn : t);
  let keyType: CelType;
  let valueType: CelType;
  if (rangeType.kind === 'list') [keyType, valueType] = [chk.getType('int'), plain(rangeType.valueType)];
  else if (rangeType.kind === 'map') [keyType, valueType] = [plain(rangeType.keyType), plain(rangeType.valueType)];
  else if (rangeType.kind === 'dyn') [keyType, valueType] = [dyn, dyn];
  else throw chk.createError('invalid_comprehension_range', rangeError(chk.formatType(rangeType)), m.receiver);
  if (m.kind === 'sortBy' && rangeType.kind === 'map')
    throw chk.createError('no_matching_overload', `found no matching overload for '${chk.formatType(rangeType)}.sortBy'`, m.ast);
  // One variable: a list's elements or a map's keys; two: index or key, and value.
  m.types = m.vars.length === 2 ? [keyType, valueType] : [rangeType.kind === 'map' ? keyType : valueType];
  let inner = scope;
  m.vars.forEach((v, i) => (inner = inner.forkWithVariable(v, m.types[i]!)));

  if (m.filter) {
    const t = chk.check(m.filter, inner);
    if (!isDynOr(t, 'bool')) throw chk.createError('invalid_condition_type', `${m.desc} filter must return bool, got '${chk.formatType(t)}'`, m.filter);
  }
  const stepType = plain(chk.check(m.step, inner));
  switch (m.kind) {
    case 'all':
    case 'exists':
    case 'existsOne':
      if (!isDynOr(stepType, 'bool'))
        throw chk.createError('invalid_condition_type', `${m.desc} predicate must return bool, got '${chk.formatType(stepType)}'`, m.step);
      return chk.getType('bool');
    case 'transformList':
      return chk.registry.getListType(stepType);
    case 'transformMap':
      return chk.registry.getMapType(keyType, stepType);
    case 'transformMapEntry':
      if (stepType.kind === 'map') return stepType;
      if (stepType.kind === 'dyn') return chk.registry.getMapType(dyn, dyn);
      throw chk.createError('no_matching_overload', `${m.desc} transform must return a map, got '${chk.formatType(stepType)}'`, m.step);
    case 'sortBy':
      if (!isDynOr(stepType, ...COMPARABLE))
        throw chk.createError('no_matching_overload', `found no matching overload for 'sortBy' with a key of type '${chk.formatType(stepType)}'`, m.step);
      return rangeType.kind === 'list' ? rangeType : chk.registry.getListType(dyn);
  }
}

/** A map key read from a plain object (always a string) as the key type the checker saw. */
function typedKey(k: unknown, t: CelType): unknown {
  if (typeof k !== 'string') return k;
  if (t.name === 'int' && /^-?\d+$/.test(k)) return BigInt(k);
  if (t.name === 'uint' && /^\d+$/.test(k)) return new UnsignedInt(BigInt(k));
  if (t.name === 'bool' && (k === 'true' || k === 'false')) return k === 'true';
  return k;
}

function keyString(k: unknown): string {
  return typeof k === 'string' ? k : String(k);
}

function evaluateComprehension(ev: Evaluator, m: ComprehensionMacro, scope: Scope): unknown {
  const range = settled(ev, ev.run(m.receiver, scope), m.receiver);
  let pairs: [unknown, unknown][];
  if (isList(range)) pairs = toArray(range).map((v, i) => [BigInt(i), v]);
  else if (isMap(range) && m.kind !== 'sortBy') pairs = mapEntries(range).map(([k, v]) => [typedKey(k, m.types[0]!), v]);
  else throw ev.createError('invalid_comprehension_range', rangeError(typeName(range)), m.receiver);

  const first = scope.forkWithVariable(m.vars[0]!, m.types[0]!);
  const inner = m.vars.length === 2 ? first.forkWithVariable(m.vars[1]!, m.types[1]!) : first;
  const single = m.vars.length === 1;
  const bind = ([k, v]: [unknown, unknown]): Scope => {
    if (single) return first.setIterValue(isList(range) ? v : k, ev);
    first.setIterValue(k, ev);
    return inner.setIterValue(v, ev);
  };
  const run = (node: ASTNode, s: Scope) => settled(ev, ev.run(node, s), node);
  const boolOf = (v: unknown, node: ASTNode, what: string): boolean => {
    if (typeof v === 'boolean') return v;
    throw ev.createError('invalid_condition_type', `${m.desc} ${what} must return bool, got '${typeName(v)}'`, node);
  };
  const filtered = (s: Scope) => !m.filter || boolOf(run(m.filter, s), m.filter, 'filter');

  switch (m.kind) {
    case 'all':
    case 'exists': {
      // Errors are absorbed by a decisive result, as with && and ||.
      const decisive = m.kind === 'exists';
      let error: unknown;
      for (const p of pairs) {
        const s = bind(p);
        let r = settled(ev, ev.tryEval(m.step, s), m.step);
        if (!(r instanceof Error) && typeof r !== 'boolean')
          r = ev.createError('invalid_condition_type', `${m.desc} predicate must return bool, got '${typeName(r)}'`, m.step);
        if (r === decisive) return decisive;
        if (r instanceof Error) error ??= r;
      }
      if (error) throw error;
      return !decisive;
    }
    case 'existsOne': {
      let n = 0;
      for (const p of pairs) if (boolOf(run(m.step, bind(p)), m.step, 'predicate')) n++;
      return n === 1;
    }
    case 'transformList': {
      const out: unknown[] = [];
      for (const p of pairs) {
        const s = bind(p);
        if (filtered(s)) out.push(run(m.step, s));
      }
      return out;
    }
    case 'transformMap': {
      const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
      for (const p of pairs) {
        const s = bind(p);
        if (filtered(s)) out[keyString(p[0])] = run(m.step, s);
      }
      return out;
    }
    case 'transformMapEntry': {
      const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
      for (const p of pairs) {
        const s = bind(p);
        if (!filtered(s)) continue;
        const entry = run(m.step, s);
        if (!isMap(entry)) throw ev.createError('no_such_overload', `${m.desc} transform must return a map, got '${typeName(entry)}'`, m.step);
        for (const [k, v] of mapEntries(entry)) {
          const ks = keyString(k);
          if (Object.hasOwn(out, ks)) throw ev.createError('insert_failed', `insert failed: key ${ks} already exists`, m.ast);
          out[ks] = v;
        }
      }
      return out;
    }
    case 'sortBy': {
      const list = pairs.map((p) => p[1]);
      const keys = pairs.map((p) => run(m.step, bind(p)));
      try {
        return sortByKeys(list, keys);
      } catch (e) {
        throw ev.createError('invalid_argument', (e as Error).message, m.ast);
      }
    }
  }
}

function registerComprehension(env: Environment, name: string, vars: 1 | 2, kind: ComprehensionKind, withFilter = false): void {
  const argc = vars + 1 + (withFilter ? 1 : 0);
  const sig = `list.${name}(${Array.from({ length: argc }, () => 'ast').join(', ')}): dyn`;
  const desc = `${name}(${vars === 2 ? 'var, var' : 'var'}${withFilter ? ', filter' : ''}, ${kind.startsWith('transform') || kind === 'sortBy' ? 'transform' : 'predicate'})`;
  env.registerFunction(sig, ({ ast, args, receiver }: MacroInput): ComprehensionMacro => {
    const names = args.slice(0, vars).map((a) => {
      const v = identOf(a);
      if (v === undefined) throw new ParseError(kind === 'sortBy' ? 'argument is not an identifier' : 'argument must be a simple name', a);
      if (ACCUMULATORS.has(v)) throw new ParseError('iteration variable overwrites accumulator variable', a);
      return v;
    });
    if (vars === 2 && names[0] === names[1]) throw new ParseError(`duplicate variable name: ${names[0]}`, args[1]);
    if (kind === 'sortBy' && (receiver.op === 'value' || receiver.op === 'map'))
      throw new ParseError('sortBy can only be applied to a list, identifier, comprehension, call or select expression', receiver);
    return {
      ast,
      receiver,
      kind,
      desc,
      vars: names,
      filter: withFilter ? args[vars] : undefined,
      step: args[argc - 1]!,
      types: [],
      async: false,
      typeCheck: checkComprehension,
      evaluate: evaluateComprehension,
    };
  });
}

function registerComprehensions(env: Environment): void {
  registerComprehension(env, 'existsOne', 1, 'existsOne');
  registerComprehension(env, 'all', 2, 'all');
  registerComprehension(env, 'exists', 2, 'exists');
  registerComprehension(env, 'existsOne', 2, 'existsOne');
  registerComprehension(env, 'exists_one', 2, 'existsOne');
  for (const withFilter of [false, true]) {
    registerComprehension(env, 'transformList', 2, 'transformList', withFilter);
    registerComprehension(env, 'transformMap', 2, 'transformMap', withFilter);
    registerComprehension(env, 'transformMapEntry', 2, 'transformMapEntry', withFilter);
  }
  registerComprehension(env, 'sortBy', 1, 'sortBy');
}

// ---------------------------------------------------------------------------------------------
// lists (ext/lists.go; first/last from the optional library)

function sortByKeys(list: unknown[], keys: unknown[]): unknown[] {
  if (list.length !== keys.length)
    throw fail(
      `@sortByAssociatedKeys() expected a list of the same size as the associated keys list, but got ${list.length} and ${keys.length} elements respectively`,
    );
  if (list.length === 0) return list;
  const t = typeName(keys[0]);
  if (!COMPARABLE.includes(t)) throw fail('list elements must be comparable');
  if (keys.length > 1 && keys.some((k) => typeName(k) !== t)) throw fail('list elements must have the same type');
  const order = keys.map((_, i) => i).sort((i, j) => celCompare(keys[i], keys[j]) ?? 0);
  return order.map((i) => list[i]);
}

function flatten(list: unknown[], depth: bigint): unknown[] {
  if (depth < 0n) throw fail('level must be non-negative');
  const out: unknown[] = [];
  for (const v of list) {
    if (isList(v) && depth > 0n) out.push(...flatten(toArray(v), depth - 1n));
    else out.push(v);
  }
  return out;
}

function registerLists(env: Environment): void {
  env.registerFunction('list<A>.slice(int, int): list<A>', (l: unknown, start: bigint, end: bigint) => {
    const list = listArg(l);
    if (start < 0n || end < 0n) throw fail(`cannot slice(${start}, ${end}), negative indexes not supported`);
    if (start > end) throw fail(`cannot slice(${start}, ${end}), start index must be less than or equal to end index`);
    if (BigInt(list.length) < end) throw fail(`cannot slice(${start}, ${end}), list is length ${list.length}`);
    return list.slice(Number(start), Number(end));
  });
  // cel-go declares flatten() on list(list(T)); a dyn value's runtime type is its first element's.
  env.registerFunction('list<list<A>>.flatten(): list<A>', (l: unknown) => flatten(listArg(l), 1n));
  env.registerFunction('list.flatten(): list', (l: unknown) => flatten(listArg(l), 1n));
  env.registerFunction('list.flatten(int): list', (l: unknown, depth: bigint) => flatten(listArg(l), depth));
  // cel-go declares sort() per comparable element type; here a list of others fails at run time.
  env.registerFunction('list<A>.sort(): list<A>', (l: unknown) => {
    const list = listArg(l);
    return sortByKeys(list, list);
  });
  env.registerFunction('list<A>.reverse(): list<A>', (l: unknown) => [...listArg(l)].reverse());
  env.registerFunction('list<A>.distinct(): list<A>', (l: unknown) => {
    const out: unknown[] = [];
    for (const v of listArg(l)) if (!out.some((w) => celEquals(v, w))) out.push(v);
    return out;
  });
  env.registerFunction('list<A>.first(): optional<A>', (l: unknown) => {
    const list = listArg(l);
    return list.length === 0 ? Optional.none() : Optional.of(list[0]);
  });
  env.registerFunction('list<A>.last(): optional<A>', (l: unknown) => {
    const list = listArg(l);
    return list.length === 0 ? Optional.none() : Optional.of(list[list.length - 1]);
  });
  namespace(env, 'lists');
  env.registerFunction('lists.range(int): list<int>', (_ns: unknown, n: bigint) => {
    if (n > BigInt(MAX_LIST)) throw fail('operation cancelled: actual cost limit exceeded');
    const out: bigint[] = [];
    for (let i = 0n; i < n; i++) out.push(i);
    return out;
  });
}

// ---------------------------------------------------------------------------------------------
// base64 (ext/encoders.go)

const B64_STD = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const B64_RAW = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2,3})?$/;

/** Go's base64.StdEncoding.DecodeString, then RawStdEncoding (unpadded) when that fails. */
function base64Decode(s: string): Uint8Array {
  const clean = s.replace(/[\r\n]/g, '');
  if (B64_STD.test(clean) || B64_RAW.test(clean)) return Buffer.from(clean, 'base64');
  const bad = s.search(/[^A-Za-z0-9+/\r\n]/);
  throw fail(`illegal base64 data at input byte ${bad >= 0 ? bad : Math.max(0, s.length - 1)}`);
}

function registerEncoders(env: Environment): void {
  namespace(env, 'base64');
  env.registerFunction('base64.encode(bytes): string', (_ns: unknown, b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('base64'));
  env.registerFunction('base64.decode(string): bytes', (_ns: unknown, s: string) => base64Decode(s));
}

// ---------------------------------------------------------------------------------------------
// strings.quote and string.format (ext/strings.go, ext/formatting.go)

/** A finite double as an exact binary fraction: |x| = m * 2^e. */
function binaryParts(x: number): { m: bigint; e: number } {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  const exp = Number((bits >> 52n) & 0x7ffn);
  const frac = bits & ((1n << 52n) - 1n);
  return exp === 0 ? { m: frac, e: -1074 } : { m: frac | (1n << 52n), e: exp - 1075 };
}

/** |x| * 10^k rounded half to even, exactly. */
function scaledRound(x: number, k: number): bigint {
  const { m, e } = binaryParts(x);
  let num = m;
  let den = 1n;
  if (e >= 0) num <<= BigInt(e);
  else den <<= BigInt(-e);
  if (k >= 0) num *= 10n ** BigInt(k);
  else den *= 10n ** BigInt(-k);
  let q = num / den;
  const r2 = (num % den) * 2n;
  if (r2 > den || (r2 === den && q % 2n === 1n)) q++;
  return q;
}

const negative = (x: number) => x < 0 || Object.is(x, -0);

function groupThousands(int: string): string {
  return int.replace(/\B(?=(\d{3})+$)/g, ',');
}

/** Go's %.<p>f (correctly rounded); with en_US digit grouping when `grouped`. */
function fixed(x: number, p: number, grouped: boolean): string {
  const digits = scaledRound(x, p)
    .toString()
    .padStart(p + 1, '0');
  const int = digits.slice(0, digits.length - p);
  const frac = digits.slice(digits.length - p);
  return `${negative(x) ? '-' : ''}${grouped ? groupThousands(int) : int}${p > 0 ? `.${frac}` : ''}`;
}

const SUPERSCRIPT = '⁰¹²³⁴⁵⁶⁷⁸⁹';

/** golang.org/x/text's en_US %e: 6 fraction digits and a superscript exponent (1.052033 × 10⁰³). */
function scientific(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x < 0 ? '-∞' : '∞';
  let exp = 0;
  let n = 0n;
  if (x !== 0) {
    exp = Math.floor(Math.log10(Math.abs(x)));
    for (;;) {
      n = scaledRound(x, 6 - exp);
      if (n >= 10_000_000n) exp++;
      else if (n < 1_000_000n) exp--;
      else break;
    }
  }
  const d = n === 0n ? '0000000' : n.toString();
  const e = [...String(Math.abs(exp)).padStart(2, '0')].map((c) => SUPERSCRIPT[Number(c)]).join('');
  return `${negative(x) ? '-' : ''}${d[0]}.${d.slice(1)}\u202f×\u202f10${exp < 0 ? '\u207b' : ''}${e}`;
}

/** The shortest digits that read back as |x| (> 0), and the exponent of the first digit. */
function shortest(x: number): { digits: string; exp: number } {
  const [mant, exp] = Math.abs(x).toExponential().split('e') as [string, string];
  return { digits: mant.replace('.', ''), exp: Number(exp) };
}

function shortestFixed(digits: string, exp: number): string {
  if (exp < 0) return `0.${'0'.repeat(-exp - 1)}${digits}`;
  if (exp >= digits.length - 1) return digits + '0'.repeat(exp - digits.length + 1);
  return `${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
}

/** Go's %g (cel-go's string of a double): 2e-09, 1e+06, 123456.7, +Inf. */
function goG(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x < 0 ? '-Inf' : '+Inf';
  const sign = negative(x) ? '-' : '';
  if (x === 0) return `${sign}0`;
  const { digits, exp } = shortest(x);
  if (exp < -4 || exp >= 6) {
    const mant = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    return `${sign}${mant}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  return sign + shortestFixed(digits, exp);
}

/** cel-go's string of a duration: seconds as Go's strconv.FormatFloat(s, 'f', -1), then "s". */
function durationString(d: Duration): string {
  const total = d.seconds * 1_000_000_000n + BigInt(d.nanos);
  const secs = Number(total / 1_000_000_000n) + Number(total % 1_000_000_000n) / 1e9;
  if (secs === 0) return '0s';
  const { digits, exp } = shortest(secs);
  return `${secs < 0 ? '-' : ''}${shortestFixed(digits, exp)}s`;
}

/** RFC 3339 with the fraction's trailing zeros dropped (Go's time.RFC3339Nano). */
function timestampString(t: Date): string {
  return t.toISOString().replace(/\.(\d*?)0*Z$/, (_m, f: string) => (f ? `.${f}Z` : 'Z'));
}

function utf8(b: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(b);
  } catch {
    throw new FormatError('could not convert argument "invalid UTF-8 in bytes, cannot convert to string" to string');
  }
}

class FormatError extends Error {}

const stringClauseError = (t: string) =>
  new FormatError(`string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps, was given ${t}`);

function formatDecimal(v: unknown): string {
  if (typeof v === 'bigint' || v instanceof UnsignedInt) return String(v);
  throw new FormatError(`decimal clause can only be used on integers, was given ${typeName(v)}`);
}

/** %s */
function formatS(v: unknown): string {
  if (isList(v)) return formatList(toArray(v));
  if (v instanceof Uint8Array) return utf8(v);
  if (isMap(v)) return formatMap(v);
  switch (typeof v) {
    case 'bigint':
    case 'string':
    case 'boolean':
      return String(v);
    case 'number':
      return goG(v);
  }
  if (v === null) return 'null';
  if (v instanceof UnsignedInt) return String(v);
  if (v instanceof Date) return timestampString(v);
  if (v instanceof Duration) return durationString(v);
  if (v instanceof TypeValue) return (v as { name: string }).name;
  throw stringClauseError(typeName(v));
}

/** A list element or map value (cel-go's clauseForType), then quoted as a CEL literal. */
function formatNested(v: unknown): string {
  if (typeof v === 'number') {
    if (Number.isNaN(v) || !Number.isFinite(v)) return goQuote(goG(v));
    return fixed(v, 6, false);
  }
  if (typeof v === 'bigint' || v instanceof UnsignedInt) return String(v);
  if (typeof v === 'string') return goQuote(v);
  if (v instanceof Uint8Array) return `b${goQuote(utf8(v))}`;
  if (v instanceof Date) return `timestamp(${goQuote(timestampString(v))})`;
  if (v instanceof Duration) return `duration(${goQuote(durationString(v))})`;
  if (typeof v === 'boolean' || v === null || v instanceof TypeValue || isList(v) || isMap(v)) return formatS(v);
  throw new FormatError(`no formatting function for ${typeName(v)}`);
}

function formatList(list: unknown[]): string {
  return `[${list.map(formatNested).join(', ')}]`;
}

function formatMap(m: CelMap): string {
  const pairs = mapEntries(m).map(([k, v]) => {
    let key: string;
    if (typeof k === 'string') key = goQuote(k);
    else if (typeof k === 'boolean') key = String(k);
    else if (typeof k === 'bigint' || k instanceof UnsignedInt) key = String(k);
    else throw new FormatError(`no formatting function for map key of type ${typeName(k)}`);
    return [key, formatNested(v)] as const;
  });
  pairs.sort((a, b) => compareStrings(a[0], b[0]));
  return `{${pairs.map(([k, v]) => `${k}:${v}`).join(', ')}}`;
}

/** The double a %f or %e clause formats: a double, or the strings NaN, Infinity, -Infinity. */
function floatArg(v: unknown, clause: string): number {
  if (typeof v === 'number') return v;
  if (v === 'NaN') return NaN;
  if (v === 'Infinity') return Infinity;
  if (v === '-Infinity') return -Infinity;
  throw new FormatError(`${clause} clause can only be used on doubles, was given ${typeName(v)}`);
}

function integerIn(v: unknown, radix: number): string | undefined {
  if (typeof v === 'bigint') return v < 0n ? `-${(-v).toString(radix)}` : v.toString(radix);
  if (v instanceof UnsignedInt) return v.valueOf().toString(radix);
  return undefined;
}

const CLAUSES: Record<string, (v: unknown, precision: number | undefined) => string> = {
  s: formatS,
  d: formatDecimal,
  f: (v, p) => {
    const x = floatArg(v, 'fixed-point');
    if (Number.isNaN(x)) return 'NaN';
    if (!Number.isFinite(x)) return x < 0 ? '-∞' : '∞';
    return fixed(x, p ?? 6, true);
  },
  // cel-go formats %e with "%<precision>e", a width: the precision is always 6.
  e: (v) => scientific(floatArg(v, 'scientific')),
  b: (v) => {
    if (typeof v === 'boolean') return v ? '1' : '0';
    const s = integerIn(v, 2);
    if (s === undefined) throw new FormatError(`only integers and bools can be formatted as binary, was given ${typeName(v)}`);
    return s;
  },
  o: (v) => {
    const s = integerIn(v, 8);
    if (s === undefined) throw new FormatError(`octal clause can only be used on integers, was given ${typeName(v)}`);
    return s;
  },
  x: (v) => {
    let s = integerIn(v, 16);
    if (typeof v === 'string') s = Buffer.from(v, 'utf8').toString('hex');
    else if (v instanceof Uint8Array) s = Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex');
    if (s === undefined) throw new FormatError(`only integers, byte buffers, and strings can be formatted as hex, was given ${typeName(v)}`);
    return s;
  },
};

/** cel-go's string.format (strings version < 4, en_US). */
function format(spec: string, args: unknown[]): string {
  let out = '';
  let argIndex = 0;
  let i = 0;
  while (i < spec.length) {
    const c = spec[i]!;
    if (c !== '%') {
      out += c;
      i++;
      continue;
    }
    if (spec[i + 1] === '%') {
      out += '%';
      i += 2;
      continue;
    }
    if (argIndex >= args.length) throw fail(`index ${argIndex} out of range`);
    if (i + 1 >= spec.length) throw fail('unexpected end of string');
    let j = i + 1;
    let precision: number | undefined;
    if (spec[j] === '.') {
      let digits = '';
      for (j++; ; j++) {
        if (j >= spec.length) throw fail('could not parse formatting clause: error while parsing precision: could not find end of precision specifier');
        if (!/[0-9]/.test(spec[j]!)) break;
        digits += spec[j];
      }
      if (digits === '')
        throw fail(
          'could not parse formatting clause: error while parsing precision: error while converting precision to integer: strconv.Atoi: parsing "": invalid syntax',
        );
      precision = Number(digits);
      if (precision > MAX_PRECISION)
        throw fail(`could not parse formatting clause: error while parsing precision: precision ${digits} exceeds maximum allowed precision ${MAX_PRECISION}`);
    }
    const verb = String.fromCodePoint(spec.codePointAt(j)!);
    const clause = verb === 'X' ? CLAUSES.x : CLAUSES[verb];
    if (!clause) throw fail(`could not parse formatting clause: unrecognized formatting clause "${verb}"`);
    try {
      const s = clause(args[argIndex], precision);
      out += verb === 'X' ? s.toUpperCase() : s;
    } catch (e) {
      if (e instanceof FormatError) throw fail(`error during formatting: ${e.message}`);
      throw e;
    }
    i = j + verb.length;
    argIndex++;
  }
  return out;
}

function registerStrings(env: Environment): void {
  namespace(env, 'strings');
  env.registerFunction('strings.quote(string): string', (_ns: unknown, s: string) => celQuote(s));
  env.registerFunction('string.format(list): string', (s: string, args: unknown) => format(s, listArg(args)));
  // CEL's standard conversions the library lacks: a timestamp as RFC 3339, a duration in seconds.
  env.registerFunction('string(google.protobuf.Timestamp): string', (t: Date) => timestampString(t));
  env.registerFunction('string(google.protobuf.Duration): string', (d: Duration) => durationString(d));
}

// ---------------------------------------------------------------------------------------------

/** Registers cel-go's extension libraries the library lacks (see the file's comment). */
export function registerCelExtensions(env: Environment): void {
  registerSets(env);
  registerMath(env);
  registerLists(env);
  registerEncoders(env);
  registerStrings(env);
  registerComprehensions(env);
}
