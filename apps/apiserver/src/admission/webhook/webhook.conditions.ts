/**
 * Admission webhooks' `matchConditions` (kube's webhook/matchconditions): CEL expressions over
 * `object`, `oldObject` (null when the operation has none) and `request` (the AdmissionRequest
 * without its objects), all at the version the webhook is called with. A webhook is called when
 * every condition is true; one false condition skips it. An evaluation error with no false
 * condition goes to the failure policy: Fail refuses the request (403), Ignore skips the
 * webhook. `authorizer` checks the requesting user's access (cel.authz.ts); an authorizer that
 * answers asynchronously makes the evaluation asynchronous.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { registerCelAuthz, type CelAuthorizer } from '../../cel/cel.authz.js';
import { Budget, BudgetExceeded, celBase, celCompileError, celErrorText, jsonToCel, parseCel } from '../../cel/cel.environment.js';

/** List element reads the conditions of one webhook call may make. */
export const MATCH_CONDITIONS_BUDGET = 1_000_000;

/** A compiled condition: its program, or why it does not compile. */
export interface MatchCondition {
  name: string;
  expression: string;
  program?: (ctx: Record<string, unknown>) => unknown;
  /** The compile error (a condition stored before it was checked, or changed since). */
  error?: string;
}

let env: Environment | undefined;

function conditionEnv(): Environment {
  return (env ??= registerCelAuthz(celBase().clone())
    .registerVariable('object', 'dyn')
    .registerVariable('oldObject', 'dyn')
    .registerVariable('request', 'map<string, dyn>'));
}

/** Compiles one expression: undefined when it is a valid bool expression, else kube's detail. */
export function matchConditionError(expression: string): string | undefined {
  try {
    const program = parseCel(conditionEnv(), expression);
    const checked = program.check();
    if (!checked.valid) return `compilation failed: ${celCompileError(expression, checked.error)}`;
    if (checked.type !== 'bool' && checked.type !== 'dyn') return 'must evaluate to bool';
    return undefined;
  } catch (e) {
    return `compilation failed: ${celCompileError(expression, e)}`;
  }
}

/** The conditions of a stored webhook, compiled. */
export function compileMatchConditions(raw: unknown): MatchCondition[] {
  if (!Array.isArray(raw)) return [];
  return raw.map((c: unknown) => {
    const o = (c && typeof c === 'object' ? c : {}) as { name?: unknown; expression?: unknown };
    const name = typeof o.name === 'string' ? o.name : '';
    const expression = typeof o.expression === 'string' ? o.expression : '';
    const error = matchConditionError(expression);
    return error ? { name, expression, error } : { name, expression, program: parseCel(conditionEnv(), expression) };
  });
}

/** The outcome of a webhook's conditions for one call. */
export type MatchOutcome = { matches: true } | { matches: false; failed?: string } | { error: string };

/**
 * Evaluates the conditions (kube's matcher.Match): the first false one decides (no call);
 * otherwise errors, if any, are the outcome; otherwise the webhook matches.
 */
export async function evaluateMatchConditions(
  conditions: readonly MatchCondition[],
  request: Record<string, unknown>,
  object: unknown,
  oldObject: unknown,
  authorizer: CelAuthorizer,
): Promise<MatchOutcome> {
  const budget = new Budget(MATCH_CONDITIONS_BUDGET);
  const errors: string[] = [];
  let vars: Record<string, unknown> | undefined;
  for (const c of conditions) {
    if (!c.program) {
      errors.push(`expression '${c.expression}' resulted in error: ${c.error ?? 'not compiled'}`);
      continue;
    }
    try {
      vars ??= { request: jsonToCel(request, budget), object: jsonToCel(object, budget), oldObject: jsonToCel(oldObject, budget), authorizer };
      const result = await c.program(vars);
      if (result === false) return { matches: false, failed: c.name };
      if (result !== true) errors.push(`expression '${c.expression}' resulted in error: expression must evaluate to bool`);
    } catch (e) {
      if (e instanceof BudgetExceeded) {
        errors.push(`expression '${c.expression}' resulted in error: ${e.message}`);
        break;
      }
      errors.push(`expression '${c.expression}' resulted in error: ${celErrorText(e)}`);
    }
  }
  if (errors.length) return { error: errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]` };
  return { matches: true };
}
