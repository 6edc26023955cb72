/**
 * The CustomResourceDefinition controllers (kube's apiextensions-apiserver naming,
 * established and finalizer controllers), run by the holder of the controller Lease:
 *
 * - naming: a definition's names are accepted (status.acceptedNames) unless another definition
 *   of the group already serves one of them, and then it is Established; a definition whose new
 *   names conflict keeps serving its accepted ones, with NamesAccepted False.
 * - registration: every group-version a definition serves has a local APIService
 *   `<version>.<group>` (labelled `kube-aggregator.kubernetes.io/automanaged: "true"`, group
 *   priority 1000, version priority 100, Available), removed once no definition serves it
 *   (kube's crd-autoregistration).
 * - finalizer: a deleted definition (Terminating, holding the cleanup finalizer) has every
 *   object of its resource deleted through the resource's store (admission, finalizers and
 *   owners apply), and once none is left the finalizer is removed and the definition goes.
 */
import { isDeepStrictEqual } from 'node:util';
import { Inject, Injectable } from '@nestjs/common';
import { StatusError, type KubeObject } from '@app/apimachinery';
import { KindRegistry, type KindDeclaration, type RequestContext } from '@app/registry';
import { ManagedController, type ControllerRunner } from '../../../controllers/controller.runner.js';
import { PassScheduler } from '../../../controllers/pass.scheduler.js';
import { STORES, type StoreFactory } from '../../../tokens.js';
import { AUTOMANAGED_LABEL, localAvailableCondition } from '../../apiregistration/apiservice/apiservice.registration.js';
import {
  CLEANUP_FINALIZER,
  crdConditionTrue,
  crdNames,
  crdVersions,
  isCustomResource,
  setCrdCondition,
  storageVersionOf,
  type CrdNames,
} from './custom-resource.kinds.js';
import { CustomResourceRegistrar } from './crd.registrar.js';

type Obj = Record<string, unknown>;
const asMap = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});

/** The controllers write as the server itself. */
const CONTROLLER_CTX = (): RequestContext => ({
  user: { username: 'system:apiserver', groups: ['system:masters', 'system:authenticated'] },
  dryRun: false,
  warnings: [],
  now: () => new Date(),
});

const gone = (e: unknown) => e instanceof StatusError && (e.code === 404 || e.code === 409);

/** acceptedNames as kube writes them (empty lists left out). */
function namesObject(n: CrdNames): Obj {
  return {
    plural: n.plural,
    singular: n.singular,
    ...(n.shortNames.length ? { shortNames: n.shortNames } : {}),
    kind: n.kind,
    listKind: n.listKind,
    ...(n.categories.length ? { categories: n.categories } : {}),
  };
}

/**
 * The first conflict of `want` with the names other definitions of the group serve, or a
 * built-in kind of the group: [reason, message] (kube's naming controller wording).
 */
export function namesConflict(crd: KubeObject, want: CrdNames, all: readonly KubeObject[], builtins: readonly KindDeclaration[]): [string, string] | undefined {
  const group = asMap(crd.spec).group;
  for (const b of builtins) {
    if (b.group !== group) continue;
    if (b.plural === want.plural) return ['PluralConflict', `"${want.plural}" is already in use`];
    if (b.kind === want.kind) return ['KindConflict', `"${want.kind}" is already in use`];
  }
  for (const other of all) {
    if (other.metadata.name === crd.metadata.name || asMap(other.spec).group !== group) continue;
    const acc = asMap(asMap(other.status).acceptedNames);
    if (!acc.plural) continue;
    const o = crdNames(acc);
    if (o.plural === want.plural || o.shortNames.includes(want.plural)) return ['PluralConflict', `"${want.plural}" is already in use`];
    if (o.singular === want.singular || o.plural === want.singular) return ['SingularConflict', `"${want.singular}" is already in use`];
    for (const s of want.shortNames) if (o.shortNames.includes(s) || o.plural === s) return ['ShortNamesConflict', `"${s}" is already in use`];
    if (o.kind === want.kind || o.listKind === want.kind) return ['KindConflict', `"${want.kind}" is already in use`];
    if (o.listKind === want.listKind || o.kind === want.listKind) return ['ListKindConflict', `"${want.listKind}" is already in use`];
  }
  return undefined;
}

