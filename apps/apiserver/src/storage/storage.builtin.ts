/**
 * The built-in storage backend (docs/cluster.md): this node's Raft member on LevelDB, as a
 * StorageBackend, with the post-start hook that registers the member in the cluster's records.
 */
import { Inject, Injectable } from '@nestjs/common';
import { PostStartHook, type PostStartHookProvider } from '../bootstrap/post-start-hook.js';
import type { ClusterNode } from '../cluster/cluster.node.js';
import { CLUSTER_NODE } from '../tokens.js';
import type { StorageBackend } from './storage.backend.js';

/**
 * The backend view of a cluster node: livez `storage` (the store is open and no write failed),
 * readyz `storage` and `raft` (a leader heard from within the election timeout).
 */
export function builtinBackend(node: ClusterNode): StorageBackend {
  const storage = { name: 'storage', check: () => node.storageCheck() };
  return {
    name: 'builtin',
    storage: node.cs.storage,
    livez: [storage],
    readyz: [storage, { name: 'raft', check: () => node.raftCheck() }],
    membership: node.membership,
    startBackground: () => node.startBackground(),
    onFatal: (listener) => node.cs.node.onFatal(listener),
    close: () => node.close(),
  };
}

/** Starts the background self-registration in the member records (docs/cluster.md). */
@PostStartHook({ name: 'cluster-registration', order: 400 })
@Injectable()
export class ClusterRegistration implements PostStartHookProvider {
  constructor(@Inject(CLUSTER_NODE) private readonly node: ClusterNode) {}

  async runPostStartHook(): Promise<void> {
    this.node.startBackground();
  }
}
