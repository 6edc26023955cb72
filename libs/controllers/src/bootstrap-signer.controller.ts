/**
 * Bootstrap signer (kube-controller-manager's `bootstrapsigner`, pkg/controller/bootstrap
 * bootstrapsigner.go): keeps one `jws-kubeconfig-<token-id>` key in the ConfigMap
 * kube-public/cluster-info for every bootstrap token that may sign (@app/auth signingToken: a
 * well-formed, unexpired token with `usage-bootstrap-signing: "true"`), the detached JWS of the
 * map's `kubeconfig` value keyed with that token; keys of tokens that are gone, expired or no
 * longer signing are removed, and a changed kubeconfig is signed again. The map is written only
 * when a signature differs.
 *
 * Triggers: a change of a token Secret, a change of cluster-info, and one timer at the earliest
 * expiration among the signing tokens (kube's signer waits for the token cleaner instead; this
 * one drops an expired token's signature at its expiration). Passes never overlap; changes
 * during a pass run one more.
 */
import type { KubeObject } from '@app/apimachinery';
import { CLUSTER_INFO_KUBECONFIG_KEY, detachedSignature, JWS_SIGNATURE_KEY_PREFIX, signingToken, timeToExpiry } from '@app/auth';

/** The ConfigMap the signer maintains. */
export const CLUSTER_INFO = { namespace: 'kube-public', name: 'cluster-info' } as const;

/** What the signer needs: the token Secrets, cluster-info (watched caches), its update and a clock. */
export interface BootstrapSignerDeps {
  /** Every bootstrap token Secret of kube-system. */
  secrets(): KubeObject[];
  /** cluster-info as last seen, if it exists. */
  clusterInfo(): KubeObject | undefined;
  /** Subscribes to changes of either; returns the unsubscribe. */
  onChange(listener: () => void): () => void;
  /** Writes cluster-info (an update carrying the resourceVersion it was computed from). */
  update(next: KubeObject): Promise<void>;
  /** Milliseconds since the epoch. Default Date.now. */
  now?: () => number;
  /** Delay before a pass after a failed one (a conflict, storage unavailable), ms. Default 1000. */
  retryMs?: number;
  /** Failure reports. Default stderr. */
  log?: (line: string) => void;
}

/**
 * The data cluster-info should hold: `data` with every `jws-kubeconfig-*` key replaced by the
 * signatures of `tokens` over its `kubeconfig`; undefined when nothing changes (or there is no
 * kubeconfig to sign, as kube's signer leaves such a map alone).
 */
export async function signedClusterInfoData(
  data: Readonly<Record<string, string>>,
  tokens: ReadonlyArray<{ id: string; secret: string }>,
): Promise<Record<string, string> | undefined> {
  const content = data[CLUSTER_INFO_KUBECONFIG_KEY];
  if (content === undefined) return undefined;
  const next: Record<string, string> = {};
  const old = new Map<string, string>();
  for (const [k, v] of Object.entries(data)) {
    if (k.startsWith(JWS_SIGNATURE_KEY_PREFIX)) old.set(k, v);
    else next[k] = v;
  }
  let changed = false;
  for (const t of tokens) {
    const key = JWS_SIGNATURE_KEY_PREFIX + t.id;
    const sig = await detachedSignature(content, t.id, t.secret);
    if (old.get(key) !== sig) changed = true;
    old.delete(key);
    next[key] = sig;
  }
  if (old.size > 0) changed = true;
  return changed ? next : undefined;
}

/** The signer; start() runs a pass, stop() drops its subscription and timers. */
export class BootstrapSigner {
  private unsubscribe: (() => void) | undefined;
  private running = false;
  private again = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly deps: BootstrapSignerDeps) {}

  start(): void {
    this.unsubscribe = this.deps.onChange(() => this.schedule());
    this.schedule();
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    clearTimeout(this.timer);
  }

  /** Resolves when no pass is running or queued (for tests). */
  async idle(): Promise<void> {
    while (this.running || this.again) await new Promise((r) => setTimeout(r, 5));
  }

  private schedule(): void {
    if (!this.unsubscribe) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    setImmediate(() => {
      this.pass()
        .catch((e) => {
          (this.deps.log ?? ((l) => process.stderr.write(l + '\n')))(`bootstrap signer: ${(e as Error).message}; retrying`);
          this.wake(this.deps.retryMs ?? 1000);
        })
        .finally(() => {
          this.running = false;
          if (this.again) {
            this.again = false;
            this.schedule();
          }
        });
    });
  }

  private wake(ms: number): void {
    clearTimeout(this.timer);
    if (!this.unsubscribe) return;
    this.timer = setTimeout(() => this.schedule(), Math.min(ms, 2 ** 31 - 1));
    this.timer.unref();
  }

  private async pass(): Promise<void> {
    const now = (this.deps.now ?? Date.now)();
    const tokens: Array<{ id: string; secret: string }> = [];
    let nextExpiry: number | undefined;
    for (const s of this.deps.secrets()) {
      const t = signingToken(s, now);
      if (!t) continue;
      tokens.push(t);
      const ttl = timeToExpiry(s, now);
      if (ttl !== undefined) nextExpiry = Math.min(nextExpiry ?? ttl, ttl);
    }
    tokens.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    clearTimeout(this.timer);
    if (nextExpiry !== undefined) this.wake(nextExpiry);
    const cm = this.deps.clusterInfo();
    if (!cm) return;
    const data = (cm.data ?? {}) as Record<string, string>;
    const next = await signedClusterInfoData(data, tokens);
    if (next === undefined || !this.unsubscribe) return;
    // A copy: the cached object is shared with the cache's other readers.
    const copy = structuredClone(cm);
    copy.data = next;
    await this.deps.update(copy);
  }
}
