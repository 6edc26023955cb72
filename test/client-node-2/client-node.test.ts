/**
 * @kubernetes/client-node 2.x (the current major version, installed under the alias
 * @kubernetes/client-node-2) against a started server: list paging, the three patch types,
 * server-side apply, a raw watch, and an informer that relists after a 410 Gone.
 *
 * client-node 2.x needs Node 22 or later, so this directory is its own jest project, present
 * only on such a Node: `npm run test:node22`, `test:node24` and `test:node26` run it on that Node,
 * fetched from the npm registry.
 */
import { jest } from '@jest/globals';
import * as k8s from '@kubernetes/client-node-2';
import { stopInformerWhileWatching } from '../support/informer.helper.js';
import { request, startServer, type ServerHandle } from '../support/server.js';

jest.setTimeout(120_000);

type Cm = k8s.V1ConfigMap;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

let server: ServerHandle;
let kc: k8s.KubeConfig;
let core: k8s.CoreV1Api;

/** Creates a namespace and waits for the kube-root-ca.crt the root-CA publisher puts in every namespace. */
const createNs = async (name: string) => {
  await core.createNamespace({ body: { metadata: { name } } });
  await until(
    `kube-root-ca.crt in ${name}`,
    async () => (await request(server, 'GET', `/api/v1/namespaces/${name}/configmaps/kube-root-ca.crt`)).status === 200,
  );
};
const createCm = (namespace: string, name: string, data: Record<string, string> = {}) =>
  core.createNamespacedConfigMap({ namespace, body: { metadata: { name }, data } });

beforeAll(async () => {
  server = await startServer({ args: ['--compaction-interval', '1', '--min-request-timeout', '2'] });
  kc = new k8s.KubeConfig();
  kc.loadFromFile(server.kubeconfig);
  core = kc.makeApiClient(k8s.CoreV1Api);
});

afterAll(async () => {
  await server?.cleanup();
});

