/**
 * ValidatingAdmissionPolicy and its binding as the admission plugin uses them (kube's
 * plugin/policy/validating): stored objects compiled once into match specs and CEL programs, and
 * the pure evaluation of one policy for one request. The expressions see `object`, `oldObject`,
 * `request`, `params`, `namespaceObject`, `variables` and `authorizer` (cel.authz.ts). An
 * authorizer that answers asynchronously makes an evaluation a promise, so the evaluation of a
 * policy is asynchronous and its variables are evaluated in order before the other expressions
 * (an error is kept and raised where the variable is used, as kube's lazy evaluation does).
 */
import type { Environment } from '@marcbachmann/cel-js';
import { labelSelectorFromStruct, type LabelSelector, type LabelSelectorStruct } from '@app/apimachinery';
import { registerCelAuthz, type CelAuthorizer } from '../../cel/cel.authz.js';
import { Budget, BudgetExceeded, celBase, celCompileError, celErrorText, jsonToCel, parseCel } from '../../cel/cel.environment.js';
import type { WebhookRule } from '../webhook/webhook.matcher.js';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.map(obj) : []);

/** List element reads the expressions of one policy evaluation may make. */
export const POLICY_BUDGET = 1_000_000;

let env: Environment | undefined;

/** The environment of policy expressions. */
function policyEnv(): Environment {
  return (env ??= registerCelAuthz(celBase().clone())
    .registerVariable('object', 'dyn')
    .registerVariable('oldObject', 'dyn')
    .registerVariable('request', 'map<string, dyn>')
    .registerVariable('params', 'dyn')
    .registerVariable('namespaceObject', 'dyn')
    .registerVariable('variables', 'map<string, dyn>'));
}

/** A compiled expression: its program, or why it does not compile. */
export interface Compiled {
  expression: string;
  program?: (ctx: Obj) => unknown;
  error?: string;
}

/**
 * Compiles `expression`, which must give `want` ('bool', 'string', or 'any'); the error is the
 * detail kube gives (`compilation failed: ERROR: <input>:1:N: ...`).
 */
export function compilePolicyExpression(expression: string, want: 'bool' | 'string' | 'any'): Compiled {
  try {
    const program = parseCel(policyEnv(), expression);
    const checked = program.check();
    if (!checked.valid) return { expression, error: `compilation failed: ${celCompileError(expression, checked.error)}` };
    if (want !== 'any' && checked.type !== want && checked.type !== 'dyn') return { expression, error: `must evaluate to ${want}` };
    return { expression, program };
  } catch (e) {
    return { expression, error: `compilation failed: ${celCompileError(expression, e)}` };
  }
}

/** A rule of match constraints: the webhook rule plus resource names. */
export interface PolicyRule extends WebhookRule {
  resourceNames: string[];
}

/** matchConstraints or a binding's matchResources. */
export interface MatchSpec {
  rules: PolicyRule[];
  excludes: PolicyRule[];
  namespaceSelector: LabelSelector;
  namespaceSelectorEmpty: boolean;
  objectSelector: LabelSelector;
  matchPolicy: 'Exact' | 'Equivalent';
}

function selector(v: unknown): { sel: LabelSelector; empty: boolean } {
  try {
    const sel = labelSelectorFromStruct(obj(v) as LabelSelectorStruct);
    return { sel, empty: sel.isEmpty() };
  } catch {
    return { sel: labelSelectorFromStruct(null), empty: false };
  }
}

function rulesOf(v: unknown): PolicyRule[] {
  return list(v).map((r) => ({
    operations: strings(r.operations),
    apiGroups: strings(r.apiGroups),
    apiVersions: strings(r.apiVersions),
    resources: strings(r.resources),
    scope: str(r.scope) || '*',
    resourceNames: strings(r.resourceNames),
  }));
}

/** A MatchResources object as a MatchSpec. */
export function matchSpecOf(v: unknown): MatchSpec {
  const m = obj(v);
  const ns = selector(m.namespaceSelector);
  const os = selector(m.objectSelector);
  return {
    rules: rulesOf(m.resourceRules),
    excludes: rulesOf(m.excludeResourceRules),
    namespaceSelector: ns.sel,
    namespaceSelectorEmpty: ns.empty,
    objectSelector: os.sel,
    matchPolicy: m.matchPolicy === 'Exact' ? 'Exact' : 'Equivalent',
  };
}

