/**
 * Tuning knobs read from the environment (`KAPI_*`, docs/tuning.md). Every one is in KAPI_ENV
 * with its bounds; `validateEnv` checks them all at start (main.ts), so a bad value stops the
 * start with an error naming the variable instead of becoming NaN, 0 or a silent default.
 * Entries marked `test` exist to make e2e tests fast and have no use in operation.
 */

/** One environment variable. */
export interface EnvVar {
  readonly name: string;
  readonly meaning: string;
  /** `switch`: 0 (off, as when unset) or 1 (on). */
  readonly unit: 'ms' | 'bytes' | 'entries' | 'revisions' | 'events' | 'percent' | 'switch' | 'pods';
  /** Inclusive bounds of an accepted value (an integer). */
  readonly min: number;
  readonly max: number;
  /** What applies when the variable is unset. */
  readonly productionDefault: string;
  /** `tuning`: an operator may set it; `test`: only tests do. */
  readonly use: 'tuning' | 'test';
}

const MAX_TIMER_MS = 2 ** 31 - 1;

/** Every `KAPI_*` variable the server reads. envInt refuses any other name. */
export const KAPI_ENV: readonly EnvVar[] = [
  {
    name: 'KAPI_RAFT_TICK_MS',
    meaning: 'Raft tick: heartbeats every tick, elections after 10-20 ticks; readiness needs a message from the leader within 10 ticks',
    unit: 'ms',
    min: 10,
    max: 1_000,
    productionDefault: '100',
    use: 'tuning',
  },
  {
    name: 'KAPI_READ_INDEX_TIMEOUT_MS',
    meaning: 'bound of the ReadIndex round of a Most Recent read (504 after it)',
    unit: 'ms',
    min: 100,
    max: 60_000,
    productionDefault: '5000',
    use: 'tuning',
  },
  {
    name: 'KAPI_MAX_PENDING_PROPOSAL_BYTES',
    meaning:
      'writes proposed on a node and not yet answered may hold this many bytes (each its command plus 1 KiB); a write beyond it is refused at once: 429 TooManyRequests, or etcd\'s "etcdserver: too many requests"',
    unit: 'bytes',
    min: 65_536,
    max: 4_294_967_296,
    productionDefault: '134217728',
    use: 'tuning',
  },
  {
    name: 'KAPI_ETCD_PROGRESS_NOTIFY_MS',
    meaning: 'interval of the progress notifications of etcd API watchers that asked for them (etcd default: 10 minutes)',
    unit: 'ms',
    min: 100,
    max: 86_400_000,
    productionDefault: '600000',
    use: 'tuning',
  },
  {
    name: 'KAPI_ETCD_WATCH_BUFFER_BYTES',
    meaning: 'an etcd API watch stream whose unsent responses pass this stops buffering: its watchers catch up from the history once the client reads again',
    unit: 'bytes',
    min: 65_536,
    max: 1_073_741_824,
    productionDefault: '8388608',
    use: 'tuning',
  },
  {
    name: 'KAPI_ETCD_WATCH_WINDOW_REVISIONS',
    meaning: 'revisions an etcd API watcher reads from the history at a time while it catches up',
    unit: 'revisions',
    min: 1,
    max: 1_000_000,
    productionDefault: '1000',
    use: 'tuning',
  },
  {
    name: 'KAPI_ETCD_WATCH_WINDOW_BYTES',
    meaning: "bytes of values that end an etcd API watcher's window of history early, between two revisions",
    unit: 'bytes',
    min: 1,
    max: 1_073_741_824,
    productionDefault: '4194304',
    use: 'tuning',
  },
  {
    name: 'KAPI_ETCD_WATCH_HELD_EVENTS',
    meaning: 'new events an etcd API watcher holds while it catches up; past them it drops them and reads them from the history too',
    unit: 'events',
    min: 1,
    max: 10_000_000,
    productionDefault: '10000',
    use: 'tuning',
  },
  {
    name: 'KAPI_MEMBER_CATCH_UP_TIMEOUT_MS',
    meaning: 'longest wait of an added member (POST /cluster/members) to catch up as a learner before its promotion; after it the member stays a learner (202)',
    unit: 'ms',
    min: 100,
    max: 3_600_000,
    productionDefault: '60000',
    use: 'tuning',
  },
  {
    name: 'KAPI_SNAPSHOT_COUNT',
    meaning: 'applied Raft entries between snapshots (--snapshot-count wins)',
    unit: 'entries',
    min: 1,
    max: 100_000_000,
    productionDefault: '10000',
    use: 'tuning',
  },
  {
    name: 'KAPI_SNAPSHOT_CATCHUP_ENTRIES',
    meaning: 'Raft entries kept behind a snapshot for slow followers (--snapshot-catchup-entries wins)',
    unit: 'entries',
    min: 1,
    max: 100_000_000,
    productionDefault: 'min(5000, snapshot count)',
    use: 'tuning',
  },
  {
    name: 'KAPI_LEASE_DURATION_MS',
    meaning: 'controller election: Lease duration (client-go leaseDuration)',
    unit: 'ms',
    min: 1_000,
    max: 3_600_000,
    productionDefault: '15000',
    use: 'tuning',
  },
  {
    name: 'KAPI_LEASE_RENEW_DEADLINE_MS',
    meaning: 'controller election: the holder gives up after failing to renew this long; below the Lease duration',
    unit: 'ms',
    min: 500,
    max: 3_600_000,
    productionDefault: '10000',
    use: 'tuning',
  },
  {
    name: 'KAPI_LEASE_RETRY_PERIOD_MS',
    meaning: 'controller election: interval between attempts to acquire or renew; below the renew deadline',
    unit: 'ms',
    min: 100,
    max: 600_000,
    productionDefault: '2000',
    use: 'tuning',
  },
  {
    name: 'KAPI_SERVICE_REPAIR_INTERVAL_MS',
    meaning: 'interval of the repair of the Service cluster IP and node port ranges (leaked values are given back after three rounds)',
    unit: 'ms',
    min: 100,
    max: 3_600_000,
    productionDefault: '60000',
    use: 'tuning',
  },
  {
    name: 'KAPI_APISERVER_ENDPOINT_INTERVAL_MS',
    meaning: "interval at which each server renews its address in the `kubernetes` Service's endpoints (dropped after three missed renewals)",
    unit: 'ms',
    min: 100,
    max: 600_000,
    productionDefault: '10000',
    use: 'tuning',
  },
  {
    name: 'KAPI_READ_HEADER_TIMEOUT_MS',
    meaning: "a connection's TLS handshake and first request headers must arrive within this",
    unit: 'ms',
    min: 100,
    max: 3_600_000,
    productionDefault: '32000',
    use: 'tuning',
  },
  {
    name: 'KAPI_IDLE_TIMEOUT_MS',
    meaning: 'a connection with no request or stream open is closed after this',
    unit: 'ms',
    min: 100,
    max: 86_400_000,
    productionDefault: '90000',
    use: 'tuning',
  },
  {
    name: 'KAPI_BODY_TIMEOUT_MS',
    meaning: 'a request body must arrive within this',
    unit: 'ms',
    min: 100,
    max: MAX_TIMER_MS,
    productionDefault: '--request-timeout (60000)',
    use: 'tuning',
  },
  {
    name: 'KAPI_WATCH_MAX_BUFFER_BYTES',
    meaning: 'a watcher whose unsent events pass this is cut off unless it catches up within the grace',
    unit: 'bytes',
    min: 65_536,
    max: 1_073_741_824,
    productionDefault: '8388608',
    use: 'tuning',
  },
  {
    name: 'KAPI_WATCH_SLOW_GRACE_MS',
    meaning: 'grace given to a watcher over the buffer bound',
    unit: 'ms',
    min: 100,
    max: 600_000,
    productionDefault: '5000',
    use: 'tuning',
  },
  {
    name: 'KAPI_WATCH_WINDOW_REVISIONS',
    meaning:
      'revisions a watch from an old resourceVersion reads from the history at a time; it reads the next once the client took its queue below half of KAPI_WATCH_MAX_BUFFER_BYTES',
    unit: 'revisions',
    min: 1,
    max: 1_000_000,
    productionDefault: '1000',
    use: 'tuning',
  },
  {
    name: 'KAPI_WATCH_WINDOW_BYTES',
    meaning: "bytes of values that end a watch's window of history early, between two revisions: a window of large objects stays small",
    unit: 'bytes',
    min: 1,
    max: 1_073_741_824,
    productionDefault: '4194304',
    use: 'tuning',
  },
  {
    name: 'KAPI_WATCH_HELD_EVENTS',
    meaning: 'new events a watch holds while its history replay waits for the client; past them it drops them and reads them from the history too',
    unit: 'events',
    min: 1,
    max: 10_000_000,
    productionDefault: '10000',
    use: 'tuning',
  },
  {
    name: 'KAPI_WATCH_BOOKMARK_INTERVAL_MS',
    meaning: 'interval of watch bookmarks (kube-apiserver: 1 minute, fixed)',
    unit: 'ms',
    min: 100,
    max: 3_600_000,
    productionDefault: '60000',
    use: 'test',
  },
  {
    name: 'KAPI_CSR_CLEANER_INTERVAL_MS',
    meaning: 'interval of the CSR cleaner passes (kube-controller-manager: 1 hour, fixed)',
    unit: 'ms',
    min: 100,
    max: 86_400_000,
    productionDefault: '3600000',
    use: 'test',
  },
  {
    name: 'KAPI_PODGC_INTERVAL_MS',
    meaning:
      'interval of the pod garbage collector passes; a node must be missing for two intervals before its pods go (kube-controller-manager: 20 s and 40 s, fixed)',
    unit: 'ms',
    min: 100,
    max: 3_600_000,
    productionDefault: '20000',
    use: 'test',
  },
  {
    name: 'KAPI_HPA_SYNC_PERIOD_MS',
    meaning:
      "interval between two looks of the HorizontalPodAutoscaler controller at each HPA (kube-controller-manager's --horizontal-pod-autoscaler-sync-period)",
    unit: 'ms',
    min: 100,
    max: 3_600_000,
    productionDefault: '15000',
    use: 'tuning',
  },
  {
    name: 'KAPI_NODE_MONITOR_PERIOD_MS',
    meaning:
      "interval of the node lifecycle controller's passes (kube-controller-manager's --node-monitor-period); the taint eviction controller's passes run every second, or at this interval when shorter",
    unit: 'ms',
    min: 100,
    max: 3_600_000,
    productionDefault: '5000',
    use: 'tuning',
  },
  {
    name: 'KAPI_NODE_MONITOR_GRACE_MS',
    meaning:
      "how long a node that has posted status may stay silent (no new heartbeat of its Ready condition, no renewal of its Lease) before its conditions become Unknown (kube-controller-manager's --node-monitor-grace-period)",
    unit: 'ms',
    min: 100,
    max: 86_400_000,
    productionDefault: '50000',
    use: 'tuning',
  },
  {
    name: 'KAPI_NODE_STARTUP_GRACE_MS',
    meaning:
      "how long after its creation a node that never posted status may stay silent before its conditions become Unknown (kube-controller-manager's --node-startup-grace-period)",
    unit: 'ms',
    min: 100,
    max: 86_400_000,
    productionDefault: '60000',
    use: 'tuning',
  },
  {
    name: 'KAPI_JOB_POD_FAILURE_BACKOFF_MS',
    meaning:
      "first pause before a Job's failed pod is replaced, doubled with every failure since the last success up to 10 minutes (kube-controller-manager: 10 s, fixed)",
    unit: 'ms',
    min: 1,
    max: 600_000,
    productionDefault: '10000',
    use: 'test',
  },
  {
    name: 'KAPI_FREEZE_COPIES',
    meaning:
      '1 freezes every object kept in a watch-fed copy and every object of a live watch event shared between watchers (on the built-in store and in the shared watches of external etcd), so that a reader changing one in place (they are shared) fails at once',
    unit: 'switch',
    min: 0,
    max: 1,
    productionDefault: '0',
    use: 'test',
  },
  {
    name: 'KAPI_DAEMONSET_FAILED_POD_BACKOFF_MS',
    meaning:
      'first pause before the DaemonSet controller deletes another failed daemon pod on the same node, doubled with each one up to 15 minutes (kube-controller-manager: 1 s, fixed)',
    unit: 'ms',
    min: 1,
    max: 900_000,
    productionDefault: '1000',
    use: 'test',
  },
  {
    name: 'KAPI_TERMINATED_POD_GC_THRESHOLD',
    meaning:
      "terminated pods (Succeeded or Failed) kept before the pod garbage collector deletes the oldest (kube-controller-manager's --terminated-pod-gc-threshold); 0 keeps them all",
    unit: 'pods',
    min: 0,
    max: 100_000_000,
    productionDefault: '12500',
    use: 'tuning',
  },
  {
    name: 'KAPI_HEAP_GROWTH_PERCENT',
    meaning:
      "V8's old generation may grow by this share of what its last full collection kept before the next one starts (docs/performance.md \"Garbage collection\"); 0 (the default) leaves it to V8's own heuristics; set, it has made V8's regexp compiler abort the process. A `--heap-growing-percent` node flag of the operator's wins",
    unit: 'percent',
    min: 0,
    max: 1_000,
    productionDefault: '0',
    use: 'tuning',
  },
  {
    name: 'KAPI_TEST_FAULTS',
    meaning: '1 lets --test-disk-faults inject disk faults into storage writes (docs/disk-faults.md); without it that flag stops the start',
    unit: 'switch',
    min: 0,
    max: 1,
    productionDefault: '0',
    use: 'test',
  },
];

