/**
 * A linearizability checker for per-key histories of a Kubernetes-style object store, in the
 * manner of porcupine (github.com/anishathalye/porcupine): the Wing & Gong search with Lowe's
 * refinement ("Testing for linearizability", Concurrency Comput. 2017): depth-first search over
 * the call/return entries, memoized on (set of linearized operations as a bitmask, model state).
 *
 * Model (one key): `{ exists, value, rv }` plus `lastRev`, the highest resourceVersion ever given
 * to this key. Every successful write must carry a resourceVersion strictly above `lastRev`:
 * Kubernetes resourceVersions are etcd revisions, which only grow (conventions.md
 * "Concurrency Control and Consistency"), so an RV going backwards is a violation.
 *
 * Unknown outcomes (timeouts, resets, 5xx) may or may not have taken effect: as in porcupine, their
 * return time is +infinity, so the search may place them anywhere after their call, including
 * after everything (never happened). The result of an unknown create/update is unobserved, so the
 * model is non-deterministic there; it is handled as porcupine's `NondeterministicModel` does: the
 * search state is the *set* of possible model states (power-set construction), which keeps the
 * search itself deterministic.
 */

/** Resource version as an integer (the server's RVs are decimal revision numbers). */
export type Rev = number;

/** What a client did. `precondition` is the resourceVersion sent with an update/delete. */
export type OpInput =
  | { readonly kind: 'create'; readonly value: string }
  | { readonly kind: 'get' }
  | { readonly kind: 'update'; readonly value: string; readonly precondition: Rev }
  | { readonly kind: 'delete'; readonly precondition: Rev };

/** What the server answered, as far as the model cares. `unknown`: the op may or may not have happened. */
export type OpOutput =
  | { readonly kind: 'ok'; readonly rv?: Rev; readonly value?: string }
  | { readonly kind: 'notFound' }
  | { readonly kind: 'alreadyExists' }
  | { readonly kind: 'conflict' }
  | { readonly kind: 'unknown' };

/**
 * One operation on one key. Times are in any monotonic unit (the workload uses nanoseconds from
 * process.hrtime); `ret` is ignored when the output is `unknown` (treated as +infinity).
 * For `get`, an `ok` output must carry `value` and `rv`; for create/update `ok` must carry `rv`.
 */
export interface KeyOp {
  readonly id: number;
  readonly key: string;
  readonly client: number;
  readonly call: number;
  readonly ret: number;
  readonly input: OpInput;
  readonly output: OpOutput;
  /** Free text for reports (endpoint, HTTP status...). */
  readonly note?: string;
}

/** The state of one key in the model. `rv` is -1 when the current version was never observed. */
export interface KeyState {
  readonly exists: boolean;
  readonly value: string;
  readonly rv: Rev;
  readonly lastRev: Rev;
}

const INITIAL: KeyState = { exists: false, value: '', rv: 0, lastRev: 0 };

function stateKey(s: KeyState): string {
  return s.exists ? `1|${s.rv}|${s.lastRev}|${s.value}` : `0|${s.lastRev}`;
}

/**
 * Possible states after applying `op` to `s`, given its recorded output; empty when the output is
 * impossible from `s`. `candidates`: per written value, the RVs an unknown write of it may have
 * produced (see candidatesOf); an unknown write may also produce rv -1, "never observed". A
 * precondition never matches -1: a client names only an RV it has read or been answered.
 */
