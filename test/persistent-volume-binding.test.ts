/**
 * The PersistentVolume controller end to end with real kubectl: volumes become Available,
 * claims bind to the smallest fitting volume (or the one reserved for them, or the one they
 * name), `get pv`/`get pvc` show both sides Bound, claims that cannot bind say why in Events
 * (no volume and no class, an external provisioner to wait for, a consumer to wait for, a
 * volume that does not fit), a provisioned volume completes its claim's binding, and a deleted
 * claim releases its volume by the reclaim policy. A pod's ephemeral volume gets its claim
 * (the ephemeral volume controller), which binds like any other and goes with the pod.
 */
import { eventsOnceSeen } from './support/kubectl.helper.js';
import { jest } from '@jest/globals';
import { kubectl, startServer, waitFor, type ServerHandle } from './support/server.js';

jest.setTimeout(180_000);

let server: ServerHandle;
const NS = 'vols';

beforeAll(async () => {
  server = await startServer();
  await kubectl(server, ['create', 'namespace', NS]);
});

afterAll(async () => {
  await server?.cleanup();
});

type Obj = Record<string, unknown>;
const k = (args: string[], opts: { input?: string; expectFail?: boolean } = {}) => kubectl(server, args, opts);
const json = async (args: string[]): Promise<Obj> => JSON.parse((await k([...args, '-o', 'json'])).stdout) as Obj;
const phase = async (args: string[]): Promise<string> => (await k([...args, '-o', 'jsonpath={.status.phase}'])).stdout;

const volume = (name: string, size: string, extra = ''): string =>
  `apiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: ${name}\nspec:\n  capacity:\n    storage: ${size}\n  accessModes: [ReadWriteOnce]\n  hostPath:\n    path: /data/${name}\n${extra}`;
const claim = (name: string, size: string, extra = ''): string =>
  `apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: ${name}\n  namespace: ${NS}\nspec:\n  accessModes: [ReadWriteOnce]\n  resources:\n    requests:\n      storage: ${size}\n${extra}`;

/** The Events of a claim, as `reason: message` lines. */
async function claimEvents(name: string): Promise<string[]> {
  const list = await json(['get', 'events', '-n', NS, '--field-selector', `involvedObject.kind=PersistentVolumeClaim,involvedObject.name=${name}`]);
  return (list.items as Obj[]).map((e) => `${String(e.reason)}: ${String(e.message)}`);
}

