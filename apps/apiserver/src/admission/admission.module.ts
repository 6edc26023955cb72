/**
 * The admission chain. Each plugin is a provider marked with `@AdmissionPlugin({ name, order })`
 * in whatever module provides it; the chain collects them at start (no central list) and runs
 * them in `order` (kube-apiserver's fixed plugin order), minus those named in
 * `--disable-admission-plugins`. The generic store calls the chain's admit (mutating) and
 * validate phases (libs/registry).
 */
import { Global, Inject, Injectable, Module, type OnModuleInit } from '@nestjs/common';
import { DiscoveryModule, DiscoveryService } from '@nestjs/core';
import { AdmissionChain } from '@app/admission';
import type { Admission, AdmissionAttributes } from '@app/registry';
import type { ServerConfig } from '../config/flags.js';
import { ADMISSION, SERVER_CONFIG } from '../tokens.js';
import { NamespaceLifecyclePlugin } from './namespace-lifecycle.provider.js';
import { AdmissionPlugin } from './admission.plugin.js';
import {
  CertificateApprovalPlugin,
  CertificateRequestValidationPlugin,
  CertificateSigningPlugin,
  CertificateSubjectRestrictionPlugin,
} from './certificates.provider.js';
import { DefaultTolerationSecondsPlugin } from './default-toleration-seconds.provider.js';
import { DefaultIngressClassPlugin } from './ingress-class.provider.js';
import { LimitRangerPlugin } from './limit-ranger.provider.js';
import { NodeRestrictionPlugin } from './node-restriction.provider.js';
import { PriorityPlugin } from './priority.provider.js';
import { RbacEscalationPlugin } from './rbac-escalation.provider.js';
import { ResourceQuotaPlugin } from './resource-quota.provider.js';
import { RuntimeClassPlugin } from './runtimeclass.provider.js';
import { TaintNodesByConditionPlugin } from './taint-nodes-by-condition.provider.js';
import { SecurityContextDenyPlugin } from './security-context-deny.provider.js';
import { ServiceAccountPlugin } from './serviceaccount.provider.js';
import { DefaultStorageClassPlugin, PersistentVolumeClaimResizePlugin } from './storage-class.provider.js';
import { StorageObjectInUseProtectionPlugin } from './storage-protection.provider.js';
import { AdmissionWebhooks, MutatingAdmissionWebhookPlugin, ValidatingAdmissionWebhookPlugin } from './webhook/webhook.provider.js';
import { AdmissionPolicies, ValidatingAdmissionPolicyPlugin } from './policy/validating-admission-policy.provider.js';

/** The chain of the discovered plugins; filled in onModuleInit, before any request is served. */
@Injectable()
export class DiscoveredAdmission implements Admission, OnModuleInit {
  private chain = new AdmissionChain([]);
  /** Names of the plugins in the chain, in order. */
  names: string[] = [];

  constructor(
    private readonly discovery: DiscoveryService,
    @Inject(SERVER_CONFIG) private readonly cfg: ServerConfig,
  ) {}

  onModuleInit(): void {
    const names = (flag: string) =>
      new Set(
        (this.cfg.raw[flag] ?? '')
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
      );
    const disabled = names('disable-admission-plugins');
    const enabled = names('enable-admission-plugins');
    const found = this.discovery
      .getProviders({ metadataKey: AdmissionPlugin.KEY })
      .map((w) => ({ meta: this.discovery.getMetadataByDecorator(AdmissionPlugin, w)!, plugin: w.instance as Admission }))
      .filter((p) => p.meta.required === true || (!disabled.has(p.meta.name) && (!p.meta.defaultOff || enabled.has(p.meta.name))))
      .sort((a, b) => a.meta.order - b.meta.order);
    this.names = found.map((p) => p.meta.name);
    this.chain = new AdmissionChain(found.map((p) => p.plugin));
  }

  admit(attrs: AdmissionAttributes): Promise<void> {
    return this.chain.admit(attrs);
  }

  validate(attrs: AdmissionAttributes): Promise<void> {
    return this.chain.validate(attrs);
  }
}

/** Global module of the admission chain and the built-in plugins. */
@Global()
@Module({
  imports: [DiscoveryModule],
  providers: [
    DiscoveredAdmission,
    { provide: ADMISSION, useExisting: DiscoveredAdmission },
    NamespaceLifecyclePlugin,
    NodeRestrictionPlugin,
    RbacEscalationPlugin,
    CertificateApprovalPlugin,
    CertificateSigningPlugin,
    CertificateSubjectRestrictionPlugin,
    CertificateRequestValidationPlugin,
    DefaultIngressClassPlugin,
    TaintNodesByConditionPlugin,
    LimitRangerPlugin,
    ServiceAccountPlugin,
    PriorityPlugin,
    DefaultTolerationSecondsPlugin,
    DefaultStorageClassPlugin,
    StorageObjectInUseProtectionPlugin,
    PersistentVolumeClaimResizePlugin,
    RuntimeClassPlugin,
    SecurityContextDenyPlugin,
    AdmissionWebhooks,
    MutatingAdmissionWebhookPlugin,
    AdmissionPolicies,
    ValidatingAdmissionPolicyPlugin,
    ValidatingAdmissionWebhookPlugin,
    ResourceQuotaPlugin,
  ],
  exports: [ADMISSION],
})
export class AdmissionModule {}
