/**
 * The ReplicaSet and ReplicationController controllers through kubectl: a controller gets as many
 * pods as it asks for (owned by it, named after it, from its template), scaling removes the
 * extra ones, orphans its selector selects are adopted and pods relabelled out of it released,
 * the status counts its pods, and Events say what it did. Nothing runs pods here: they stay
 * Pending, as in a cluster without nodes.
 */
import { waitFor } from './support/net.helper.js';
import { type ServerHandle, kubectl, request, startServer } from './support/server.js';

const NS = 'default';

interface Pod {
  metadata: { name: string; labels?: Record<string, string>; ownerReferences?: { kind: string; name: string; uid: string; controller?: boolean }[] };
  status?: { phase?: string };
}

describe('ReplicaSet and ReplicationController controllers', () => {
  let server: ServerHandle;

  const podsOf = async (selector: string): Promise<Pod[]> => {
    const r = await kubectl(server, ['get', 'pods', '-n', NS, '-l', selector, '-o', 'json']);
    return (JSON.parse(r.stdout) as { items: Pod[] }).items;
  };
  const count = (selector: string, n: number) =>
    waitFor(`${n} pods with ${selector}`, async () => {
      const pods = await podsOf(selector);
      return pods.length === n ? pods : undefined;
    });

  beforeAll(async () => {
    server = await startServer();
  });

  afterAll(async () => {
    await server?.cleanup();
  });

  it('creates the pods a ReplicaSet asks for, scales them down and reports them in its status', async () => {
    await kubectl(server, ['create', '-n', NS, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: { name: 'web' },
        spec: {
          replicas: 3,
          selector: { matchLabels: { app: 'web' } },
          template: { metadata: { labels: { app: 'web', tier: 'front' } }, spec: { containers: [{ name: 'nginx', image: 'nginx' }] } },
        },
      }),
    });
    const uid = (await kubectl(server, ['get', 'rs', 'web', '-n', NS, '-o', 'jsonpath={.metadata.uid}'])).stdout;
    const pods = await count('app=web', 3);
    for (const p of pods) {
      expect(p.metadata.name).toMatch(/^web-[a-z0-9]{5}$/);
      expect(p.metadata.labels).toEqual({ app: 'web', tier: 'front' });
      expect(p.metadata.ownerReferences).toEqual([{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid, controller: true, blockOwnerDeletion: true }]);
      expect(p.status?.phase).toBe('Pending');
    }
    const status = await waitFor('the status of 3 replicas', async () => {
      const r = await kubectl(server, ['get', 'rs', 'web', '-n', NS, '-o', 'json']);
      const s = (JSON.parse(r.stdout) as { status: Record<string, number> }).status;
      return s.replicas === 3 ? s : undefined;
    });
    expect(status).toMatchObject({ replicas: 3, fullyLabeledReplicas: 3, observedGeneration: 1 });
    expect(status.readyReplicas ?? 0).toBe(0);
    const table = await kubectl(server, ['get', 'rs', 'web', '-n', NS]);
    expect(table.stdout).toMatch(/web\s+3\s+3\s+0/);

    await kubectl(server, ['scale', 'rs', 'web', '-n', NS, '--replicas=1']);
    await count('app=web', 1);
    const events = await waitFor('the controller events', async () => {
      const r = await kubectl(server, ['get', 'events', '-n', NS, '--field-selector', 'involvedObject.name=web', '-o', 'json']);
      const items = (JSON.parse(r.stdout) as { items: { reason: string; message: string; source?: { component?: string } }[] }).items;
      return items.some((e) => e.reason === 'SuccessfulDelete') ? items : undefined;
    });
    expect(events.find((e) => e.reason === 'SuccessfulCreate')?.message).toMatch(/^Created pod: web-[a-z0-9]{5}$/);
    expect(events.find((e) => e.reason === 'SuccessfulDelete')?.message).toMatch(/^Deleted pod: web-[a-z0-9]{5}$/);
    expect(events[0]!.source?.component).toBe('replicaset-controller');
  });

  it('adopts an orphan its selector selects, and releases a pod relabelled out of it', async () => {
    await kubectl(server, ['create', '-n', NS, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'stray', labels: { app: 'api' } },
        spec: { containers: [{ name: 'c', image: 'nginx' }] },
      }),
    });
    await kubectl(server, ['create', '-n', NS, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: { name: 'api' },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'api' } },
          template: { metadata: { labels: { app: 'api' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
        },
      }),
    });
    // The stray pod counts as one of the two: one more is created, and the stray one is owned.
    const pods = await count('app=api', 2);
    await waitFor('the stray pod adopted', async () => {
      const r = await request(server, 'GET', `/api/v1/namespaces/${NS}/pods/stray`);
      const refs = (r.json() as Pod).metadata.ownerReferences ?? [];
      return refs.some((ref) => ref.kind === 'ReplicaSet' && ref.name === 'api' && ref.controller) ? true : undefined;
    });
    expect(pods.map((p) => p.metadata.name)).toContain('stray');

    // Relabelled out of the selector: released, and replaced.
    await kubectl(server, ['label', 'pod', 'stray', '-n', NS, 'app=other', '--overwrite']);
    await waitFor('the stray pod released', async () => {
      const r = await request(server, 'GET', `/api/v1/namespaces/${NS}/pods/stray`);
      return ((r.json() as Pod).metadata.ownerReferences ?? []).length === 0 ? true : undefined;
    });
    await count('app=api', 2);
  });

  it('keeps the pods of a ReplicationController, and deleting the controller deletes them', async () => {
    await kubectl(server, ['create', '-n', NS, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'ReplicationController',
        metadata: { name: 'legacy' },
        spec: {
          replicas: 2,
          selector: { app: 'legacy' },
          template: { metadata: { labels: { app: 'legacy' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
        },
      }),
    });
    const pods = await count('app=legacy', 2);
    expect(pods[0]!.metadata.ownerReferences?.[0]).toMatchObject({ apiVersion: 'v1', kind: 'ReplicationController', name: 'legacy', controller: true });
    // A pod deleted by hand is replaced.
    await kubectl(server, ['delete', 'pod', pods[0]!.metadata.name, '-n', NS]);
    await waitFor('a replacement pod', async () => {
      const now = await podsOf('app=legacy');
      return now.length === 2 && !now.some((p) => p.metadata.name === pods[0]!.metadata.name) ? true : undefined;
    });
    // The garbage collector removes the pods of a deleted controller.
    await kubectl(server, ['delete', 'rc', 'legacy', '-n', NS]);
    await count('app=legacy', 0);
  });
});