export function step(s: KeyState, op: KeyOp, candidates: ReadonlyMap<string, readonly Rev[]>): KeyState[] {
  const inp = op.input;
  const out = op.output;
  const unknown = out.kind === 'unknown';
  switch (inp.kind) {
    case 'get':
      if (unknown) return [s];
      if (out.kind === 'notFound') return s.exists ? [] : [s];
      if (out.kind !== 'ok' || !s.exists || out.value !== s.value) return [];
      // an unobserved rv (-1) is pinned by the first read that sees the value
      if (s.rv === -1) return out.rv !== undefined && out.rv > s.lastRev ? [{ ...s, rv: out.rv, lastRev: out.rv }] : [];
      return out.rv === s.rv ? [s] : [];
    case 'create':
      if (s.exists) return out.kind === 'alreadyExists' || unknown ? [s] : [];
      if (out.kind === 'ok') return out.rv !== undefined && out.rv > s.lastRev ? [{ exists: true, value: inp.value, rv: out.rv, lastRev: out.rv }] : [];
      if (unknown) return written(s, inp.value, candidates);
      return [];
    case 'update':
      if (!s.exists) return out.kind === 'notFound' || unknown ? [s] : [];
      if (s.rv === -1 || s.rv !== inp.precondition) return out.kind === 'conflict' || unknown ? [s] : [];
      if (out.kind === 'ok') return out.rv !== undefined && out.rv > s.lastRev ? [{ exists: true, value: inp.value, rv: out.rv, lastRev: out.rv }] : [];
      if (unknown) return written(s, inp.value, candidates);
      return [];
    case 'delete':
      if (!s.exists) return out.kind === 'notFound' || unknown ? [s] : [];
      if (s.rv === -1 || s.rv !== inp.precondition) return out.kind === 'conflict' || unknown ? [s] : [];
      if (out.kind === 'ok' || unknown) return [{ exists: false, value: '', rv: 0, lastRev: s.lastRev }];
      return [];
  }
}

function written(s: KeyState, value: string, candidates: ReadonlyMap<string, readonly Rev[]>): KeyState[] {
  const r: KeyState[] = [{ exists: true, value, rv: -1, lastRev: s.lastRev }];
  for (const c of candidates.get(value) ?? []) {
    if (c > s.lastRev) r.push({ exists: true, value, rv: c, lastRev: c });
  }
  return r;
}

/** Result of checking one key's history. */
export interface KeyCheckResult {
  readonly key: string;
  readonly ok: boolean;
  readonly ops: number;
  /** Search steps taken (for performance figures). */
  readonly steps: number;
  /** True when the search hit its step budget: the answer is then "unknown", reported as ok=false. */
  readonly timedOut: boolean;
  /** On failure: a small non-linearizable sub-history (minimized), in call order. */
  readonly counterexample?: readonly KeyOp[];
  /** On failure: the longest prefix of a linearization the search found (op ids). */
  readonly longestPartial?: readonly number[];
}

/** Options of {@link checkKey} / {@link checkHistory}. */
export interface CheckOptions {
  /** Abort one key's search after this many steps (default 200 per op, at least 5,000,000). */
  readonly maxSteps?: number;
  /** Minimize failing histories (default true). */
  readonly minimize?: boolean;
  /** Milliseconds the minimizer may spend per failing key (default 3000). */
  readonly minimizeBudgetMs?: number;
  /**
   * How long after its call an op with an unknown outcome may still take effect, in the
   * history's time unit (default +infinity, as porcupine). A finite window is an assumption
   * about the server (e.g. "a proposal commits within its timeout plus an election, or never")
   * that bounds how many unknown ops are pending at once, which is what makes searches over
   * crash-heavy histories cheap.
   */
  readonly unknownWindow?: number;
  /**
   * Leave out, before the search, the unknown writes that cannot have taken effect (see
   * withoutUnseenWrites; default true). The verdict is the same either way; false is for
   * checking that.
   */
  readonly pruneUnseenWrites?: boolean;
}

interface Entry {
  op: number; // index into ops
  isCall: boolean;
  time: number;
  match: Entry | undefined; // call -> its return
  prev: Entry | undefined;
  next: Entry | undefined;
}

/** A set of model states with a canonical key (porcupine's power-set state). */
interface StateSet {
  readonly states: readonly KeyState[];
  readonly key: string;
}

