/**
 * NodeRestriction (plugin/pkg/admission/noderestriction; off by default, kubeadm turns it on
 * with `--enable-admission-plugins=NodeRestriction`): what a kubelet (`system:node:<name>` in
 * `system:nodes`, see the Node authorization mode) writes is kept to its own node. It may
 * create only mirror pods bound to itself that refer to no other object, delete, evict and
 * update the status of only the pods bound to it (status without touching labels), change only
 * its own Node (not its taints, nor labels under node-restriction.kubernetes.io or Kubernetes'
 * label namespaces other than the kubelet's own), change only the status conditions and
 * capacity of a claim, ask for tokens only bound to its own pods, and use only the Lease and
 * CSINode named after it. Everyone else passes untouched.
 */
import { isDeepStrictEqual } from 'node:util';
import { Inject, Injectable } from '@nestjs/common';
import { Errors, StatusError, type KubeObject } from '@app/apimachinery';
import { nodeIdentity, NODE_LEASE_NAMESPACE } from '@app/authz';
import type { Admission, AdmissionAttributes } from '@app/registry';
import type { Storage } from '@app/storage';
import { STORAGE } from '../tokens.js';
import { podNameRefs } from '../pipeline/node-graph.watcher.js';
import { AdmissionPlugin } from './admission.plugin.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const specOf = (o: KubeObject | undefined): Obj => (o && isObj(o.spec) ? o.spec : {});

/** The annotation that marks a mirror pod (the API's copy of a kubelet's static pod). */
export const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';

/** Whether `pod` is a mirror pod. */
export function isMirrorPod(pod: KubeObject): boolean {
  const ann = pod.metadata.annotations as Record<string, string> | undefined;
  return !!ann && Object.prototype.hasOwnProperty.call(ann, MIRROR_POD_ANNOTATION);
}
const labelsOf = (o: KubeObject | undefined): Record<string, string> | undefined => o?.metadata.labels as Record<string, string> | undefined;

/** Labels a kubelet sets on its Node (kubeletapis.IsKubeletLabel). */
const KUBELET_LABELS = new Set([
  'kubernetes.io/hostname',
  'topology.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone',
  'failure-domain.beta.kubernetes.io/region',
  'beta.kubernetes.io/instance-type',
  'node.kubernetes.io/instance-type',
  'kubernetes.io/os',
  'kubernetes.io/arch',
  'beta.kubernetes.io/os',
  'beta.kubernetes.io/arch',
]);
const KUBELET_LABEL_NAMESPACES = ['kubelet.kubernetes.io', 'node.kubernetes.io'];
const within = (ns: string, domain: string): boolean => ns === domain || ns.endsWith(`.${domain}`);
const labelNamespace = (key: string): string => (key.includes('/') ? key.slice(0, key.indexOf('/')) : '');

/** The label keys a kubelet may not add, change or remove on its Node (getForbiddenLabels). */
export function forbiddenNodeLabels(now: Record<string, string> | undefined, before: Record<string, string> | undefined): string[] {
  const a = now ?? {};
  const b = before ?? {};
  const modified = new Set<string>();
  for (const k of Object.keys(a)) if (a[k] !== b[k]) modified.add(k);
  for (const k of Object.keys(b)) if (a[k] !== b[k]) modified.add(k);
  const out: string[] = [];
  for (const key of modified) {
    const ns = labelNamespace(key);
    const kubeletLabel = KUBELET_LABELS.has(key) || KUBELET_LABEL_NAMESPACES.some((d) => within(ns, d));
    const kubernetesLabel = within(ns, 'kubernetes.io') || within(ns, 'k8s.io');
    if (within(ns, 'node-restriction.kubernetes.io') || (kubernetesLabel && !kubeletLabel)) out.push(key);
  }
  return out.sort();
}

@AdmissionPlugin({ name: 'NodeRestriction', order: 350, defaultOff: true })
@Injectable()
export class NodeRestrictionPlugin implements Admission {
  constructor(@Inject(STORAGE) private readonly storage: Storage) {}

  async admit(): Promise<void> {}

