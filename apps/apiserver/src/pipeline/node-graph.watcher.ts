/**
 * The Node authorizer's graph (kube's node authorizer graph, populated from informers): for
 * each node, the objects the pods bound to it need. Kept from storage watches on every node of
 * the cluster (WatchedCollection), as projections only: per pod its node and the names it
 * refers to (Secrets, ConfigMaps, PersistentVolumeClaims, its ServiceAccount), per claim its
 * volume, per volume its claim and the Secrets it names, per VolumeAttachment its node. A node
 * reaches an object when a pod bound to it refers to it, a claim of such a pod is bound to the
 * volume, or the volume names the Secret; a VolumeAttachment when it is for the node.
 * Started only when `--authorization-mode` lists Node.
 */
import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { KubeObject } from '@app/apimachinery';
import type { NodeGraph, NodeGraphKind } from '@app/authz';
import type { Storage } from '@app/storage';
import { SERVER_CONFIG, STORAGE } from '../tokens.js';
import type { ServerConfig } from '../config/flags.js';
import { authorizationModes } from './authorization-modes.js';
import { WatchedCollection } from './watched-collection.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const objs = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isObj) : []);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** What the graph keeps of a pod bound to a node. */
interface PodRefs {
  node: string;
  secrets: Set<string>;
  configMaps: Set<string>;
  claims: Set<string>;
  serviceAccount: string;
}

/** The names a pod refers to (kube's VisitPodSecretNames and VisitPodConfigmapNames, and its claims). */
export function podNameRefs(pod: KubeObject): Pick<PodRefs, 'secrets' | 'configMaps' | 'claims'> {
  const spec = isObj(pod.spec) ? pod.spec : {};
  const secrets = new Set<string>();
  const configMaps = new Set<string>();
  const claims = new Set<string>();
  const add = (set: Set<string>, v: unknown) => {
    const n = str(v);
    if (n) set.add(n);
  };
  for (const s of objs(spec.imagePullSecrets)) add(secrets, s.name);
  for (const c of [...objs(spec.initContainers), ...objs(spec.containers), ...objs(spec.ephemeralContainers)]) {
    for (const e of objs(c.env)) {
      const from = isObj(e.valueFrom) ? e.valueFrom : {};
      if (isObj(from.secretKeyRef)) add(secrets, from.secretKeyRef.name);
      if (isObj(from.configMapKeyRef)) add(configMaps, from.configMapKeyRef.name);
    }
    for (const e of objs(c.envFrom)) {
      if (isObj(e.secretRef)) add(secrets, e.secretRef.name);
      if (isObj(e.configMapRef)) add(configMaps, e.configMapRef.name);
    }
  }
  for (const v of objs(spec.volumes)) {
    if (isObj(v.secret)) add(secrets, v.secret.secretName);
    if (isObj(v.configMap)) add(configMaps, v.configMap.name);
    if (isObj(v.azureFile)) add(secrets, v.azureFile.secretName);
    for (const src of ['cephfs', 'cinder', 'flexVolume', 'rbd', 'scaleIO', 'iscsi', 'storageos'] as const) {
      const s = v[src];
      if (isObj(s) && isObj(s.secretRef)) add(secrets, s.secretRef.name);
    }
    if (isObj(v.csi) && isObj(v.csi.nodePublishSecretRef)) add(secrets, v.csi.nodePublishSecretRef.name);
    if (isObj(v.projected)) {
      for (const p of objs(v.projected.sources)) {
        if (isObj(p.secret)) add(secrets, p.secret.name);
        if (isObj(p.configMap)) add(configMaps, p.configMap.name);
      }
    }
    if (isObj(v.persistentVolumeClaim)) add(claims, v.persistentVolumeClaim.claimName);
    // A generic ephemeral volume's claim is named after the pod and the volume.
    if (isObj(v.ephemeral) && pod.metadata.name && str(v.name)) claims.add(`${pod.metadata.name}-${String(v.name)}`);
  }
  return { secrets, configMaps, claims };
}

/** What the graph keeps of a pod: undefined for a pod bound to no node. */
export function podRefs(pod: KubeObject): PodRefs | undefined {
  const spec = isObj(pod.spec) ? pod.spec : {};
  const node = str(spec.nodeName);
  if (!node) return undefined;
  return { node, ...podNameRefs(pod), serviceAccount: str(spec.serviceAccountName) ?? 'default' };
}

/** What the graph keeps of a PersistentVolume: its claim and the Secrets its source names. */
interface VolumeRefs {
  claim?: { namespace: string; name: string };
  secrets: Set<string>;
}