/**
 * `KAPI_*` names used by tools around the server, not by it (scripts/start.mjs, the e2e
 * harness); they may be in its environment and are left alone.
 */
export const KAPI_NON_SERVER_NAMES: readonly string[] = ['KAPI_START_ENTRY', 'KAPI_SERVER_ENTRY', 'KAPI_E2E_VERBOSE'];

/** A bad `KAPI_*` value: the start stops with this message (main.ts, exit code 2). */
export class EnvError extends Error {}

const byName = new Map(KAPI_ENV.map((v) => [v.name, v]));

function parse(v: EnvVar, text: string): number {
  if (!/^\d+$/.test(text)) throw new EnvError(`invalid value ${JSON.stringify(text)} for ${v.name}: must be an integer (${v.unit}) from ${v.min} to ${v.max}`);
  const n = Number(text);
  if (n < v.min || n > v.max) throw new EnvError(`invalid value ${text} for ${v.name}: must be from ${v.min} to ${v.max} ${v.unit}`);
  return n;
}

/**
 * The value of `name` (which must be in KAPI_ENV), or undefined when unset or empty. Throws
 * EnvError for a value out of its bounds or not an integer.
 */
export function envInt(name: string, env: NodeJS.ProcessEnv = process.env): number | undefined {
  const v = byName.get(name);
  if (!v) throw new Error(`${name} is not in KAPI_ENV (config/env.ts)`);
  const text = env[name];
  return text === undefined || text === '' ? undefined : parse(v, text);
}

