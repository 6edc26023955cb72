/**
 * How far V8's old generation may grow between full collections (docs/performance.md "Garbage
 * collection"). V8 sizes the next limit from what the last full collection kept, by a factor it
 * derives from its own measurements; on a node under steady writes that factor came out at 1.2-1.5,
 * which leaves less room above the live heap than one scavenge may promote, so V8 starts marking
 * the whole heap again right after it finished: back-to-back full collections. A fixed factor
 * (Go's GOGC=100 is a factor of 2) spaces them out.
 */
import { envInt } from './env.js';

/**
 * The factor applied when KAPI_HEAP_GROWTH_PERCENT is unset: none, V8's own heuristics. Set at
 * run time, the flag made V8's regexp compiler abort the process ("RegExpCompiler Allocation
 * failed - process out of memory") with a heap of about 75 MB: reproducibly under the HTTP
 * fuzzer on a server with external etcd (test/fuzz.test.ts in `npm run test:e2e:etcd`), and
 * never without it. So it is an operator's choice, not a default.
 */
export const DEFAULT_HEAP_GROWTH_PERCENT = 0;

const OWN_FLAG = /(^|\s)--heap[-_]growing[-_]percent(=|\s|$)/;

/**
 * The V8 flag to set at start, or undefined to leave V8's heuristics alone: when the variable
 * is 0, or when the operator gave node the flag (on its command line or in NODE_OPTIONS).
 */
export function heapGrowthFlag(env: NodeJS.ProcessEnv, execArgv: readonly string[]): string | undefined {
  if (execArgv.some((a) => OWN_FLAG.test(a)) || OWN_FLAG.test(env.NODE_OPTIONS ?? '')) return undefined;
  const percent = envInt('KAPI_HEAP_GROWTH_PERCENT', env) ?? DEFAULT_HEAP_GROWTH_PERCENT;
  return percent === 0 ? undefined : `--heap-growing-percent=${percent}`;
}
