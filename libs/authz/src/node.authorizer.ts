/**
 * The Node authorization mode (`--authorization-mode=Node,...`, Kubernetes'
 * plugin/pkg/auth/authorizer/node): a kubelet, the user `system:node:<name>` in the group
 * `system:nodes`, may read the Secrets, ConfigMaps, PersistentVolumeClaims, PersistentVolumes,
 * VolumeAttachments and service-account tokens that the pods bound to its node need, and
 * nothing of those kinds otherwise; it may use only its own node Lease and CSINode; every
 * other request of a node is decided by the rules of the system:node role ({@link NODE_RULES}).
 * Requests of anyone else get no opinion, so the next mode decides.
 *
 * Which objects a node reaches comes from a {@link NodeGraph} the server keeps current from
 * storage. Pods and Nodes are narrowed as kube-apiserver narrows them from 1.32
 * (AuthorizeNodeWithSelectors): a node reads only its own Node object, gets only the pods bound
 * to it, and lists or watches pods only with the field selector `spec.nodeName=<its name>`.
 */
import type { UserInfo } from '@app/auth';
import type { Authorizer, AuthorizationAttributes, AuthorizationDecision } from './authorizer.port.js';
import { ruleAllows, type PolicyRule } from './rbac.rules.js';

/** The group every node's user is in. */
export const NODES_GROUP = 'system:nodes';
/** The prefix of a node's user name; the rest is the node's name. */
export const NODE_USER_PREFIX = 'system:node:';
/** The namespace of the nodes' heartbeat Leases. */
export const NODE_LEASE_NAMESPACE = 'kube-node-lease';

const rule = (apiGroups: string[], resources: string[], verbs: string[]): PolicyRule => ({ apiGroups, resources, verbs });
const READ = ['get', 'list', 'watch'];

/** kube's NodeRules: the system:node ClusterRole's rules, what a node may do beyond its graph. */
export const NODE_RULES: readonly PolicyRule[] = [
  rule(['authentication.k8s.io'], ['tokenreviews'], ['create']),
  rule(['authorization.k8s.io'], ['localsubjectaccessreviews', 'subjectaccessreviews'], ['create']),
  rule([''], ['services'], READ),
  rule([''], ['nodes'], ['create', 'get', 'list', 'watch']),
  rule([''], ['nodes/status'], ['patch', 'update']),
  rule([''], ['nodes'], ['patch', 'update']),
  rule([''], ['events'], ['create', 'patch', 'update']),
  rule([''], ['pods'], READ),
  rule([''], ['pods'], ['create', 'delete']),
  rule([''], ['pods/status'], ['patch', 'update']),
  rule([''], ['pods/eviction'], ['create']),
  rule([''], ['configmaps', 'secrets'], READ),
  rule([''], ['persistentvolumeclaims', 'persistentvolumes'], ['get']),
  rule([''], ['endpoints'], ['get']),
  rule(['certificates.k8s.io'], ['certificatesigningrequests'], ['create', 'get', 'list', 'watch']),
  rule(['coordination.k8s.io'], ['leases'], ['create', 'delete', 'get', 'patch', 'update']),
  rule(['storage.k8s.io'], ['volumeattachments'], ['get']),
  rule([''], ['serviceaccounts/token'], ['create']),
  rule([''], ['persistentvolumeclaims/status'], ['get', 'patch', 'update']),
  rule(['storage.k8s.io'], ['csidrivers'], READ),
  rule(['storage.k8s.io'], ['csinodes'], ['create', 'delete', 'get', 'patch', 'update']),
  rule(['node.k8s.io'], ['runtimeclasses'], READ),
];

/** The kinds of object a node's access to is decided by its graph. */
export type NodeGraphKind = 'pod' | 'secret' | 'configmap' | 'persistentvolumeclaim' | 'persistentvolume' | 'serviceaccount' | 'volumeattachment';

/** Which objects the pods bound to a node need. */
export interface NodeGraph {
  /** Whether the copy is loaded (before that nothing is reached). */
  isSynced(): boolean;
  /** Whether `node` reaches the object `namespace/name` ('' for cluster-scoped kinds) of `kind`. */
  reaches(node: string, kind: NodeGraphKind, namespace: string, name: string): boolean;
}

/** The node a user is, '' for a node user without a name, undefined for anyone else (NodeIdentity). */
export function nodeIdentity(user: UserInfo): string | undefined {
  if (!user.groups.includes(NODES_GROUP) || !user.username.startsWith(NODE_USER_PREFIX)) return undefined;
  return user.username.slice(NODE_USER_PREFIX.length);
}

const ALLOW: AuthorizationDecision = { decision: 'Allow' };
const no = (reason: string): AuthorizationDecision => ({ decision: 'NoOpinion', reason });

/** The Node authorizer. */
export class NodeAuthorizer implements Authorizer {
  constructor(
    private readonly graph: NodeGraph,
    private readonly rules: readonly PolicyRule[] = NODE_RULES,
  ) {}