describe('binding', () => {
  it('makes new volumes Available, with the time of the transition', async () => {
    for (const [name, size, extra] of [
      ['pv-1g', '1Gi', ''],
      ['pv-3g', '3Gi', '  persistentVolumeReclaimPolicy: Delete\n'],
      ['pv-10g', '10Gi', ''],
      ['pv-reserved', '5Gi', `  claimRef:\n    namespace: ${NS}\n    name: named\n`],
    ] as const) {
      await k(['create', '-f', '-'], { input: volume(name, size, extra) });
    }
    await waitFor('all Available', async () => {
      const out = (await k(['get', 'pv', '--no-headers'])).stdout;
      return (out.match(/\sAvailable\s/g) ?? []).length === 4;
    });
    const pv = await json(['get', 'pv', 'pv-1g']);
    expect((pv.status as Obj).lastPhaseTransitionTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  it('binds a claim to the smallest volume that fits, and shows both sides Bound', async () => {
    await k(['create', '-f', '-'], { input: claim('a', '2Gi') });
    const row = await waitFor('a Bound', async () => {
      const out = (await k(['get', 'pvc', 'a', '-n', NS, '--no-headers'])).stdout;
      return /\sBound\s/.test(out) ? out : undefined;
    });
    expect(row).toMatch(/^a\s+Bound\s+pv-3g\s+3Gi\s+RWO\s+<unset>\s+\d+s$/m);
    await waitFor('pv-3g Bound', async () => /^pv-3g\s+3Gi\s+RWO\s+Delete\s+Bound\s+vols\/a\s/m.test((await k(['get', 'pv', 'pv-3g', '--no-headers'])).stdout));
    const pvc = await json(['get', 'pvc', 'a', '-n', NS]);
    expect(pvc.metadata).toMatchObject({ annotations: { 'pv.kubernetes.io/bind-completed': 'yes', 'pv.kubernetes.io/bound-by-controller': 'yes' } });
    expect(pvc.status).toEqual({ phase: 'Bound', accessModes: ['ReadWriteOnce'], capacity: { storage: '3Gi' } });
    const pv = await json(['get', 'pv', 'pv-3g']);
    expect((pv.spec as Obj).claimRef).toMatchObject({ kind: 'PersistentVolumeClaim', namespace: NS, name: 'a', uid: (pvc.metadata as Obj).uid });
    expect(pv.metadata).toMatchObject({ annotations: { 'pv.kubernetes.io/bound-by-controller': 'yes' } });
  });

  it('gives a reserved volume to its claim, and a named volume to the claim naming it', async () => {
    await k(['create', '-f', '-'], { input: claim('named', '1Gi') });
    await waitFor(
      'named on pv-reserved',
      async () => (await k(['get', 'pvc', 'named', '-n', NS, '-o', 'jsonpath={.spec.volumeName} {.status.phase}'])).stdout === 'pv-reserved Bound',
    );
    await k(['create', '-f', '-'], { input: claim('pick', '1Gi', '  volumeName: pv-10g\n') });
    await waitFor('pick Bound', async () => (await phase(['get', 'pvc', 'pick', '-n', NS])) === 'Bound');
    // The user chose the volume: the claim is not marked as bound by the controller.
    expect(((await json(['get', 'pvc', 'pick', '-n', NS])).metadata as Obj).annotations).toEqual({ 'pv.kubernetes.io/bind-completed': 'yes' });
    expect(await phase(['get', 'pv', 'pv-10g'])).toBe('Bound');
  });

  it('says why a claim waits', async () => {
    // No volume fits and there is no class.
    await k(['create', '-f', '-'], { input: claim('huge', '50Gi') });
    await waitFor('FailedBinding', async () =>
      (await claimEvents('huge')).includes('FailedBinding: no persistent volumes available for this claim and no storage class is set'),
    );
    // From: the controller's component name, as kube-controller-manager's.
    expect((await k(['describe', 'pvc', 'huge', '-n', NS])).stdout).toMatch(
      /Normal\s+FailedBinding\s+\S+\s+persistentvolume-controller\s+no persistent volumes available for this claim/,
    );
    // A named volume that does not fit.
    await k(['create', '-f', '-'], { input: claim('wrong', '5Gi', '  volumeName: pv-1g\n') });
    await waitFor('VolumeMismatch', async () =>
      (await claimEvents('wrong')).includes('VolumeMismatch: Cannot bind to requested volume "pv-1g": requested PV is too small'),
    );
    expect(await phase(['get', 'pvc', 'wrong', '-n', NS])).toBe('Pending');
    expect(await phase(['get', 'pv', 'pv-1g'])).toBe('Available');
    // A class whose volumes wait for a consumer (no scheduler picks a node here).
    await k(['create', '-f', '-'], {
      input:
        'apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: local\nprovisioner: kubernetes.io/no-provisioner\nvolumeBindingMode: WaitForFirstConsumer\n',
    });
    await k(['create', '-f', '-'], { input: claim('later', '1Gi', '  storageClassName: local\n') });
    await waitFor('WaitForFirstConsumer', async () =>
      (await claimEvents('later')).includes('WaitForFirstConsumer: waiting for first consumer to be created before binding'),
    );
    // A class with a provisioner of its own.
    await k(['create', '-f', '-'], { input: 'apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: nfs\nprovisioner: example.com/nfs\n' });
    await k(['create', '-f', '-'], { input: claim('dyn', '4Gi', '  storageClassName: nfs\n') });
    await waitFor('ExternalProvisioning', async () =>
      (await claimEvents('dyn')).some((e) =>
        e.startsWith("ExternalProvisioning: Waiting for a volume to be created either by the external provisioner 'example.com/nfs'"),
      ),
    );
    const dyn = await json(['get', 'pvc', 'dyn', '-n', NS]);
    expect((dyn.metadata as Obj).annotations).toMatchObject({
      'volume.kubernetes.io/storage-provisioner': 'example.com/nfs',
      'volume.beta.kubernetes.io/storage-provisioner': 'example.com/nfs',
    });
    expect((dyn.status as Obj).phase).toBe('Pending');
  });

  it('binds a claim to the volume its provisioner made for it', async () => {
    const uid = String(((await json(['get', 'pvc', 'dyn', '-n', NS])).metadata as Obj).uid);
    await k(['create', '-f', '-'], {
      input: volume(
        'pvc-dyn',
        '4Gi',
        `  storageClassName: nfs\n  persistentVolumeReclaimPolicy: Delete\n  claimRef:\n    namespace: ${NS}\n    name: dyn\n    uid: ${uid}\n`,
      ).replace('metadata:\n', 'metadata:\n  annotations:\n    pv.kubernetes.io/provisioned-by: example.com/nfs\n'),
    });
    await waitFor(
      'dyn Bound',
      async () => (await k(['get', 'pvc', 'dyn', '-n', NS, '-o', 'jsonpath={.spec.volumeName} {.status.phase}'])).stdout === 'pvc-dyn Bound',
    );
    expect(await phase(['get', 'pv', 'pvc-dyn'])).toBe('Bound');
  });
});

describe('releasing', () => {
  it('releases a volume whose claim goes, by its reclaim policy', async () => {
    // Retain: Released, and Available again once the user clears the claim.
    await k(['delete', 'pvc', 'named', '-n', NS]);
    await waitFor('pv-reserved Released', async () => (await phase(['get', 'pv', 'pv-reserved'])) === 'Released');
    await k(['patch', 'pv', 'pv-reserved', '--type=json', '-p', '[{"op":"remove","path":"/spec/claimRef"}]']);
    await waitFor('pv-reserved Available', async () => (await phase(['get', 'pv', 'pv-reserved'])) === 'Available');

    // Delete, with no provisioner to delete it: Failed, with the reason.
    await k(['delete', 'pvc', 'a', '-n', NS]);
    const failed = await waitFor('pv-3g Failed', async () => {
      const pv = await json(['get', 'pv', 'pv-3g']);
      return (pv.status as Obj).phase === 'Failed' ? pv : undefined;
    });
    expect((failed.status as Obj).message).toBe('error getting deleter volume plugin for volume "pv-3g": no deletable volume plugin matched');
    const failedDelete = await eventsOnceSeen(
      server,
      'default',
      'involvedObject.name=pv-3g,reason=VolumeFailedDelete',
      (out) => out !== '',
      '{range .items[*]}{.source.component} {.reportingComponent}{"\\n"}{end}',
    );
    expect(failedDelete.trim().split('\n')).toContain('persistentvolume-controller persistentvolume-controller');

    // Delete, provisioned: Released, for the provisioner to delete.
    await k(['delete', 'pvc', 'dyn', '-n', NS]);
    await waitFor('pvc-dyn Released', async () => (await phase(['get', 'pv', 'pvc-dyn'])) === 'Released');
  });

  it('takes a volume again once it is Available', async () => {
    await k(['create', '-f', '-'], { input: claim('again', '4Gi') });
    // pv-reserved (5Gi) is the only Available volume that fits; its old claim is gone from it.
    const pv = await waitFor('pv-reserved claimed again', async () => {
      const o = await json(['get', 'pv', 'pv-reserved']);
      return ((o.spec as Obj).claimRef as Obj | undefined)?.name === 'again' ? o : undefined;
    });
    expect(pv.metadata).toMatchObject({ annotations: { 'pv.kubernetes.io/bound-by-controller': 'yes' } });
    await waitFor(
      'again on pv-reserved',
      async () => (await k(['get', 'pvc', 'again', '-n', NS, '-o', 'jsonpath={.spec.volumeName} {.status.phase}'])).stdout === 'pv-reserved Bound',
    );
  });
});

describe('ephemeral volumes', () => {
  it('give a pod a claim of its own, which binds and goes with the pod', async () => {
    await k(['create', '-f', '-'], { input: volume('pv-scratch', '2Gi', '  storageClassName: scratch\n') });
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'worker', namespace: NS },
      spec: {
        containers: [{ name: 'c', image: 'busybox', volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }] }],
        volumes: [
          {
            name: 'tmp',
            ephemeral: {
              volumeClaimTemplate: {
                metadata: { labels: { kind: 'scratch' } },
                spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'scratch', resources: { requests: { storage: '1Gi' } } },
              },
            },
          },
        ],
      },
    };
    await k(['create', '-f', '-'], { input: JSON.stringify(pod) });
    const bound = await waitFor('worker-tmp Bound', async () => {
      const out = await k(['get', 'pvc', 'worker-tmp', '-n', NS, '--ignore-not-found', '-o', 'json']);
      const o = out.stdout ? (JSON.parse(out.stdout) as Obj) : undefined;
      return o && (o.status as Obj).phase === 'Bound' ? o : undefined;
    });
    expect(bound.metadata).toMatchObject({
      labels: { kind: 'scratch' },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: 'worker', controller: true, blockOwnerDeletion: true }],
    });
    expect((bound.spec as Obj).volumeName).toBe('pv-scratch');
    // The pod goes: the collector deletes its claim, and the volume is Released.
    await k(['delete', 'pod', 'worker', '-n', NS]);
    await waitFor('no claim', async () => (await k(['get', 'pvc', 'worker-tmp', '-n', NS, '--ignore-not-found', '-o', 'name'])).stdout.trim() === '');
    await waitFor('pv-scratch Released', async () => (await phase(['get', 'pv', 'pv-scratch'])) === 'Released');
  });
});

