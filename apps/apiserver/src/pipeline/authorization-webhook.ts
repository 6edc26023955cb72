/**
 * The client of the Webhook authorization mode, from `--authorization-webhook-config-file` (a
 * kubeconfig naming the service, its CA and the client certificate this server presents),
 * `--authorization-webhook-version` (v1 default, v1beta1) and the cache TTLs
 * `--authorization-webhook-cache-authorized-ttl` (default 5m0s) and
 * `--authorization-webhook-cache-unauthorized-ttl` (default 30s).
 */
import { parseGoDuration } from '@app/apimachinery';
import { httpsJson, withWebhookBackoff } from '@app/auth';
import { WebhookAuthorizer } from '@app/authz';
import type { ServerConfig } from '../config/flags.js';
import { webhookTargetOf } from './authentication-method.js';

/** kube-apiserver's defaults of the two cache TTLs. */
export const DEFAULT_AUTHORIZED_TTL = '5m0s';
export const DEFAULT_UNAUTHORIZED_TTL = '30s';

/** The Webhook mode's authorizer, or undefined when no configuration file is given. */
export function authorizationWebhookFor(cfg: ServerConfig): WebhookAuthorizer | undefined {
  const target = webhookTargetOf(cfg, 'authorization-webhook-config-file');
  if (!target) return undefined;
  const { server, caPem, certPem, keyPem } = target;
  const ms = (flag: string, dflt: string) => parseGoDuration(cfg.raw[flag] ?? dflt) / 1e6;
  return new WebhookAuthorizer({
    version: cfg.raw['authorization-webhook-version'] === 'v1beta1' ? 'v1beta1' : 'v1',
    authorizedTtlMs: ms('authorization-webhook-cache-authorized-ttl', DEFAULT_AUTHORIZED_TTL),
    unauthorizedTtlMs: ms('authorization-webhook-cache-unauthorized-ttl', DEFAULT_UNAUTHORIZED_TTL),
    post: withWebhookBackoff((review) => httpsJson(server, { method: 'POST', body: review, ca: caPem, cert: certPem, key: keyPem })),
  });
}