/** A stored ValidatingAdmissionPolicy, compiled. */
export interface Policy {
  name: string;
  paramKind?: { apiVersion: string; kind: string };
  match: MatchSpec;
  failurePolicy: 'Fail' | 'Ignore';
  matchConditions: Array<Compiled & { name: string }>;
  variables: Array<Compiled & { name: string }>;
  validations: Array<Compiled & { message: string; messageExpression?: Compiled; reason: string }>;
  auditAnnotations: Array<Compiled & { key: string }>;
}

/** A stored ValidatingAdmissionPolicyBinding. */
export interface Binding {
  name: string;
  policyName: string;
  paramRef?: { name?: string; namespace?: string; selector?: LabelSelector; notFound: 'Allow' | 'Deny' };
  match?: MatchSpec;
  actions: string[];
}

/** Compiles a stored policy. */
export function policyOf(o: Obj): Policy {
  const spec = obj(o.spec);
  const pk = spec.paramKind === undefined || spec.paramKind === null ? undefined : obj(spec.paramKind);
  return {
    name: str(obj(o.metadata).name),
    ...(pk ? { paramKind: { apiVersion: str(pk.apiVersion), kind: str(pk.kind) } } : {}),
    match: matchSpecOf(spec.matchConstraints),
    failurePolicy: spec.failurePolicy === 'Ignore' ? 'Ignore' : 'Fail',
    matchConditions: list(spec.matchConditions).map((c) => ({ name: str(c.name), ...compilePolicyExpression(str(c.expression), 'bool') })),
    variables: list(spec.variables).map((v) => ({ name: str(v.name), ...compilePolicyExpression(str(v.expression), 'any') })),
    validations: list(spec.validations).map((v) => ({
      ...compilePolicyExpression(str(v.expression), 'bool'),
      message: str(v.message),
      ...(str(v.messageExpression) ? { messageExpression: compilePolicyExpression(str(v.messageExpression), 'string') } : {}),
      reason: str(v.reason) || 'Invalid',
    })),
    auditAnnotations: list(spec.auditAnnotations).map((a) => ({ key: str(a.key), ...compilePolicyExpression(str(a.valueExpression), 'any') })),
  };
}

/** Reads a stored binding. */
export function bindingOf(o: Obj): Binding {
  const spec = obj(o.spec);
  const ref = spec.paramRef === undefined || spec.paramRef === null ? undefined : obj(spec.paramRef);
  return {
    name: str(obj(o.metadata).name),
    policyName: str(spec.policyName),
    ...(ref
      ? {
          paramRef: {
            ...(str(ref.name) ? { name: str(ref.name) } : {}),
            ...(str(ref.namespace) ? { namespace: str(ref.namespace) } : {}),
            ...(ref.selector ? { selector: selector(ref.selector).sel } : {}),
            notFound: ref.parameterNotFoundAction === 'Allow' ? 'Allow' : 'Deny',
          },
        }
      : {}),
    ...(spec.matchResources ? { match: matchSpecOf(spec.matchResources) } : {}),
    actions: strings(spec.validationActions),
  };
}

/** Whether a rule with resource names admits the request's object. */
export function resourceNamesMatch(rule: PolicyRule, name: string): boolean {
  return rule.resourceNames.length === 0 || rule.resourceNames.includes(name);
}

/** What one evaluation of a policy (for one parameter object, or none) found. */
export interface PolicyOutcome {
  /** False: a match condition excluded the request. */
  matched: boolean;
  /** Failed validations and evaluation errors under failurePolicy Fail, in order. */
  failures: Array<{ message: string; reason: string; index: number }>;
  /** Audit annotations the policy's auditAnnotations gave. */
  annotations: Record<string, string>;
}

/** The inputs of the expressions. */
export interface PolicyInput {
  object: unknown;
  oldObject: unknown;
  request: Obj;
  params: unknown;
  namespaceObject: unknown;
  /** The `authorizer` variable (celAuthorizer). */
  authorizer: CelAuthorizer;
}

