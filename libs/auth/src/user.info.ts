/**
 * Who is asking, as authentication produced it (Kubernetes' user.Info). Authenticators create
 * it; the pipeline may replace it once (impersonation); everything after reads it and never
 * mutates it.
 */
export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

/** The group every authenticated user is in (Kubernetes adds it to every authenticated user). */
export const AUTHENTICATED_GROUP = 'system:authenticated';

/** The superuser group (Kubernetes' user.SystemPrivilegedGroup, bound to cluster-admin). */
export const PRIVILEGED_GROUP = 'system:masters';

/** The user and group of a request without credentials that anonymous access lets through. */
export const ANONYMOUS_USER = 'system:anonymous';
export const UNAUTHENTICATED_GROUP = 'system:unauthenticated';