  async validate(a: AdmissionAttributes): Promise<void> {
    const node = nodeIdentity(a.ctx.user);
    if (node === undefined) return;
    const gr = { group: a.decl.group, resource: a.decl.plural };
    const forbid = (why: string): never => {
      throw Errors.forbidden(gr, a.name, why);
    };
    if (node === '') forbid(`could not determine node from user "${a.ctx.user.username}"`);
    switch (`${a.decl.group}/${a.decl.plural}`) {
      case '/pods':
        if (a.subresource === '') return this.pod(node, a, forbid);
        if (a.subresource === 'status') return this.podStatus(node, a, forbid);
        if (a.subresource === 'eviction') return this.eviction(node, a, forbid);
        return forbid(`unexpected pod subresource "${a.subresource}", only 'status' and 'eviction' are allowed`);
      case '/nodes':
        return this.node(node, a, forbid);
      case '/persistentvolumeclaims':
        if (a.subresource !== 'status') return forbid('may only update PVC status');
        return this.claimStatus(node, a, forbid);
      case '/serviceaccounts':
        return this.token(node, a, forbid);
      case 'coordination.k8s.io/leases':
        if (a.namespace !== NODE_LEASE_NAMESPACE) return forbid(`can only access leases in the "${NODE_LEASE_NAMESPACE}" system namespace`);
        if (this.nameOf(a) !== node) forbid('can only access node lease with the same name as the requesting node');
        return;
      case 'storage.k8s.io/csinodes':
        if (this.nameOf(a) !== node) forbid('can only access CSINode with the same name as the requesting node');
        return;
    }
  }

  /** The object's name: a create's is in its body. */
  private nameOf(a: AdmissionAttributes): string {
    return a.operation === 'CREATE' ? (a.object?.metadata.name ?? '') : a.name;
  }

  private async stored(key: string): Promise<KubeObject | undefined> {
    return this.storage.get(key, { mode: 'MostRecent' });
  }

  /** The pod as stored; 404 as kube's lister answers when it is not there. */
  private async podOf(a: AdmissionAttributes, name: string): Promise<KubeObject> {
    const pod = await this.stored(`/registry/core/pods/${a.namespace}/${name}`);
    if (!pod) throw new StatusError(404, 'NotFound', `pod "${name}" not found`, { name, kind: 'pods' });
    return pod;
  }

  private async pod(node: string, a: AdmissionAttributes, forbid: (why: string) => never): Promise<void> {
    if (a.operation === 'DELETE') {
      const pod = a.oldObject ?? (await this.podOf(a, a.name));
      if (specOf(pod).nodeName !== node) forbid(`node "${node}" can only delete pods with spec.nodeName set to itself`);
      return;
    }
    if (a.operation !== 'CREATE') forbid(`unexpected operation "${a.operation}", node "${node}" can only create and delete mirror pods`);
    const pod = a.object!;
    if (!isMirrorPod(pod)) {
      forbid(`pod does not have "${MIRROR_POD_ANNOTATION}" annotation, node "${node}" can only create mirror pods`);
    }
    const spec = specOf(pod);
    if (spec.nodeName !== node) forbid(`node "${node}" can only create pods with spec.nodeName set to itself`);
    const owners = Array.isArray(pod.metadata.ownerReferences) ? (pod.metadata.ownerReferences as Obj[]) : [];
    if (owners.length > 1) forbid(`node "${node}" can only create pods with a single owner reference set to itself`);
    if (owners.length === 0) forbid(`node "${node}" can only create pods with an owner reference set to itself`);
    const owner = owners[0]!;
    if (owner.apiVersion !== 'v1' || owner.kind !== 'Node' || owner.name !== node)
      forbid(`node "${node}" can only create pods with an owner reference set to itself`);
    if (owner.controller !== true) forbid(`node "${node}" can only create pods with a controller owner reference set to itself`);
    if (owner.blockOwnerDeletion === true) forbid(`node "${node}" must not set blockOwnerDeletion on an owner reference`);
    const self = await this.stored(`/registry/core/nodes/${node}`);
    if (!self) throw new StatusError(404, 'NotFound', `node "${node}" not found`, { name: node, kind: 'nodes' });
    if (owner.uid !== self.metadata.uid) forbid(`node ${node} UID mismatch: expected ${String(owner.uid)} got ${String(self.metadata.uid)}`);
    if (spec.serviceAccountName) forbid(`node "${node}" can not create pods that reference a service account`);
    const refs = podNameRefs(pod);
    if (refs.secrets.size > 0) forbid(`node "${node}" can not create pods that reference secrets`);
    if (refs.configMaps.size > 0) forbid(`node "${node}" can not create pods that reference configmaps`);
    const volumes = Array.isArray(spec.volumes) ? (spec.volumes as Obj[]) : [];
    for (const v of volumes) {
      const sources = isObj(v.projected) && Array.isArray(v.projected.sources) ? (v.projected.sources as Obj[]) : [];
      if (sources.some((s) => isObj(s) && s.clusterTrustBundle)) forbid(`node "${node}" can not create pods that reference clustertrustbundles`);
    }
    if (volumes.some((v) => isObj(v.persistentVolumeClaim))) forbid(`node "${node}" can not create pods that reference persistentvolumeclaims`);
  }

