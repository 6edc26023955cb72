/**
 * Local APIServices follow the registry (kube-aggregator's autoregister controller): after the
 * first-start objects, every served group-version has an APIService `<version>.<group>` with
 * service null and Available=True, and a local APIService this server made for a group-version
 * it no longer serves (one disabled with --runtime-config) is deleted. They carry the label
 * `kube-aggregator.kubernetes.io/automanaged: onstart`, which marks what this hook may remove.
 */
import { Inject, Injectable } from '@nestjs/common';
import { formatMetaTime, StatusError, type KubeObject } from '@app/apimachinery';
import { PRIVILEGED_GROUP } from '@app/auth';
import { KindRegistry, type RequestContext } from '@app/registry';
import { PostStartHook, type PostStartHookProvider } from '../../../bootstrap/post-start-hook.js';
import { STORES, type StoreFactory } from '../../../tokens.js';
import { apiServicePriority } from './apiservice.priorities.js';
import { isCustomResource } from '../../apiextensions/customresourcedefinition/custom-resource.kinds.js';

/** Label of the APIServices this server manages. */
export const AUTOMANAGED_LABEL = 'kube-aggregator.kubernetes.io/automanaged';

/** The local APIService of a served group-version, as created. */
export function localAPIService(group: string, version: string): KubeObject {
  const p = apiServicePriority(group, version);
  return {
    apiVersion: 'apiregistration.k8s.io/v1',
    kind: 'APIService',
    metadata: { name: `${version}.${group}`, labels: { [AUTOMANAGED_LABEL]: 'onstart' } },
    spec: { group, version, groupPriorityMinimum: p.group, versionPriority: p.version },
  };
}

/** The Available condition of a local APIService. */
export function localAvailableCondition(now: Date): Record<string, unknown> {
  return {
    type: 'Available',
    status: 'True',
    lastTransitionTime: formatMetaTime(now),
    reason: 'Local',
    message: 'Local APIServices are always available',
  };
}

function isConflictOrGone(e: unknown): boolean {
  return e instanceof StatusError && (e.code === 409 || e.code === 404);
}

/** The post-start hook keeping the local APIServices in line with the registry. */
@PostStartHook({ name: 'apiservice-registration-controller', order: 150 })
@Injectable()
export class LocalAPIServiceRegistration implements PostStartHookProvider {
  constructor(
    private readonly registry: KindRegistry,
    @Inject(STORES) private readonly stores: StoreFactory,
  ) {}

  async runPostStartHook(): Promise<void> {
    const decl = this.registry.lookup('apiregistration.k8s.io', 'v1', 'apiservices');
    if (!decl) return; // the group itself is disabled
    const store = this.stores.storeFor(decl);
    const ctx = (): RequestContext => ({
      user: { username: 'system:apiserver', groups: [PRIVILEGED_GROUP] },
      dryRun: false,
      warnings: [],
      now: () => new Date(),
    });
    // Custom resources' group-versions come and go with their definitions: not managed here.
    const builtIn = (group: string, version: string) => this.registry.kindsOf(group, version).some((d) => !isCustomResource(d));
    const groups = this.registry
      .servedGroups()
      .map((g) => ({ name: g.name, versions: g.versions.filter((v) => builtIn(g.name, v)) }))
      .filter((g) => g.versions.length > 0);
    const served = new Set(groups.flatMap((g) => g.versions.map((v) => `${v}.${g.name}`)));
    const existing = await store.list('', {});
    const byName = new Map(existing.items.map((o) => [o.metadata.name ?? '', o]));
    for (const g of groups) {
      for (const v of g.versions) {
        const name = `${v}.${g.name}`;
        let obj = byName.get(name);
        if (!obj) {
          try {
            obj = await store.create('', localAPIService(g.name, v), { ctx: ctx(), fieldValidation: 'Strict' });
          } catch (e) {
            if (!isConflictOrGone(e)) throw e;
            obj = await store.get('', name, {});
          }
        }
        const spec = (obj.spec ?? {}) as Record<string, unknown>;
        const conds = ((obj.status ?? {}) as Record<string, unknown>).conditions;
        const available =
          Array.isArray(conds) && conds.some((c) => (c as Record<string, unknown>).type === 'Available' && (c as Record<string, unknown>).status === 'True');
        if ((spec.service === undefined || spec.service === null) && !available) {
          const next = { ...structuredClone(obj), status: { conditions: [localAvailableCondition(new Date())] } };
          try {
            await store.update('', name, next, { ctx: ctx(), fieldValidation: 'Strict', subresource: 'status' });
          } catch (e) {
            if (!isConflictOrGone(e)) throw e;
          }
        }
      }
    }
    for (const o of existing.items) {
      const name = o.metadata.name ?? '';
      // `true`: a custom resource's, kept by the definitions' controller.
      if (served.has(name) || (o.metadata.labels as Record<string, string> | undefined)?.[AUTOMANAGED_LABEL] !== 'onstart') continue;
      try {
        await store.delete('', name, {}, ctx());
      } catch (e) {
        if (!isConflictOrGone(e)) throw e;
      }
    }
  }
}