describe('client-node 2.x', () => {
  it('runs on a Node version client-node 2.x supports', () => {
    expect(Number(process.versions.node.split('.')[0])).toBeGreaterThanOrEqual(22);
  });

  it('pages a list with limit and continue', async () => {
    await createNs('paging');
    const names = Array.from({ length: 7 }, (_, i) => `cm-${i}`);
    for (const n of names) await createCm('paging', n);
    // Each page as the client saw it: its names, whether it continues, what it says remains.
    const pages: Array<{ names: string[]; continued: boolean; remainingItemCount?: number }> = [];
    let cont: string | undefined;
    do {
      const page = await core.listNamespacedConfigMap({ namespace: 'paging', limit: 3, _continue: cont });
      cont = page.metadata?._continue || undefined;
      pages.push({ names: page.items.map((i) => i.metadata!.name!), continued: cont !== undefined, remainingItemCount: page.metadata?.remainingItemCount });
    } while (cont && pages.length < 10);
    // The namespace also holds its kube-root-ca.crt (createNs waits for it), last by name. The
    // last page has neither a continue token nor a remainingItemCount.
    expect(pages).toEqual([
      { names: names.slice(0, 3), continued: true, remainingItemCount: 5 },
      { names: names.slice(3, 6), continued: true, remainingItemCount: 2 },
      { names: [...names.slice(6), 'kube-root-ca.crt'], continued: false, remainingItemCount: undefined },
    ]);
  });

  it('patches with merge, strategic merge and JSON patch', async () => {
    await createNs('patching');
    await createCm('patching', 'p', { a: '1' });
    const patch = (body: unknown, type: k8s.PatchStrategy) =>
      core.patchNamespacedConfigMap({ name: 'p', namespace: 'patching', body }, k8s.setHeaderOptions('Content-Type', type));
    expect((await patch({ data: { m: '2' } }, k8s.PatchStrategy.MergePatch)).data).toEqual({ a: '1', m: '2' });
    expect((await patch({ data: { s: '3' } }, k8s.PatchStrategy.StrategicMergePatch)).data).toEqual({ a: '1', m: '2', s: '3' });
    const json = await patch(
      [
        { op: 'remove', path: '/data/a' },
        { op: 'add', path: '/data/j', value: '4' },
      ],
      k8s.PatchStrategy.JsonPatch,
    );
    expect(json.data).toEqual({ m: '2', s: '3', j: '4' });
    await expect(patch([{ op: 'test', path: '/data/m', value: 'no' }], k8s.PatchStrategy.JsonPatch)).rejects.toMatchObject({ code: 422 });
  });

  it('applies server-side, records the field manager, and reports a conflict unless forced', async () => {
    await createNs('applying');
    const objects = k8s.KubernetesObjectApi.makeApiClient(kc);
    const spec = (data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'applied', namespace: 'applying' }, data });
    const first = (await objects.patch(spec({ a: '1' }), undefined, undefined, 'first', false, k8s.PatchStrategy.ServerSideApply)) as Cm;
    expect(first.data).toEqual({ a: '1' });
    expect(first.metadata?.managedFields).toEqual(expect.arrayContaining([expect.objectContaining({ manager: 'first', operation: 'Apply' })]));
    await expect(objects.patch(spec({ a: '2' }), undefined, undefined, 'second', false, k8s.PatchStrategy.ServerSideApply)).rejects.toMatchObject({
      code: 409,
    });
    const forced = (await objects.patch(spec({ a: '2' }), undefined, undefined, 'second', true, k8s.PatchStrategy.ServerSideApply)) as Cm;
    expect(forced.data).toEqual({ a: '2' });
    expect(forced.metadata?.managedFields?.find((f) => f.manager === 'second')?.operation).toBe('Apply');
  });

  it('watches from a list revision and sees added, modified and deleted in order', async () => {
    await createNs('watching');
    const list = await core.listNamespacedConfigMap({ namespace: 'watching' });
    const events: string[] = [];
    let ended: unknown = 'running';
    const watch = new k8s.Watch(kc);
    const ctl = await watch.watch(
      '/api/v1/namespaces/watching/configmaps',
      { resourceVersion: list.metadata!.resourceVersion! },
      (phase, obj: Cm) => events.push(`${phase} ${obj.metadata!.name} ${obj.data?.v ?? ''}`),
      (err) => {
        ended = err;
      },
    );
    try {
      await createCm('watching', 'w', { v: '1' });
      await core.patchNamespacedConfigMap(
        { name: 'w', namespace: 'watching', body: { data: { v: '2' } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
      await core.deleteNamespacedConfigMap({ name: 'w', namespace: 'watching' });
      await until('three events', () => events.length >= 3);
      expect(events).toEqual(['ADDED w 1', 'MODIFIED w 2', 'DELETED w 2']);
      expect(ended).toBe('running');
    } finally {
      ctl.abort();
    }
  });

  it('informer: relists after a 410 Gone and reports what changed meanwhile', async () => {
    const ns = 'informed';
    await createNs(ns);
    await createNs('noise');
    await createCm(ns, 'a', { v: '0' });
    await createCm(ns, 'b', { v: '0' });
    let listCalls = 0;
    const informer = k8s.makeInformer<Cm>(kc, `/api/v1/namespaces/${ns}/configmaps`, () => {
      listCalls++;
      return core.listNamespacedConfigMap({ namespace: ns });
    });
    const seen: string[] = [];
    const errors: unknown[] = [];
    const rec = (verb: string) => (o: Cm) => seen.push(`${verb} ${o.metadata!.name} ${o.data?.v ?? ''}`);
    informer.on('add', rec('add'));
    informer.on('update', rec('update'));
    informer.on('delete', rec('delete'));
    informer.on('error', (e) => errors.push(e));
    const cache = () => Object.fromEntries(informer.list(ns).map((i) => [i.metadata!.name!, i.data?.v]));
    try {
      await informer.start();
      await until('initial list', () => seen.length >= 3);
      expect([...seen].sort()).toEqual(['add a 0', 'add b 0', 'add kube-root-ca.crt ']);
      await core.patchNamespacedConfigMap(
        { name: 'a', namespace: ns, body: { data: { v: '1' } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
      await until('live update', () => seen.includes('update a 1'));

      const listsBefore = listCalls;
      await stopInformerWhileWatching(informer);
      const rvBefore = (informer as unknown as k8s.ListWatch<Cm>).latestResourceVersion();
      const seenWhenStopped = seen.length;
      await createCm(ns, 'c', { v: 'new' });
      await core.deleteNamespacedConfigMap({ name: 'b', namespace: ns });
      // Move history past the informer's revision (the server compacts every second).
      let n = 0;
      await until('compaction past the informer revision', async () => {
        await createCm('noise', `n${n++}`);
        const r = await request(server, 'GET', `/api/v1/namespaces/${ns}/configmaps?resourceVersion=${rvBefore}&resourceVersionMatch=Exact`);
        return r.status === 410;
      });

      expect(seen.length).toBe(seenWhenStopped); // it was stopped: no watch reported these
      const mark = seen.length;
      await informer.start(); // watch from rvBefore -> 410 -> relist
      await until('relist', () => listCalls > listsBefore);
      await until('relist events', () => seen.length >= mark + 2);
      expect(seen.slice(mark, mark + 2).sort()).toEqual(['add c new', 'delete b 0']);
      expect(cache()).toEqual({ a: '1', c: 'new' });

      await core.patchNamespacedConfigMap(
        { name: 'c', namespace: ns, body: { data: { v: 'after' } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      );
      await until('live events after relist', () => seen.includes('update c after'));
      expect(cache()).toEqual({ a: '1', c: 'after' });
      expect(errors.filter((e) => (e as Error).name !== 'AbortError')).toEqual([]);
    } finally {
      await informer.stop();
    }
  });
});