  private podStatus(node: string, a: AdmissionAttributes, forbid: (why: string) => never): void {
    if (a.operation !== 'UPDATE') forbid(`unexpected operation "${a.operation}"`);
    if (specOf(a.oldObject).nodeName !== node) forbid(`node "${node}" can only update pod status for pods with spec.nodeName set to itself`);
    if (!isDeepStrictEqual(a.oldObject?.metadata.labels ?? {}, a.object?.metadata.labels ?? {}))
      forbid(`node "${node}" cannot update labels through pod status`);
  }

  private async eviction(node: string, a: AdmissionAttributes, forbid: (why: string) => never): Promise<void> {
    if (a.operation !== 'CREATE') forbid(`unexpected operation ${a.operation}`);
    const name = a.name || a.object?.metadata.name;
    if (!name) return forbid('could not determine pod from request data');
    if (specOf(await this.podOf(a, name)).nodeName !== node) forbid(`node ${node} can only evict pods with spec.nodeName set to itself`);
  }

  private node(node: string, a: AdmissionAttributes, forbid: (why: string) => never): void {
    const name = this.nameOf(a);
    if (name !== node) forbid(`node "${node}" is not allowed to modify node "${name}"`);
    if (a.operation === 'CREATE') {
      const bad = forbiddenNodeLabels(labelsOf(a.object), undefined);
      if (bad.length) forbid(`node "${node}" is not allowed to set the following labels: ${bad.join(', ')}`);
    } else if (a.operation === 'UPDATE') {
      if (!isDeepStrictEqual(specOf(a.object).taints ?? [], specOf(a.oldObject).taints ?? [])) forbid(`node "${node}" is not allowed to modify taints`);
      const bad = forbiddenNodeLabels(labelsOf(a.object), labelsOf(a.oldObject));
      if (bad.length) forbid(`is not allowed to modify labels: ${bad.join(', ')}`);
    }
  }

  private claimStatus(node: string, a: AdmissionAttributes, forbid: (why: string) => never): void {
    if (a.operation !== 'UPDATE') forbid(`unexpected operation "${a.operation}"`);
    const strip = (o: KubeObject | undefined): KubeObject => {
      const c = structuredClone(o ?? { metadata: {} });
      delete c.metadata.resourceVersion;
      delete c.metadata.managedFields;
      if (isObj(c.status)) {
        for (const f of ['capacity', 'conditions', 'allocatedResourceStatuses', 'allocatedResources']) delete c.status[f];
      }
      return c;
    };
    if (!isDeepStrictEqual(strip(a.oldObject), strip(a.object))) {
      forbid(`node "${node}" is not allowed to update fields other than status.capacity and status.conditions`);
    }
  }

  private async token(node: string, a: AdmissionAttributes, forbid: (why: string) => never): Promise<void> {
    if (a.operation !== 'CREATE' || a.subresource !== 'token') return;
    const ref = isObj(specOf(a.object).boundObjectRef) ? (specOf(a.object).boundObjectRef as Obj) : undefined;
    if (!ref || ref.apiVersion !== 'v1' || ref.kind !== 'Pod' || !ref.name) forbid('node requested token not bound to a pod');
    if (!ref!.uid) forbid('node requested token with a pod binding without a uid');
    const pod = await this.podOf(a, String(ref!.name));
    if (ref!.uid !== pod.metadata.uid) {
      forbid(
        `the UID in the bound object reference (${String(ref!.uid)}) does not match the UID in record. The object might have been deleted and then recreated`,
      );
    }
    if (specOf(pod).nodeName !== node) forbid('node requested token bound to a pod scheduled on a different node');
  }
}
