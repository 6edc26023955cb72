/**
 * The pure half of the soak run (bench/soak.ts): reading a node's /metrics text, the sample
 * rows and their CSV, the bounds a run must keep and their evaluation, and the printed summary.
 * Nothing here starts processes, so bench/soak.report.spec.ts checks it with made-up samples.
 */

/** One reading of one node. Counters (`*Total`) are cumulative since the start of the run. */
export interface SoakSample {
  /** Seconds since the load started. */
  readonly elapsedS: number;
  readonly time: string;
  readonly node: string;
  readonly pid: number;
  readonly rssBytes: number;
  readonly heapUsedBytes: number;
  readonly openFds: number;
  /** p99 of the event-loop delay over prom-client's window, in ms. */
  readonly eventLoopP99Ms: number;
  /** The node's whole data dir: the MVCC store and the Raft log (both LevelDB) and snap/. */
  readonly dataBytes: number;
  readonly mvccBytes: number;
  readonly raftBytes: number;
  /** Requests the load sent to this node, and the rate since the previous sample. */
  readonly requestsTotal: number;
  readonly requestsPerS: number;
  readonly errorsTotal: number;
  readonly transientTotal: number;
  readonly watchEventsTotal: number;
  readonly watchRestartsTotal: number;
  readonly compactionsTotal: number;
  readonly raftSnapshotIndex: number;
  readonly appliedIndex: number;
  readonly revision: number;
  readonly compactRevision: number;
  readonly isLeader: number;
}

const COLUMNS: readonly (keyof SoakSample)[] = [
  'time',
  'elapsedS',
  'node',
  'pid',
  'rssBytes',
  'heapUsedBytes',
  'openFds',
  'eventLoopP99Ms',
  'dataBytes',
  'mvccBytes',
  'raftBytes',
  'requestsTotal',
  'requestsPerS',
  'errorsTotal',
  'transientTotal',
  'watchEventsTotal',
  'watchRestartsTotal',
  'compactionsTotal',
  'raftSnapshotIndex',
  'appliedIndex',
  'revision',
  'compactRevision',
  'isLeader',
];

/** The CSV header line (snake_case of the SoakSample fields, in a fixed order). */
export function csvHeader(): string {
  return COLUMNS.map((c) => c.replace(/[A-Z]/g, (m) => `_${m.toLowerCase()}`)).join(',');
}

/** One CSV line for `s` (no quoting needed: no field holds a comma). */
export function csvRow(s: SoakSample): string {
  return COLUMNS.map((c) => {
    const v = s[c];
    return typeof v === 'number' ? (Number.isInteger(v) ? String(v) : v.toFixed(3)) : v;
  }).join(',');
}

/**
 * Reads Prometheus text exposition into name -> value: an unlabelled series as it is, a
 * labelled one summed over its labels (under the bare name). Comments and bad lines are skipped.
 */
export function parseMetrics(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const brace = line.indexOf('{');
    const space = line.lastIndexOf(' ');
    if (space <= 0) continue;
    const name = brace > 0 && brace < space ? line.slice(0, brace) : line.slice(0, space);
    const value = Number(line.slice(space + 1));
    if (!Number.isFinite(value)) continue;
    out.set(name, (out.get(name) ?? 0) + value);
  }
  return out;
}

/** Median of `xs` (mean of the middle two for an even count); NaN for none. */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** A growth bound on one figure: last-quarter median <= max(ratio * first, first + absolute). */
export interface GrowthBound {
  readonly figure: 'rssBytes' | 'heapUsedBytes' | 'openFds' | 'dataBytes';
  readonly ratio: number;
  readonly absolute: number;
  readonly label: string;
}

