/**
 * The storage kinds' rules (resources "Volume", "PersistentVolumeClaim", "PersistentVolume",
 * "StorageClass", "VolumeAttachment", "CSIDriver", "CSINode", "CSIStorageCapacity",
 * "LimitRange", "Delete response bodies"; conventions admission table; upstream validation of
 * pkg/apis/core and pkg/apis/storage).
 */
import type { RowGroup } from './conformance.types.js';

const NS = 'cf-storage';
const PV = '/api/v1/persistentvolumes';
const PVC = `/api/v1/namespaces/${NS}/persistentvolumeclaims`;
const PODS = `/api/v1/namespaces/${NS}/pods`;
const LR = `/api/v1/namespaces/${NS}/limitranges`;
const S = '/apis/storage.k8s.io/v1';
const MERGE = { 'content-type': 'application/merge-patch+json' };
const DEFAULT_CLASS = { 'storageclass.kubernetes.io/is-default-class': 'true' };
const pv = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name }, spec });
const pvSpec = { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/data' } };
const pvc = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name }, spec });
const pod = (name: string, volumes: unknown[]) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'c', image: 'nginx:1.27' }], volumes },
});
const podWithResources = (name: string, resources: Record<string, unknown>) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'c', image: 'nginx:1.27', resources }] },
});
const QUANTITY_DOES_NOT_PARSE = {
  status: 400,
  reason: 'BadRequest',
  message: `Pod in version "v1" cannot be handled as a Pod: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`,
};
const sc = (name: string, extra: Record<string, unknown> = {}) => ({ apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name }, ...extra });
const driver = (name: string, spec: Record<string, unknown> = {}) => ({ apiVersion: 'storage.k8s.io/v1', kind: 'CSIDriver', metadata: { name }, spec });

