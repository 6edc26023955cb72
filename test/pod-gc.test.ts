/**
 * The pod garbage collector end to end with real kubectl, on a server whose passes run every
 * 200 ms and that keeps two terminated pods: the oldest terminated pods beyond two are deleted,
 * and the pods of a deleted node go once the node has been missing for two passes, marked Failed
 * with the DisruptionTarget condition first (seen through a watch); terminating pods never scheduled,
 * or on a node that is not Ready and tainted out of service, are marked Failed and deleted at once.
 */
import { jest } from '@jest/globals';
import { kubectl, request, startServer, waitFor, type ServerHandle } from './support/server.js';

jest.setTimeout(120_000);

let server: ServerHandle;
const NS = 'gc';

beforeAll(async () => {
  server = await startServer({ env: { KAPI_PODGC_INTERVAL_MS: '200', KAPI_TERMINATED_POD_GC_THRESHOLD: '2' } });
  await kubectl(server, ['create', 'namespace', NS]);
});

afterAll(async () => {
  await server?.cleanup();
});

const k = (args: string[], opts: { input?: string } = {}) => kubectl(server, [...args, '-n', NS], opts);
const pods = async (): Promise<string[]> => (await k(['get', 'pods', '-o', 'jsonpath={.items[*].metadata.name}'])).stdout.split(' ').filter(Boolean).sort();

async function finished(name: string, phase: 'Succeeded' | 'Failed'): Promise<void> {
  await k(['run', name, '--image=busybox', '--restart=Never']);
  await k(['patch', 'pod', name, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status: { phase } })]);
}

it('keeps only the newest terminated pods beyond the threshold', async () => {
  await finished('done-1', 'Succeeded');
  await finished('done-2', 'Failed');
  await k(['run', 'running', '--image=busybox']);
  expect(await pods()).toEqual(['done-1', 'done-2', 'running']);
  await new Promise((r) => setTimeout(r, 50));
  await finished('done-3', 'Succeeded');
  await waitFor('done-1 collected', async () => !(await pods()).includes('done-1'));
  expect(await pods()).toEqual(['done-2', 'done-3', 'running']);
});

it('deletes the pods of a node that is gone, marked Failed by PodGC first', async () => {
  await kubectl(server, ['create', '-f', '-'], { input: 'apiVersion: v1\nkind: Node\nmetadata:\n  name: worker-9\n' });
  await k(['create', '-f', '-'], {
    input: JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'bound' },
      spec: { nodeName: 'worker-9', containers: [{ name: 'c', image: 'busybox' }] },
    }),
  });
  await k(['patch', 'pod', 'bound', '--subresource=status', '--type=merge', '-p', '{"status":{"phase":"Running"}}']);
  // Nothing happens while the node exists.
  await new Promise((r) => setTimeout(r, 800));
  expect(await pods()).toContain('bound');

  const rv = (await request(server, 'GET', `/api/v1/namespaces/${NS}/pods/bound`)).json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion;
  await kubectl(server, ['delete', 'node', 'worker-9']);
  await waitFor('bound collected', async () => !(await pods()).includes('bound'));
  // The watch from before shows the status PodGC wrote, then the deletion.
  const w = await request(server, 'GET', `/api/v1/namespaces/${NS}/pods?watch=1&fieldSelector=metadata.name=bound&resourceVersion=${rv}&timeoutSeconds=1`);
  const events = w.body
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { type: string; object: { status: { phase: string; conditions?: Array<Record<string, string>> } } });
  expect(events.map((e) => e.type)).toEqual(['MODIFIED', 'DELETED']);
  expect(events[0]!.object.status.phase).toBe('Failed');
  expect(events[0]!.object.status.conditions).toContainEqual(
    expect.objectContaining({ type: 'DisruptionTarget', status: 'True', reason: 'DeletionByPodGC', message: 'PodGC: node no longer exists' }),
  );
});

it('marks Failed and deletes terminating pods of a node tainted out of service that is not Ready, and terminating pods never scheduled', async () => {
  const hold = { finalizers: ['example.com/hold'] };
  await kubectl(server, ['create', '-f', '-'], { input: 'apiVersion: v1\nkind: Node\nmetadata:\n  name: worker-7\n' });
  await kubectl(server, [
    'patch',
    'node',
    'worker-7',
    '--subresource=status',
    '--type=merge',
    '-p',
    '{"status":{"conditions":[{"type":"Ready","status":"False"}]}}',
  ]);
  for (const [name, spec] of [
    ['stuck', { nodeName: 'worker-7' }],
    ['never', {}],
  ] as const) {
    await k(['create', '-f', '-'], {
      input: JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name, ...hold }, spec: { ...spec, containers: [{ name: 'c', image: 'busybox' }] } }),
    });
    await k(['patch', 'pod', name, '--subresource=status', '--type=merge', '-p', '{"status":{"phase":"Running"}}']);
    await k(['delete', 'pod', name, '--wait=false']);
  }
  const phase = async (name: string) =>
    (await request(server, 'GET', `/api/v1/namespaces/${NS}/pods/${name}`)).json<{ status: { phase: string } }>().status.phase;
  // Never scheduled: marked Failed and deleted at once.
  await waitFor('never marked Failed', async () => (await phase('never')) === 'Failed');
  // On a node that is only not Ready: left alone.
  await new Promise((r) => setTimeout(r, 800));
  expect(await phase('stuck')).toBe('Running');
  await kubectl(server, ['taint', 'nodes', 'worker-7', 'node.kubernetes.io/out-of-service=nodeshutdown:NoExecute']);
  await waitFor('stuck marked Failed', async () => (await phase('stuck')) === 'Failed');
  for (const name of ['stuck', 'never']) await k(['patch', 'pod', name, '--type=merge', '-p', '{"metadata":{"finalizers":null}}']);
  await waitFor('both gone', async () => !(await pods()).some((p) => p === 'stuck' || p === 'never'));
});