function makeSet(states: KeyState[]): StateSet {
  const m = new Map<string, KeyState>();
  for (const s of states) m.set(stateKey(s), s);
  const keys = [...m.keys()].sort();
  return { states: keys.map((k) => m.get(k)!), key: keys.join(';') };
}

/**
 * RVs an unknown write of each value may have produced: the RVs reads saw together with that
 * value, plus -1 ("never observed": pinned by the first read that sees it). Workload values are
 * unique per write, so this is usually one RV or none, which keeps the state sets small. A client
 * only learns an RV by reading it or by a write's answer, so a precondition naming the RV of an
 * unknown write always follows a read of it: no candidate is missed for histories recorded by
 * the workload (a hand-made history that guesses RVs could be judged too strictly).
 */
export function candidatesOf(ops: readonly KeyOp[]): Map<string, Rev[]> {
  const m = new Map<string, Set<Rev>>();
  for (const o of ops) {
    if (o.input.kind === 'get' && o.output.kind === 'ok' && o.output.rv !== undefined && o.output.value !== undefined) {
      let set = m.get(o.output.value);
      if (set === undefined) m.set(o.output.value, (set = new Set()));
      set.add(o.output.rv);
    }
  }
  const r = new Map<string, Rev[]>();
  for (const [v, set] of m)
    r.set(
      v,
      [...set].sort((a, b) => a - b),
    );
  return r;
}

/**
 * Leaves out the unknown creates and updates that took effect in no linearization: those whose
 * value no read saw, followed (after their window) by a known op that succeeded or found nothing.
 * Such a write, had it taken effect, would leave the key holding a value nobody read at an RV
 * nobody learned (rv -1 in the model), and nothing leaves that state but a read of the value: a
 * precondition never names -1, and a create finds the key there. A later read would have to see
 * the value; a later successful write would need the key absent or its RV named; a later not
 * found would need it absent. So once such an op follows, the write cannot have taken effect,
 * and the search need not place it. A chaos run's faults leave many unknown writes that never
 * reached the log; each one pending would otherwise double what the search may try.
 */
export function withoutUnseenWrites(ops: readonly KeyOp[], window: number, candidates: ReadonlyMap<string, readonly Rev[]>): readonly KeyOp[] {
  if (!Number.isFinite(window)) return ops;
  let lastRefuting = Number.NEGATIVE_INFINITY;
  for (const o of ops) if ((o.output.kind === 'ok' || o.output.kind === 'notFound') && o.call > lastRefuting) lastRefuting = o.call;
  const unseen = (o: KeyOp): boolean =>
    o.output.kind === 'unknown' && (o.input.kind === 'create' || o.input.kind === 'update') && !candidates.has(o.input.value) && o.call + window < lastRefuting;
  return ops.some(unseen) ? ops.filter((o) => !unseen(o)) : ops;
}

interface SearchResult {
  ok: boolean;
  steps: number;
  timedOut: boolean;
  longest: number[];
}

