/**
 * The `--authorization-mode` list as the pipeline reads it. Default RBAC: every request is
 * authorized against the RBAC policy, members of system:masters are allowed everything, and
 * requests without credentials (system:anonymous, system:unauthenticated) get what the
 * bootstrap policy's system:public-info-viewer grants. kube-apiserver's own default is
 * AlwaysAllow (deployments set RBAC); a server that lets everyone in has to be asked for here.
 */
import type { ServerConfig } from '../config/flags.js';

/** The mode used when `--authorization-mode` is not given. */
export const DEFAULT_AUTHORIZATION_MODES: readonly string[] = ['RBAC'];

/** The `--authorization-mode` list, in order (default {@link DEFAULT_AUTHORIZATION_MODES}). */
export function authorizationModes(cfg: ServerConfig): string[] {
  const v = cfg.raw['authorization-mode'];
  return v ? v.split(',').map((m) => m.trim()) : [...DEFAULT_AUTHORIZATION_MODES];
}