describe('a default class made later', () => {
  it('is given to the claims waiting without a class, not to those that chose none', async () => {
    await k(['create', '-f', '-'], { input: claim('no-class', '50Gi', '  storageClassName: ""\n') });
    await waitFor('no-class Pending', async () => (await phase(['get', 'pvc', 'no-class', '-n', NS])) === 'Pending');
    // 'huge' has waited since the start without a class; a default class appears.
    expect(await k(['get', 'pvc', 'huge', '-n', NS, '-o', 'jsonpath={.spec.storageClassName}']).then((r) => r.stdout)).toBe('');
    await k(['create', '-f', '-'], {
      input:
        'apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: standard\n  annotations:\n    storageclass.kubernetes.io/is-default-class: "true"\nprovisioner: example.com/standard\n',
    });
    // Given at once (the controller watches the classes; kube's waits for its resync), then
    // provisioned by that class like any claim of it.
    await waitFor(
      'huge gets the default class',
      async () => (await k(['get', 'pvc', 'huge', '-n', NS, '-o', 'jsonpath={.spec.storageClassName}'])).stdout === 'standard',
      10_000,
    );
    await waitFor('huge waits for its provisioner', async () =>
      (await claimEvents('huge')).some((e) =>
        e.startsWith("ExternalProvisioning: Waiting for a volume to be created either by the external provisioner 'example.com/standard'"),
      ),
    );
    const huge = await json(['get', 'pvc', 'huge', '-n', NS]);
    expect(((huge.metadata as Obj).annotations as Obj)['volume.kubernetes.io/storage-provisioner']).toBe('example.com/standard');
    // '' was a choice: it stays.
    expect((await json(['get', 'pvc', 'no-class', '-n', NS])).spec).toMatchObject({ storageClassName: '' });
    // A user may give a class to a claim that has none, but not change one it has.
    await k(['patch', 'pvc', 'no-class', '-n', NS, '--type=merge', '-p', '{"spec":{"storageClassName":"standard"}}'], { expectFail: true });
    await k(['delete', 'sc', 'standard']);
  });
});