const SECRET_REF_FIELDS = [
  'secretRef',
  'nodePublishSecretRef',
  'nodeStageSecretRef',
  'controllerPublishSecretRef',
  'controllerExpandSecretRef',
  'nodeExpandSecretRef',
];

/** The claim a volume is bound to and the Secrets (`namespace/name`) its source names (VisitPVSecretNames). */
export function volumeRefs(pv: KubeObject): VolumeRefs {
  const spec = isObj(pv.spec) ? pv.spec : {};
  const ref = isObj(spec.claimRef) ? spec.claimRef : undefined;
  const claim = ref && str(ref.namespace) && str(ref.name) ? { namespace: String(ref.namespace), name: String(ref.name) } : undefined;
  const secrets = new Set<string>();
  const fallbackNs = claim?.namespace ?? 'default';
  for (const [field, source] of Object.entries(spec)) {
    if (!isObj(source) || field === 'claimRef' || field === 'nodeAffinity') continue;
    for (const f of SECRET_REF_FIELDS) {
      const r = source[f];
      if (isObj(r) && str(r.name)) secrets.add(`${str(r.namespace) ?? fallbackNs}/${String(r.name)}`);
    }
    if (field === 'azureFile' && str(source.secretName)) secrets.add(`${str(source.secretNamespace) ?? fallbackNs}/${String(source.secretName)}`);
  }
  return { ...(claim ? { claim } : {}), secrets };
}

@Injectable()
export class NodeGraphWatcher implements NodeGraph, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly pods: WatchedCollection<PodRefs>;
  private readonly claims: WatchedCollection<string>;
  private readonly volumes: WatchedCollection<VolumeRefs>;
  private readonly attachments: WatchedCollection<string>;
  private readonly enabled: boolean;

  constructor(@Inject(STORAGE) storage: Storage, @Inject(SERVER_CONFIG) cfg: ServerConfig) {
    this.enabled = authorizationModes(cfg).includes('Node');
    this.pods = new WatchedCollection(storage, '/registry/core/pods/', podRefs, 'node graph: pods', true);
    this.claims = new WatchedCollection(
      storage,
      '/registry/core/persistentvolumeclaims/',
      (o) => str((o.spec as Obj | undefined)?.volumeName) ?? '',
      'node graph: claims',
    );
    this.volumes = new WatchedCollection(storage, '/registry/core/persistentvolumes/', volumeRefs, 'node graph: volumes');
    this.attachments = new WatchedCollection(
      storage,
      '/registry/storage.k8s.io/volumeattachments/',
      (o) => str((o.spec as Obj | undefined)?.nodeName),
      'node graph: volume attachments',
    );
  }

  onApplicationBootstrap(): void {
    if (!this.enabled) return;
    for (const c of this.collections()) c.start();
  }

  onApplicationShutdown(): void {
    for (const c of this.collections()) c.stop();
  }

  private collections(): WatchedCollection<unknown>[] {
    return [this.pods, this.claims, this.volumes, this.attachments] as WatchedCollection<unknown>[];
  }

  isSynced(): boolean {
    return this.collections().every((c) => c.isSynced());
  }

  reaches(node: string, kind: NodeGraphKind, namespace: string, name: string): boolean {
    switch (kind) {
      case 'pod':
        return this.pods.get(namespace, name)?.node === node;
      case 'secret':
        return this.podsOf(node, namespace).some((p) => p.secrets.has(name)) || this.volumeSecretReached(node, `${namespace}/${name}`);
      case 'configmap':
        return this.podsOf(node, namespace).some((p) => p.configMaps.has(name));
      case 'serviceaccount':
        return this.podsOf(node, namespace).some((p) => p.serviceAccount === name);
      case 'persistentvolumeclaim':
        return this.podsOf(node, namespace).some((p) => p.claims.has(name));
      case 'persistentvolume':
        return this.volumeReached(node, name);
      case 'volumeattachment':
        return this.attachments.get('', name) === node;
    }
  }

  private podsOf(node: string, namespace: string): PodRefs[] {
    return this.pods.inNamespace(namespace).filter((p) => p.node === node);
  }

  /** A volume bound to a claim (both ways) that a pod of the node uses. */
  private volumeReached(node: string, volume: string): boolean {
    const claim = this.volumes.get('', volume)?.claim;
    if (!claim || this.claims.get(claim.namespace, claim.name) !== volume) return false;
    return this.reaches(node, 'persistentvolumeclaim', claim.namespace, claim.name);
  }

  private volumeSecretReached(node: string, secret: string): boolean {
    for (const [key, v] of this.volumes.entries()) {
      if (v.secrets.has(secret) && this.volumeReached(node, key)) return true;
    }
    return false;
  }
}
