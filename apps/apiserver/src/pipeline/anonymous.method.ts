/**
 * Anonymous access (`--anonymous-auth`): which paths a request that no method authenticated may
 * reach as system:anonymous (group system:unauthenticated), authorized like any other user.
 *   not given  only /version, /healthz, /livez, /readyz ({@link isPublicInfoPath})
 *   false      none: those paths need credentials too
 *   true       every path
 * kube-apiserver's default is true with RBAC behind it. This build's default authorizer is
 * AlwaysAllow, under which every path open to anonymous requests would be the whole cluster;
 * unlimited anonymous access therefore has to be asked for.
 */
import { Inject, Injectable } from '@nestjs/common';
import type { ServerConfig } from '../config/flags.js';
import { PUBLIC_HEALTH_PATHS } from '../health/health.routes.js';
import { SERVER_CONFIG } from '../tokens.js';

const PUBLIC_INFO_PATHS = new Set(['/version', ...PUBLIC_HEALTH_PATHS]);

/** Paths a request without credentials may reach by default (kube's anonymous access limited to these endpoints). */
export function isPublicInfoPath(path: string): boolean {
  return PUBLIC_INFO_PATHS.has(path);
}

/** The policy the pipeline's authentication stage asks about a request without credentials. */
@Injectable()
export class AnonymousAccess {
  /** Whether a request without credentials may reach `path`. */
  readonly allowed: (path: string) => boolean;

  constructor(@Inject(SERVER_CONFIG) cfg: ServerConfig) {
    const flag = cfg.raw['anonymous-auth'];
    this.allowed = flag === 'true' ? () => true : flag === 'false' ? () => false : isPublicInfoPath;
  }
}