const resultedIn = (c: Compiled, e: unknown) =>
  `expression '${c.expression}' resulted in error: ${e instanceof Error || typeof e === 'object' ? celErrorText(e) : String(e)}`;

/** Evaluates one policy for one request (kube's validator.Validate with its match conditions). */
export async function evaluatePolicy(p: Policy, input: PolicyInput): Promise<PolicyOutcome> {
  const budget = new Budget(POLICY_BUDGET);
  const out: PolicyOutcome = { matched: true, failures: [], annotations: {} };
  const fail = (message: string, index: number, reason = 'Invalid') => {
    if (p.failurePolicy === 'Fail') out.failures.push({ message, reason, index });
  };
  const variables: Obj = Object.create(null) as Obj;
  const ctx: Obj = {
    object: jsonToCel(input.object, budget),
    oldObject: jsonToCel(input.oldObject, budget),
    request: jsonToCel(input.request, budget),
    params: jsonToCel(input.params, budget),
    namespaceObject: jsonToCel(input.namespaceObject, budget),
    variables,
    authorizer: input.authorizer,
  };
  try {
    // Variables in order (each sees the ones before it); an error surfaces where the variable is used.
    for (const v of p.variables) {
      let cached: { value?: unknown; error?: unknown };
      try {
        if (!v.program) throw new Error(v.error ?? 'not compiled');
        cached = { value: await v.program(ctx) };
      } catch (e) {
        if (e instanceof BudgetExceeded) throw e;
        cached = { error: e };
      }
      Object.defineProperty(variables, v.name, {
        enumerable: true,
        get() {
          if ('error' in cached) throw cached.error;
          return cached.value;
        },
      });
    }
    const errors: string[] = [];
    for (const c of p.matchConditions) {
      if (!c.program) {
        errors.push(`expression '${c.expression}' resulted in error: ${c.error}`);
        continue;
      }
      try {
        const r = await c.program(ctx);
        if (r === false) return { ...out, matched: false };
        if (r !== true) errors.push(`expression '${c.expression}' resulted in error: expression must evaluate to bool`);
      } catch (e) {
        if (e instanceof BudgetExceeded) throw e;
        errors.push(resultedIn(c, e));
      }
    }
    if (errors.length) {
      if (p.failurePolicy === 'Ignore') return { ...out, matched: false };
      out.failures.push({ message: errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]`, reason: 'Invalid', index: -1 });
      return out;
    }
    for (const [index, v] of p.validations.entries()) {
      if (!v.program) {
        fail(`expression '${v.expression}' resulted in error: ${v.error}`, index);
        continue;
      }
      let result: unknown;
      try {
        result = await v.program(ctx);
      } catch (e) {
        if (e instanceof BudgetExceeded) throw e;
        fail(resultedIn(v, e), index);
        continue;
      }
      if (result === true) continue;
      if (result !== false) {
        fail(`expression '${v.expression}' resulted in error: expression must evaluate to bool`, index);
        continue;
      }
      let message = '';
      if (v.messageExpression?.program) {
        try {
          const m = await v.messageExpression.program(ctx);
          if (typeof m === 'string' && !m.includes('\n')) message = m.trim();
        } catch (e) {
          if (e instanceof BudgetExceeded) throw e;
        }
      }
      if (!message) message = v.message.trim() || `failed expression: ${v.expression.trim()}`;
      out.failures.push({ message, reason: v.reason, index });
    }
    for (const a of p.auditAnnotations) {
      if (!a.program) continue;
      try {
        const value = await a.program(ctx);
        if (typeof value === 'string') out.annotations[`${p.name}/${a.key}`] = value;
      } catch (e) {
        if (e instanceof BudgetExceeded) throw e;
        fail(resultedIn(a, e), -1);
      }
    }
  } catch (e) {
    if (!(e instanceof BudgetExceeded)) throw e;
    fail(e.message, -1);
  }
  return out;
}

/** The HTTP code of a refusal's reason (kube's reasonToCode). */
export function reasonCode(reason: string): number {
  switch (reason) {
    case 'Forbidden':
      return 403;
    case 'Unauthorized':
      return 401;
    case 'RequestEntityTooLarge':
      return 413;
    default:
      return 422;
  }
}