/** Lowe's just-in-time linearization search over one key's ops. */
function search(all: readonly KeyOp[], maxSteps: number, window: number, prune = true): SearchResult {
  const candidates = candidatesOf(all);
  const ops = prune ? withoutUnseenWrites(all, window, candidates) : all;
  const n = ops.length;
  if (n === 0) return { ok: true, steps: 0, timedOut: false, longest: [] };
  // Build the entry list: calls and returns sorted by time; at equal times calls come first
  // (an op returning at t and one called at t are concurrent, the permissive reading).
  const entries: Entry[] = [];
  for (let i = 0; i < n; i++) {
    const o = ops[i]!;
    const call: Entry = { op: i, isCall: true, time: o.call, match: undefined, prev: undefined, next: undefined };
    const ret: Entry = {
      op: i,
      isCall: false,
      time: o.output.kind === 'unknown' ? o.call + window : Math.max(o.ret, o.call),
      match: undefined,
      prev: undefined,
      next: undefined,
    };
    call.match = ret;
    entries.push(call, ret);
  }
  entries.sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : 0) || (a.isCall === b.isCall ? a.op - b.op : a.isCall ? -1 : 1));
  const head: Entry = { op: -1, isCall: false, time: -Infinity, match: undefined, prev: undefined, next: undefined };
  let p = head;
  for (const e of entries) {
    p.next = e;
    e.prev = p;
    p = e;
  }
  const lift = (e: Entry): void => {
    e.prev!.next = e.next;
    if (e.next) e.next.prev = e.prev;
    const m = e.match!;
    m.prev!.next = m.next;
    if (m.next) m.next.prev = m.prev;
  };
  const unlift = (e: Entry): void => {
    const m = e.match!;
    m.prev!.next = m;
    if (m.next) m.next.prev = m;
    e.prev!.next = e;
    if (e.next) e.next.prev = e;
  };
  // The linearized set is hashed Zobrist-style (two independent 32-bit random words per op,
  // XOR-ed in and out), so a memo key costs O(1) instead of O(n/32). A 64-bit collision could
  // prune a branch wrongly; at a few million cache entries its odds are below 1e-6.
  const z1 = new Uint32Array(n);
  const z2 = new Uint32Array(n);
  let seed = 0x9e3779b9;
  const rnd = (): number => {
    // xorshift32: fixed seed, so a check replays identically
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return seed >>> 0;
  };
  for (let i = 0; i < n; i++) {
    z1[i] = rnd();
    z2[i] = rnd();
  }
  let h1 = 0;
  let h2 = 0;
  const toggle = (i: number): void => {
    h1 = (h1 ^ z1[i]!) >>> 0;
    h2 = (h2 ^ z2[i]!) >>> 0;
  };
  // Ops with an unknown outcome never have to be linearized (they may not have happened), so
  // the search is complete once every op with a known outcome is.
  let known = 0;
  for (const o of ops) if (o.output.kind !== 'unknown') known++;
  const cache = new Set<string>();
  const stack: Array<{ entry: Entry; state: StateSet; dropped: boolean }> = [];
  let state = makeSet([INITIAL]);
  let entry = head.next;
  let steps = 0;
  let longest: number[] = [];
  const calls = new Map<Entry, Entry>();
  for (let e = head.next; e !== undefined; e = e.next) if (e.isCall) calls.set(e.match!, e);
  const findCall = (ret: Entry): Entry => calls.get(ret)!;
  /** Undoes linearization choices until one leaves an alternative; the entry to resume at. */
  const backtrack = (): Entry | undefined => {
    // The stack is at a local maximum here, so this is where the longest partial is seen.
    if (stack.length > longest.length) longest = stack.filter((f) => !f.dropped).map((f) => ops[f.entry.op]!.id);
    for (;;) {
      const top = stack.pop();
      if (top === undefined) return undefined;
      state = top.state;
      toggle(top.entry.op);
      unlift(top.entry);
      if (top.dropped) continue; // dropping at the deadline was the only choice left for that op
      if (ops[top.entry.op]!.output.kind !== 'unknown') known++;
      return top.entry.next;
    }
  };
  while (known > 0) {
    if (++steps > maxSteps) return { ok: false, steps, timedOut: true, longest };
    if (entry === undefined) break; // cannot happen: a finite return entry precedes the end
    if (entry.isCall) {
      const op = ops[entry.op]!;
      const next: KeyState[] = [];
      for (const s of state.states) next.push(...step(s, op, candidates));
      let advanced = false;
      const ns = next.length > 0 ? makeSet(next) : undefined;
      // An unknown op that changes nothing here is never worth linearizing here: leaving it
      // pending dominates (it can always be placed last, with no effect anyone observed). This
      // prunes the 2^(pending unknowns) blow-up of porcupine's plain search.
      const noop = ns !== undefined && op.output.kind === 'unknown' && ns.key === state.key;
      if (ns !== undefined && !noop) {
        toggle(entry.op);
        const k = `${h1},${h2}#${ns.key}`;
        if (!cache.has(k)) {
          cache.add(k);
          stack.push({ entry, state, dropped: false });
          state = ns;
          lift(entry);
          if (op.output.kind !== 'unknown') known--;
          entry = head.next;
          advanced = true;
        } else {
          toggle(entry.op);
        }
      }
      if (!advanced) entry = entry!.next;
    } else if (ops[entry.op]!.output.kind === 'unknown') {
      const ret: Entry = entry;
      // The deadline of a pending unknown op: it did not take effect within its window, so it
      // never happened; drop it (no effect) and go on. Placing the "no effect" anywhere else in
      // the window is equivalent, so this loses no linearization.
      const call = findCall(ret);
      toggle(call.op);
      const k = `${h1},${h2}#${state.key}`;
      if (!cache.has(k)) {
        cache.add(k);
        stack.push({ entry: call, state, dropped: true });
        lift(call);
        entry = head.next;
      } else {
        toggle(call.op);
        entry = backtrack();
        if (entry === undefined) return { ok: false, steps, timedOut: false, longest };
      }
    } else {
      // A return entry reached: its op was not linearized before it returned; backtrack.
      entry = backtrack();
      if (entry === undefined) return { ok: false, steps, timedOut: false, longest };
    }
  }
  return { ok: true, steps, timedOut: false, longest };
}

