/**
 * The storage kinds of core/v1 end to end with real kubectl: PersistentVolume,
 * PersistentVolumeClaim, LimitRange and Pod are created from their YAML examples in
 * test/fixtures/storage, listed with kubectl's columns, explained, patched and deleted (with the
 * delete answer the resources document gives each); a few rules answer with Kubernetes' messages;
 * the admission plugins act: StorageObjectInUseProtection's finalizers hold a claim used by a pod
 * and a bound volume until the protection controller lets them go, ServiceAccount defaults and
 * checks a pod's account, and SecurityContextDeny (off by default) refuses elevated pods on a
 * server started with --enable-admission-plugins.
 */
import { jest } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
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

/** Polls `probe` until it returns true (bounded: 50 tries, 100 ms apart). */
async function until(probe: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 50; i++) {
    if (await probe()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('condition not reached');
}

const exists = async (path: string) => (await request(server, 'GET', path)).status === 200;

describe('PersistentVolume', () => {
  it('is created from YAML with the pv-protection finalizer, listed, explained, patched', async () => {
    expect((await k(['create', '-f', '-'], { input: fixture('persistentvolume') })).stdout).toContain('persistentvolume/pv-nfs created');
    const get = await k(['get', 'pv', 'pv-nfs']);
    expect(get.stdout).toMatch(/^NAME\s+CAPACITY\s+ACCESS MODES\s+RECLAIM POLICY\s+STATUS\s+CLAIM\s+STORAGECLASS\s+VOLUMEATTRIBUTESCLASS\s+REASON\s+AGE$/m);
    // Created Pending, made Available by the volume controller at once.
    expect(get.stdout).toMatch(/^pv-nfs\s+5Gi\s+RWX\s+Retain\s+(Pending|Available)\s+slow\s+<unset>\s+\d+s$/m);
    await until(async () => /^pv-nfs\s+5Gi\s+RWX\s+Retain\s+Available\s+slow\s+<unset>\s+\d+s$/m.test((await k(['get', 'pv', 'pv-nfs'])).stdout));
    const obj = JSON.parse((await k(['get', 'pv', 'pv-nfs', '-o', 'json'])).stdout);
    expect(obj.metadata.finalizers).toEqual(['kubernetes.io/pv-protection']);
    expect(obj.spec).toMatchObject({
      persistentVolumeReclaimPolicy: 'Retain',
      volumeMode: 'Filesystem',
      nfs: { server: 'nfs.example.com', path: '/exports/data' },
    });
    const explain = await k(['explain', 'pv.spec']);
    expect(explain.stdout).toMatch(/^\s+nfs\s+<NFSVolumeSource>$/m);
    expect(explain.stdout).toMatch(/^\s+persistentVolumeReclaimPolicy\s+<string>$/m);
    expect((await k(['patch', 'pv', 'pv-nfs', '-p', '{"spec":{"capacity":{"storage":"10Gi"}}}'])).stdout).toContain('persistentvolume/pv-nfs patched');
    const r = await k(['patch', 'pv', 'pv-nfs', '-p', '{"spec":{"nfs":{"path":"/other"}}}'], { expectFail: true });
    expect(r.stderr).toContain(
      'The PersistentVolume "pv-nfs" is invalid: spec.persistentvolumesource: Forbidden: spec.persistentvolumesource is immutable after creation',
    );
  });

  it('refuses a volume with no source or two, with Kubernetes messages', async () => {
    const none = await k(['create', '-f', '-'], {
      input: 'apiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: bad\nspec:\n  capacity:\n    storage: 1Gi\n  accessModes: [ReadWriteOnce]\n',
      expectFail: true,
    });
    expect(none.stderr).toContain('The PersistentVolume "bad" is invalid: spec: Required value: must specify a volume type');
    const two = await k(['create', '-f', '-'], {
      input:
        'apiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: bad\nspec:\n  capacity:\n    storage: 1Gi\n  accessModes: [ReadWriteOnce]\n  hostPath:\n    path: /a\n  nfs:\n    server: s\n    path: /b\n',
      expectFail: true,
    });
    expect(two.stderr).toContain('spec.nfs: Forbidden: may not specify more than 1 volume type');
  });

  it('stays while bound; the protection controller lets it go once released; DELETE answers with the object', async () => {
    // A claim of its class binds it.
    await k(['create', '-n', 'default', '-f', '-'], {
      input:
        'apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: hold\nspec:\n  storageClassName: slow\n  accessModes: [ReadWriteMany]\n  resources:\n    requests:\n      storage: 1Gi\n',
    });
    await until(async () => /^pv-nfs\s+10Gi\s+RWX\s+Retain\s+Bound\s+default\/hold\s/m.test((await k(['get', 'pv', 'pv-nfs'])).stdout));
    const del = await request(server, 'DELETE', '/api/v1/persistentvolumes/pv-nfs');
    expect(del.status).toBe(200);
    expect(del.json()).toMatchObject({ kind: 'PersistentVolume', metadata: { name: 'pv-nfs', finalizers: ['kubernetes.io/pv-protection'] } });
    expect((del.json() as { metadata: { deletionTimestamp?: string } }).metadata.deletionTimestamp).toBeDefined();
    expect((await k(['get', 'pv', 'pv-nfs'])).stdout).toMatch(/^pv-nfs\s+10Gi\s+RWX\s+Retain\s+Bound\s/m);
    // The claim goes: the volume is Released (Retain), and then nothing holds it.
    await k(['delete', 'pvc', 'hold', '-n', 'default']);
    await until(async () => !(await exists('/api/v1/persistentvolumes/pv-nfs')));
  });
});

describe('PersistentVolumeClaim and Pod', () => {
  it('creates a claim from YAML with the pvc-protection finalizer, lists and explains it', async () => {
    expect((await k(['create', '-n', 'default', '-f', '-'], { input: fixture('persistentvolumeclaim') })).stdout).toContain(
      'persistentvolumeclaim/data created',
    );
    const get = await k(['get', 'pvc', 'data', '-n', 'default']);
    expect(get.stdout).toMatch(/^NAME\s+STATUS\s+VOLUME\s+CAPACITY\s+ACCESS MODES\s+STORAGECLASS\s+VOLUMEATTRIBUTESCLASS\s+AGE$/m);
    expect(get.stdout).toMatch(/^data\s+Pending\s+slow\s+<unset>\s+\d+s$/m);
    const obj = JSON.parse((await k(['get', 'pvc', 'data', '-n', 'default', '-o', 'json'])).stdout);
    expect(obj.metadata.finalizers).toEqual(['kubernetes.io/pvc-protection']);
    expect(obj.spec.volumeMode).toBe('Filesystem');
    expect((await k(['explain', 'pvc.spec.resources'])).stdout).toMatch(/^\s+requests\s+<map\[string\]/m);
    const r = await k(['patch', 'pvc', 'data', '-n', 'default', '-p', '{"spec":{"accessModes":["ReadOnlyMany"]}}'], { expectFail: true });
    expect(r.stderr).toContain('spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims');
    expect((await k(['patch', 'pvc', 'data', '-n', 'default', '-p', '{"metadata":{"labels":{"tier":"db"}}}'])).stdout).toContain('patched');
  });

  it('refuses a claim without a storage request', async () => {
    const r = await k(['create', '-n', 'default', '-f', '-'], {
      input: 'apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: bad\nspec:\n  accessModes: [ReadWriteOnce]\n',
      expectFail: true,
    });
    expect(r.stderr).toContain('The PersistentVolumeClaim "bad" is invalid: spec.resources[storage]: Required value');
  });

  it('creates a pod from YAML: ServiceAccount defaults its account, columns, explain', async () => {
    expect((await k(['create', '-n', 'default', '-f', '-'], { input: fixture('pod') })).stdout).toContain('pod/web created');
    const get = await k(['get', 'pod', 'web', '-n', 'default', '-o', 'wide']);
    expect(get.stdout).toMatch(/^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s+IP\s+NODE\s+NOMINATED NODE\s+READINESS GATES$/m);
    expect(get.stdout).toMatch(/^web\s+0\/1\s+Pending\s+0\s+\d+s\s+<none>\s+<none>\s+<none>\s+<none>$/m);
    const pod = JSON.parse((await k(['get', 'pod', 'web', '-n', 'default', '-o', 'json'])).stdout);
    expect(pod.spec).toMatchObject({ serviceAccountName: 'default', restartPolicy: 'Always', dnsPolicy: 'ClusterFirst', terminationGracePeriodSeconds: 30 });
    expect(pod.spec.containers[0]).toMatchObject({ imagePullPolicy: 'IfNotPresent', resources: { requests: { cpu: '500m', memory: '128Mi' } } });
    expect(pod.status).toEqual({ phase: 'Pending', qosClass: 'Guaranteed' });
    expect((await k(['explain', 'pod.spec.containers.ports'])).stdout).toMatch(/^\s+containerPort\s+<integer> -required-$/m);
    expect((await k(['patch', 'pod', 'web', '-n', 'default', '-p', '{"spec":{"containers":[{"name":"nginx","image":"nginx:1.28"}]}}'])).stdout).toContain(
      'pod/web patched',
    );
  });

  it('refuses pods breaking the rules, with Kubernetes messages', async () => {
    const badVolume = await k(
      ['run', 'bad', '-n', 'default', '--image=nginx', '--overrides={"spec":{"volumes":[{"name":"v","configMap":{"name":"c","defaultMode":1000}}]}}'],
      {
        expectFail: true,
      },
    );
    expect(badVolume.stderr).toContain(
      'spec.volumes[0].configMap.defaultMode: Invalid value: 1000: must be a number between 0 and 0777 (octal), both inclusive',
    );
    const badPort = await k(['run', 'bad', '-n', 'default', '--image=nginx', '--port=70000'], { expectFail: true });
    expect(badPort.stderr).toContain('spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive');
    const noSa = await k(['run', 'bad', '-n', 'default', '--image=nginx', '--overrides={"spec":{"serviceAccountName":"missing"}}'], { expectFail: true });
    expect(noSa.stderr).toContain('pods "bad" is forbidden: error looking up service account default/missing: serviceaccount "missing" not found');
  });

  it('mounts the token of an existing service account', async () => {
    await k(['create', 'serviceaccount', 'builder', '-n', 'default']);
    await k(['run', 'build', '-n', 'default', '--image=busybox:1.36', '--overrides={"spec":{"serviceAccountName":"builder"}}']);
    const pod = JSON.parse((await k(['get', 'pod', 'build', '-n', 'default', '-o', 'json'])).stdout);
    const vol = pod.spec.volumes.find((v: { name: string }) => v.name.startsWith('kube-api-access-'));
    expect(vol.projected.sources[0]).toEqual({ serviceAccountToken: { expirationSeconds: 3607, path: 'token' } });
    expect(pod.spec.containers[0].volumeMounts).toEqual([{ name: vol.name, readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }]);
    await k(['delete', 'pod', 'build', '-n', 'default']);
  });

  it('holds the claim while the pod uses it; the protection controller frees it after; DELETE answers with the object', async () => {
    const del = await request(server, 'DELETE', '/api/v1/namespaces/default/persistentvolumeclaims/data');
    expect(del.json()).toMatchObject({ kind: 'PersistentVolumeClaim', metadata: { name: 'data', finalizers: ['kubernetes.io/pvc-protection'] } });
    expect(await exists('/api/v1/namespaces/default/persistentvolumeclaims/data')).toBe(true);
    const podDel = await request(server, 'DELETE', '/api/v1/namespaces/default/pods/web');
    expect(podDel.json()).toMatchObject({ kind: 'Pod', metadata: { name: 'web' } });
    await until(async () => !(await exists('/api/v1/namespaces/default/persistentvolumeclaims/data')));
  });
});

describe('LimitRange', () => {
  it('is created from YAML, listed with NAME and CREATED AT, explained, patched, deleted with a Status', async () => {
    expect((await k(['create', '-n', 'default', '-f', '-'], { input: fixture('limitrange') })).stdout).toContain('limitrange/cpu-limits created');
    const get = await k(['get', 'limits', '-n', 'default']);
    expect(get.stdout).toMatch(/^NAME\s+CREATED AT$/m);
    expect(get.stdout).toMatch(/^cpu-limits\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/m);
    expect((await k(['explain', 'limitrange.spec.limits'])).stdout).toMatch(/^\s+type\s+<string> -required-$/m);
    const r = await k(
      ['patch', 'limitrange', 'cpu-limits', '-n', 'default', '--type=json', '-p', '[{"op":"replace","path":"/spec/limits/0/min/cpu","value":"2"}]'],
      {
        expectFail: true,
      },
    );
    expect(r.stderr).toContain('spec.limits[0].min[cpu]: Invalid value: "2": min value 2 is greater than max value 1');
    expect(
      (await k(['patch', 'limitrange', 'cpu-limits', '-n', 'default', '--type=json', '-p', '[{"op":"replace","path":"/spec/limits/0/max/cpu","value":"2"}]']))
        .stdout,
    ).toContain('patched');
    const del = await request(server, 'DELETE', '/api/v1/namespaces/default/limitranges/cpu-limits');
    expect(del.json()).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'cpu-limits', kind: 'limitranges' } });
  });
});

