/**
 * The aggregation layer's port (kube-aggregator): group-versions another server serves, named
 * by APIService objects with a `service`. The HTTP edge asks it which requests under /apis go
 * elsewhere, and what discovery lists besides the kinds served here. The apiregistration group
 * module provides it (groups/apiregistration/aggregation); without that group nothing is remote.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { StatusError } from '@app/apimachinery';
import type { UserInfo } from '@app/auth';

/** Token of the Aggregator. */
export const AGGREGATOR = Symbol.for('kapi.Aggregator');

/** What discovery knows of one remote group-version. */
export interface RemoteVersion {
  version: string;
  /**
   * The resources of the server's APIResourceList at /apis/<group>/<version>, as last fetched;
   * undefined when no fetch has succeeded yet.
   */
  resources?: readonly Record<string, unknown>[];
  /** False when the last fetch failed: `resources` are older (aggregated discovery says Stale). */
  fresh: boolean;
}

/** A remote group, its versions in the order of preference (versionPriority, then kube's version order). */
export interface RemoteGroup {
  name: string;
  /** The group's highest groupPriorityMinimum. */
  priority: number;
  versions: readonly RemoteVersion[];
}

/** The remote group-versions and the way to them. */
export interface Aggregator {
  /** Changes whenever remoteGroups() or openApiV3() would answer differently (the cache key of discovery and OpenAPI). */
  version(): number;
  /** The remote groups (group-versions served here left out), highest groupPriorityMinimum first, then by name. */
  remoteGroups(): readonly RemoteGroup[];
  /** The OpenAPI v3 documents of the remote group-versions, keyed `apis/<group>/<version>`, as JSON text. */
  openApiV3(): ReadonlyMap<string, string>;
  /** True when requests to /apis/<group>/<version> go to another server. */
  isRemote(group: string, version: string): boolean;
  /** Passes the request on to the server of its group-version, as `user`; throws the Status it fails with. */
  proxy(req: FastifyRequest, reply: FastifyReply, group: string, version: string, user: UserInfo): Promise<void>;
  /**
   * A GET of `path` (with its query) from the server of a remote group-version, as `user`, for
   * this server's own controllers: its status and body. Throws a StatusError 404 when no remote
   * APIService names the group-version, 503 when it is not available or cannot be reached.
   */
  getRemote(group: string, version: string, path: string, user: UserInfo): Promise<{ status: number; body: Buffer }>;
}

/** An Aggregator with nothing remote (the apiregistration group is not served). */
export const NO_AGGREGATOR: Aggregator = {
  version: () => 0,
  remoteGroups: () => [],
  openApiV3: () => new Map(),
  isRemote: () => false,
  proxy: () => Promise.reject(new Error('no group-version is served elsewhere')),
  getRemote: () => Promise.reject(new StatusError(404, 'NotFound', 'the server could not find the requested resource')),
};
