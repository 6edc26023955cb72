/**
 * Serves the custom resources on every node of a cluster (kube's crdHandler with its CRD
 * informer): a watch-fed copy of the CustomResourceDefinitions, and for each definition whose
 * names have been accepted (status.acceptedNames, set by the naming controller) its kinds in
 * the KindRegistry, replaced when the definition changes and removed when it is gone. Discovery,
 * OpenAPI, routing, the namespace and garbage collectors all read the registry, so a definition
 * written through any node is served by every node once that node has applied it. A definition
 * whose resource a built-in kind or another definition already serves is left out. The node is
 * ready only after the first list (post-start hook `crd-informer-synced`), so a restarted node
 * does not answer 404 for resources it serves.
 */
import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { StatusError, type KubeObject } from '@app/apimachinery';
import { KindRegistry } from '@app/registry';
import type { Storage } from '@app/storage';
import { PostStartHook, type PostStartHookProvider } from '../../../bootstrap/post-start-hook.js';
import { WatchedCollection } from '../../../pipeline/watched-collection.js';
import { STORAGE, STORES, type StoreFactory } from '../../../tokens.js';
import { postReview, webhookTarget } from '../../../admission/webhook/webhook.client.js';
import type { ConversionWebhookCall } from './crd.conversion.js';
import { CUSTOM_RESOURCE, customResourceKinds, isCustomResource, type CustomResourceDeclaration } from './custom-resource.kinds.js';

/** How long a conversion webhook may take to answer (kube's default for webhooks). */
const CONVERSION_WEBHOOK_TIMEOUT_SECONDS = 30;
/** The largest answer read from a conversion webhook: a whole list page is converted in one review. */
const CONVERSION_WEBHOOK_MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

/** The key prefix of the definitions. */
export const CRD_PREFIX = '/registry/apiextensions.k8s.io/customresourcedefinitions/';

type Obj = Record<string, unknown>;
const asMap = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});

/** What decides the kinds of a definition: a change elsewhere (conditions, managed fields) re-registers nothing. */
function servingFingerprint(crd: KubeObject): string {
  return JSON.stringify([crd.spec, asMap(crd.status).acceptedNames, crd.metadata.deletionTimestamp ?? null]);
}

@PostStartHook({ name: 'crd-informer-synced', order: 90 })
@Injectable()
export class CustomResourceRegistrar implements OnApplicationBootstrap, OnApplicationShutdown, PostStartHookProvider {
  /** The definitions, whole, by name. */
  readonly definitions: WatchedCollection<KubeObject>;
  private readonly served = new Map<string, { fingerprint: string; decls: CustomResourceDeclaration[] }>();
  private unsubscribe: (() => void) | undefined;

  constructor(
    @Inject(STORAGE) private readonly storage: Storage,
    private readonly registry: KindRegistry,
    @Inject(STORES) private readonly stores: StoreFactory,
  ) {
    this.definitions = new WatchedCollection(storage, CRD_PREFIX, (o) => o, 'custom resource definitions');
  }

  onApplicationBootstrap(): void {
    // Not when --runtime-config turned the group off.
    if (!this.registry.lookup('apiextensions.k8s.io', 'v1', 'customresourcedefinitions')) return;
    this.unsubscribe = this.definitions.onChange((key) => this.reconcile(key), { perKey: true });
    this.definitions.start();
  }

  onApplicationShutdown(): void {
    this.unsubscribe?.();
    this.definitions.stop();
  }

  async runPostStartHook(): Promise<void> {
    if (this.unsubscribe) await this.definitions.whenSynced();
  }

  /** Posts a ConversionReview to a definition's webhook (its URL, or its Service's endpoints). */
  private readonly callConversionWebhook: ConversionWebhookCall = async (clientConfig, review) => {
    try {
      return await postReview(
        await webhookTarget(this.storage, clientConfig),
        review,
        CONVERSION_WEBHOOK_TIMEOUT_SECONDS,
        CONVERSION_WEBHOOK_MAX_RESPONSE_BYTES,
      );
    } catch (e) {
      throw new Error((e as Error).message.replace(/^failed to call webhook: /, ''), { cause: e });
    }
  };

  /** The kinds served for a definition (empty when it is not served). */
  servedKinds(name: string): readonly CustomResourceDeclaration[] {
    return this.served.get(name)?.decls ?? [];
  }

  private reconcile(name: string): void {
    const crd = this.definitions.byKey(name);
    const fingerprint = crd ? servingFingerprint(crd) : '';
    const had = this.served.get(name);
    if (had && had.fingerprint === fingerprint) return;
    for (const d of had?.decls ?? []) if (this.registry.lookup(d.group, d.version, d.plural) === d) this.registry.unregister(d.group, d.version, d.plural);
    this.served.delete(name);
    if (!crd || !asMap(asMap(crd.status).acceptedNames).plural) return;
    const decls = customResourceKinds(
      crd,
      (version) => {
        const d = this.registry.lookup(String(asMap(crd.spec).group), version, String(asMap(asMap(crd.status).acceptedNames).plural));
        if (!d) throw new StatusError(404, 'NotFound', 'the server could not find the requested resource', {});
        const store = this.stores.storeFor(d);
        return {
          get: (ns, n) => store.get(ns, n),
          update: async (ns, n, obj, ctx) => (await store.update(ns, n, obj, { ctx, fieldValidation: 'Ignore' })).object,
        };
      },
      this.callConversionWebhook,
    );
    const terminating = crd.metadata.deletionTimestamp !== undefined && crd.metadata.deletionTimestamp !== null;
    const kept: CustomResourceDeclaration[] = [];
    for (const d of decls) {
      const existing = this.registry.lookup(d.group, d.version, d.plural) ?? this.registry.lookupKind(d.group, d.version, d.kind);
      // A built-in kind, or another definition's, keeps its resource.
      if (existing && (!isCustomResource(existing) || existing[CUSTOM_RESOURCE] !== name)) continue;
      if (terminating) {
        d.strategy = {
          ...d.strategy,
          prepareForCreate() {
            throw new StatusError(405, 'MethodNotAllowed', 'create not allowed while custom resource definition is terminating', {});
          },
        };
      }
      this.registry.register(d);
      kept.push(d);
    }
    this.served.set(name, { fingerprint, decls: kept });
  }
}
