/**
 * The ServiceAccount admission plugin (plugin/pkg/admission/serviceaccount) on Pods: a pod naming
 * no service account gets `default`; a pod naming one that does not exist in its namespace is
 * refused (403, as kube: "error looking up service account <ns>/<name>: serviceaccount "<name>"
 * not found"); a pod naming no image pull secrets gets the account's `imagePullSecrets`; unless
 * the pod or the account turns automounting off, each container gets the account's token as the
 * projected volume kube-api-access-<suffix> at /var/run/secrets/kubernetes.io/serviceaccount.
 *
 * One difference: a missing `default` account is not an error here (the pod then gets no token
 * volume). The service-account controller creates `default` in every namespace, but a pod created
 * right after its namespace can come first; kube refuses such a pod, this plugin admits it.
 */
import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { Errors, generateName, type KubeObject } from '@app/apimachinery';
import { KindRegistry, type Admission, type AdmissionAttributes, type KindDeclaration } from '@app/registry';
import type { Storage } from '@app/storage';
import { STORAGE } from '../tokens.js';
import { AdmissionLister } from './admission.lister.js';
import { podNameRefs } from '../pipeline/node-graph.watcher.js';
import { AdmissionPlugin } from './admission.plugin.js';
import { isMirrorPod } from './node-restriction.provider.js';

/** Why a mirror pod is refused (it refers to an account, a Secret or an account token), or undefined. */
export function mirrorPodDenial(pod: KubeObject): string | undefined {
  const spec = (pod.spec ?? {}) as Obj;
  if (spec.serviceAccountName || spec.serviceAccount) return 'a mirror pod may not reference service accounts';
  if (podNameRefs(pod).secrets.size > 0) return 'a mirror pod may not reference secrets';
  for (const v of objs(spec.volumes)) {
    const projected = (v.projected ?? {}) as Obj;
    if (objs(projected.sources).some((src) => src && src.serviceAccountToken)) return 'a mirror pod may not use ServiceAccountToken volume projections';
  }
  return undefined;
}

/** Where the token volume is mounted in each container. */
export const SERVICE_ACCOUNT_MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
/** Prefix of the token volume's name. */
export const TOKEN_VOLUME_PREFIX = 'kube-api-access-';
/** Lifetime asked for the projected token, as kube's plugin (3607 s, one hour plus skew). */
const TOKEN_SECONDS = 3607;

type Obj = Record<string, unknown>;
const objs = (v: unknown): Obj[] => (Array.isArray(v) ? (v as Obj[]) : []);

/** The projected volume kube's plugin adds: the token, the cluster CA and the namespace. */
export function tokenVolume(name: string): Obj {
  return {
    name,
    projected: {
      defaultMode: 420,
      sources: [
        { serviceAccountToken: { expirationSeconds: TOKEN_SECONDS, path: 'token' } },
        { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
      ],
    },
  };
}

/**
 * The mutation of a pod for service account `sa` (undefined: the account does not exist):
 * default name, then the token volume and mounts unless automounting is off or already done.
 */
export function admitPodServiceAccount(pod: KubeObject, sa: KubeObject | undefined, suffix: string): void {
  const spec = (pod.spec ??= {}) as Obj;
  if (!spec.serviceAccountName) spec.serviceAccountName = spec.serviceAccount || 'default';
  spec.serviceAccount = spec.serviceAccountName;
  if (!sa) return;
  // A pod that names no image pull secrets gets its account's.
  const pullSecrets = objs(sa.imagePullSecrets).filter((r) => typeof r.name === 'string');
  if (objs(spec.imagePullSecrets).length === 0 && pullSecrets.length > 0) spec.imagePullSecrets = pullSecrets.map((r) => ({ name: r.name }));
  if (spec.automountServiceAccountToken === false) return;
  if (spec.automountServiceAccountToken === undefined && sa.automountServiceAccountToken === false) return;
  const containers = [...objs(spec.initContainers), ...objs(spec.containers)];
  const mounted = (c: Obj) => objs(c.volumeMounts).some((m) => m.mountPath === SERVICE_ACCOUNT_MOUNT_PATH);
  if (containers.length === 0 || containers.every(mounted)) return;
  const existing = objs(spec.volumes).find((v) => typeof v.name === 'string' && v.name.startsWith(TOKEN_VOLUME_PREFIX));
  const volName = (existing?.name as string | undefined) ?? `${TOKEN_VOLUME_PREFIX}${suffix}`;
  if (!existing) spec.volumes = [...objs(spec.volumes), tokenVolume(volName)];
  for (const c of containers) {
    if (!mounted(c)) c.volumeMounts = [...objs(c.volumeMounts), { name: volName, readOnly: true, mountPath: SERVICE_ACCOUNT_MOUNT_PATH }];
  }
}

/** The plugin, on pod creation (not on subresources). */
@AdmissionPlugin({ name: 'ServiceAccount', order: 300 })
@Injectable()
export class ServiceAccountPlugin implements Admission, OnApplicationBootstrap, OnApplicationShutdown {
  private accounts: AdmissionLister | undefined;

  constructor(
    @Inject(STORAGE) private readonly storage: Storage,
    private readonly registry: KindRegistry,
  ) {}

  onApplicationBootstrap(): void {
    this.accounts = new AdmissionLister(this.storage, this.accountKind(), 'serviceaccounts for admission');
    this.accounts.start();
  }

  onApplicationShutdown(): void {
    this.accounts?.stop();
  }

  private accountKind(): KindDeclaration {
    return this.registry.lookup('', 'v1', 'serviceaccounts') as KindDeclaration;
  }

  async admit(attrs: AdmissionAttributes): Promise<void> {
    if (attrs.operation !== 'CREATE' || attrs.subresource !== '' || attrs.decl.group !== '' || attrs.decl.kind !== 'Pod' || !attrs.object) return;
    const pod = attrs.object;
    const spec = (pod.spec ?? {}) as Obj;
    // A mirror pod (a kubelet's static pod) is left as the kubelet wrote it, which would delete a
    // copy that differs; it may not refer to an account, Secrets or account tokens either.
    if (isMirrorPod(pod)) {
      const refused = mirrorPodDenial(pod);
      if (refused) throw Errors.forbidden({ group: '', resource: 'pods' }, attrs.name, refused);
      return;
    }
    const name = String(spec.serviceAccountName || spec.serviceAccount || 'default');
    this.accounts ??= new AdmissionLister(this.storage, this.accountKind(), 'serviceaccounts for admission');
    const sa = await this.accounts.get(attrs.namespace, name);
    if (!sa && name !== 'default') {
      throw Errors.forbidden(
        { group: '', resource: 'pods' },
        attrs.name,
        `error looking up service account ${attrs.namespace}/${name}: serviceaccount "${name}" not found`,
      );
    }
    // The suffix of kube's generated volume name: five characters of its name alphabet.
    admitPodServiceAccount(pod, sa, generateName('').slice(-5));
  }

  async validate(): Promise<void> {}
}
