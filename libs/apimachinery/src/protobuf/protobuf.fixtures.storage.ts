/**
 * Test data of the protobuf codec specs for the storage kinds: PersistentVolume,
 * PersistentVolumeClaim, LimitRange, ResourceQuota, Pod and the storage.k8s.io/v1 kinds, with their lists.
 * Embedded Go structs (a Volume's source, a PersistentVolumeSpec's source, LocalObjectReference,
 * a Probe's handler) are in their JSON place, which the codec moves into the nested message.
 * Test support only: not exported from the library.
 */
import type { JsonObject } from './protobuf.codec.js';

const meta = (name: string, namespace?: string): JsonObject => ({
  name,
  ...(namespace ? { namespace } : {}),
  uid: `uid-${name}`,
  resourceVersion: '9',
  creationTimestamp: '2024-01-02T03:04:05Z',
  labels: { app: 'web' },
  finalizers: ['kubernetes.io/pv-protection'],
});
const listMeta: JsonObject = { resourceVersion: '7', continue: 'tok' };
const nodeAffinity: JsonObject = {
  required: {
    nodeSelectorTerms: [
      {
        matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['n1'] }],
        matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['n2'] }],
      },
    ],
  },
};

const persistentVolume: JsonObject = {
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: meta('pv1'),
  spec: {
    capacity: { storage: '5Gi' },
    nfs: { server: 'nfs.example.com', path: '/exports/a', readOnly: true },
    accessModes: ['ReadWriteOnce', 'ReadOnlyMany'],
    claimRef: { kind: 'PersistentVolumeClaim', namespace: 'default', name: 'c', uid: 'u-c', apiVersion: 'v1', resourceVersion: '3' },
    persistentVolumeReclaimPolicy: 'Retain',
    storageClassName: 'fast',
    mountOptions: ['hard', 'nfsvers=4.1'],
    volumeMode: 'Filesystem',
    nodeAffinity,
    volumeAttributesClassName: 'gold',
  },
  status: { phase: 'Bound', message: 'bound', reason: 'Ok', lastPhaseTransitionTime: '2024-01-02T03:04:05Z' },
};

const csiVolume: JsonObject = {
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: meta('pv2'),
  spec: {
    capacity: { storage: '1Gi' },
    csi: {
      driver: 'csi.example.com',
      volumeHandle: 'h-1',
      fsType: 'ext4',
      volumeAttributes: { tier: 'gold' },
      nodePublishSecretRef: { name: 's', namespace: 'kube-system' },
      controllerExpandSecretRef: { name: 'e', namespace: 'kube-system' },
    },
    accessModes: ['ReadWriteOncePod'],
  },
};

const claim: JsonObject = {
  apiVersion: 'v1',
  kind: 'PersistentVolumeClaim',
  metadata: meta('c', 'default'),
  spec: {
    accessModes: ['ReadWriteOnce'],
    selector: { matchLabels: { tier: 'db' } },
    resources: { requests: { storage: '1Gi' }, limits: { storage: '2Gi' } },
    volumeName: 'pv1',
    storageClassName: 'fast',
    volumeMode: 'Block',
    dataSource: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 'snap' },
    dataSourceRef: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: 'snap' },
  },
  status: {
    phase: 'Bound',
    accessModes: ['ReadWriteOnce'],
    capacity: { storage: '5Gi' },
    conditions: [{ type: 'Resizing', status: 'True', lastTransitionTime: '2024-01-02T03:04:05Z', reason: 'R', message: 'm' }],
    allocatedResources: { storage: '5Gi' },
  },
};

const limitRange: JsonObject = {
  apiVersion: 'v1',
  kind: 'LimitRange',
  metadata: meta('lr', 'default'),
  spec: {
    limits: [
      {
        type: 'Container',
        max: { cpu: '2' },
        min: { cpu: '100m' },
        default: { cpu: '500m' },
        defaultRequest: { cpu: '200m' },
        maxLimitRequestRatio: { cpu: '4' },
      },
      { type: 'PersistentVolumeClaim', max: { storage: '10Gi' } },
    ],
  },
};

const resourceQuota: JsonObject = {
  apiVersion: 'v1',
  kind: 'ResourceQuota',
  metadata: meta('rq', 'default'),
  spec: {
    hard: { pods: '10', 'requests.cpu': '2' },
    scopes: ['NotTerminating'],
    scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }] },
  },
  status: { hard: { pods: '10', 'requests.cpu': '2' }, used: { pods: '1', 'requests.cpu': '500m' } },
};

