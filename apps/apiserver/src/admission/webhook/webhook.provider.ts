/**
 * The MutatingAdmissionWebhook and ValidatingAdmissionWebhook plugins (on by default, as in
 * kube-apiserver; last in the chain but for nothing after them). Both read the stored
 * MutatingWebhookConfiguration and ValidatingWebhookConfiguration objects from a watch-fed copy
 * kept on every node, so a configuration written through any node takes effect on each as soon
 * as it applies the write.
 *
 * A webhook named by `clientConfig.service` is reached at an address of the Service's Endpoints
 * (the port the Service maps the webhook's port to), verified as `<name>.<namespace>.svc`: this
 * server routes to endpoints, as kube-apiserver does with `--enable-aggregator-routing`, since
 * nothing here makes a Service's cluster IP reachable. The credentials presented to webhooks
 * come from `--admission-control-config-file`.
 *
 * A DELETE reaches the chain's validating phase only (libs/registry): the mutating plugin calls
 * its webhooks there, before the validating plugin's, to allow or refuse the delete.
 */
import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { AUTHORIZER, type Authorizer } from '@app/authz';
import { collectionPrefix, KindRegistry, objectKey, type Admission, type AdmissionAttributes } from '@app/registry';
import type { Storage } from '@app/storage';
import type { ServerConfig } from '../../config/flags.js';
import { NAMESPACE_NAME_LABEL } from '../../groups/core/namespace/namespace.strategy.js';
import { ApiMetrics } from '../../observability/metrics.js';
import { flagStartError } from '../../pipeline/authentication-method.js';
import { WatchedCollection } from '../../pipeline/watched-collection.js';
import { SERVER_CONFIG, STORAGE } from '../../tokens.js';
import { AdmissionPlugin } from '../admission.plugin.js';
import {
  closeWebhookConnections,
  postReview,
  webhookTarget,
  webhookCredentialsFromAdmissionConfig,
  type WebhookCredentials,
  type WebhookPluginName,
  type WebhookTarget,
} from './webhook.client.js';
import { WebhookDispatcher } from './webhook.dispatcher.js';
import { webhooksOf, type Webhook } from './webhook.matcher.js';

type Obj = Record<string, unknown>;
const GROUP = 'admissionregistration.k8s.io';
const obj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const NAMESPACES = { group: '', plural: 'namespaces', namespaced: false };
/** Longest wait of a request for the first list of the configurations. */
const READY_WAIT_MS = 10_000;

/** The stored webhook configurations of one kind, in calling order (by configuration name). */
class WebhookConfigurations {
  private readonly collection: WatchedCollection<Webhook[]>;
  private sorted: Webhook[] | undefined;

  constructor(storage: Storage, plural: string, mutating: boolean) {
    this.collection = new WatchedCollection<Webhook[]>(
      storage,
      collectionPrefix({ group: GROUP, plural, namespaced: false }, ''),
      (o) => webhooksOf(o as unknown as Obj, mutating),
      `${plural} for admission`,
    );
    this.collection.onChange(() => (this.sorted = undefined));
  }

  private started = false;

  /** Starts the list and watch once (at bootstrap, or at a request that comes first). */
  start(): void {
    if (this.started) return;
    this.started = true;
    this.collection.start();
  }

  stop(): void {
    this.collection.stop();
  }

  /**
   * Waits up to READY_WAIT_MS for the first list, as kube's webhook plugins do; a request
   * before it is refused rather than let through uncalled webhooks.
   */
  async ready(): Promise<boolean> {
    if (this.collection.isSynced()) return true;
    this.start();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.collection.whenSynced(), new Promise<void>((resolve) => (timer = setTimeout(resolve, READY_WAIT_MS)))]);
    clearTimeout(timer);
    return this.collection.isSynced();
  }

  all(): readonly Webhook[] {
    this.sorted ??= [...this.collection.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).flatMap(([, hooks]) => hooks);
    return this.sorted;
  }
}