  authorize(a: AuthorizationAttributes): AuthorizationDecision {
    const node = nodeIdentity(a.user);
    if (node === undefined) return { decision: 'NoOpinion' };
    if (node === '') return no(`unknown node for user "${a.user.username}"`);
    if (a.isResourceRequest) {
      switch (`${a.apiGroup}/${a.resource}`) {
        case '/secrets':
          return this.readNamespaced(node, 'secret', a);
        case '/configmaps':
          return this.readNamespaced(node, 'configmap', a);
        case '/persistentvolumeclaims':
          return a.subresource === 'status' ? this.statusUpdate(node, 'persistentvolumeclaim', a) : this.get(node, 'persistentvolumeclaim', a);
        case '/persistentvolumes':
          return this.get(node, 'persistentvolume', a);
        case 'storage.k8s.io/volumeattachments':
          return this.get(node, 'volumeattachment', a);
        case '/serviceaccounts':
          return this.createToken(node, a);
        case 'coordination.k8s.io/leases':
          return this.lease(node, a);
        case 'storage.k8s.io/csinodes':
          return this.csiNode(node, a);
        case '/nodes':
          return this.nodeObject(node, a);
        case '/pods':
          return this.pod(node, a);
      }
    }
    for (const r of this.rules) if (ruleAllows(a, r)) return ALLOW;
    return { decision: 'NoOpinion' };
  }

  private readNamespaced(node: string, kind: NodeGraphKind, a: AuthorizationAttributes): AuthorizationDecision {
    if (a.verb !== 'get' && a.verb !== 'list' && a.verb !== 'watch') return no('can only read resources of this type');
    if (a.subresource) return no('cannot read subresource');
    if (!a.namespace) return no('can only read namespaced object of this type');
    return this.reached(node, kind, a);
  }

  private get(node: string, kind: NodeGraphKind, a: AuthorizationAttributes): AuthorizationDecision {
    if (a.verb !== 'get') return no('can only get individual resources of this type');
    if (a.subresource) return no('cannot get subresource');
    return this.reached(node, kind, a);
  }

  private statusUpdate(node: string, kind: NodeGraphKind, a: AuthorizationAttributes): AuthorizationDecision {
    if (a.verb !== 'update' && a.verb !== 'patch') return no('can only get/update/patch this type');
    return this.reached(node, kind, a);
  }

  private createToken(node: string, a: AuthorizationAttributes): AuthorizationDecision {
    if (a.verb !== 'create' || !a.name) return no('can only create tokens for individual service accounts');
    if (a.subresource !== 'token') return no('can only create token subresource of serviceaccount');
    return this.reached(node, 'serviceaccount', a);
  }

  private lease(node: string, a: AuthorizationAttributes): AuthorizationDecision {
    if (!['get', 'create', 'update', 'patch', 'delete'].includes(a.verb)) return no('can only get, create, update, patch, or delete a node lease');
    if (a.namespace !== NODE_LEASE_NAMESPACE) return no(`can only access leases in the "${NODE_LEASE_NAMESPACE}" system namespace`);
    // A create names its object in the body, which only admission sees.
    if (a.verb !== 'create' && a.name !== node) return no('can only access node lease with the same name as the requesting node');
    return ALLOW;
  }

  private csiNode(node: string, a: AuthorizationAttributes): AuthorizationDecision {
    if (!['get', 'create', 'update', 'patch', 'delete'].includes(a.verb)) return no('can only get, create, update, patch, or delete a CSINode');
    if (a.subresource) return no('cannot authorize CSINode subresources');
    if (a.verb !== 'create' && a.name !== node) return no('can only access CSINode with the same name as the requesting node');
    return ALLOW;
  }

  /** Its own Node only: read by name (also before it exists), written by whoever NodeRestriction lets. */
  private nodeObject(node: string, a: AuthorizationAttributes): AuthorizationDecision {
    if (a.subresource === '') {
      if (a.verb === 'create' || a.verb === 'update' || a.verb === 'patch') return ALLOW;
      if (a.verb === 'get' || a.verb === 'list' || a.verb === 'watch') {
        if (a.name === node) return ALLOW;
        if (a.name === '') return no(`node '${node}' cannot read all nodes, only its own Node object`);
        return no(`node '${node}' cannot read '${a.name}', only its own Node object`);
      }
    } else if (a.subresource === 'status' && (a.verb === 'update' || a.verb === 'patch')) return ALLOW;
    return { decision: 'NoOpinion' };
  }

  /** The pods bound to it: by name, or listed and watched with its `spec.nodeName` selector. */
  private pod(node: string, a: AuthorizationAttributes): AuthorizationDecision {
    if (a.subresource === '') {
      if (a.verb === 'get') return this.reached(node, 'pod', a);
      if (a.verb === 'list' || a.verb === 'watch') {
        if (a.fieldSelector?.some((r) => r.field === 'spec.nodeName' && (r.operator === '=' || r.operator === '==') && r.value === node)) return ALLOW;
        if (a.name !== '') return this.reached(node, 'pod', a);
        return no('can only list/watch pods with spec.nodeName field selector');
      }
      // Mirror pods; NodeRestriction limits them to pods bound to the node.
      if (a.verb === 'create' || a.verb === 'delete') return ALLOW;
    } else if (a.subresource === 'status') {
      if (a.verb === 'update' || a.verb === 'patch') return ALLOW;
    } else if (a.subresource === 'eviction' && a.verb === 'create') return ALLOW;
    return { decision: 'NoOpinion' };
  }

  private reached(node: string, kind: NodeGraphKind, a: AuthorizationAttributes): AuthorizationDecision {
    if (!a.name) return no('No Object name found');
    if (!this.graph.isSynced() || !this.graph.reaches(node, kind, a.namespace, a.name)) {
      return no(`no relationship found between node '${node}' and this object`);
    }
    return ALLOW;
  }
}