const pod: JsonObject = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: meta('p', 'default'),
  spec: {
    volumes: [
      { name: 'cfg', configMap: { name: 'cm', items: [{ key: 'a', path: 'a.txt', mode: 0 }], defaultMode: 420, optional: false } },
      { name: 'data', persistentVolumeClaim: { claimName: 'c', readOnly: true } },
      { name: 'scratch', emptyDir: { medium: 'Memory', sizeLimit: '64Mi' } },
      {
        name: 'proj',
        projected: {
          sources: [
            { secret: { name: 's', items: [{ key: 'k', path: 'k' }] } },
            { serviceAccountToken: { audience: 'vault', expirationSeconds: 3600, path: 'token' } },
            { downwardAPI: { items: [{ path: 'labels', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.labels' } }] } },
          ],
          defaultMode: 256,
        },
      },
    ],
    containers: [
      {
        name: 'app',
        image: 'nginx:1.27',
        command: ['nginx'],
        args: ['-g', 'daemon off;'],
        workingDir: '/srv',
        ports: [{ name: 'http', containerPort: 80, protocol: 'TCP', hostPort: 8080 }],
        env: [
          { name: 'A', value: '1' },
          { name: 'B', valueFrom: { configMapKeyRef: { name: 'cm', key: 'b', optional: true } } },
        ],
        envFrom: [{ prefix: 'S_', secretRef: { name: 's' } }],
        resources: { limits: { cpu: '1', memory: '256Mi' }, requests: { cpu: '100m' } },
        volumeMounts: [{ name: 'cfg', mountPath: '/etc/cfg', readOnly: true, subPath: 'x' }],
        livenessProbe: { httpGet: { path: '/healthz', port: 80, scheme: 'HTTP' }, initialDelaySeconds: 3, periodSeconds: 10 },
        readinessProbe: { tcpSocket: { port: 'http' }, timeoutSeconds: 2 },
        imagePullPolicy: 'IfNotPresent',
        securityContext: { privileged: false, runAsUser: 0, capabilities: { add: ['NET_ADMIN'], drop: ['ALL'] } },
      },
    ],
    restartPolicy: 'Always',
    terminationGracePeriodSeconds: 0,
    dnsPolicy: 'ClusterFirst',
    nodeSelector: { disk: 'ssd' },
    serviceAccountName: 'default',
    automountServiceAccountToken: false,
    nodeName: 'n1',
    securityContext: { runAsNonRoot: true, fsGroup: 2000 },
    tolerations: [{ key: 'k', operator: 'Exists', effect: 'NoSchedule', tolerationSeconds: 30 }],
    priority: 0,
  },
  status: {
    phase: 'Pending',
    conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', lastTransitionTime: '2024-01-02T03:04:05Z' }],
    containerStatuses: [
      { name: 'app', ready: false, restartCount: 0, image: 'nginx:1.27', imageID: 'sha256:ab', state: { waiting: { reason: 'ContainerCreating' } } },
    ],
    qosClass: 'Burstable',
  },
};

const S = 'storage.k8s.io/v1';
const storageClass: JsonObject = {
  apiVersion: S,
  kind: 'StorageClass',
  metadata: meta('fast'),
  provisioner: 'csi.example.com',
  parameters: { type: 'ssd' },
  reclaimPolicy: 'Retain',
  mountOptions: ['discard'],
  allowVolumeExpansion: false,
  volumeBindingMode: 'WaitForFirstConsumer',
  allowedTopologies: [{ matchLabelExpressions: [{ key: 'topology.kubernetes.io/zone', values: ['a', 'b'] }] }],
};
const volumeAttachment: JsonObject = {
  apiVersion: S,
  kind: 'VolumeAttachment',
  metadata: meta('va'),
  spec: { attacher: 'csi.example.com', nodeName: 'n1', source: { persistentVolumeName: 'pv1' } },
  status: {
    attached: false,
    attachmentMetadata: { dev: '/dev/sdb' },
    attachError: { time: '2024-01-02T03:04:05Z', message: 'timeout', errorCode: 4 },
    detachError: { message: 'busy' },
  },
};
const inlineAttachment: JsonObject = {
  apiVersion: S,
  kind: 'VolumeAttachment',
  metadata: meta('va2'),
  spec: {
    attacher: 'csi.example.com',
    nodeName: 'n1',
    source: { inlineVolumeSpec: { csi: { driver: 'csi.example.com', volumeHandle: 'h' }, accessModes: ['ReadWriteOnce'] } },
  },
};
const csiDriver: JsonObject = {
  apiVersion: S,
  kind: 'CSIDriver',
  metadata: meta('csi.example.com'),
  spec: {
    attachRequired: false,
    podInfoOnMount: true,
    volumeLifecycleModes: ['Persistent', 'Ephemeral'],
    storageCapacity: false,
    fsGroupPolicy: 'File',
    tokenRequests: [{ audience: '' }, { audience: 'vault', expirationSeconds: 3600 }],
    requiresRepublish: false,
    seLinuxMount: true,
    nodeAllocatableUpdatePeriodSeconds: 60,
  },
};
const csiNode: JsonObject = {
  apiVersion: S,
  kind: 'CSINode',
  metadata: meta('n1'),
  spec: { drivers: [{ name: 'csi.example.com', nodeID: 'n1-id', topologyKeys: ['topology.kubernetes.io/zone'], allocatable: { count: 0 } }] },
};
const capacity: JsonObject = {
  apiVersion: S,
  kind: 'CSIStorageCapacity',
  metadata: meta('cap', 'kube-system'),
  nodeTopology: { matchLabels: { 'topology.kubernetes.io/zone': 'a' } },
  storageClassName: 'fast',
  capacity: '100Gi',
  maximumVolumeSize: '10Gi',
};

const list = (apiVersion: string, kind: string, items: JsonObject[]): JsonObject => ({ apiVersion, kind, metadata: listMeta, items });

/** One object of every storage-related kind and list, with the fields that matter set. */
export const storageKinds: JsonObject[] = [
  persistentVolume,
  csiVolume,
  claim,
  limitRange,
  pod,
  list('v1', 'PersistentVolumeList', [persistentVolume]),
  list('v1', 'PersistentVolumeClaimList', [claim]),
  list('v1', 'LimitRangeList', [limitRange]),
  resourceQuota,
  list('v1', 'ResourceQuotaList', [resourceQuota]),
  list('v1', 'PodList', [pod]),
  storageClass,
  volumeAttachment,
  inlineAttachment,
  csiDriver,
  csiNode,
  capacity,
  list(S, 'StorageClassList', [storageClass]),
  list(S, 'VolumeAttachmentList', [volumeAttachment]),
  list(S, 'CSIDriverList', [csiDriver]),
  list(S, 'CSINodeList', [csiNode]),
  list(S, 'CSIStorageCapacityList', [capacity]),
];
