/**
 * The StatefulSet controller through kubectl: a StatefulSet's pods are `<set>-<ordinal>` with
 * their identity (hostname, subdomain, labels) and claims from volumeClaimTemplates, created one
 * at a time under OrderedReady (each waits for the one before to be Running and Ready; nothing
 * runs pods here, so the test plays the kubelet through `/status`) or all at once under
 * Parallel; scaling down removes the highest ordinals and keeps their claims; a template change
 * rolls out from the highest ordinal down through ControllerRevisions (`kubectl rollout
 * status|history|undo`), and a partition holds the lower ordinals back; with the Delete
 * retention policy, claims go with their scaled-away pods and with the set.
 */
import { eventsOnceSeen } from './support/kubectl.helper.js';
import { waitFor } from './support/net.helper.js';
import { type ServerHandle, kubectl, request, startServer } from './support/server.js';

const NS = 'default';

interface Pod {
  metadata: { name: string; uid: string; labels?: Record<string, string>; ownerReferences?: { kind: string; name: string }[] };
  spec: { hostname?: string; subdomain?: string; containers: { image: string }[]; volumes?: Record<string, unknown>[] };
  status?: Record<string, unknown>;
}
interface StatefulSet {
  status?: Record<string, unknown>;
}

describe('StatefulSet controller', () => {
  let server: ServerHandle;
  const k = (args: string[], opts: { input?: string; expectFail?: boolean } = {}) => kubectl(server, args, opts);
  const podsOf = async (app: string): Promise<Pod[]> =>
    ((await request(server, 'GET', `/api/v1/namespaces/${NS}/pods?labelSelector=app%3D${app}`)).json() as { items: Pod[] }).items.sort((a, b) =>
      a.metadata.name.localeCompare(b.metadata.name),
    );
  const names = (ps: Pod[]) => ps.map((p) => p.metadata.name);
  const waitPods = (app: string, check: (ps: Pod[]) => boolean, what: string) =>
    waitFor(what, async () => {
      const ps = await podsOf(app);
      return check(ps) ? ps : undefined;
    });
  const set = async (name: string): Promise<StatefulSet> =>
    (await request(server, 'GET', `/apis/apps/v1/namespaces/${NS}/statefulsets/${name}`)).json() as StatefulSet;
  /** Plays the kubelet: the pod runs and is ready. */
  const ready = async (name: string) => {
    const cur = (await request(server, 'GET', `/api/v1/namespaces/${NS}/pods/${name}`)).json() as Pod;
    cur.status = {
      ...cur.status,
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z') }],
    };
    expect((await request(server, 'PUT', `/api/v1/namespaces/${NS}/pods/${name}/status`, { body: cur })).status).toBe(200);
  };
  const manifest = (name: string, spec: Record<string, unknown>, image = 'nginx:1.27') =>
    JSON.stringify({
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name },
      spec: {
        serviceName: name,
        selector: { matchLabels: { app: name } },
        template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image }] } },
        ...spec,
      },
    });

  beforeAll(async () => {
    server = await startServer();
  });

  afterAll(async () => {
    await server?.cleanup();
  });

  it('creates pods in order, each with its identity and claim, waiting for the one before to be ready', async () => {
    await k(['apply', '-n', NS, '-f', '-'], {
      input: manifest('db', {
        replicas: 3,
        volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
      }),
    });
    const [first] = await waitPods('db', (ps) => ps.length === 1, 'db-0');
    expect(first!.metadata.name).toBe('db-0');
    expect(first!.metadata.labels).toMatchObject({ app: 'db', 'statefulset.kubernetes.io/pod-name': 'db-0', 'apps.kubernetes.io/pod-index': '0' });
    expect(first!.metadata.labels?.['controller-revision-hash']).toMatch(/^db-[a-z0-9]+$/);
    expect(first!.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'StatefulSet', name: 'db', controller: true })]);
    expect(first!.spec).toMatchObject({ hostname: 'db-0', subdomain: 'db' });
    expect(first!.spec.volumes).toContainEqual({ name: 'data', persistentVolumeClaim: { claimName: 'data-db-0' } });
    expect((await k(['get', 'pvc', 'data-db-0', '-n', NS, '-o', 'jsonpath={.metadata.labels.app} {.spec.resources.requests.storage}'])).stdout).toBe('db 1Gi');

    // db-1 only once db-0 runs and is ready.
    await new Promise((r) => setTimeout(r, 500));
    expect(names(await podsOf('db'))).toEqual(['db-0']);
    await ready('db-0');
    await waitPods('db', (ps) => ps.length === 2, 'db-1');
    await ready('db-1');
    await waitPods('db', (ps) => ps.length === 3, 'db-2');
    await ready('db-2');
    const done = await waitFor('db ready', async () => {
      const s = await set('db');
      return s.status?.readyReplicas === 3 && s.status.availableReplicas === 3 ? s : undefined;
    });
    expect(done.status).toMatchObject({ replicas: 3, readyReplicas: 3, currentReplicas: 3, updatedReplicas: 3, observedGeneration: 1 });
    expect(done.status?.currentRevision).toBe(done.status?.updateRevision);
    expect((await k(['get', 'sts', 'db', '-n', NS])).stdout).toMatch(/^db\s+3\/3\s+\d+s$/m);
    expect((await k(['rollout', 'status', 'sts/db', '-n', NS, '--timeout=20s'])).stdout).toContain(
      'partitioned roll out complete: 3 new pods have been updated...',
    );
    await eventsOnceSeen(
      server,
      NS,
      'involvedObject.name=db,reason=SuccessfulCreate',
      (out) => out.includes('create Pod db-0 in StatefulSet db successful') && out.includes('create Claim data-db-0 Pod db-0 in StatefulSet db success'),
    );
  });

  it('scales down from the highest ordinal and keeps the claims', async () => {
    await k(['scale', 'sts', 'db', '-n', NS, '--replicas=1']);
    await waitPods('db', (ps) => ps.length === 1, 'db scaled to 1');
    expect(names(await podsOf('db'))).toEqual(['db-0']);
    expect((await k(['get', 'pvc', '-n', NS, '-o', 'name'])).stdout).toContain('persistentvolumeclaim/data-db-2');
    await eventsOnceSeen(server, NS, 'involvedObject.name=db,reason=SuccessfulDelete', (out) => out.includes('delete Pod db-2 in StatefulSet db successful'));
  });

  it('rolls a new template out from the highest ordinal, with ControllerRevisions kubectl can undo', async () => {
    await k(['apply', '-n', NS, '-f', '-'], { input: manifest('web', { replicas: 2, podManagementPolicy: 'Parallel' }) });
    // Parallel: both at once, without waiting for readiness.
    const first = await waitPods('web', (ps) => ps.length === 2, 'both web pods');
    expect(names(first)).toEqual(['web-0', 'web-1']);
    for (const p of first) await ready(p.metadata.name);
    await waitFor('web ready', async () => ((await set('web')).status?.readyReplicas === 2 ? true : undefined));
    const oldRevision = first[0]!.metadata.labels?.['controller-revision-hash'];

    await k(['set', 'image', 'sts/web', '-n', NS, 'c=nginx:1.28']);
    // web-1 goes first; web-0 waits until web-1 is back and ready.
    const mid = await waitPods('web', (ps) => ps.length === 2 && ps[1]!.spec.containers[0]!.image === 'nginx:1.28', 'web-1 updated');
    expect(mid[0]!.spec.containers[0]!.image).toBe('nginx:1.27');
    const newRevision = mid[1]!.metadata.labels?.['controller-revision-hash'];
    expect(newRevision).not.toBe(oldRevision);
    expect((await set('web')).status).toMatchObject({ currentRevision: oldRevision, updateRevision: newRevision });
    await ready('web-1');
    await waitPods('web', (ps) => ps.length === 2 && ps.every((p) => p.spec.containers[0]!.image === 'nginx:1.28'), 'web-0 updated');
    await ready('web-0');
    const done = await waitFor('web rolled out', async () => {
      const s = await set('web');
      return s.status?.currentRevision === newRevision && s.status?.readyReplicas === 2 ? s : undefined;
    });
    expect(done.status).toMatchObject({ currentReplicas: 2, updatedReplicas: 2 });

    const history = (await k(['rollout', 'history', 'sts/web', '-n', NS])).stdout;
    expect(history).toMatch(/^REVISION\s+(CHANGE-CAUSE\s*)?$/m);
    expect(history).toMatch(/^1\s+/m);
    expect(history).toMatch(/^2\s+/m);
    expect((await k(['get', 'controllerrevisions', '-n', NS, '-o', 'name'])).stdout).toContain(`controllerrevision.apps/${oldRevision}`);

    // Undo: the first template comes back, as revision 3 (the old revision renumbered).
    expect((await k(['rollout', 'undo', 'sts/web', '-n', NS])).stdout).toContain('statefulset.apps/web rolled back');
    await waitPods('web', (ps) => ps.length === 2 && ps[1]!.spec.containers[0]!.image === 'nginx:1.27', 'web-1 rolled back');
    expect((await k(['get', 'controllerrevision', oldRevision!, '-n', NS, '-o', 'jsonpath={.revision}'])).stdout).toBe('3');
  });

  it('holds ordinals below the partition at the current revision', async () => {
    await k(['apply', '-n', NS, '-f', '-'], {
      input: manifest('part', { replicas: 2, podManagementPolicy: 'Parallel', updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 1 } } }),
    });
    const first = await waitPods('part', (ps) => ps.length === 2, 'both part pods');
    for (const p of first) await ready(p.metadata.name);
    await waitFor('part ready', async () => ((await set('part')).status?.readyReplicas === 2 ? true : undefined));
    await k(['set', 'image', 'sts/part', '-n', NS, 'c=nginx:1.28']);
    const mid = await waitPods('part', (ps) => ps.length === 2 && ps[1]!.spec.containers[0]!.image === 'nginx:1.28', 'part-1 updated');
    await ready('part-1');
    await waitFor('part status', async () =>
      (await set('part')).status?.updatedReplicas === 1 && (await set('part')).status?.readyReplicas === 2 ? true : undefined,
    );
    await new Promise((r) => setTimeout(r, 500));
    const after = await podsOf('part');
    expect(after[0]!.metadata.uid).toBe(mid[0]!.metadata.uid);
    expect(after[0]!.spec.containers[0]!.image).toBe('nginx:1.27');
    expect((await k(['rollout', 'status', 'sts/part', '-n', NS, '--timeout=20s'])).stdout).toContain(
      'partitioned roll out complete: 1 new pods have been updated...',
    );
  });

  it('OnDelete: a new template waits for someone to delete a pod', async () => {
    await k(['apply', '-n', NS, '-f', '-'], { input: manifest('od', { replicas: 1, updateStrategy: { type: 'OnDelete' } }) });
    const [first] = await waitPods('od', (ps) => ps.length === 1, 'od-0');
    await ready('od-0');
    await waitFor('od ready', async () => ((await set('od')).status?.readyReplicas === 1 ? true : undefined));
    await k(['set', 'image', 'sts/od', '-n', NS, 'c=nginx:1.28']);
    const moved = await waitFor('a new update revision', async () => {
      const s = await set('od');
      return s.status?.updateRevision !== s.status?.currentRevision ? s : undefined;
    });
    expect(moved.status).toMatchObject({ currentReplicas: 1, updatedReplicas: 0 });
    await new Promise((r) => setTimeout(r, 500));
    expect((await podsOf('od'))[0]!.metadata.uid).toBe(first!.metadata.uid);
    await k(['delete', 'pod', 'od-0', '-n', NS]);
    const [again] = await waitPods('od', (ps) => ps.length === 1 && ps[0]!.metadata.uid !== first!.metadata.uid, 'od-0 again');
    expect(again!.spec.containers[0]!.image).toBe('nginx:1.28');
    expect(again!.metadata.labels?.['controller-revision-hash']).toBe(moved.status?.updateRevision);
  });

  it('deletes claims with their pods and with the set when the retention policy says Delete', async () => {
    await k(['apply', '-n', NS, '-f', '-'], {
      input: manifest('cache', {
        replicas: 2,
        podManagementPolicy: 'Parallel',
        persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Delete' },
        volumeClaimTemplates: [{ metadata: { name: 'tmp' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
      }),
    });
    const claims = async (): Promise<string> => (await k(['get', 'pvc', '-n', NS, '-l', 'app=cache', '-o', 'name'])).stdout;
    await waitPods('cache', (ps) => ps.length === 2, 'both cache pods');
    await waitFor('both claims owned by the set', async () => {
      const owners = (await k(['get', 'pvc', '-n', NS, '-l', 'app=cache', '-o', 'jsonpath={range .items[*]}{.metadata.ownerReferences[0].kind} {end}'])).stdout;
      return owners === 'StatefulSet StatefulSet ' ? true : undefined;
    });
    expect(await claims()).toBe('persistentvolumeclaim/tmp-cache-0\npersistentvolumeclaim/tmp-cache-1\n');

    // Scaled down: cache-1 goes, and its claim with it.
    await k(['scale', 'sts', 'cache', '-n', NS, '--replicas=1']);
    await waitFor('the claim of cache-1 gone', async () => ((await claims()) === 'persistentvolumeclaim/tmp-cache-0\n' ? true : undefined));
    // The set deleted: the last claim goes with it.
    await k(['delete', 'sts', 'cache', '-n', NS]);
    await waitFor('the claims of cache gone', async () => ((await claims()) === '' ? true : undefined));
    expect(await podsOf('cache')).toEqual([]);
  });

  it('lets its pods go with it when deleted', async () => {
    await k(['delete', 'sts', 'part', '-n', NS]);
    expect(await waitPods('part', (ps) => ps.length === 0, 'the pods of part gone')).toEqual([]);
    await waitFor('the revisions of part gone', async () =>
      (await k(['get', 'controllerrevisions', '-n', NS, '-l', 'app=part', '-o', 'name'])).stdout === '' ? true : undefined,
    );
  });
});
