import { fieldErrorMessage } from '@app/apimachinery';
import {
  validateCSIDriver,
  validateCSIDriverUpdate,
  validateCSINode,
  validateCSINodeUpdate,
  validateCSIStorageCapacity,
  validateCSIStorageCapacityUpdate,
  validateStorageClass,
  validateStorageClassUpdate,
  validateVolumeAttachment,
  validateVolumeAttachmentUpdate,
} from './storage.validation.js';

const msgs = (errs: Parameters<typeof fieldErrorMessage>[0][]) => errs.map(fieldErrorMessage);

describe('StorageClass', () => {
  const sc = { provisioner: 'csi.example.com', reclaimPolicy: 'Delete', volumeBindingMode: 'Immediate' };
  it('requires a provisioner with a qualified name and known policies', () => {
    expect(msgs(validateStorageClass(sc))).toEqual([]);
    expect(msgs(validateStorageClass({ ...sc, provisioner: undefined }))).toEqual(['provisioner: Required value']);
    expect(msgs(validateStorageClass({ ...sc, provisioner: 'bad provisioner' }))[0]).toMatch(
      /^provisioner: Invalid value: "bad provisioner": name part must consist of alphanumeric characters/,
    );
    expect(msgs(validateStorageClass({ ...sc, reclaimPolicy: 'Recycle' }))).toEqual([
      'reclaimPolicy: Unsupported value: "Recycle": supported values: "Delete", "Retain"',
    ]);
    expect(msgs(validateStorageClass({ ...sc, volumeBindingMode: 'Later' }))).toEqual([
      'volumeBindingMode: Unsupported value: "Later": supported values: "Immediate", "WaitForFirstConsumer"',
    ]);
    expect(msgs(validateStorageClass({ ...sc, allowedTopologies: [{ matchLabelExpressions: [{ key: 'zone', values: [] }] }] }))).toEqual([
      'allowedTopologies[0].matchLabelExpressions[0].values: Required value: must specify as least one value',
    ]);
  });
  it('keeps provisioner, parameters, reclaimPolicy and volumeBindingMode', () => {
    const next = { ...sc, provisioner: 'other.example.com', parameters: { a: 'b' }, reclaimPolicy: 'Retain', volumeBindingMode: 'WaitForFirstConsumer' };
    expect(msgs(validateStorageClassUpdate(next, sc))).toEqual([
      'parameters: Forbidden: updates to parameters are forbidden.',
      'provisioner: Forbidden: updates to provisioner are forbidden.',
      'reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden.',
      'volumeBindingMode: Invalid value: "WaitForFirstConsumer": field is immutable',
    ]);
    expect(msgs(validateStorageClassUpdate({ ...sc, allowVolumeExpansion: true, mountOptions: ['ro'] }, sc))).toEqual([]);
  });
});

describe('VolumeAttachment', () => {
  const va = { spec: { attacher: 'csi.example.com', nodeName: 'n1', source: { persistentVolumeName: 'pv1' } } };
  it('requires an attacher, a node and exactly one source', () => {
    expect(msgs(validateVolumeAttachment(va))).toEqual([]);
    expect(msgs(validateVolumeAttachment({ spec: { source: {} } }))).toEqual([
      'spec.attacher: Required value',
      'spec.nodeName: Required value',
      'spec.source: Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName',
    ]);
    const both = {
      spec: {
        ...va.spec,
        source: { persistentVolumeName: 'pv1', inlineVolumeSpec: { accessModes: ['ReadWriteOnce'], csi: { driver: 'd', volumeHandle: 'h' } } },
      },
    };
    expect(msgs(validateVolumeAttachment(both))).toEqual(['spec.source: Forbidden: must specify exactly one of inlineVolumeSpec and persistentVolumeName']);
    const inline = { spec: { ...va.spec, source: { inlineVolumeSpec: { accessModes: ['ReadWriteOnce'] } } } };
    expect(msgs(validateVolumeAttachment(inline))).toEqual(['spec.source.inlineVolumeSpec: Required value: must specify a volume type']);
  });
  it('keeps the spec', () => {
    expect(msgs(validateVolumeAttachmentUpdate({ spec: { ...va.spec, nodeName: 'n2' } }, va))[0]).toMatch(/^spec: Invalid value: .*: field is immutable$/);
  });
});

