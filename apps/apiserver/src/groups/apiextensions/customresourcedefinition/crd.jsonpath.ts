/**
 * The JSON paths of a custom resource's printer columns and scale subresource (kube's
 * client-go jsonpath as those use it): `.a.b`, `['a.b']`, `[0]`, `[-1]`, `[*]`, `.*`, and
 * filters `[?(@.type=="Ready")]` (==, !=, or a bare `@.path` for presence). A path may be wrapped
 * in `{}`. Evaluation gives every value the path reaches, in document order.
 */

type Step = { t: 'field'; name: string } | { t: 'index'; i: number } | { t: 'all' } | { t: 'filter'; path: Step[]; op?: '==' | '!='; value?: unknown };

/** A path that does not parse. */
export class JsonPathError extends Error {}

function parseLiteral(src: string): unknown {
  const s = src.trim();
  if ((s.startsWith('"') && s.endsWith('"')) || (s.startsWith("'") && s.endsWith("'"))) return s.slice(1, -1);
  if (s === 'true') return true;
  if (s === 'false') return false;
  if (s === 'null') return null;
  const n = Number(s);
  if (s !== '' && !Number.isNaN(n)) return n;
  throw new JsonPathError(`unrecognized literal ${JSON.stringify(s)}`);
}

/** Parses a path into steps; throws JsonPathError. */
export function parseJsonPath(path: string): Step[] {
  let src = path.trim();
  if (src.startsWith('{') && src.endsWith('}')) src = src.slice(1, -1).trim();
  if (src.startsWith('$')) src = src.slice(1);
  const steps: Step[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (c === '.') {
      i++;
      if (src[i] === '*') {
        steps.push({ t: 'all' });
        i++;
        continue;
      }
      let j = i;
      while (j < src.length && src[j] !== '.' && src[j] !== '[') j++;
      const name = src.slice(i, j);
      if (!name) throw new JsonPathError(`empty field name at ${i} in ${JSON.stringify(path)}`);
      steps.push({ t: 'field', name });
      i = j;
    } else if (c === '[') {
      const close = matchingBracket(src, i);
      const inner = src.slice(i + 1, close).trim();
      i = close + 1;
      if (inner === '*') steps.push({ t: 'all' });
      else if (/^-?\d+$/.test(inner)) steps.push({ t: 'index', i: Number(inner) });
      else if ((inner.startsWith("'") && inner.endsWith("'")) || (inner.startsWith('"') && inner.endsWith('"')))
        steps.push({ t: 'field', name: inner.slice(1, -1) });
      else if (inner.startsWith('?(') && inner.endsWith(')')) steps.push(parseFilter(inner.slice(2, -1), path));
      else throw new JsonPathError(`unsupported subscript [${inner}] in ${JSON.stringify(path)}`);
    } else throw new JsonPathError(`unexpected ${JSON.stringify(c)} at ${i} in ${JSON.stringify(path)}`);
  }
  return steps;
}

function matchingBracket(src: string, open: number): number {
  let depth = 0;
  let quote = '';
  for (let k = open; k < src.length; k++) {
    const c = src[k];
    if (quote) {
      if (c === quote) quote = '';
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '[') depth++;
    else if (c === ']' && --depth === 0) return k;
  }
  throw new JsonPathError(`unclosed [ in ${JSON.stringify(src)}`);
}

function parseFilter(expr: string, path: string): Step {
  const m = /^\s*@((?:\.[^.=!\s]+)*)\s*(?:(==|!=)\s*(.+))?$/.exec(expr);
  if (!m) throw new JsonPathError(`unsupported filter ?(${expr}) in ${JSON.stringify(path)}`);
  const sub = m[1] ? parseJsonPath(m[1]) : [];
  return m[2] ? { t: 'filter', path: sub, op: m[2] as '==' | '!=', value: parseLiteral(m[3]!) } : { t: 'filter', path: sub };
}

function step(values: unknown[], s: Step): unknown[] {
  const out: unknown[] = [];
  for (const v of values) {
    if (s.t === 'field') {
      if (v && typeof v === 'object' && !Array.isArray(v) && Object.prototype.hasOwnProperty.call(v, s.name)) out.push((v as Record<string, unknown>)[s.name]);
    } else if (s.t === 'index') {
      if (Array.isArray(v)) {
        const k = s.i < 0 ? v.length + s.i : s.i;
        if (k >= 0 && k < v.length) out.push(v[k]);
      }
    } else if (s.t === 'all') {
      if (Array.isArray(v)) out.push(...v);
      else if (v && typeof v === 'object') out.push(...Object.values(v));
    } else {
      const items = Array.isArray(v) ? v : v && typeof v === 'object' ? Object.values(v) : [];
      for (const item of items) {
        const found = evalSteps([item], s.path);
        if (s.op === undefined ? found.length > 0 : s.op === '==' ? found.some((f) => f === s.value) : !found.some((f) => f === s.value)) out.push(item);
      }
    }
  }
  return out;
}

function evalSteps(values: unknown[], steps: readonly Step[]): unknown[] {
  let cur = values;
  for (const s of steps) cur = step(cur, s);
  return cur;
}

/** Every value `steps` reaches from `root`. */
export function evalJsonPath(root: unknown, steps: readonly Step[]): unknown[] {
  return evalSteps([root], steps);
}

/** The field names of a simple path (`.spec.replicas` -> ['spec', 'replicas']); undefined when it has other steps. */
export function simpleFieldPath(path: string): string[] | undefined {
  let steps: Step[];
  try {
    steps = parseJsonPath(path);
  } catch {
    return undefined;
  }
  if (!steps.length || steps.some((s) => s.t !== 'field')) return undefined;
  return steps.map((s) => (s as { name: string }).name);
}
