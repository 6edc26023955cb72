/**
 * CEL validation rules of a CustomResourceDefinition (`x-kubernetes-validations`), after kube's
 * apiextensions-apiserver schema/cel: each rule is compiled when the definition is written
 * (errors are the definition's field errors) and evaluated on every create and update of its
 * objects, with `self` bound to the value of the schema node that carries the rule and, in
 * transition rules, `oldSelf` to the node's previous value.
 *
 * Values reach CEL typed by the schema: integers as `int`, numbers as `double`, objects with
 * properties and maps as maps (properties under kube's escaped names: `foo-bar` as
 * `foo__dash__bar`, `namespace` as `__namespace__`), arrays as lists, int-or-string and
 * preserved unknown fields as `dyn`. At the root, `metadata` shows `name` and `generateName`
 * only. Field access is checked against the schema when the definition is written.
 *
 * Transition rules run on updates where the node has a correlated old value (object properties,
 * map keys, items of `x-kubernetes-list-type: map` lists by key), or with `oldSelf` optional when
 * the rule sets `optionalOldSelf`. An error of a rule without `oldSelf` on a value the update did
 * not change is returned as a warning instead (ratcheting). Every validation has a budget of list
 * element reads, so no rule can keep a request busy.
 */
import { isDeepStrictEqual } from 'node:util';
import { Optional, type ASTNode, type Environment } from '@marcbachmann/cel-js';
import { BASE64, GoValue, validDate, validDateTime, type FieldError, type JSONSchemaProps } from '@app/apimachinery';
import { Budget, BudgetExceeded, budgetedList, celBase, celCompileError, celErrorText, celPosition, parseCel } from '../../../cel/cel.environment.js';

type Obj = Record<string, unknown>;

/** A rule as written in `x-kubernetes-validations`. */
export interface CelRule {
  rule?: unknown;
  message?: unknown;
  messageExpression?: unknown;
  reason?: unknown;
  fieldPath?: unknown;
  optionalOldSelf?: unknown;
}

/** The reasons a rule may give its errors. */
export const RULE_REASONS = ['FieldValueDuplicate', 'FieldValueForbidden', 'FieldValueInvalid', 'FieldValueRequired'] as const;

/** List element reads one validation of an object may make over all its rules. */
export const CEL_ELEMENT_BUDGET = 1_000_000;

const RESERVED = new Set([
  'true',
  'false',
  'null',
  'in',
  'as',
  'break',
  'const',
  'continue',
  'else',
  'for',
  'function',
  'if',
  'import',
  'let',
  'loop',
  'package',
  'namespace',
  'return',
  'var',
  'void',
  'while',
]);

/**
 * A property name as a CEL identifier (kube's cel.Escape): `__` -> `__underscores__`, `.` ->
 * `__dot__`, `-` -> `__dash__`, `/` -> `__slash__`, reserved words -> `__word__`. Undefined for a
 * name CEL cannot reach (a leading digit, other characters).
 */
export function escapeCelName(name: string): string | undefined {
  if (name === '' || /^[0-9]/.test(name)) return undefined;
  if (RESERVED.has(name)) return `__${name}__`;
  if (!/^[a-zA-Z0-9_./-]+$/.test(name)) return undefined;
  return name.replace(/__|[./-]/g, (s) => (s === '__' ? '__underscores__' : s === '.' ? '__dot__' : s === '-' ? '__dash__' : '__slash__'));
}

const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);
const schemaProps = (s: JSONSchemaProps | undefined): Record<string, JSONSchemaProps> | undefined =>
  s?.properties && typeof s.properties === 'object' ? s.properties : undefined;
const additional = (s: JSONSchemaProps | undefined): JSONSchemaProps | undefined =>
  s && isObj(s.additionalProperties) ? (s.additionalProperties as JSONSchemaProps) : undefined;