describe('CSIDriver', () => {
  const spec = {
    attachRequired: true,
    podInfoOnMount: false,
    storageCapacity: false,
    requiresRepublish: false,
    fsGroupPolicy: 'ReadWriteOnceWithFSType',
    volumeLifecycleModes: ['Persistent'],
  };
  it('checks the name (at most 63, letters, digits, - and .), the enums and token requests', () => {
    expect(msgs(validateCSIDriver({ spec }, 'csi.example.com'))).toEqual([]);
    expect(msgs(validateCSIDriver({ spec }, `${'a'.repeat(64)}`))).toEqual(['metadata.name: Too long: may not be more than 63 bytes']);
    expect(msgs(validateCSIDriver({ spec }, '-csi'))[0]).toMatch(/^metadata\.name: Invalid value: "-csi": a lowercase RFC 1123 subdomain/);
    expect(msgs(validateCSIDriver({ spec: { ...spec, fsGroupPolicy: 'Always' } }, 'd'))).toEqual([
      'spec.fsGroupPolicy: Unsupported value: "Always": supported values: "File", "None", "ReadWriteOnceWithFSType"',
    ]);
    expect(msgs(validateCSIDriver({ spec: { ...spec, volumeLifecycleModes: ['Forever'] } }, 'd'))).toEqual([
      'spec.volumeLifecycleModes: Unsupported value: "Forever": supported values: "Ephemeral", "Persistent"',
    ]);
    expect(msgs(validateCSIDriver({ spec: { ...spec, tokenRequests: [{ audience: '' }, { audience: '' }] } }, 'd'))).toEqual([
      'spec.tokenRequests[1].audience: Duplicate value: ""',
    ]);
    expect(msgs(validateCSIDriver({ spec: { ...spec, tokenRequests: [{ audience: 'a', expirationSeconds: 60 }] } }, 'd'))).toEqual([
      'spec.tokenRequests[0].expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes',
    ]);
  });
  it('keeps attachRequired, fsGroupPolicy, podInfoOnMount and volumeLifecycleModes; storageCapacity may change', () => {
    expect(msgs(validateCSIDriverUpdate({ spec: { ...spec, storageCapacity: true, requiresRepublish: true } }, { spec }, 'd'))).toEqual([]);
    const next = { spec: { ...spec, attachRequired: false, podInfoOnMount: true, fsGroupPolicy: 'File', volumeLifecycleModes: ['Ephemeral'] } };
    expect(msgs(validateCSIDriverUpdate(next, { spec }, 'd'))).toEqual([
      'spec.attachRequired: Invalid value: false: field is immutable',
      'spec.fsGroupPolicy: Invalid value: "File": field is immutable',
      'spec.podInfoOnMount: Invalid value: true: field is immutable',
      'spec.volumeLifecycleModes: Invalid value: []storage.VolumeLifecycleMode{"Ephemeral"}: field is immutable',
    ]);
  });
});

describe('CSINode', () => {
  const node = { spec: { drivers: [{ name: 'csi.example.com', nodeID: 'id1', topologyKeys: ['zone'] }] } };
  it('needs driver names, node IDs, unique drivers and allocatable counts >= 0', () => {
    expect(msgs(validateCSINode(node))).toEqual([]);
    expect(msgs(validateCSINode({ spec: { drivers: [{ name: 'd' }, { name: 'd', nodeID: 'x', allocatable: { count: -1 } }] } }))).toEqual([
      'spec.drivers[0].nodeID: Required value',
      'spec.drivers[1].name: Duplicate value: "d"',
      'spec.drivers[1].allocatable.count: Invalid value: -1: must be greater than or equal to 0',
    ]);
  });
  it("keeps a driver's nodeID and topology keys", () => {
    expect(msgs(validateCSINodeUpdate({ spec: { drivers: [{ name: 'csi.example.com', nodeID: 'id2', topologyKeys: ['zone'] }] } }, node))).toEqual([
      'spec.drivers[0].nodeID: Invalid value: "id2": field is immutable',
    ]);
  });
  it("finds each driver's old entry by name in one pass: 100,000 drivers, reordered", () => {
    const n = 100_000;
    const drivers = Array.from({ length: n }, (_, i) => ({ name: `d${i}.example.com`, nodeID: `id${i}` }));
    const reordered = drivers.map((d) => (d.name === 'd0.example.com' ? { ...d, nodeID: 'changed' } : d)).reverse();
    expect(msgs(validateCSINodeUpdate({ spec: { drivers: reordered } }, { spec: { drivers } }))).toEqual([
      `spec.drivers[${n - 1}].nodeID: Invalid value: "changed": field is immutable`,
    ]);
  });
});

describe('CSIStorageCapacity', () => {
  const cap = { storageClassName: 'fast', capacity: '1Gi' };
  it('requires a class name and non-negative quantities', () => {
    expect(msgs(validateCSIStorageCapacity(cap))).toEqual([]);
    expect(msgs(validateCSIStorageCapacity({}))).toEqual(['storageClassName: Required value']);
    expect(msgs(validateCSIStorageCapacity({ ...cap, maximumVolumeSize: '-1' }))).toEqual([
      'maximumVolumeSize: Invalid value: "-1": must be greater than or equal to 0',
    ]);
  });
  it('keeps storageClassName and nodeTopology', () => {
    expect(msgs(validateCSIStorageCapacityUpdate({ ...cap, storageClassName: 'slow', nodeTopology: {} }, cap))).toEqual([
      'storageClassName: Invalid value: "slow": field is immutable',
      'nodeTopology: Invalid value: {}: field is immutable',
    ]);
  });
});