/**
 * Shrinks a non-linearizable history to a small one that still fails, within a time budget.
 * First the shortest failing prefix in call order (binary search); its last op is the culprit,
 * the first op whose arrival makes the history unexplainable. Then ddmin-style chunk removal
 * (halving chunk sizes) of the other ops, keeping a removal only while the sub-history still
 * fails *and* stays linearizable without the culprit: so the report shows a consistent context
 * plus the one op that contradicts it, rather than e.g. a lone update of a key nobody created.
 */
function minimize(ops: readonly KeyOp[], maxSteps: number, window: number, prune: boolean, budgetMs: number): KeyOp[] {
  const deadline = Date.now() + budgetMs;
  const fails = (h: readonly KeyOp[]): boolean => {
    const r = search(h, maxSteps, window, prune);
    return !r.ok && !r.timedOut;
  };
  const sorted = [...ops].sort((a, b) => a.call - b.call);
  let lo = 1;
  let hi = sorted.length;
  while (lo < hi && Date.now() < deadline) {
    const mid = (lo + hi) >>> 1;
    if (fails(sorted.slice(0, mid))) hi = mid;
    else lo = mid + 1;
  }
  let cur = fails(sorted.slice(0, hi)) ? sorted.slice(0, hi) : sorted;
  const culprit = cur[cur.length - 1]!;
  const contextOk = (h: readonly KeyOp[]): boolean =>
    search(
      h.filter((o) => o !== culprit),
      maxSteps,
      window,
      prune,
    ).ok;
  const strict = contextOk(cur);
  let chunk = Math.max(1, cur.length >>> 1);
  for (;;) {
    let i = 0;
    while (i < cur.length && Date.now() < deadline) {
      const removed = cur.slice(i, i + chunk);
      const cand = [...cur.slice(0, i), ...cur.slice(i + chunk)];
      if (!(strict && removed.includes(culprit)) && cand.length > 0 && fails(cand) && (!strict || contextOk(cand))) cur = cand;
      else i += chunk;
    }
    if (chunk === 1 || Date.now() >= deadline) break;
    chunk = Math.max(1, chunk >>> 1);
  }
  return cur;
}