/** The group. */
export const STORAGE: RowGroup = {
  name: 'storage kinds',
  namespace: NS,
  rows: [
    {
      id: 'storage-01',
      rule: 'A PersistentVolume names exactly one volume source',
      source: 'resources PersistentVolume (source: one of)',
      upstream: '422 Invalid "spec: Required value: must specify a volume type"',
      req: { method: 'POST', path: PV, body: pv('cf-st-none', { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'] }) },
      expect: { status: 422, reason: 'Invalid', message: /spec: Required value: must specify a volume type/ },
    },
    {
      id: 'storage-02',
      rule: 'A new PersistentVolume gets kubernetes.io/pv-protection; its DELETE answers with the object',
      source: 'conventions admission (StorageObjectInUseProtection); resources Delete response bodies',
      upstream: '201 with finalizers [kubernetes.io/pv-protection]; DELETE 200 PersistentVolume',
      setup: [
        {
          method: 'POST',
          path: PV,
          body: pv('cf-st-pv', pvSpec),
          expect: { status: 201, body: { metadata: { finalizers: ['kubernetes.io/pv-protection'] } } },
        },
      ],
      req: { method: 'DELETE', path: `${PV}/cf-st-pv` },
      expect: { status: 200, body: { kind: 'PersistentVolume', metadata: { name: 'cf-st-pv' } } },
    },
    {
      id: 'storage-03',
      rule: 'PersistentVolume access modes are known values',
      source: 'resources PersistentVolume (accessModes)',
      upstream: '422 Invalid "spec.accessModes: Unsupported value: \\"RWO\\": supported values: ..."',
      req: { method: 'POST', path: PV, body: pv('cf-st-modes', { ...pvSpec, accessModes: ['RWO'] }) },
      expect: {
        status: 422,
        reason: 'Invalid',
        message: /spec\.accessModes: Unsupported value: "RWO": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"/,
      },
    },
    {
      id: 'storage-04',
      rule: 'A new claim gets kubernetes.io/pvc-protection and volumeMode Filesystem',
      source: 'conventions admission (StorageObjectInUseProtection); resources PersistentVolumeClaim (volumeMode)',
      upstream: '201 with finalizers [kubernetes.io/pvc-protection], spec.volumeMode Filesystem, status.phase Pending',
      req: { method: 'POST', path: PVC, body: pvc('c1', { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } }) },
      expect: {
        status: 201,
        body: { metadata: { finalizers: ['kubernetes.io/pvc-protection'] }, spec: { volumeMode: 'Filesystem' }, status: { phase: 'Pending' } },
      },
    },
    {
      id: 'storage-05',
      rule: 'A claim requests storage',
      source: 'resources PersistentVolumeClaim (resources)',
      upstream: '422 Invalid "spec.resources[storage]: Required value"',
      req: { method: 'POST', path: PVC, body: pvc('c2', { accessModes: ['ReadWriteOnce'] }) },
      expect: { status: 422, reason: 'Invalid', message: /spec\.resources\[storage\]: Required value/ },
    },
    {
      id: 'storage-06',
      rule: "A claim's dataSource and dataSourceRef, when both set, are equal",
      source: 'resources PersistentVolumeClaim (dataSource, dataSourceRef)',
      upstream: '422 Invalid "spec.dataSource: Invalid value: ...: must match dataSourceRef"',
      req: {
        method: 'POST',
        path: PVC,
        body: pvc('c3', {
          accessModes: ['ReadWriteOnce'],
          resources: { requests: { storage: '1Gi' } },
          dataSource: { kind: 'PersistentVolumeClaim', name: 'a' },
          dataSourceRef: { kind: 'PersistentVolumeClaim', name: 'b' },
        }),
      },
      expect: { status: 422, reason: 'Invalid', message: /spec\.dataSource: Invalid value: .*must match dataSourceRef/ },
    },
    {
      id: 'storage-07',
      rule: 'A Pod volume has exactly one source',
      source: 'resources Volume (exactly one source)',
      upstream: '422 Invalid "spec.volumes[0].hostPath: Forbidden: may not specify more than 1 volume type"',
      req: { method: 'POST', path: PODS, body: pod('p1', [{ name: 'v', emptyDir: {}, hostPath: { path: '/x' } }]) },
      expect: { status: 422, reason: 'Invalid', message: /spec\.volumes\[0\]\.hostPath: Forbidden: may not specify more than 1 volume type/ },
    },
    {
      id: 'storage-08',
      rule: 'defaultMode is 0-0777 (0-511 decimal)',
      source: 'resources Volume (configMap defaultMode)',
      upstream: '422 Invalid "spec.volumes[0].configMap.defaultMode: Invalid value: 512: must be a number between 0 and 0777 (octal), both inclusive"',
      req: { method: 'POST', path: PODS, body: pod('p2', [{ name: 'v', configMap: { name: 'c', defaultMode: 512 } }]) },
      expect: {
        status: 422,
        reason: 'Invalid',
        message: /spec\.volumes\[0\]\.configMap\.defaultMode: Invalid value: 512: must be a number between 0 and 0777 \(octal\), both inclusive/,
      },
    },
    {
      id: 'storage-09',
      rule: 'KeyToPath paths are relative and never contain ..',
      source: 'resources Volume (KeyToPath)',
      upstream: '422 Invalid "spec.volumes[0].secret.items[0].path: Invalid value: \\"../x\\": must not contain \'..\'"',
      req: { method: 'POST', path: PODS, body: pod('p3', [{ name: 'v', secret: { secretName: 's', items: [{ key: 'k', path: '../x' }] } }]) },
      expect: { status: 422, reason: 'Invalid', message: /spec\.volumes\[0\]\.secret\.items\[0\]\.path: Invalid value: "\.\.\/x": must not contain '\.\.'/ },
    },
    {
      id: 'storage-10',
      rule: 'A persistentVolumeClaim volume names its claim',
      source: 'resources Volume (persistentVolumeClaim claimName*)',
      upstream: '422 Invalid "spec.volumes[0].persistentVolumeClaim.claimName: Required value"',
      req: { method: 'POST', path: PODS, body: pod('p4', [{ name: 'v', persistentVolumeClaim: {} }]) },
      expect: { status: 422, reason: 'Invalid', message: /spec\.volumes\[0\]\.persistentVolumeClaim\.claimName: Required value/ },
    },
    {
      id: 'storage-11',
      rule: 'LimitRange min is not above max; DELETE answers with a Status',
      source: 'resources LimitRange; resources Delete response bodies',
      upstream: '422 Invalid "spec.limits[0].min[cpu]: Invalid value: \\"2\\": min value 2 is greater than max value 1"; DELETE 200 Status',
      req: {
        method: 'POST',
        path: LR,
        body: {
          apiVersion: 'v1',
          kind: 'LimitRange',
          metadata: { name: 'l1' },
          spec: { limits: [{ type: 'Container', min: { cpu: '2' }, max: { cpu: '1' } }] },
        },
      },
      expect: { status: 422, reason: 'Invalid', message: /spec\.limits\[0\]\.min\[cpu\]: Invalid value: "2": min value 2 is greater than max value 1/ },
      then: [
        {
          req: {
            method: 'POST',
            path: LR,
            body: { apiVersion: 'v1', kind: 'LimitRange', metadata: { name: 'l2' }, spec: { limits: [{ type: 'Container', max: { cpu: '1' } }] } },
          },
          expect: { status: 201 },
        },
        { req: { method: 'DELETE', path: `${LR}/l2` }, expect: { status: 200, body: { kind: 'Status', status: 'Success' } } },
      ],
    },
    {
      id: 'storage-12',
      rule: 'A StorageClass needs a provisioner; reclaimPolicy defaults to Delete; DELETE answers with the object',
      source: 'resources StorageClass; resources Delete response bodies',
      upstream: '422 Invalid "provisioner: Required value"; 201 reclaimPolicy Delete, volumeBindingMode Immediate; DELETE 200 StorageClass',
      req: { method: 'POST', path: `${S}/storageclasses`, body: sc('cf-st-sc0') },
      expect: { status: 422, reason: 'Invalid', message: /provisioner: Required value/ },
      then: [
        {
          req: { method: 'POST', path: `${S}/storageclasses`, body: sc('cf-st-sc', { provisioner: 'csi.example.com' }) },
          expect: { status: 201, body: { reclaimPolicy: 'Delete', volumeBindingMode: 'Immediate' } },
        },
        {
          req: { method: 'DELETE', path: `${S}/storageclasses/cf-st-sc` },
          expect: { status: 200, body: { kind: 'StorageClass', provisioner: 'csi.example.com' } },
        },
      ],
    },
    {
      id: 'storage-13',
      rule: 'A VolumeAttachment source is exactly one of persistentVolumeName and inlineVolumeSpec',
      source: 'resources VolumeAttachment (source*)',
      upstream: '422 Invalid "spec.source: Forbidden: must specify exactly one of inlineVolumeSpec and persistentVolumeName"',
      req: {
        method: 'POST',
        path: `${S}/volumeattachments`,
        body: {
          apiVersion: 'storage.k8s.io/v1',
          kind: 'VolumeAttachment',
          metadata: { name: 'cf-st-va' },
          spec: {
            attacher: 'csi.example.com',
            nodeName: 'n1',
            source: { persistentVolumeName: 'p', inlineVolumeSpec: { accessModes: ['ReadWriteOnce'], csi: { driver: 'd', volumeHandle: 'h' } } },
          },
        },
      },
      expect: { status: 422, reason: 'Invalid', message: /spec\.source: Forbidden: must specify exactly one of inlineVolumeSpec and persistentVolumeName/ },
    },
    {
      id: 'storage-14',
      rule: 'A CSIDriver name is at most 63 characters',
      source: 'resources CSIDriver (name rules)',
      upstream: '422 Invalid "metadata.name: Too long: may not be more than 63 bytes"',
      req: { method: 'POST', path: `${S}/csidrivers`, body: driver(`cf-${'d'.repeat(61)}`) },
      expect: { status: 422, reason: 'Invalid', message: /metadata\.name: Too long: may not be more than 63 bytes/ },
    },
    {
      id: 'storage-15',
      rule: 'CSIDriver attachRequired is immutable; DELETE answers with the object',
      source: 'resources CSIDriver (attachRequired immutable); resources Delete response bodies',
      upstream: '422 Invalid "spec.attachRequired: Invalid value: false: field is immutable"; DELETE 200 CSIDriver',
      setup: [{ method: 'POST', path: `${S}/csidrivers`, body: driver('cf-st.example.com') }],
      req: { method: 'PATCH', path: `${S}/csidrivers/cf-st.example.com`, body: { spec: { attachRequired: false } }, headers: MERGE },
      expect: { status: 422, reason: 'Invalid', message: /spec\.attachRequired: Invalid value: false: field is immutable/ },
      then: [
        {
          req: { method: 'DELETE', path: `${S}/csidrivers/cf-st.example.com` },
          expect: { status: 200, body: { kind: 'CSIDriver', spec: { attachRequired: true } } },
        },
      ],
    },
    {
      id: 'storage-16',
      rule: 'CSINode drivers need a nodeID; DELETE answers with the object',
      source: 'resources CSINode (drivers: name*, nodeID*); resources Delete response bodies',
      upstream: '422 Invalid "spec.drivers[0].nodeID: Required value"; DELETE 200 CSINode',
      req: {
        method: 'POST',
        path: `${S}/csinodes`,
        body: { apiVersion: 'storage.k8s.io/v1', kind: 'CSINode', metadata: { name: 'cf-st-n0' }, spec: { drivers: [{ name: 'd' }] } },
      },
      expect: { status: 422, reason: 'Invalid', message: /spec\.drivers\[0\]\.nodeID: Required value/ },
      then: [
        {
          req: {
            method: 'POST',
            path: `${S}/csinodes`,
            body: { apiVersion: 'storage.k8s.io/v1', kind: 'CSINode', metadata: { name: 'cf-st-n1' }, spec: { drivers: [] } },
          },
          expect: { status: 201 },
        },
        { req: { method: 'DELETE', path: `${S}/csinodes/cf-st-n1` }, expect: { status: 200, body: { kind: 'CSINode' } } },
      ],
    },
    {
      id: 'storage-17',
      rule: 'CSIStorageCapacity storageClassName is immutable; DELETE answers with a Status',
      source: 'resources CSIStorageCapacity (storageClassName immutable); resources Delete response bodies',
      upstream: '422 Invalid "storageClassName: Invalid value: \\"slow\\": field is immutable"; DELETE 200 Status',
      setup: [
        {
          method: 'POST',
          path: `${S}/namespaces/${NS}/csistoragecapacities`,
          body: { apiVersion: 'storage.k8s.io/v1', kind: 'CSIStorageCapacity', metadata: { name: 'cap' }, storageClassName: 'fast', capacity: '1Gi' },
        },
      ],
      req: { method: 'PATCH', path: `${S}/namespaces/${NS}/csistoragecapacities/cap`, body: { storageClassName: 'slow' }, headers: MERGE },
      expect: { status: 422, reason: 'Invalid', message: /storageClassName: Invalid value: "slow": field is immutable/ },
      then: [
        {
          req: { method: 'DELETE', path: `${S}/namespaces/${NS}/csistoragecapacities/cap` },
          expect: { status: 200, body: { kind: 'Status', status: 'Success' } },
        },
      ],
    },
    {
      id: 'storage-18',
      rule: 'A quantity, written as a JSON number or a string, decodes into its canonical string; one that does not parse is 400',
      source: 'upstream resource.Quantity UnmarshalJSON / MarshalJSON',
      upstream:
        '201, resources.limits {"cpu": "500m", "memory": "1536Mi"}; a bool or a string that is no quantity: 400 "quantities must match the regular expression ..."',
      req: { method: 'POST', path: PODS, body: podWithResources('q1', { limits: { cpu: 0.5, memory: '1.5Gi' } }) },
      expect: {
        status: 201,
        body: { spec: { containers: [{ resources: { limits: { cpu: '500m', memory: '1536Mi' }, requests: { cpu: '500m', memory: '1536Mi' } } }] } },
      },
      then: [
        { req: { method: 'POST', path: PODS, body: podWithResources('q2', { limits: { cpu: true } }) }, expect: QUANTITY_DOES_NOT_PARSE },
        { req: { method: 'POST', path: PODS, body: podWithResources('q3', { requests: { memory: 'lots' } }) }, expect: QUANTITY_DOES_NOT_PARSE },
      ],
    },
    {
      id: 'storage-19',
      rule: "A LimitRange gives a new pod's containers the defaults they lack, and says so in an annotation",
      source: 'resources LimitRange (default, defaultRequest); upstream plugin/pkg/admission/limitranger',
      upstream:
        '201, container resources limits {cpu: 500m, memory: 256Mi} requests {cpu: 100m, memory: 256Mi}; annotation kubernetes.io/limit-ranger "LimitRanger plugin set: cpu, memory request for container c; cpu, memory limit for container c"',
      setup: [
        {
          method: 'POST',
          path: LR,
          body: {
            apiVersion: 'v1',
            kind: 'LimitRange',
            metadata: { name: 'defaults' },
            spec: { limits: [{ type: 'Container', default: { cpu: '500m', memory: '256Mi' }, defaultRequest: { cpu: '100m' } }] },
          },
          expect: { status: 201, body: { spec: { limits: [{ defaultRequest: { cpu: '100m', memory: '256Mi' } }] } } },
        },
      ],
      req: { method: 'POST', path: PODS, body: podWithResources('lr1', {}) },
      expect: {
        status: 201,
        body: {
          metadata: {
            annotations: { 'kubernetes.io/limit-ranger': 'LimitRanger plugin set: cpu, memory request for container c; cpu, memory limit for container c' },
          },
          spec: { containers: [{ resources: { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '100m', memory: '256Mi' } } }] },
        },
      },
      then: [{ req: { method: 'DELETE', path: `${LR}/defaults` }, expect: { status: 200 } }],
    },
    {
      id: 'storage-20',
      rule: "A pod or claim outside a LimitRange's bounds is refused, every violation named",
      source: 'resources LimitRange (min, max, maxLimitRequestRatio); upstream plugin/pkg/admission/limitranger',
      upstream:
        '403 Forbidden "pods \\"lr2\\" is forbidden: [maximum cpu usage per Container is 1, but limit is 2, cpu max limit to request ratio per Container is 4, but provided ratio is 10.000000]"; a claim of 100Mi: 403 "persistentvolumeclaims \\"lrc\\" is forbidden: minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 100Mi"',
      setup: [
        {
          method: 'POST',
          path: LR,
          body: {
            apiVersion: 'v1',
            kind: 'LimitRange',
            metadata: { name: 'bounds' },
            spec: {
              limits: [
                { type: 'Container', max: { cpu: '1' }, maxLimitRequestRatio: { cpu: '4' } },
                { type: 'PersistentVolumeClaim', min: { storage: '1Gi' } },
              ],
            },
          },
        },
      ],
      req: { method: 'POST', path: PODS, body: podWithResources('lr2', { requests: { cpu: '200m' }, limits: { cpu: '2' } }) },
      expect: {
        status: 403,
        reason: 'Forbidden',
        message:
          'pods "lr2" is forbidden: [maximum cpu usage per Container is 1, but limit is 2, cpu max limit to request ratio per Container is 4, but provided ratio is 10.000000]',
      },
      then: [
        {
          req: { method: 'POST', path: PVC, body: pvc('lrc', { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '100Mi' } } }) },
          expect: {
            status: 403,
            reason: 'Forbidden',
            message: 'persistentvolumeclaims "lrc" is forbidden: minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 100Mi',
          },
        },
        { req: { method: 'DELETE', path: `${LR}/bounds` }, expect: { status: 200 } },
      ],
    },
    {
      id: 'storage-21',
      rule: 'A new claim that names no class gets the default StorageClass; an empty class name is a choice',
      source: 'upstream plugin/pkg/admission/storage/storageclass/setdefault (enabled by default)',
      upstream: '201 with spec.storageClassName the class annotated storageclass.kubernetes.io/is-default-class "true"; storageClassName "" kept',
      setup: [
        {
          method: 'POST',
          path: `${S}/storageclasses`,
          body: sc('cf-standard', { provisioner: 'example.com/p', metadata: { name: 'cf-standard', annotations: DEFAULT_CLASS } }),
        },
      ],
      req: { method: 'POST', path: PVC, body: pvc('dc1', { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } }) },
      expect: { status: 201, body: { spec: { storageClassName: 'cf-standard' } } },
      then: [
        {
          req: {
            method: 'POST',
            path: PVC,
            body: pvc('dc2', { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: '' }),
          },
          expect: { status: 201, body: { spec: { storageClassName: '' } } },
        },
        { req: { method: 'DELETE', path: `${S}/storageclasses/cf-standard` }, expect: { status: 200 } },
      ],
    },
    {
      id: 'storage-22',
      rule: "A bound claim's storage grows only when its StorageClass allows volume expansion",
      source: 'resources StorageClass (allowVolumeExpansion); upstream plugin/pkg/admission/storage/persistentvolume/resize',
      upstream:
        '403 Forbidden "persistentvolumeclaims \\"rs1\\" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize"; with allowVolumeExpansion true: 200',
      setup: [
        { method: 'POST', path: `${S}/storageclasses`, body: sc('cf-fixed', { provisioner: 'example.com/p' }) },
        { method: 'POST', path: `${S}/storageclasses`, body: sc('cf-growing', { provisioner: 'example.com/p', allowVolumeExpansion: true }) },
        // The volumes, reserved for the claims by name: the volume controller binds each pair.
        { method: 'POST', path: PV, body: pv('v1', { ...pvSpec, storageClassName: 'cf-fixed', claimRef: { namespace: NS, name: 'rs1' } }) },
        { method: 'POST', path: PV, body: pv('v2', { ...pvSpec, storageClassName: 'cf-growing', claimRef: { namespace: NS, name: 'rs2' } }) },
        {
          method: 'POST',
          path: PVC,
          body: pvc('rs1', { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: 'cf-fixed', volumeName: 'v1' }),
        },
        { method: 'PATCH', path: `${PVC}/rs1/status`, body: { status: { phase: 'Bound' } }, headers: MERGE },
        {
          method: 'POST',
          path: PVC,
          body: pvc('rs2', { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: 'cf-growing', volumeName: 'v2' }),
        },
        { method: 'PATCH', path: `${PVC}/rs2/status`, body: { status: { phase: 'Bound' } }, headers: MERGE },
      ],
      req: { method: 'PATCH', path: `${PVC}/rs1`, body: { spec: { resources: { requests: { storage: '2Gi' } } } }, headers: MERGE },
      expect: {
        status: 403,
        reason: 'Forbidden',
        message:
          'persistentvolumeclaims "rs1" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize',
      },
      then: [
        {
          req: { method: 'PATCH', path: `${PVC}/rs2`, body: { spec: { resources: { requests: { storage: '2Gi' } } } }, headers: MERGE },
          expect: { status: 200, body: { spec: { resources: { requests: { storage: '2Gi' } } } } },
        },
        { req: { method: 'DELETE', path: `${S}/storageclasses/cf-fixed` }, expect: { status: 200 } },
        { req: { method: 'DELETE', path: `${S}/storageclasses/cf-growing` }, expect: { status: 200 } },
        { req: { method: 'DELETE', path: `${PVC}/rs1` }, expect: { status: 200 } },
        { req: { method: 'DELETE', path: `${PVC}/rs2` }, expect: { status: 200 } },
        { req: { method: 'DELETE', path: `${PV}/v1` }, expect: { status: 200 } },
        { req: { method: 'DELETE', path: `${PV}/v2` }, expect: { status: 200 } },
      ],
    },
  ],
};