/** The status the naming and established controllers want for a definition. */
export function desiredNamingStatus(crd: KubeObject, all: readonly KubeObject[], builtins: readonly KindDeclaration[], now: Date): KubeObject {
  const next = structuredClone(crd);
  const want = crdNames(asMap(crd.spec).names);
  const conflict = namesConflict(crd, want, all, builtins);
  if (!conflict) {
    next.status = { ...asMap(next.status), acceptedNames: namesObject(want) };
    setCrdCondition(next, { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' }, now);
    setCrdCondition(next, { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' }, now);
  } else {
    setCrdCondition(next, { type: 'NamesAccepted', status: 'False', reason: conflict[0], message: conflict[1] }, now);
    if (!crdConditionTrue(crd, 'Established'))
      setCrdCondition(next, { type: 'Established', status: 'False', reason: 'NotAccepted', message: 'not all names are accepted' }, now);
  }
  return next;
}

@ManagedController({ name: 'crd-naming-and-finalizer' })
@Injectable()
export class CrdControllersRunner implements ControllerRunner {
  private unsubscribe: (() => void) | undefined;
  private readonly scheduler = new PassScheduler('crd controllers', () => this.pass());

  constructor(
    private readonly registrar: CustomResourceRegistrar,
    private readonly registry: KindRegistry,
    @Inject(STORES) private readonly stores: StoreFactory,
  ) {}

  start(): void {
    if (!this.registry.lookup('apiextensions.k8s.io', 'v1', 'customresourcedefinitions')) return;
    this.scheduler.start();
    this.unsubscribe = this.registrar.definitions.onChange(() => this.scheduler.schedule());
    void this.registrar.definitions.whenSynced().then(() => this.scheduler.schedule());
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.scheduler.stop();
  }

  private crdStore() {
    return this.stores.storeFor(this.registry.lookup('apiextensions.k8s.io', 'v1', 'customresourcedefinitions') as KindDeclaration);
  }

  /** One pass over every definition; true when a deleted definition still has objects. */
  private async pass(): Promise<boolean> {
    const all = this.registrar.definitions.values();
    const builtins = this.registry.all().filter((d) => !isCustomResource(d));
    let pending = false;
    for (const crd of all) {
      try {
        if (crd.metadata.deletionTimestamp) {
          if ((crd.metadata.finalizers as string[] | undefined)?.includes(CLEANUP_FINALIZER)) pending = (await this.finalize(crd)) || pending;
          continue;
        }
        const next = desiredNamingStatus(crd, all, builtins, new Date());
        if (isDeepStrictEqual(next.status, crd.status)) continue;
        await this.crdStore().update('', crd.metadata.name ?? '', next, { ctx: CONTROLLER_CTX(), fieldValidation: 'Ignore', subresource: 'status' });
      } catch (e) {
        if (!gone(e)) throw e;
      }
    }
    await this.registerAPIServices(all);
    return pending;
  }

  /** The local APIServices of the definitions' group-versions: created when missing, removed when no definition serves them. */
  private async registerAPIServices(all: readonly KubeObject[]): Promise<void> {
    const decl = this.registry.lookup('apiregistration.k8s.io', 'v1', 'apiservices');
    if (!decl) return;
    const store = this.stores.storeFor(decl);
    const wanted = new Map<string, { group: string; version: string }>();
    for (const crd of all) {
      if (!asMap(asMap(crd.status).acceptedNames).plural) continue;
      const group = String(asMap(crd.spec).group ?? '');
      for (const v of crdVersions(crd)) {
        // A group-version a built-in kind serves has its own APIService.
        if (!v.served || this.registry.kindsOf(group, v.name).some((d) => !isCustomResource(d))) continue;
        wanted.set(`${v.name}.${group}`, { group, version: v.name });
      }
    }
    const existing = (await store.list('', {})).items;
    const have = new Set(existing.map((o) => o.metadata.name ?? ''));
    for (const [name, gv] of wanted) {
      if (have.has(name)) continue;
      try {
        const made = await store.create('', crdAPIService(gv.group, gv.version), { ctx: CONTROLLER_CTX(), fieldValidation: 'Strict' });
        const next = { ...structuredClone(made), status: { conditions: [localAvailableCondition(new Date())] } };
        await store.update('', name, next, { ctx: CONTROLLER_CTX(), fieldValidation: 'Strict', subresource: 'status' });
      } catch (e) {
        if (!gone(e)) throw e;
      }
    }
    for (const o of existing) {
      const name = o.metadata.name ?? '';
      if (wanted.has(name) || (o.metadata.labels as Record<string, string> | undefined)?.[AUTOMANAGED_LABEL] !== 'true') continue;
      try {
        await store.delete('', name, {}, CONTROLLER_CTX());
      } catch (e) {
        if (!gone(e)) throw e;
      }
    }
  }

  /** Deletes the objects of a deleted definition; removes the finalizer once none is left. True while objects remain. */
  private async finalize(crd: KubeObject): Promise<boolean> {
    const name = crd.metadata.name ?? '';
    const store = this.crdStore();
    let cur = crd;
    if (!hasCondition(cur, 'Terminating', 'InstanceDeletionInProgress')) {
      const next = structuredClone(cur);
      setCrdCondition(
        next,
        { type: 'Terminating', status: 'True', reason: 'InstanceDeletionInProgress', message: 'CustomResource deletion is in progress' },
        new Date(),
      );
      cur = await store.update('', name, next, { ctx: CONTROLLER_CTX(), fieldValidation: 'Ignore', subresource: 'status' }).then((r) => r.object);
    }
    const decls = this.registrar.servedKinds(name);
    const storage = storageVersionOf(cur);
    const decl = decls.find((d) => d.version === storage) ?? decls[0];
    if (decl) {
      const crs = this.stores.storeFor(decl);
      const items = (await crs.list('', {})).items;
      for (const o of items) {
        if (o.metadata.deletionTimestamp) continue;
        try {
          await crs.delete(o.metadata.namespace ?? '', o.metadata.name ?? '', {}, CONTROLLER_CTX());
        } catch (e) {
          if (!gone(e)) throw e;
        }
      }
      const left = (await crs.list('', {})).items.length;
      if (left > 0) return true;
    }
    const done = structuredClone(cur);
    setCrdCondition(done, { type: 'Terminating', status: 'False', reason: 'InstanceDeletionCompleted', message: 'removed all instances' }, new Date());
    cur = await store.update('', name, done, { ctx: CONTROLLER_CTX(), fieldValidation: 'Ignore', subresource: 'status' }).then((r) => r.object);
    const last = structuredClone(cur);
    last.metadata.finalizers = ((cur.metadata.finalizers as string[] | undefined) ?? []).filter((f) => f !== CLEANUP_FINALIZER);
    await store.update('', name, last, { ctx: CONTROLLER_CTX(), fieldValidation: 'Ignore' });
    return false;
  }
}

/** The local APIService of a definition's group-version (kube's crdregistration: the lowest group priority). */
export function crdAPIService(group: string, version: string): KubeObject {
  return {
    apiVersion: 'apiregistration.k8s.io/v1',
    kind: 'APIService',
    metadata: { name: `${version}.${group}`, labels: { [AUTOMANAGED_LABEL]: 'true' } },
    spec: { group, version, groupPriorityMinimum: 1000, versionPriority: 100 },
  };
}

function hasCondition(crd: KubeObject, type: string, reason: string): boolean {
  const conds = asMap(crd.status).conditions;
  return Array.isArray(conds) && conds.some((c) => asMap(c).type === type && asMap(c).reason === reason);
}