/** The growth bounds (docs/soak.md states them). */
export const GROWTH_BOUNDS: readonly GrowthBound[] = [
  { figure: 'rssBytes', ratio: 1.25, absolute: 0, label: 'RSS: last-quarter median <= 1.25 x first-quarter median' },
  { figure: 'heapUsedBytes', ratio: 1.25, absolute: 0, label: 'V8 heap used: last-quarter median <= 1.25 x first-quarter median' },
  { figure: 'openFds', ratio: 1.1, absolute: 20, label: 'open fds: last-quarter median <= max(1.1 x first, first + 20)' },
  { figure: 'dataBytes', ratio: 1.5, absolute: 0, label: 'data dir (LevelDB) size: last-quarter median <= 1.5 x first-quarter median' },
];

/** Share of the run (from the first sample) left out of the growth bounds as warm-up. */
export const WARM_UP_FRACTION = 0.1;

/** Run-wide facts the bounds look at besides the samples. */
export interface RunFacts {
  /** Failed requests other than the transient ones, and watch failures other than 410 Gone. */
  readonly errors: number;
  /** Watch events (or relist revisions) whose resourceVersion was below one seen before. */
  readonly watchBackwards: number;
  /** Minimum number of compactions and Raft snapshots each node must show. */
  readonly minCompactions: number;
  readonly minSnapshots: number;
}

/** The outcome of one bound on one node (or `node` '*' for run-wide ones). */
export interface BoundResult {
  readonly node: string;
  readonly bound: string;
  readonly value: string;
  readonly pass: boolean;
}

/** The samples of one node split as the growth bounds use them. */
export interface Quarters {
  readonly first: SoakSample[];
  readonly last: SoakSample[];
}

/**
 * The first and last quarter, by time, of a node's samples after the warm-up (the first
 * `warmUp` share of the span from its first to its last sample).
 */
export function quarters(samples: readonly SoakSample[], warmUp = WARM_UP_FRACTION): Quarters {
  if (samples.length === 0) return { first: [], last: [] };
  const t0 = samples[0]!.elapsedS;
  const t1 = samples[samples.length - 1]!.elapsedS;
  const start = t0 + (t1 - t0) * warmUp;
  const q = (t1 - start) / 4;
  return {
    first: samples.filter((s) => s.elapsedS >= start && s.elapsedS <= start + q),
    last: samples.filter((s) => s.elapsedS >= t1 - q),
  };
}

/** How often a counter-like figure went up from one sample to the next (a lower bound on events). */
export function advances(samples: readonly SoakSample[], figure: 'raftSnapshotIndex' | 'compactRevision'): number {
  let n = 0;
  for (let i = 1; i < samples.length; i++) if (samples[i]![figure] > samples[i - 1]![figure]) n++;
  return n;
}

function fmt(figure: string, v: number): string {
  if (!Number.isFinite(v)) return 'n/a';
  if (figure.endsWith('Bytes')) return `${(v / 2 ** 20).toFixed(1)} MiB`;
  return Number.isInteger(v) ? String(v) : v.toFixed(2);
}

/**
 * Evaluates every bound: per node the growth bounds (a node with fewer than two samples in
 * either quarter fails them: nothing was measured) and the compaction and snapshot counts;
 * run-wide the error count and the watches' order.
 */
