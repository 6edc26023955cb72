/**
 * storage.k8s.io/v1 end to end with real kubectl: each kind (StorageClass, VolumeAttachment,
 * CSIDriver, CSINode, CSIStorageCapacity) is created from its YAML example in
 * test/fixtures/storage, listed with kubectl's columns, explained from the OpenAPI schema,
 * patched and deleted; the delete answers with the object or a Status as the resources document
 * says; a few rules answer with Kubernetes' messages through kubectl; VolumeAttachment's status
 * goes through /status; protobuf bodies round-trip.
 */
import { jest } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodeProtobuf } from '@app/apimachinery';
import { kubectl, repoRoot, request, startServer, type ServerHandle } from './support/server.js';

jest.setTimeout(180_000);

let server: ServerHandle;

beforeAll(async () => {
  server = await startServer();
});

afterAll(async () => {
  await server?.cleanup();
});

const k = (args: string[], opts: { input?: string; expectFail?: boolean } = {}) => kubectl(server, args, opts);
const fixture = (name: string) => readFileSync(join(repoRoot(), 'test', 'fixtures', 'storage', `${name}.yaml`), 'utf8');
const G = '/apis/storage.k8s.io/v1';

describe('storage.k8s.io/v1 kinds', () => {
  it('are listed by kubectl api-resources', async () => {
    const r = await k(['api-resources', '--api-group=storage.k8s.io']);
    for (const line of [
      /^csidrivers\s+storage\.k8s\.io\/v1\s+false\s+CSIDriver$/m,
      /^csinodes\s+storage\.k8s\.io\/v1\s+false\s+CSINode$/m,
      /^csistoragecapacities\s+storage\.k8s\.io\/v1\s+true\s+CSIStorageCapacity$/m,
      /^storageclasses\s+sc\s+storage\.k8s\.io\/v1\s+false\s+StorageClass$/m,
      /^volumeattachments\s+storage\.k8s\.io\/v1\s+false\s+VolumeAttachment$/m,
    ]) {
      expect(r.stdout).toMatch(line);
    }
  });

  it('StorageClass: create, columns, explain, patch, delete answering with the object', async () => {
    expect((await k(['create', '-f', '-'], { input: fixture('storageclass') })).stdout).toContain('storageclass.storage.k8s.io/fast created');
    const get = await k(['get', 'sc', 'fast']);
    expect(get.stdout).toMatch(/^NAME\s+PROVISIONER\s+RECLAIMPOLICY\s+VOLUMEBINDINGMODE\s+ALLOWVOLUMEEXPANSION\s+AGE$/m);
    expect(get.stdout).toMatch(/^fast\s+csi\.example\.com\s+Retain\s+WaitForFirstConsumer\s+true\s+\d+s$/m);
    const explain = await k(['explain', 'storageclass']);
    expect(explain.stdout).toMatch(/^\s+provisioner\s+<string> -required-$/m);
    expect(explain.stdout).toMatch(/^\s+allowedTopologies\s+<\[\]TopologySelectorTerm>$/m);
    expect((await k(['patch', 'sc', 'fast', '-p', '{"allowVolumeExpansion":false}'])).stdout).toContain('storageclass.storage.k8s.io/fast patched');
    await k(['annotate', 'sc', 'fast', 'storageclass.kubernetes.io/is-default-class=true']);
    expect((await k(['get', 'sc'])).stdout).toMatch(/^fast \(default\)\s+csi\.example\.com\s+Retain\s+WaitForFirstConsumer\s+false\s+\d+s$/m);
    const refused = await k(['patch', 'sc', 'fast', '-p', '{"provisioner":"other.example.com"}'], { expectFail: true });
    expect(refused.stderr).toContain('The StorageClass "fast" is invalid: provisioner: Forbidden: updates to provisioner are forbidden.');
    const del = await request(server, 'DELETE', `${G}/storageclasses/fast`);
    expect(del.status).toBe(200);
    expect(del.json()).toMatchObject({ kind: 'StorageClass', apiVersion: 'storage.k8s.io/v1', metadata: { name: 'fast' }, allowVolumeExpansion: false });
  });

  it('StorageClass defaults reclaimPolicy and volumeBindingMode, and refuses a missing provisioner', async () => {
    await k(['create', '-f', '-'], { input: 'apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: plain\nprovisioner: example.com/nfs\n' });
    const sc = JSON.parse((await k(['get', 'sc', 'plain', '-o', 'json'])).stdout);
    expect(sc).toMatchObject({ reclaimPolicy: 'Delete', volumeBindingMode: 'Immediate' });
    const r = await k(['create', '-f', '-'], { input: 'apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: none\n', expectFail: true });
    expect(r.stderr).toContain('The StorageClass "none" is invalid: provisioner: Required value');
    expect((await k(['delete', 'sc', 'plain'])).stdout).toContain('storageclass.storage.k8s.io "plain" deleted');
  });

  it('VolumeAttachment: create, columns, status subresource, spec immutable, delete answering with the object', async () => {
    expect((await k(['create', '-f', '-'], { input: fixture('volumeattachment') })).stdout).toContain('volumeattachment.storage.k8s.io/va-pv-nfs created');
    expect((await k(['get', 'volumeattachments'])).stdout).toMatch(/^va-pv-nfs\s+csi\.example\.com\s+pv-nfs\s+node-1\s+false\s+\d+s$/m);
    expect((await k(['get', 'volumeattachments'])).stdout).toMatch(/^NAME\s+ATTACHER\s+PV\s+NODE\s+ATTACHED\s+AGE$/m);
    const st = await k([
      'patch',
      'volumeattachment',
      'va-pv-nfs',
      '--subresource=status',
      '--type=merge',
      '-p',
      '{"status":{"attached":true,"attachmentMetadata":{"dev":"/dev/sdb"}}}',
    ]);
    expect(st.stdout).toContain('patched');
    expect((await k(['get', 'volumeattachments'])).stdout).toMatch(/^va-pv-nfs\s+csi\.example\.com\s+pv-nfs\s+node-1\s+true\s+\d+s$/m);
    const r = await k(['patch', 'volumeattachment', 'va-pv-nfs', '--type=merge', '-p', '{"spec":{"nodeName":"node-2"}}'], { expectFail: true });
    expect(r.stderr).toContain('The VolumeAttachment "va-pv-nfs" is invalid: spec: Invalid value:');
    expect(r.stderr).toContain('field is immutable');
    const explain = await k(['explain', 'volumeattachment.spec.source']);
    expect(explain.stdout).toMatch(/^\s+inlineVolumeSpec\s+<PersistentVolumeSpec>$/m);
    const del = await request(server, 'DELETE', `${G}/volumeattachments/va-pv-nfs`);
    expect(del.json()).toMatchObject({ kind: 'VolumeAttachment', status: { attached: true } });
  });

  it('VolumeAttachment needs exactly one source', async () => {
    const r = await k(['create', '-f', '-'], {
      input:
        'apiVersion: storage.k8s.io/v1\nkind: VolumeAttachment\nmetadata:\n  name: bad\nspec:\n  attacher: csi.example.com\n  nodeName: node-1\n  source: {}\n',
      expectFail: true,
    });
    expect(r.stderr).toContain('spec.source: Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName');
  });

  it('CSIDriver: create, columns, immutable fields, name rule, delete answering with the object', async () => {
    expect((await k(['create', '-f', '-'], { input: fixture('csidriver') })).stdout).toContain('csidriver.storage.k8s.io/csi.example.com created');
    const get = await k(['get', 'csidrivers']);
    expect(get.stdout).toMatch(/^NAME\s+ATTACHREQUIRED\s+PODINFOONMOUNT\s+STORAGECAPACITY\s+TOKENREQUESTS\s+REQUIRESREPUBLISH\s+MODES\s+AGE$/m);
    expect(get.stdout).toMatch(/^csi\.example\.com\s+true\s+true\s+false\s+vault\s+false\s+Persistent,Ephemeral\s+\d+s$/m);
    const obj = JSON.parse((await k(['get', 'csidriver', 'csi.example.com', '-o', 'json'])).stdout);
    expect(obj.spec).toMatchObject({ fsGroupPolicy: 'ReadWriteOnceWithFSType', requiresRepublish: false, storageCapacity: false, seLinuxMount: false });
    expect((await k(['patch', 'csidriver', 'csi.example.com', '--type=merge', '-p', '{"spec":{"storageCapacity":true}}'])).stdout).toContain('patched');
    const fixed = await k(['patch', 'csidriver', 'csi.example.com', '--type=merge', '-p', '{"spec":{"attachRequired":false}}'], { expectFail: true });
    expect(fixed.stderr).toContain('The CSIDriver "csi.example.com" is invalid: spec.attachRequired: Invalid value: false: field is immutable');
    const long = await k(['create', '-f', '-'], {
      input: `apiVersion: storage.k8s.io/v1\nkind: CSIDriver\nmetadata:\n  name: ${'d'.repeat(64)}\nspec: {}\n`,
      expectFail: true,
    });
    expect(long.stderr).toContain('metadata.name: Too long: may not be more than 63 bytes');
    expect((await k(['explain', 'csidriver.spec.fsGroupPolicy'])).stdout).toMatch(/FIELD:\s+fsGroupPolicy <string>/);
    const del = await request(server, 'DELETE', `${G}/csidrivers/csi.example.com`);
    expect(del.json()).toMatchObject({ kind: 'CSIDriver', metadata: { name: 'csi.example.com' }, spec: { storageCapacity: true } });
  });

  it('CSINode: create, columns, nodeID immutable, delete answering with the object', async () => {
    expect((await k(['create', '-f', '-'], { input: fixture('csinode') })).stdout).toContain('csinode.storage.k8s.io/node-1 created');
    const get = await k(['get', 'csinodes']);
    expect(get.stdout).toMatch(/^NAME\s+DRIVERS\s+AGE$/m);
    expect(get.stdout).toMatch(/^node-1\s+1\s+\d+s$/m);
    const r = await k(['patch', 'csinode', 'node-1', '--type=json', '-p', '[{"op":"replace","path":"/spec/drivers/0/nodeID","value":"other"}]'], {
      expectFail: true,
    });
    expect(r.stderr).toContain('spec.drivers[0].nodeID: Invalid value: "other": field is immutable');
    expect((await k(['patch', 'csinode', 'node-1', '--type=merge', '-p', '{"metadata":{"labels":{"a":"b"}}}'])).stdout).toContain('patched');
    expect((await k(['explain', 'csinode.spec.drivers'])).stdout).toMatch(/^\s+nodeID\s+<string> -required-$/m);
    const del = await request(server, 'DELETE', `${G}/csinodes/node-1`);
    expect(del.json()).toMatchObject({ kind: 'CSINode', metadata: { name: 'node-1', labels: { a: 'b' } } });
  });

  it('CSIStorageCapacity: create, columns, immutable class, delete answering with a Status', async () => {
    expect((await k(['create', '-n', 'default', '-f', '-'], { input: fixture('csistoragecapacity') })).stdout).toContain(
      'csistoragecapacity.storage.k8s.io/fast-zone-a created',
    );
    const get = await k(['get', 'csistoragecapacities', '-n', 'default']);
    expect(get.stdout).toMatch(/^NAME\s+STORAGECLASSNAME\s+CAPACITY\s+AGE$/m);
    expect(get.stdout).toMatch(/^fast-zone-a\s+fast\s+100Gi\s+\d+s$/m);
    expect((await k(['patch', 'csistoragecapacity', 'fast-zone-a', '-n', 'default', '--type=merge', '-p', '{"capacity":"50Gi"}'])).stdout).toContain('patched');
    const r = await k(['patch', 'csistoragecapacity', 'fast-zone-a', '-n', 'default', '--type=merge', '-p', '{"storageClassName":"slow"}'], {
      expectFail: true,
    });
    expect(r.stderr).toContain('storageClassName: Invalid value: "slow": field is immutable');
    expect((await k(['explain', 'csistoragecapacity'])).stdout).toMatch(/^\s+storageClassName\s+<string> -required-$/m);
    const del = await request(server, 'DELETE', `${G}/namespaces/default/csistoragecapacities/fast-zone-a`);
    expect(del.json()).toMatchObject({
      kind: 'Status',
      status: 'Success',
      details: { name: 'fast-zone-a', group: 'storage.k8s.io', kind: 'csistoragecapacities' },
    });
  });

  it('answers and accepts protobuf for a StorageClass', async () => {
    const body = encodeProtobuf(
      { apiVersion: 'storage.k8s.io/v1', kind: 'StorageClass', metadata: { name: 'pb' }, provisioner: 'csi.example.com', allowVolumeExpansion: false },
      'k8s.io.api.storage.v1.StorageClass',
    );
    const created = await request(server, 'POST', `${G}/storageclasses`, {
      body: Buffer.from(body),
      headers: { 'content-type': 'application/vnd.kubernetes.protobuf', accept: 'application/json' },
    });
    expect(created.status).toBe(201);
    expect(created.json()).toMatchObject({ provisioner: 'csi.example.com', allowVolumeExpansion: false, reclaimPolicy: 'Delete' });
    const pb = await request(server, 'GET', `${G}/storageclasses/pb`, { headers: { accept: 'application/vnd.kubernetes.protobuf' } });
    expect(pb.status).toBe(200);
    expect(pb.headers['content-type']).toBe('application/vnd.kubernetes.protobuf');
    await k(['delete', 'sc', 'pb']);
  });
});
