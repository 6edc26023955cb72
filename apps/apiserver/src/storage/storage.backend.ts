/**
 * What the rest of the server needs from the storage backend chosen by `--storage-backend`
 * (docs/storage-backends.md), so that health checks, metrics, post-start hooks and the
 * membership routes never ask which backend runs: the built-in Raft group
 * (storage.builtin.ts) and an external etcd cluster (storage.etcd3.ts) each fill it in.
 */
import type { Storage } from '@app/storage';
import type { ClusterMembership } from '../cluster/cluster.members.js';
import type { HealthCheck } from '../health/health.checks.js';

/** The storage backend of this server (injected as STORAGE_BACKEND). */
export interface StorageBackend {
  /** Its `--storage-backend` name. */
  readonly name: string;
  /** The storage the API layer uses (also provided as STORAGE). */
  readonly storage: Storage;
  /**
   * Checks of /livez (and /healthz): failing only when this process cannot make progress
   * whatever its peers do (a closed or failed store), never because a remote store is slow.
   */
  readonly livez: readonly HealthCheck[];
  /** Checks of /readyz (and /healthz): whether a linearizable request can be served now. */
  readonly readyz: readonly HealthCheck[];
  /** The member records of the built-in Raft group (`/cluster/members`); absent otherwise. */
  readonly membership?: ClusterMembership;
  /** Work that starts once the API serves (the Raft member's self-registration); absent when none. */
  startBackground?(): void;
  /** Calls `listener` once a storage failure stopped this server for good (the program then exits). */
  onFatal(listener: (e: Error) => void): void;
  /** Closes the storage (last, after the HTTP server and the controllers). */
  close(): Promise<void>;
}