export function evaluateBounds(byNode: ReadonlyMap<string, readonly SoakSample[]>, facts: RunFacts, warmUp = WARM_UP_FRACTION): BoundResult[] {
  const out: BoundResult[] = [];
  for (const [node, samples] of byNode) {
    const q = quarters(samples, warmUp);
    for (const b of GROWTH_BOUNDS) {
      const first = median(q.first.map((s) => s[b.figure]));
      const last = median(q.last.map((s) => s[b.figure]));
      const limit = Math.max(first * b.ratio, first + b.absolute);
      const measured = q.first.length >= 2 && q.last.length >= 2;
      out.push({
        node,
        bound: b.label,
        value: `${fmt(b.figure, first)} -> ${fmt(b.figure, last)} (limit ${fmt(b.figure, limit)})`,
        pass: measured && last <= limit,
      });
    }
    const firstS = samples[0];
    const lastS = samples[samples.length - 1];
    const compactions = firstS && lastS ? lastS.compactionsTotal - firstS.compactionsTotal : 0;
    out.push({
      node,
      bound: `MVCC compactions during the run >= ${facts.minCompactions}`,
      value: String(compactions),
      pass: compactions >= facts.minCompactions,
    });
    const snaps = advances(samples, 'raftSnapshotIndex');
    out.push({
      node,
      bound: `Raft snapshot index advanced in >= ${facts.minSnapshots} sample intervals`,
      value: `${snaps} (index ${firstS?.raftSnapshotIndex ?? 0} -> ${lastS?.raftSnapshotIndex ?? 0})`,
      pass: snaps >= facts.minSnapshots,
    });
  }
  out.push({ node: '*', bound: 'request and watch errors (other than 429/503/504 and 410 Gone) = 0', value: String(facts.errors), pass: facts.errors === 0 });
  out.push({ node: '*', bound: 'watch resourceVersions never went backwards', value: `${facts.watchBackwards} backwards`, pass: facts.watchBackwards === 0 });
  return out;
}

/** Groups samples by node, keeping their order. */
export function byNode(samples: readonly SoakSample[]): Map<string, SoakSample[]> {
  const m = new Map<string, SoakSample[]>();
  for (const s of samples) {
    let l = m.get(s.node);
    if (!l) m.set(s.node, (l = []));
    l.push(s);
  }
  return m;
}

const SUMMARY_FIGURES: readonly (keyof SoakSample)[] = [
  'rssBytes',
  'heapUsedBytes',
  'openFds',
  'eventLoopP99Ms',
  'dataBytes',
  'mvccBytes',
  'raftBytes',
  'requestsPerS',
  'compactionsTotal',
  'raftSnapshotIndex',
  'revision',
];

/** Per node and figure: first, last and maximum sample, and the growth (last / first quarter median). */
export interface FigureSummary {
  readonly node: string;
  readonly figure: string;
  readonly first: number;
  readonly last: number;
  readonly max: number;
  readonly growth: number;
}

/** The figures table of the summary. */
export function summarize(nodes: ReadonlyMap<string, readonly SoakSample[]>, warmUp = WARM_UP_FRACTION): FigureSummary[] {
  const out: FigureSummary[] = [];
  for (const [node, samples] of nodes) {
    const q = quarters(samples, warmUp);
    for (const f of SUMMARY_FIGURES) {
      const vals = samples.map((s) => s[f] as number);
      out.push({
        node,
        figure: f,
        first: vals[0] ?? NaN,
        last: vals[vals.length - 1] ?? NaN,
        max: vals.length ? Math.max(...vals) : NaN,
        growth: median(q.last.map((s) => s[f] as number)) / median(q.first.map((s) => s[f] as number)),
      });
    }
  }
  return out;
}

/** The summary as Markdown tables (printed, and pasted into docs/soak.md). */
export function formatSummary(figures: readonly FigureSummary[], bounds: readonly BoundResult[]): string {
  const lines = ['| node | figure | first | last | max | growth (last/first quarter median) |', '| --- | --- | --- | --- | --- | --- |'];
  for (const f of figures) {
    const g = Number.isFinite(f.growth) ? `${f.growth.toFixed(3)}x` : 'n/a';
    lines.push(`| ${f.node} | ${f.figure} | ${fmt(f.figure, f.first)} | ${fmt(f.figure, f.last)} | ${fmt(f.figure, f.max)} | ${g} |`);
  }
  lines.push('', '| node | bound | value | result |', '| --- | --- | --- | --- |');
  for (const b of bounds) lines.push(`| ${b.node} | ${b.bound} | ${b.value} | ${b.pass ? 'pass' : 'FAIL'} |`);
  return lines.join('\n');
}
