import { fieldErrorMessage } from '@app/apimachinery';
import { validatePersistentVolumeSource, validateVolumes } from './volume.validation.js';

const pod = (volumes: unknown[]) => validateVolumes(volumes, 'spec.volumes').map(fieldErrorMessage);
const pv = (spec: Record<string, unknown>) => validatePersistentVolumeSource(spec, 'spec').map(fieldErrorMessage);

describe('Volume sources', () => {
  it('needs a DNS-label name, unique within the pod', () => {
    expect(pod([{ emptyDir: {} }])).toEqual(['spec.volumes[0].name: Required value']);
    expect(pod([{ name: 'Data', emptyDir: {} }])[0]).toMatch(/^spec\.volumes\[0\]\.name: Invalid value: "Data": a lowercase RFC 1123 label must consist of/);
    expect(
      pod([
        { name: 'a', emptyDir: {} },
        { name: 'a', emptyDir: {} },
      ]),
    ).toEqual(['spec.volumes[1].name: Duplicate value: "a"']);
  });

  it('needs exactly one source', () => {
    expect(pod([{ name: 'a' }])).toEqual(['spec.volumes[0]: Required value: must specify a volume type']);
    expect(pod([{ name: 'a', hostPath: { path: '/x' }, emptyDir: {} }])).toEqual([
      'spec.volumes[0].hostPath: Forbidden: may not specify more than 1 volume type',
    ]);
    expect(pv({})).toEqual(['spec: Required value: must specify a volume type']);
    expect(pv({ nfs: { server: 's', path: '/p' }, hostPath: { path: '/x' } })).toEqual(['spec.nfs: Forbidden: may not specify more than 1 volume type']);
  });

  it('checks the required fields of each source', () => {
    expect(pod([{ name: 'a', persistentVolumeClaim: {} }])).toEqual(['spec.volumes[0].persistentVolumeClaim.claimName: Required value']);
    expect(pod([{ name: 'a', hostPath: {} }])).toEqual(['spec.volumes[0].hostPath.path: Required value']);
    expect(pod([{ name: 'a', nfs: {} }])).toEqual(['spec.volumes[0].nfs.server: Required value', 'spec.volumes[0].nfs.path: Required value']);
    expect(pod([{ name: 'a', nfs: { server: 's', path: 'rel' } }])).toEqual(['spec.volumes[0].nfs.path: Invalid value: "rel": must be an absolute path']);
    expect(pod([{ name: 'a', iscsi: { targetPortal: 'p', iqn: 'q', lun: 300 } }])).toEqual([
      'spec.volumes[0].iscsi.lun: Invalid value: 300: must be between 0 and 255, inclusive',
    ]);
    expect(pod([{ name: 'a', rbd: {} }])).toEqual(['spec.volumes[0].rbd.monitors: Required value', 'spec.volumes[0].rbd.image: Required value']);
    expect(pod([{ name: 'a', gitRepo: { repository: 'r', directory: '../x' } }])).toEqual([
      'spec.volumes[0].gitRepo.directory: Invalid value: "../x": must not contain \'..\'',
    ]);
    expect(pod([{ name: 'a', flocker: {} }])).toEqual(['spec.volumes[0].flocker: Required value: one of datasetName and datasetUUID is required']);
    expect(pod([{ name: 'a', fc: { targetWWNs: ['w'] } }])).toEqual(['spec.volumes[0].fc.lun: Required value: lun is required if targetWWNs is specified']);
    expect(pod([{ name: 'a', fc: {} }])).toEqual(['spec.volumes[0].fc.targetWWNs: Required value: must specify either targetWWNs or wwids, but not both']);
    expect(pod([{ name: 'a', azureDisk: { diskName: 'd', diskURI: 'u', cachingMode: 'Sometimes' } }])).toEqual([
      'spec.volumes[0].azureDisk.cachingMode: Unsupported value: "Sometimes": supported values: "None", "ReadOnly", "ReadWrite"',
    ]);
    expect(pod([{ name: 'a', ephemeral: {} }])).toEqual(['spec.volumes[0].ephemeral.volumeClaimTemplate: Required value']);
    expect(
      pod([{ name: 'a', ephemeral: { volumeClaimTemplate: { metadata: { name: 'x', labels: { a: 'b' } }, spec: { accessModes: ['ReadWriteOnce'] } } } }]),
    ).toEqual([
      'spec.volumes[0].ephemeral.volumeClaimTemplate.metadata.name: Forbidden: cannot be set for an ephemeral volume',
      'spec.volumes[0].ephemeral.volumeClaimTemplate.spec.resources[storage]: Required value',
    ]);
    expect(pv({ csi: { driver: 'csi.example.com' } })).toEqual(['spec.csi.volumeHandle: Required value']);
    expect(pv({ csi: { driver: 'Bad_Driver', volumeHandle: 'h' } })[0]).toMatch(
      /^spec\.csi\.driver: Invalid value: "Bad_Driver": a lowercase RFC 1123 subdomain/,
    );
  });

  it('keeps defaultMode and mode within 0..0777', () => {
    const detail = 'must be a number between 0 and 0777 (octal), both inclusive';
    expect(pod([{ name: 'a', configMap: { name: 'c', defaultMode: 512 } }])).toEqual([`spec.volumes[0].configMap.defaultMode: Invalid value: 512: ${detail}`]);
    expect(pod([{ name: 'a', secret: { secretName: 's', defaultMode: 511 } }])).toEqual([]);
    expect(pod([{ name: 'a', secret: { secretName: 's', items: [{ key: 'k', path: 'p', mode: -1 }] } }])).toEqual([
      `spec.volumes[0].secret.items[0].mode: Invalid value: -1: ${detail}`,
    ]);
  });

  it('checks KeyToPath items: key and path required, path relative without ..', () => {
    const items = (list: unknown[]) => pod([{ name: 'a', configMap: { name: 'c', items: list } }]);
    expect(items([{}])).toEqual(['spec.volumes[0].configMap.items[0].key: Required value', 'spec.volumes[0].configMap.items[0].path: Required value']);
    expect(items([{ key: 'k', path: '/abs' }])).toEqual(['spec.volumes[0].configMap.items[0].path: Invalid value: "/abs": must be a relative path']);
    expect(items([{ key: 'k', path: 'a/../b' }])).toEqual(['spec.volumes[0].configMap.items[0].path: Invalid value: "a/../b": must not contain \'..\'']);
    expect(items([{ key: 'k', path: '..data' }])).toEqual(['spec.volumes[0].configMap.items[0].path: Invalid value: "..data": must not start with \'..\'']);
  });

  it('checks projected sources and token lifetimes', () => {
    const proj = (sources: unknown[]) => pod([{ name: 'a', projected: { sources } }]);
    expect(proj([{}])).toEqual(['spec.volumes[0].projected.sources[0]: Required value: must specify exactly one projected volume source']);
    expect(proj([{ serviceAccountToken: { path: 't', expirationSeconds: 60 } }])).toEqual([
      'spec.volumes[0].projected.sources[0].serviceAccountToken.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes',
    ]);
    expect(proj([{ serviceAccountToken: {} }])).toEqual(['spec.volumes[0].projected.sources[0].serviceAccountToken.path: Required value']);
    expect(proj([{ downwardAPI: { items: [{ path: 'x' }] } }])).toEqual([
      'spec.volumes[0].projected.sources[0].downwardAPI.items[0]: Required value: one of fieldRef and resourceFieldRef is required',
    ]);
  });
});
