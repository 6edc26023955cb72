/**
 * Health endpoints with kube-apiserver's semantics (k8s.io/apiserver/pkg/server/healthz):
 *
 * - `/livez`, `/readyz`, `/healthz` run their checks in order. All pass: 200 `ok`, or with
 *   `?verbose` one line per check (`[+]name ok`) and `<endpoint> check passed`. Any fails: 500
 *   with every check listed, failures as `[-]name failed: reason withheld` (the reason goes to
 *   the server log only), and `<endpoint> check failed` last.
 * - `?exclude=name` (repeatable) skips a check: `[+]name excluded: ok`; names matching no check
 *   add a `warn: some health checks cannot be excluded: no matches for "x"` line.
 * - `/<endpoint>/<name>` runs one check: 200 `ok`, or 500 `internal server error: <reason>`.
 *
 * A check reads state its owner keeps current (docs/health.md); nothing is computed per probe.
 */

/** One named check. */
export interface HealthCheck {
  /** The name in verbose output and in `/<endpoint>/<name>` (may contain `/`). */
  readonly name: string;
  /** undefined when healthy, else why not (shown only in logs and on the check's own path). */
  check(): string | undefined;
}

/** The three endpoints. */
export type HealthEndpoint = 'livez' | 'readyz' | 'healthz';

/** An answer to send: status and plain-text body. */
export interface HealthAnswer {
  readonly status: 200 | 500;
  readonly body: string;
  /** `name: reason` of each failed check (for the server log), empty when all passed. */
  readonly failures: readonly string[];
}

/**
 * Runs `checks` for `endpoint` with the request's `verbose` flag and `exclude` names, and builds
 * the answer kube-apiserver's root health handler gives.
 */
export function runHealthChecks(
  endpoint: HealthEndpoint,
  checks: readonly HealthCheck[],
  opts: { verbose: boolean; exclude: readonly string[] },
): HealthAnswer {
  const excluded = new Set(opts.exclude);
  const lines: string[] = [];
  const failures: string[] = [];
  for (const c of checks) {
    if (excluded.delete(c.name)) {
      lines.push(`[+]${c.name} excluded: ok`);
      continue;
    }
    const reason = c.check();
    if (reason === undefined) lines.push(`[+]${c.name} ok`);
    else {
      lines.push(`[-]${c.name} failed: reason withheld`);
      failures.push(`${c.name}: ${reason}`);
    }
  }
  if (excluded.size > 0) {
    lines.push(
      `warn: some health checks cannot be excluded: no matches for ${[...excluded]
        .sort()
        .map((n) => JSON.stringify(n))
        .join(',')}`,
    );
  }
  // A failure is always verbose (as kube's): the operator sees which check failed.
  if (failures.length > 0) return { status: 500, body: `${lines.join('\n')}\n${endpoint} check failed\n`, failures };
  if (!opts.verbose) return { status: 200, body: 'ok', failures };
  return { status: 200, body: `${lines.join('\n')}\n${endpoint} check passed\n`, failures };
}

/** Runs the check named `name` alone; undefined when `checks` has none of that name. */
export function runOneHealthCheck(checks: readonly HealthCheck[], name: string): HealthAnswer | undefined {
  const c = checks.find((x) => x.name === name);
  if (!c) return undefined;
  const reason = c.check();
  if (reason === undefined) return { status: 200, body: 'ok', failures: [] };
  return { status: 500, body: `internal server error: ${reason}\n`, failures: [`${c.name}: ${reason}`] };
}

/** The check sets of the three endpoints. */
export interface HealthCheckSets {
  readonly livez: readonly HealthCheck[];
  readonly readyz: readonly HealthCheck[];
  /** The union of livez and readyz, livez's first, each name once (kube's healthz runs them all). */
  readonly healthz: readonly HealthCheck[];
}

/** Builds the three sets from the liveness and readiness checks (a name in both is one check). */
export function healthCheckSets(livez: readonly HealthCheck[], readyz: readonly HealthCheck[]): HealthCheckSets {
  const healthz: HealthCheck[] = [];
  const seen = new Set<string>();
  for (const c of [...livez, ...readyz]) {
    if (seen.has(c.name)) continue;
    seen.add(c.name);
    healthz.push(c);
  }
  return { livez, readyz, healthz };
}

/** What one node's checks read (each kept current by its owner). */
export interface NodeHealthSources {
  /** Event loop stall against its bound (eventloop.monitor.ts). */
  eventLoop(): string | undefined;
  /**
   * The storage backend's liveness checks (storage/storage.backend.ts): the built-in store's
   * `storage`; an external etcd's `storage` (open), never the remote store's latency.
   */
  storageLivez: readonly HealthCheck[];
  /** The backend's readiness checks: `storage` and `raft` built in, `storage` and `etcd` on etcd. */
  storageReadyz: readonly HealthCheck[];
  /** The post-start hooks (bootstrap/post-start-hook.ts), each failing until it has completed. */
  postStartHooks: readonly string[];
  postStartHook(name: string): string | undefined;
  /** Not shutting down. */
  shutdown(): string | undefined;
  /** The disk takes this node's writes (a full disk fails it until space is back; docs/disk-faults.md). */
  storageDisk(): string | undefined;
}

/**
 * The node's checks (docs/health.md): livez = ping, eventloop, the backend's liveness checks
 * (the process can make progress); readyz = ping, the backend's readiness checks, storage-disk,
 * poststarthook/<each hook>, shutdown (it can serve a linearizable request now); healthz = both.
 */
export function nodeHealthChecks(s: NodeHealthSources): HealthCheckSets {
  const ping: HealthCheck = { name: 'ping', check: () => undefined };
  return healthCheckSets(
    [ping, { name: 'eventloop', check: () => s.eventLoop() }, ...s.storageLivez],
    [
      ping,
      ...s.storageReadyz,
      { name: 'storage-disk', check: () => s.storageDisk() },
      ...s.postStartHooks.map((h) => ({ name: `poststarthook/${h}`, check: () => s.postStartHook(h) })),
      { name: 'shutdown', check: () => s.shutdown() },
    ],
  );
}