/** The CEL type of a schema node, as the library spells it. */
export function celTypeOf(s: JSONSchemaProps | undefined): string {
  if (!s || s['x-kubernetes-int-or-string'] === true) return 'dyn';
  switch (s.type) {
    case 'string':
      return stringCelType(s.format);
    case 'integer':
      return 'int';
    case 'number':
      return 'double';
    case 'boolean':
      return 'bool';
    case 'array':
      return `list<${celTypeOf(s.items)}>`;
    case 'object': {
      const ap = additional(s);
      return ap && !schemaProps(s) ? `map<string, ${celTypeOf(ap)}>` : 'map<string, dyn>';
    }
    default:
      return 'dyn';
  }
}

/** The CEL type of a string of a `format`: kube shows bytes, durations and times as such. */
function stringCelType(format: unknown): string {
  switch (format) {
    case 'byte':
      return 'bytes';
    case 'duration':
      return 'google.protobuf.Duration';
    case 'date':
    case 'date-time':
      return 'google.protobuf.Timestamp';
    default:
      return 'string';
  }
}

/** CEL's own duration(), parsed once: Go's duration syntax, as kube reads the format. */
let parseDuration: ((ctx: { s: string }) => unknown) | undefined;

/**
 * A string of a `format` as the rules see it: `byte` as the bytes it encodes, `date` and
 * `date-time` as timestamps, `duration` (Go's syntax, `1h30m`) as a duration. A value that does
 * not parse stays a string, so a rule that uses it fails with a type error instead of seeing a
 * wrong value (the schema's own format check reports it).
 */
function formattedToCel(v: string, format: unknown): unknown {
  switch (format) {
    case 'byte':
      return BASE64.test(v) ? new Uint8Array(Buffer.from(v, 'base64')) : v;
    case 'date':
      return validDate(v) ? new Date(`${v}T00:00:00Z`) : v;
    case 'date-time': {
      if (!validDateTime(v)) return v;
      const d = new Date(v.toUpperCase());
      return Number.isNaN(d.getTime()) ? v : d;
    }
    case 'duration':
      try {
        parseDuration ??= celBase().clone().registerVariable('s', 'string').parse('duration(s)');
        return parseDuration({ s: v });
      } catch {
        return v;
      }
    default:
      return v;
  }
}

/** A JSON value as CEL sees it under its schema (undefined schema: untyped). */
function toCel(v: unknown, s: JSONSchemaProps | undefined, budget: Budget): unknown {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string') return s?.type === 'string' && s.format !== undefined ? formattedToCel(v, s.format) : v;
  if (typeof v === 'number') return Number.isInteger(v) && s?.type !== 'number' ? BigInt(v) : v;
  if (Array.isArray(v)) {
    const item = s?.items;
    return budgetedList(
      v.map((e) => toCel(e, item, budget)),
      budget,
    );
  }
  if (isObj(v)) {
    const out: Obj = Object.create(null) as Obj;
    const props = schemaProps(s);
    if (props) {
      const preserve = s?.['x-kubernetes-preserve-unknown-fields'] === true;
      for (const [k, val] of Object.entries(v)) {
        const ps = props[k];
        if (!ps && !preserve) continue;
        const name = escapeCelName(k);
        if (name !== undefined) out[name] = toCel(val, ps, budget);
      }
      return out;
    }
    const ap = additional(s);
    for (const [k, val] of Object.entries(v)) out[k] = toCel(val, ap, budget);
    return out;
  }
  return v;
}

/** The root's value: `metadata` narrowed to name and generateName, as kube shows it to rules. */
function rootToCel(v: unknown, s: JSONSchemaProps, budget: Budget): unknown {
  const out = toCel(v, s, budget) as Obj;
  if (!isObj(v)) return out;
  if (typeof v.apiVersion === 'string') out.apiVersion = v.apiVersion;
  if (typeof v.kind === 'string') out.kind = v.kind;
  const meta = isObj(v.metadata) ? v.metadata : undefined;
  if (meta) {
    const m: Obj = Object.create(null) as Obj;
    if (typeof meta.name === 'string') m.name = meta.name;
    if (typeof meta.generateName === 'string') m.generateName = meta.generateName;
    out.metadata = m;
  } else delete out.metadata;
  return out;
}