/** Checks one key's history (all ops must have the same key). */
export function checkKey(key: string, ops: readonly KeyOp[], opts: CheckOptions = {}): KeyCheckResult {
  const maxSteps = opts.maxSteps ?? Math.max(5_000_000, 200 * ops.length);
  const window = opts.unknownWindow ?? Number.POSITIVE_INFINITY;
  const prune = opts.pruneUnseenWrites ?? true;
  const r = search(ops, maxSteps, window, prune);
  if (r.ok || r.timedOut) return { key, ok: r.ok, ops: ops.length, steps: r.steps, timedOut: r.timedOut };
  const counterexample = opts.minimize === false ? [...ops] : minimize(ops, maxSteps, window, prune, opts.minimizeBudgetMs ?? 3000);
  return { key, ok: false, ops: ops.length, steps: r.steps, timedOut: false, counterexample, longestPartial: r.longest };
}

/** Result of {@link checkHistory}: one entry per key, failing keys first. */
export interface HistoryCheckResult {
  readonly ok: boolean;
  readonly keys: readonly KeyCheckResult[];
}

/** Partitions `ops` by key (linearizability is compositional: Herlihy & Wing, Theorem 1) and checks each. */
export function checkHistory(ops: readonly KeyOp[], opts: CheckOptions = {}): HistoryCheckResult {
  const byKey = new Map<string, KeyOp[]>();
  for (const o of ops) {
    let l = byKey.get(o.key);
    if (l === undefined) byKey.set(o.key, (l = []));
    l.push(o);
  }
  const keys = [...byKey].map(([k, l]) => checkKey(k, l, opts));
  keys.sort((a, b) => Number(a.ok) - Number(b.ok) || a.key.localeCompare(b.key));
  return { ok: keys.every((k) => k.ok), keys };
}

function fmtInput(i: OpInput): string {
  switch (i.kind) {
    case 'create':
      return `create(${JSON.stringify(i.value)})`;
    case 'get':
      return 'get()';
    case 'update':
      return `update(${JSON.stringify(i.value)}, if rv=${i.precondition})`;
    case 'delete':
      return `delete(if rv=${i.precondition})`;
  }
}

function fmtOutput(o: OpOutput): string {
  switch (o.kind) {
    case 'ok':
      return `ok${o.value !== undefined ? ` ${JSON.stringify(o.value)}` : ''}${o.rv !== undefined ? ` rv=${o.rv}` : ''}`;
    case 'unknown':
      return 'UNKNOWN (may or may not have happened)';
    default:
      return o.kind;
  }
}

/**
 * A readable report of a failing key: the minimized sub-history as a timeline (times relative to
 * its first call, in ms when `nsPerUnit` is 1e6), and the longest partial linearization found.
 */
export function formatFailure(r: KeyCheckResult, nsPerUnit = 1e6): string {
  if (r.ok) return `key ${r.key}: linearizable (${r.ops} ops)`;
  if (r.timedOut) return `key ${r.key}: search gave up after ${r.steps} steps (${r.ops} ops): result unknown`;
  const ex = r.counterexample ?? [];
  const t0 = ex.length > 0 ? Math.min(...ex.map((o) => o.call)) : 0;
  const t = (v: number): string => (Number.isFinite(v) ? ((v - t0) / nsPerUnit).toFixed(3) : 'inf');
  const lines = [
    `key ${r.key}: NOT linearizable (${r.ops} ops; minimal failing sub-history of ${ex.length}):`,
    ...ex.map(
      (o) =>
        `  #${o.id} client ${o.client} [${t(o.call)} .. ${o.output.kind === 'unknown' ? 'inf' : t(o.ret)}] ${fmtInput(o.input)} -> ${fmtOutput(o.output)}${o.note ? `  (${o.note})` : ''}`,
    ),
    `  no order of these ops, each placed between its call and return, explains every result.`,
  ];
  if (r.longestPartial !== undefined && r.longestPartial.length > 0) {
    const tail = r.longestPartial.slice(-10);
    lines.push(`  longest partial linearization of the full history: ${r.longestPartial.length} ops, ending ...${tail.map((i) => `#${i}`).join(' ')}`);
  }
  return lines.join('\n');
}