/** What both webhook plugins share: the configurations, the way to each webhook, the metrics. */
@Injectable()
export class AdmissionWebhooks implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly mutatingConfigs: WebhookConfigurations;
  private readonly validatingConfigs: WebhookConfigurations;
  private readonly credentials: Map<WebhookPluginName, Map<string, WebhookCredentials>>;
  readonly mutating: WebhookDispatcher;
  readonly validating: WebhookDispatcher;

  constructor(
    @Inject(STORAGE) private readonly storage: Storage,
    @Inject(SERVER_CONFIG) cfg: ServerConfig,
    metrics: ApiMetrics,
    registry: KindRegistry,
    @Inject(AUTHORIZER) authorizer: Authorizer,
  ) {
    this.mutatingConfigs = new WebhookConfigurations(storage, 'mutatingwebhookconfigurations', true);
    this.validatingConfigs = new WebhookConfigurations(storage, 'validatingwebhookconfigurations', false);
    const file = cfg.raw['admission-control-config-file'];
    try {
      this.credentials = file ? webhookCredentialsFromAdmissionConfig(file) : new Map();
    } catch (e) {
      throw flagStartError(cfg, 'admission-control-config-file', e);
    }
    const dispatcher = (plugin: WebhookPluginName) =>
      new WebhookDispatcher({
        webhooks: (mutating) => (mutating ? this.mutatingConfigs : this.validatingConfigs).all(),
        equivalents: (decl) => registry.otherVersions(decl),
        ready: (mutating) => (mutating ? this.mutatingConfigs : this.validatingConfigs).ready(),
        namespaceLabels: (ns) => this.namespaceLabels(ns),
        target: (w) => this.target(w, plugin),
        post: postReview,
        rejected: (labels) => metrics.webhookRejections.inc({ ...labels }),
        ignored: (w, message) => process.stderr.write(`admission: ${message} (failure policy Ignore, configuration ${w.configuration})\n`),
        authorizer,
      });
    this.mutating = dispatcher('MutatingAdmissionWebhook');
    this.validating = dispatcher('ValidatingAdmissionWebhook');
  }

  onApplicationBootstrap(): void {
    this.mutatingConfigs.start();
    this.validatingConfigs.start();
  }

  onApplicationShutdown(): void {
    this.mutatingConfigs.stop();
    this.validatingConfigs.stop();
    closeWebhookConnections();
  }

  private async namespaceLabels(ns: string): Promise<Record<string, string> | undefined> {
    const o = await this.storage.get(objectKey(NAMESPACES, '', ns), { mode: 'Any' });
    // Namespaces stored before the name label was kept get it on reads; so here.
    return o ? { ...(obj(o.metadata.labels) as Record<string, string>), [NAMESPACE_NAME_LABEL]: ns } : undefined;
  }

  /** Where webhook `w` is, and what to present to it. */
  private target(w: Webhook, plugin: WebhookPluginName): Promise<WebhookTarget> {
    return webhookTarget(this.storage, w.clientConfig, this.credentials.get(plugin) ?? new Map<string, WebhookCredentials>());
  }
}

/** MutatingAdmissionWebhook (kube's order: after the built-in mutating plugins). */
@AdmissionPlugin({ name: 'MutatingAdmissionWebhook', order: 3000 })
@Injectable()
export class MutatingAdmissionWebhookPlugin implements Admission {
  constructor(private readonly webhooks: AdmissionWebhooks) {}

  admit(attrs: AdmissionAttributes): Promise<void> {
    return attrs.operation === 'DELETE' ? Promise.resolve() : this.webhooks.mutating.admit(attrs);
  }

  validate(attrs: AdmissionAttributes): Promise<void> {
    return attrs.operation === 'DELETE' ? this.webhooks.mutating.admit(attrs) : Promise.resolve();
  }
}

/** ValidatingAdmissionWebhook. */
@AdmissionPlugin({ name: 'ValidatingAdmissionWebhook', order: 3100 })
@Injectable()
export class ValidatingAdmissionWebhookPlugin implements Admission {
  constructor(private readonly webhooks: AdmissionWebhooks) {}

  admit(): Promise<void> {
    return Promise.resolve();
  }

  validate(attrs: AdmissionAttributes): Promise<void> {
    return this.webhooks.validating.validate(attrs);
  }
}
