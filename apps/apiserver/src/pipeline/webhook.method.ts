/**
 * Webhook token authentication, enabled by `--authentication-token-webhook-config-file` (a
 * kubeconfig naming the service, its CA and the client certificate this server presents),
 * with `--authentication-token-webhook-cache-ttl` (default 2m0s) and
 * `--authentication-token-webhook-version` (v1 default, v1beta1).
 */
import { Inject, Injectable } from '@nestjs/common';
import { parseGoDuration } from '@app/apimachinery';
import { httpsJson, withWebhookBackoff, WebhookTokenAuthenticator, type AuthenticationRequest, type Authenticator, type UserInfo } from '@app/auth';
import type { ServerConfig } from '../config/flags.js';
import { SERVER_CONFIG } from '../tokens.js';
import { AuthenticationMethod, METHOD_ORDER, webhookTargetOf } from './authentication-method.js';

/** kube-apiserver's default of --authentication-token-webhook-cache-ttl. */
export const DEFAULT_WEBHOOK_CACHE_TTL = '2m0s';

/** The webhook method (undefined for every request when the flag is not given). */
@AuthenticationMethod({ name: 'webhook', order: METHOD_ORDER.webhook })
@Injectable()
export class WebhookMethod implements Authenticator {
  private readonly inner?: WebhookTokenAuthenticator;

  constructor(@Inject(SERVER_CONFIG) cfg: ServerConfig) {
    const target = webhookTargetOf(cfg, 'authentication-token-webhook-config-file');
    if (!target) return;
    const { server, caPem, certPem, keyPem } = target;
    this.inner = new WebhookTokenAuthenticator({
      version: cfg.raw['authentication-token-webhook-version'] === 'v1beta1' ? 'v1beta1' : 'v1',
      cacheTtlMs: parseGoDuration(cfg.raw['authentication-token-webhook-cache-ttl'] ?? DEFAULT_WEBHOOK_CACHE_TTL) / 1e6,
      post: withWebhookBackoff((review) => httpsJson(server, { method: 'POST', body: review, ca: caPem, cert: certPem, key: keyPem })),
    });
  }

  authenticate(req: AuthenticationRequest): Promise<UserInfo | undefined> | undefined {
    return this.inner?.authenticate(req);
  }
}
