/**
 * The ports of the request pipeline as providers, chosen from the flags:
 * - AUTHENTICATOR: the union of the authentication methods, each a provider in its own
 *   `*.method.ts` marked with `@AuthenticationMethod({ name, order })`: request header, x509,
 *   static token file, bootstrap token, service-account tokens, OIDC, webhook, then the refusal of an unaccepted bearer token;
 * - AnonymousAccess: where a request without credentials may go (`--anonymous-auth`);
 * - AUTHORIZER: the `--authorization-mode` list (default RBAC); RBAC reads the policy
 *   RbacPolicyWatcher keeps current from storage watches, Webhook asks the service of
 *   `--authorization-webhook-config-file`;
 * - AUDIT_SINK: the audit policy of `--audit-policy-file` and its log and webhook backends (none without a policy and a backend);
 * - FLOW_CONTROL: the in-flight limits (--max-requests-inflight, --max-mutating-requests-inflight).
 */
import { Global, Injectable, Module, type OnModuleInit } from '@nestjs/common';
import { DiscoveryModule, DiscoveryService } from '@nestjs/core';
import { AUTHENTICATOR, AuthenticatorChain, type AuthenticationRequest, type Authenticator, type UserInfo } from '@app/auth';
import { AUTHORIZER, authorizerForModes } from '@app/authz';
import { AbacPolicyFile } from './abac-policy.js';
import { NodeGraphWatcher } from './node-graph.watcher.js';
import type { ServerConfig } from '../config/flags.js';
import { SERVER_CONFIG } from '../tokens.js';
import { AnonymousAccess } from './anonymous.method.js';
import { authorizationModes } from './authorization-modes.js';
import { authorizationWebhookFor } from './authorization-webhook.js';
import { AUDIT_SINK } from './audit.port.js';
import { auditSinkFor } from '../audit/audit.sink.js';
import { ApiMetrics } from '../observability/metrics.js';
import { AuthenticationMethod } from './authentication-method.js';
import { BootstrapTokenMethod } from './bootstrap-token.method.js';
import { BootstrapTokenSecrets } from './bootstrap-token.watcher.js';
import { FLOW_CONTROL, MaxInflightFlowControl } from './flow-control.port.js';
import { OidcMethod } from './oidc.method.js';
import { RbacPolicyWatcher } from './rbac-policy.watcher.js';
import { RequestHeaderMethod } from './request-header.method.js';
import { ServiceAccountObjectsWatcher } from './serviceaccount-objects.watcher.js';
import { ServiceAccountTokens } from './serviceaccount.config.js';
import { ServiceAccountMethod } from './serviceaccount.method.js';
import { TokenFileMethod } from './token-file.method.js';
import { UnrecognizedBearerTokenMethod } from './unrecognized-token.method.js';
import { WebhookMethod } from './webhook.method.js';
import { X509Method } from './x509.method.js';

export { AuthenticationMethod } from './authentication-method.js';
export { authorizationModes } from './authorization-modes.js';

/** The chain of the discovered methods; filled in onModuleInit, before any request is served. */
@Injectable()
export class DiscoveredAuthenticators implements Authenticator, OnModuleInit {
  private chain = new AuthenticatorChain([]);
  /** Names of the methods, in the order they are asked. */
  names: string[] = [];

  constructor(private readonly discovery: DiscoveryService) {}

  onModuleInit(): void {
    const found = this.discovery
      .getProviders({ metadataKey: AuthenticationMethod.KEY })
      .map((w) => ({ meta: this.discovery.getMetadataByDecorator(AuthenticationMethod, w)!, method: w.instance as Authenticator }))
      .sort((a, b) => a.meta.order - b.meta.order);
    this.names = found.map((m) => m.meta.name);
    this.chain = new AuthenticatorChain(found.map((m) => m.method));
  }

  authenticate(req: AuthenticationRequest): UserInfo | undefined | Promise<UserInfo | undefined> {
    return this.chain.authenticate(req);
  }
}

/** Global module of the pipeline's ports. */
@Global()
@Module({
  imports: [DiscoveryModule],
  providers: [
    RequestHeaderMethod,
    X509Method,
    TokenFileMethod,
    BootstrapTokenSecrets,
    BootstrapTokenMethod,
    ServiceAccountTokens,
    ServiceAccountObjectsWatcher,
    ServiceAccountMethod,
    OidcMethod,
    WebhookMethod,
    UnrecognizedBearerTokenMethod,
    AnonymousAccess,
    DiscoveredAuthenticators,
    { provide: AUTHENTICATOR, useExisting: DiscoveredAuthenticators },
    RbacPolicyWatcher,
    NodeGraphWatcher,
    AbacPolicyFile,
    {
      provide: AUTHORIZER,
      useFactory: (cfg: ServerConfig, rbac: RbacPolicyWatcher, nodeGraph: NodeGraphWatcher, abac: AbacPolicyFile) => {
        const webhook = authorizationWebhookFor(cfg);
        return authorizerForModes(authorizationModes(cfg), {
          rbac: rbac.policy,
          nodeGraph,
          ...(webhook ? { webhook } : {}),
          ...(abac.authorizer ? { abac: abac.authorizer } : {}),
        });
      },
      inject: [SERVER_CONFIG, RbacPolicyWatcher, NodeGraphWatcher, AbacPolicyFile],
    },
    { provide: AUDIT_SINK, useFactory: (cfg: ServerConfig, metrics: ApiMetrics) => auditSinkFor(cfg, metrics), inject: [SERVER_CONFIG, ApiMetrics] },
    {
      provide: FLOW_CONTROL,
      useFactory: (cfg: ServerConfig) => new MaxInflightFlowControl({ readOnly: cfg.maxRequestsInflight, mutating: cfg.maxMutatingRequestsInflight }),
      inject: [SERVER_CONFIG],
    },
  ],
  exports: [
    AUTHENTICATOR,
    AnonymousAccess,
    AUTHORIZER,
    RbacPolicyWatcher,
    AbacPolicyFile,
    BootstrapTokenSecrets,
    ServiceAccountTokens,
    ServiceAccountObjectsWatcher,
    AUDIT_SINK,
    FLOW_CONTROL,
  ],
})
export class PipelineModule {}