describe('admission reads what was just written', () => {
  it('a pod created right after a LimitRange, a PriorityClass and a ServiceAccount (same node, no pause) gets their defaults', async () => {
    await request(server, 'POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ryw' } } });
    // Rounds of write-then-pod at once: the plugins' watch-fed copies must hold each write before
    // the pod is admitted, or its defaults would be missing.
    for (let i = 0; i < 10; i++) {
      const lr = {
        apiVersion: 'v1',
        kind: 'LimitRange',
        metadata: { name: `lr${i}` },
        spec: { limits: [{ type: 'Container', defaultRequest: { memory: `${i + 1}Mi` } }] },
      };
      const pc = { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: `ryw-${i}` }, value: 100 + i };
      const sa = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: `sa${i}` }, automountServiceAccountToken: false };
      expect((await request(server, 'POST', '/api/v1/namespaces/ryw/limitranges', { body: lr })).status).toBe(201);
      expect((await request(server, 'POST', '/apis/scheduling.k8s.io/v1/priorityclasses', { body: pc })).status).toBe(201);
      expect((await request(server, 'POST', '/api/v1/namespaces/ryw/serviceaccounts', { body: sa })).status).toBe(201);
      const pod = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: `p${i}` },
        spec: { priorityClassName: `ryw-${i}`, serviceAccountName: `sa${i}`, containers: [{ name: 'c', image: 'nginx' }] },
      };
      const r = await request(server, 'POST', '/api/v1/namespaces/ryw/pods', { body: pod });
      expect(r.status).toBe(201);
      const spec = (r.json() as { spec: { priority: number; volumes?: unknown[]; containers: Array<{ resources?: { requests?: Record<string, string> } }> } })
        .spec;
      expect(spec.priority).toBe(100 + i);
      // Several LimitRanges give defaults; the newest one's memory request is among those applied.
      expect(spec.containers[0]!.resources?.requests?.memory).toBeDefined();
      expect(spec.volumes ?? []).toEqual([]);
      expect((await request(server, 'DELETE', `/api/v1/namespaces/ryw/limitranges/lr${i}`)).status).toBe(200);
    }
  });
});

describe('SecurityContextDeny', () => {
  it('is off by default and refuses elevated pods once enabled', async () => {
    await k(['run', 'root', '-n', 'default', '--image=nginx', '--overrides={"spec":{"securityContext":{"runAsUser":0}}}']);
    const strict = await startServer({ args: ['--enable-admission-plugins=SecurityContextDeny'] });
    try {
      const r = await kubectl(strict, ['run', 'root', '-n', 'default', '--image=nginx', '--overrides={"spec":{"securityContext":{"runAsUser":0}}}'], {
        expectFail: true,
      });
      expect(r.stderr).toContain('pods "root" is forbidden: pod.Spec.SecurityContext.RunAsUser is forbidden');
      await kubectl(strict, ['run', 'plain', '-n', 'default', '--image=nginx']);
    } finally {
      await strict.cleanup();
    }
  });
});
