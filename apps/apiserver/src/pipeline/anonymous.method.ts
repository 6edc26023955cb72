/**
 * Anonymous access (`--anonymous-auth`): which paths a request that no method authenticated may
 * reach as system:anonymous (group system:unauthenticated), authorized like any other user.
 *   true       every path; the authorizer decides. Under RBAC (the default mode) the bootstrap
 *              policy grants system:unauthenticated only system:public-info-viewer: GET of
 *              /healthz, /livez, /readyz, /version and /version/; anything else is 403.
 *   false      none: every request needs credentials (401 without them)
 *   not given  true, unless `--authorization-mode` includes AlwaysAllow: then only the public
 *              info paths ({@link isPublicInfoPath}), since every path open to anonymous
 *              requests would be the whole cluster (kube-apiserver turns anonymous access off
 *              altogether under AlwaysAllow; keeping the public paths keeps health checks
 *              working). An explicit `true` is honoured whatever the modes.
 */
import { Inject, Injectable } from '@nestjs/common';
import type { ServerConfig } from '../config/flags.js';
import { PUBLIC_HEALTH_PATHS } from '../health/health.routes.js';
import { SERVER_CONFIG } from '../tokens.js';
import { authorizationModes } from './authorization-modes.js';

const PUBLIC_INFO_PATHS = new Set(['/version', ...PUBLIC_HEALTH_PATHS]);

/** The paths system:public-info-viewer covers for GET, bar `/version/` (what anonymous access keeps under AlwaysAllow). */
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
    const all = (): boolean => true;
    if (flag === 'true') this.allowed = all;
    else if (flag === 'false') this.allowed = () => false;
    else this.allowed = authorizationModes(cfg).includes('AlwaysAllow') ? isPublicInfoPath : all;
  }
}