/**
 * Checks every variable of KAPI_ENV in `env`, and the rules between them (the Lease's renew
 * deadline below its duration, the retry period below the renew deadline, as client-go's
 * leader election requires). Throws EnvError naming the first bad variable; returns warnings
 * for `KAPI_*` names it does not know (a typo would otherwise go unnoticed).
 */
export function validateEnv(env: NodeJS.ProcessEnv = process.env): string[] {
  for (const v of KAPI_ENV) envInt(v.name, env);
  const duration = envInt('KAPI_LEASE_DURATION_MS', env) ?? 15_000;
  const renew = envInt('KAPI_LEASE_RENEW_DEADLINE_MS', env) ?? 10_000;
  const retry = envInt('KAPI_LEASE_RETRY_PERIOD_MS', env) ?? 2_000;
  if (renew >= duration) throw new EnvError(`KAPI_LEASE_RENEW_DEADLINE_MS (${renew}) must be below KAPI_LEASE_DURATION_MS (${duration})`);
  if (retry >= renew) throw new EnvError(`KAPI_LEASE_RETRY_PERIOD_MS (${retry}) must be below KAPI_LEASE_RENEW_DEADLINE_MS (${renew})`);
  const warnings: string[] = [];
  for (const k of Object.keys(env).sort()) {
    if (k.startsWith('KAPI_') && !byName.has(k) && !KAPI_NON_SERVER_NAMES.includes(k))
      warnings.push(`environment variable ${k} is not read by this server (see docs/tuning.md)`);
  }
  return warnings;
}
