/**
 * Keeps the in-memory RBAC policy (@app/authz RbacPolicy) current on every node: lists the four
 * RBAC kinds at one revision, then watches the group's keys from that revision, so a RoleBinding
 * written through any node of a cluster is in every node's policy as soon as the node applies
 * the write. A failed watch (compaction, storage closing, a snapshot replacing the local state)
 * relists after a second.
 *
 * The first list reads the local replica (consistency Any, what a Kubernetes informer's list
 * at resourceVersion 0 does), not a quorum read: a node restarted without a quorum still
 * authorizes from the policy it holds (anonymous health probes keep their public-info grant),
 * and the watch brings it up to date as the node applies the log.
 */
import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { KubeObject } from '@app/apimachinery';
import { RbacPolicy, type RbacKind, type RbacObject } from '@app/authz';
import { collectionPrefix } from '@app/registry';
import type { Storage, StorageEvent, WatchHandle } from '@app/storage';
import { STORAGE } from '../tokens.js';

const GROUP = 'rbac.authorization.k8s.io';
/** The four kinds by plural, with their scope. */
const KINDS: ReadonlyArray<{ kind: RbacKind; plural: string; namespaced: boolean }> = [
  { kind: 'ClusterRole', plural: 'clusterroles', namespaced: false },
  { kind: 'ClusterRoleBinding', plural: 'clusterrolebindings', namespaced: false },
  { kind: 'Role', plural: 'roles', namespaced: true },
  { kind: 'RoleBinding', plural: 'rolebindings', namespaced: true },
];
const GROUP_PREFIX = `/registry/${GROUP}/`;
/** Longest wait for the first list at start (see onApplicationBootstrap). */
const FIRST_SYNC_WAIT_MS = 5_000;

/** The RBAC policy of this node and the list-then-watch that feeds it. */
@Injectable()
export class RbacPolicyWatcher implements OnApplicationBootstrap, OnApplicationShutdown {
  /** The policy the RBAC authorizer and the escalation checks read. */
  readonly policy = new RbacPolicy();
  private watch: WatchHandle | undefined;
  private stopped = false;
  private retry: NodeJS.Timeout | undefined;
  private synced = false;
  private readonly waiters: Array<() => void> = [];

  constructor(@Inject(STORAGE) private readonly storage: Storage) {}

  /**
   * Starts the list-then-watch and waits for the first list (a read of the local replica) for
   * up to FIRST_SYNC_WAIT_MS, so a node serves its first request with the policy it holds:
   * an anonymous health probe right after a restart gets its public-info grant, not a 403.
   * A storage that does not answer that soon (an external etcd still unreachable) does not
   * hold the start; the watcher keeps trying in the background.
   */
  async onApplicationBootstrap(): Promise<void> {
    this.start();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.whenSynced(), new Promise<void>((resolve) => (timer = setTimeout(resolve, FIRST_SYNC_WAIT_MS)))]);
    clearTimeout(timer);
  }

  onApplicationShutdown(): void {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    this.watch?.stop();
  }

  /** Resolves once the first list has been loaded. */
  whenSynced(): Promise<void> {
    return this.synced ? Promise.resolve() : new Promise((resolve) => this.waiters.push(resolve));
  }

  private start(): void {
    if (this.stopped) return;
    this.sync().catch((e) => {
      process.stderr.write(`rbac policy: list failed (${(e as Error).message}), retrying\n`);
      this.later();
    });
  }

  private later(): void {
    if (this.stopped) return;
    this.retry = setTimeout(() => this.start(), 1000);
    this.retry.unref();
  }

  private async sync(): Promise<void> {
    const all = { Role: [], ClusterRole: [], RoleBinding: [], ClusterRoleBinding: [] } as Record<RbacKind, RbacObject[]>;
    let revision: number | undefined;
    for (const k of KINDS) {
      const consistency = revision === undefined ? ({ mode: 'Any' } as const) : ({ mode: 'Exact', revision } as const);
      const res = await this.storage.list(collectionPrefix({ group: GROUP, plural: k.plural, namespaced: k.namespaced }, ''), {
        consistency,
        skipUndecodable: true,
      });
      revision ??= res.revision;
      all[k.kind] = res.items as RbacObject[];
    }
    if (this.stopped) return;
    this.policy.replace(all);
    this.synced = true;
    for (const w of this.waiters.splice(0)) w();
    this.watch = this.storage.watch(
      { key: GROUP_PREFIX, recursive: true, afterRevision: revision! },
      {
        event: (e) => this.onEvent(e),
        error: (err) => {
          if (!this.stopped) process.stderr.write(`rbac policy: watch failed (${err.code}: ${err.message}), relisting\n`);
          this.watch?.stop();
          this.later();
        },
      },
    );
  }

  private onEvent(e: StorageEvent): void {
    const plural = e.key.slice(GROUP_PREFIX.length).split('/')[0];
    const k = KINDS.find((x) => x.plural === plural);
    if (!k) return;
    if (e.type === 'DELETED') this.policy.delete(k.kind, e.object as KubeObject as RbacObject);
    else this.policy.set(k.kind, e.object as KubeObject as RbacObject);
  }
}