/** The schema rules see at the root: apiVersion, kind and metadata (name, generateName) beside the user's. */
function rootSchema(s: JSONSchemaProps): JSONSchemaProps {
  return {
    ...s,
    properties: {
      ...(s.properties ?? {}),
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { type: 'object', properties: { name: { type: 'string' }, generateName: { type: 'string' } } },
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Compilation

interface Compiled {
  rule: CelRule;
  text: string;
  program: (ctx: Obj) => unknown;
  message?: (ctx: Obj) => unknown;
  usesOldSelf: boolean;
  optionalOldSelf: boolean;
  fieldPath: string;
  reason: string;
}

/** A schema node with rules, or with descendants that have some. */
interface Node {
  schema: JSONSchemaProps;
  type: string;
  root: boolean;
  rules: Compiled[];
  properties?: Map<string, Node>;
  items?: Node;
  additional?: Node;
  /** Whether an old value can be found for this node on update (transition rules and ratcheting). */
  correlatable: boolean;
}

function walkAst(node: unknown, visit: (n: ASTNode) => void): void {
  if (Array.isArray(node)) {
    for (const n of node) walkAst(n, visit);
    return;
  }
  if (!node || typeof node !== 'object' || typeof (node as { op?: unknown }).op !== 'string') return;
  const n = node as ASTNode;
  visit(n);
  walkAst(n.args, visit);
}

/** The schema a field selection from `self` or `oldSelf` reaches; null when not known statically. */
function selectedSchema(n: ASTNode, s: JSONSchemaProps, undefinedAt?: (name: string, pos: number) => void): JSONSchemaProps | null {
  if (n.op === 'id') return n.args === 'self' || n.args === 'oldSelf' ? s : null;
  if (n.op !== '.') return null;
  const [target, name] = n.args as [ASTNode, string];
  const parent = selectedSchema(target, s, undefinedAt);
  if (!parent) return null;
  const props = schemaProps(parent);
  if (props) {
    for (const [k, v] of Object.entries(props)) if (escapeCelName(k) === name) return v;
    if (parent['x-kubernetes-preserve-unknown-fields'] !== true) undefinedAt?.(name, n.pos);
    return null;
  }
  return additional(parent) ?? null;
}

/**
 * Field selections from `self` and `oldSelf` checked against the schema: kube's type checker
 * refuses a field the schema does not declare (an object that keeps unknown fields aside).
 */
function undefinedField(ast: ASTNode, s: JSONSchemaProps): { name: string; pos: number } | undefined {
  let found: { name: string; pos: number } | undefined;
  walkAst(ast, (n) => {
    if (n.op === '.' && !found)
      selectedSchema(n, s, (name, pos) => {
        found ??= { name, pos };
      });
  });
  return found;
}

/** The CEL type of an expression that is a field selection from `self` (dyn otherwise). */
function selectionType(ast: ASTNode, s: JSONSchemaProps): string {
  const reached = ast.op === '.' ? selectedSchema(ast, s) : null;
  return reached ? celTypeOf(reached) : 'dyn';
}

function usesOldSelf(ast: ASTNode): boolean {
  let uses = false;
  walkAst(ast, (n) => {
    if (n.op === 'id' && n.args === 'oldSelf') uses = true;
  });
  return uses;
}

/** The Go value kube prints for a rule in a field error (apiextensions.ValidationRule). */
function goRule(r: CelRule): GoValue {
  const str = (v: unknown) => JSON.stringify(typeof v === 'string' ? v : '');
  const reason =
    typeof r.reason === 'string' ? `(*apiextensions.FieldValueErrorReason)(${JSON.stringify(r.reason)})` : '(*apiextensions.FieldValueErrorReason)(nil)';
  const optional = typeof r.optionalOldSelf === 'boolean' ? `(*bool)(${r.optionalOldSelf})` : '(*bool)(nil)';
  return new GoValue(
    `apiextensions.ValidationRule{Rule:${str(r.rule)}, Message:${str(r.message)}, MessageExpression:${str(r.messageExpression)}, Reason:${reason}, FieldPath:${str(r.fieldPath)}, OptionalOldSelf:${optional}}`,
  );
}

/**
 * A rule's fieldPath (`.a.b`, `['a.b']`, `.map['key']`) as the path it names below the node,
 * checked against the schema (kube's ValidFieldPath); the normalized form, or an error.
 */
export function ruleFieldPath(path: string, s: JSONSchemaProps): { path: string } | { error: string } {
  let i = 0;
  let out = '';
  let cur: JSONSchemaProps | undefined = s;
  const step = (name: string): string | undefined => {
    const props = schemaProps(cur);
    if (props) {
      if (!props[name]) return 'does not refer to a valid field';
      out += out === '' ? name : `.${name}`;
      cur = props[name];
      return undefined;
    }
    const ap = additional(cur);
    if (ap) {
      out += `[${name}]`;
      cur = ap;
      return undefined;
    }
    return 'does not refer to a valid field';
  };
  while (i < path.length) {
    const c = path[i];
    if (c === '.') {
      let j = i + 1;
      while (j < path.length && path[j] !== '.' && path[j] !== '[') j++;
      const name = path.slice(i + 1, j);
      if (!name) return { error: 'unexpected end of JSON path' };
      const e = step(name);
      if (e) return { error: e };
      i = j;
    } else if (c === '[') {
      if (path[i + 1] !== "'") return { error: `expected single quoted string but got ${path.slice(i + 1).split(']')[0]}` };
      let j = i + 2;
      let name = '';
      while (j < path.length && path[j] !== "'") {
        if (path[j] === '\\' && j + 1 < path.length) {
          name += path[j + 1];
          j += 2;
        } else name += path[j++];
      }
      if (path[j] !== "'" || path[j + 1] !== ']') return { error: 'unexpected end of JSON path' };
      const e = step(name);
      if (e) return { error: e };
      i = j + 2;
    } else return { error: `expected [ or . but got: ${path.slice(i)}` };
  }
  return { path: out };
}

/** A compiled definition version's rules: evaluate with `validate`. */
export class CelValidator {
  private constructor(private readonly root: Node) {}

  /**
   * Compiles every rule of a version's schema. `path` is the schema's field path in the
   * definition (for errors); a schema without rules gives no validator.
   */
  static compile(schema: JSONSchemaProps | undefined, path: string): { validator?: CelValidator; errors: FieldError[] } {
    const errors: FieldError[] = [];
    if (!schema) return { errors };
    const root = compileNode(rootSchema(schema), schema, path, true, true, errors);
    return { ...(root ? { validator: new CelValidator(root) } : {}), errors };
  }

  /**
   * The errors of an object (and, on update, its previous version) against the rules; errors a
   * rule without oldSelf finds on a value the update left unchanged go to `warnings`.
   */
  validate(obj: unknown, old: unknown, warnings: string[], budget = CEL_ELEMENT_BUDGET): FieldError[] {
    const errs: FieldError[] = [];
    try {
      validateNode(this.root, '', obj, old, false, { budget: new Budget(budget), errs, warnings });
    } catch (e) {
      if (!(e instanceof BudgetExceeded)) throw e;
      errs.push({ type: 'FieldValueInvalid', field: '<nil>', value: 'object', detail: e.message });
    }
    return errs;
  }
}

/** Whether a schema tree has CEL rules (x-kubernetes-validations) anywhere. */
export function hasCelRules(s: unknown): boolean {
  if (!s || typeof s !== 'object') return false;
  if (Array.isArray(s)) return s.some(hasCelRules);
  const n = s as Obj;
  if (Array.isArray(n['x-kubernetes-validations']) && n['x-kubernetes-validations'].length > 0) return true;
  return Object.entries(n).some(([k, v]) => k !== 'default' && k !== 'enum' && k !== 'example' && hasCelRules(v));
}

function compileNode(
  typed: JSONSchemaProps,
  given: JSONSchemaProps,
  path: string,
  root: boolean,
  correlatable: boolean,
  errors: FieldError[],
): Node | undefined {
  if (!hasCelRules(given)) return undefined;
  const type = root ? 'map<string, dyn>' : celTypeOf(typed);
  const rules = compileRules(typed, given, type, path, correlatable, errors);
  const node: Node = { schema: typed, type, root, rules, correlatable };
  const props = schemaProps(given);
  if (props) {
    const typedProps = schemaProps(typed) ?? {};
    for (const [k, v] of Object.entries(props)) {
      if (root && (k === 'metadata' || k === 'apiVersion' || k === 'kind')) continue;
      const child = compileNode(typedProps[k] ?? v, v, `${path}.properties[${k}]`, false, correlatable && typed['x-kubernetes-map-type'] !== 'atomic', errors);
      if (child) (node.properties ??= new Map()).set(k, child);
    }
  }
  if (given.items && typeof given.items === 'object' && !Array.isArray(given.items)) {
    const listCorrelatable = correlatable && typed['x-kubernetes-list-type'] === 'map';
    const child = compileNode(typed.items ?? given.items, given.items, `${path}.items`, false, listCorrelatable, errors);
    if (child) node.items = child;
  }
  const ap = additional(given);
  if (ap) {
    const child = compileNode(
      additional(typed) ?? ap,
      ap,
      `${path}.additionalProperties`,
      false,
      correlatable && typed['x-kubernetes-map-type'] !== 'atomic',
      errors,
    );
    if (child) node.additional = child;
  }
  return node.rules.length || node.properties || node.items || node.additional ? node : undefined;
}

function compileRules(typed: JSONSchemaProps, given: JSONSchemaProps, type: string, path: string, correlatable: boolean, errors: FieldError[]): Compiled[] {
  const raw = given['x-kubernetes-validations'];
  if (!Array.isArray(raw) || raw.length === 0) return [];
  const out: Compiled[] = [];
  const base = celBase();
  let env: Environment | undefined;
  let optEnv: Environment | undefined;
  const envFor = (optional: boolean): Environment => {
    if (optional) return (optEnv ??= base.clone().registerVariable('self', type).registerVariable('oldSelf', `optional<${type}>`));
    return (env ??= base.clone().registerVariable('self', type).registerVariable('oldSelf', type));
  };
  raw.forEach((r: unknown, i) => {
    const at = `${path}.x-kubernetes-validations[${i}]`;
    const rule = (r && typeof r === 'object' ? r : {}) as CelRule;
    const text = typeof rule.rule === 'string' ? rule.rule : '';
    if (text.trim() === '') {
      errors.push({ type: 'FieldValueRequired', field: `${at}.rule`, detail: 'rule is not specified' });
      return;
    }
    const reason = typeof rule.reason === 'string' ? rule.reason : 'FieldValueInvalid';
    if (rule.reason !== undefined && !(RULE_REASONS as readonly string[]).includes(reason)) {
      errors.push({
        type: 'FieldValueNotSupported',
        field: `${at}.reason`,
        value: rule.reason,
        detail: `supported values: ${RULE_REASONS.map((x) => JSON.stringify(x)).join(', ')}`,
      });
      return;
    }
    let fieldPath = '';
    if (typeof rule.fieldPath === 'string' && rule.fieldPath !== '') {
      const fp = ruleFieldPath(rule.fieldPath, typed);
      if ('error' in fp) {
        errors.push({ type: 'FieldValueInvalid', field: `${at}.fieldPath`, value: rule.fieldPath, detail: `fieldPath must be a valid path: ${fp.error}` });
        return;
      }
      fieldPath = fp.path;
    }
    const optional = rule.optionalOldSelf === true;
    const e = envFor(optional);
    let program: ReturnType<Environment['parse']>;
    try {
      program = parseCel(e, text);
    } catch (err) {
      errors.push({
        type: 'FieldValueInvalid',
        field: `${at}.rule`,
        value: goRule(rule),
        detail: `compilation failed: ${celCompileError(text, err)}`,
      });
      return;
    }
    const missing = undefinedField(program.ast, typed);
    if (missing) {
      // cel-go places a selection at its dot.
      const dot = text.lastIndexOf('.', missing.pos);
      errors.push({
        type: 'FieldValueInvalid',
        field: `${at}.rule`,
        value: goRule(rule),
        detail: `compilation failed: ERROR: ${celPosition(text, dot >= 0 ? dot : missing.pos)}: undefined field '${missing.name}'`,
      });
      return;
    }
    const checked = program.check();
    if (!checked.valid) {
      errors.push({
        type: 'FieldValueInvalid',
        field: `${at}.rule`,
        value: goRule(rule),
        detail: `compilation failed: ${celCompileError(text, checked.error)}`,
      });
      return;
    }
    const resultType = checked.type === 'dyn' ? selectionType(program.ast, typed) : checked.type;
    if (resultType !== 'bool' && resultType !== 'dyn') {
      errors.push({
        type: 'FieldValueInvalid',
        field: `${at}.rule`,
        value: goRule(rule),
        detail: 'compilation failed: cel expression must evaluate to a bool',
      });
      return;
    }
    const old = usesOldSelf(program.ast);
    if (old && !correlatable) {
      errors.push({
        type: 'FieldValueInvalid',
        field: `${at}.rule`,
        value: text,
        detail: `oldSelf cannot be used on the uncorrelatable portion of the schema within ${path}`,
      });
      return;
    }
    let message: Compiled['message'];
    if (typeof rule.messageExpression === 'string' && rule.messageExpression.trim() !== '') {
      const mtext = rule.messageExpression;
      try {
        const m = parseCel(envFor(false), mtext);
        const mc = m.check();
        if (!mc.valid) throw mc.error;
        const t = mc.type === 'dyn' ? selectionType(m.ast, typed) : mc.type;
        if (t !== 'string' && t !== 'dyn') throw new Error('must evaluate to a string');
        message = m;
      } catch (err) {
        errors.push({
          type: 'FieldValueInvalid',
          field: `${at}.messageExpression`,
          value: mtext,
          detail: `messageExpression compilation failed: ${celErrorText(err)}`,
        });
        return;
      }
    }
    out.push({ rule, text, program, ...(message ? { message } : {}), usesOldSelf: old, optionalOldSelf: optional, fieldPath, reason });
  });
  return out;
}

// ---------------------------------------------------------------------------------------------
// Evaluation

interface Run {
  budget: Budget;
  errs: FieldError[];
  warnings: string[];
}

const childPath = (path: string, name: string) => (path === '' ? name : `${path}.${name}`);

/** The message of a failed rule (kube's ruleMessageOrDefault / ruleErrorString). */
function ruleMessage(c: Compiled): string {
  const m = typeof c.rule.message === 'string' ? c.rule.message.trim() : '';
  return m || `failed rule: ${c.text.trim()}`;
}
const ruleName = (c: Compiled): string => (typeof c.rule.message === 'string' && c.rule.message.trim() ? c.rule.message.trim() : c.text.trim());

function schemaTypeName(s: JSONSchemaProps): string {
  return typeof s.type === 'string' ? s.type : '';
}

function evaluateRules(node: Node, path: string, obj: unknown, old: unknown, ratchet: boolean, run: Run): void {
  if (!node.rules.length) return;
  let self: unknown;
  let oldSelf: unknown;
  const selfOf = () => (self ??= node.root ? rootToCel(obj, node.schema, run.budget) : toCel(obj, node.schema, run.budget));
  const oldOf = () => (oldSelf ??= node.root ? rootToCel(old, node.schema, run.budget) : toCel(old, node.schema, run.budget));
  const typeName = schemaTypeName(node.schema);
  for (const c of node.rules) {
    if (c.usesOldSelf && old === undefined && !c.optionalOldSelf) continue;
    const ctx: Obj = { self: selfOf() };
    if (c.usesOldSelf || c.optionalOldSelf) ctx.oldSelf = c.optionalOldSelf ? (old === undefined ? Optional.none() : Optional.of(oldOf())) : oldOf();
    let result: unknown;
    try {
      result = c.program(ctx);
    } catch (e) {
      if (e instanceof BudgetExceeded) throw e;
      const text = celErrorText(e);
      const detail = /no (such|matching) overload/.test(text)
        ? `'${text}': call arguments did not match a supported operator, function or macro signature for rule: ${ruleName(c)}`
        : `${text} evaluating rule: ${ruleName(c)}`;
      run.errs.push({ type: 'FieldValueInvalid', field: path || '<nil>', value: typeName, detail });
      continue;
    }
    if (result === true) continue;
    let detail = ruleMessage(c);
    if (c.message) {
      try {
        const m = c.message(ctx);
        const t = typeof m === 'string' ? m.trim() : '';
        if (t && !t.includes('\n') && t.length <= 5120) detail = t;
      } catch (e) {
        if (e instanceof BudgetExceeded) throw e;
      }
    }
    const field = c.fieldPath ? (c.fieldPath.startsWith('[') ? `${path}${c.fieldPath}` : childPath(path, c.fieldPath)) : path || '<nil>';
    const err: FieldError =
      c.reason === 'FieldValueForbidden'
        ? { type: 'FieldValueForbidden', field, detail }
        : c.reason === 'FieldValueRequired'
          ? { type: 'FieldValueRequired', field, detail }
          : c.reason === 'FieldValueDuplicate'
            ? { type: 'FieldValueDuplicate', field, value: typeName, detail: '' }
            : { type: 'FieldValueInvalid', field, value: typeName, detail };
    if (!c.usesOldSelf && ratchet) run.warnings.push(fieldErrorText(err));
    else run.errs.push(err);
  }
}

function fieldErrorText(e: FieldError): string {
  const label = { FieldValueForbidden: 'Forbidden', FieldValueRequired: 'Required value', FieldValueDuplicate: 'Duplicate value' } as Record<string, string>;
  if (label[e.type])
    return `${e.field}: ${label[e.type]}${e.type === 'FieldValueDuplicate' ? `: ${JSON.stringify(e.value)}` : ''}${e.detail ? `: ${e.detail}` : ''}`;
  return `${e.field}: Invalid value: ${JSON.stringify(e.value)}: ${e.detail}`;
}

/**
 * The old items of a map-type list by their keys (the first of each, as a search from the
 * start finds), so each new item finds its old one in one lookup: a list of n items costs n,
 * not n x n. The keys are scalars (the definition's schema is checked for it).
 */
function oldListItems(s: JSONSchemaProps, old: unknown[]): ((item: unknown) => unknown) | undefined {
  const keys = s['x-kubernetes-list-map-keys'];
  if (!Array.isArray(keys) || !keys.length) return undefined;
  const keyOf = (o: Record<string, unknown>): string => JSON.stringify(keys.map((k) => (o[k] === undefined ? { absent: true } : o[k])));
  const byKey = new Map<string, unknown>();
  for (const o of old) {
    if (!isObj(o)) continue;
    const k = keyOf(o);
    if (!byKey.has(k)) byKey.set(k, o);
  }
  return (item) => (isObj(item) ? byKey.get(keyOf(item)) : undefined);
}

function validateNode(node: Node, path: string, obj: unknown, old: unknown, parentRatchet: boolean, run: Run): void {
  if (obj === null || obj === undefined) return;
  const oldValue = old === null ? undefined : old;
  // Ratcheting: a correlatable node compares with its own old value; one that is not inherits
  // its nearest correlatable ancestor's answer.
  const ratchet = node.correlatable ? oldValue !== undefined && isDeepStrictEqual(obj, oldValue) : parentRatchet;
  evaluateRules(node, path, obj, oldValue, ratchet, run);
  if (Array.isArray(obj)) {
    if (!node.items) return;
    const oldOf = Array.isArray(oldValue) && node.schema['x-kubernetes-list-type'] === 'map' ? oldListItems(node.schema, oldValue) : undefined;
    obj.forEach((item, i) => {
      run.budget.spend();
      validateNode(node.items!, `${path}[${i}]`, item, oldOf?.(item), ratchet, run);
    });
    return;
  }
  if (!isObj(obj)) return;
  const oldObj = isObj(oldValue) ? oldValue : undefined;
  if (node.properties)
    for (const [k, child] of node.properties) {
      if (obj[k] === undefined) continue;
      validateNode(child, childPath(path, k), obj[k], child.correlatable ? oldObj?.[k] : undefined, ratchet, run);
    }
  if (node.additional)
    for (const [k, v] of Object.entries(obj)) {
      run.budget.spend();
      validateNode(node.additional, `${path}[${k}]`, v, node.additional.correlatable ? oldObj?.[k] : undefined, ratchet, run);
    }
}
