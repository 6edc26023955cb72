/**
 * @kubernetes/client-node 1.3.0's informer (ListWatch) against a started server: it must see
 * every change, in order, across watch restarts (the server ends each watch after
 * --min-request-timeout 2..4 s) and across a forced 410 Gone and relist (history compacted with
 * --compaction-interval 1 while the informer was stopped).
 */
import { jest } from '@jest/globals';
import * as k8s from '@kubernetes/client-node';
import { stopInformerWhileWatching } from './support/informer.helper.js';
import { request, startServer, type ServerHandle } from './support/server.js';

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

describe('client-node informer', () => {
  let server: ServerHandle;
  let core: k8s.CoreV1Api;
  let informer: k8s.Informer<Cm> & k8s.ObjectCache<Cm>;
  let listCalls = 0;
  const seen: string[] = [];
  const errors: unknown[] = [];
  const ns = 'inf';

  const write = {
    create: async (name: string, v: string) => {
      const r = await request(server, 'POST', `/api/v1/namespaces/${ns}/configmaps`, { body: { metadata: { name }, data: { v } } });
      expect(r.status).toBe(201);
    },
    update: async (name: string, v: string) => {
      const r = await request(server, 'PATCH', `/api/v1/namespaces/${ns}/configmaps/${name}`, {
        body: { data: { v } },
        headers: { 'content-type': 'application/merge-patch+json' },
      });
      expect(r.status).toBe(200);
    },
    delete: async (name: string) => {
      expect((await request(server, 'DELETE', `/api/v1/namespaces/${ns}/configmaps/${name}`)).status).toBe(200);
    },
  };
  /** Server state, for comparing the informer's cache. */
  const serverState = async (): Promise<Record<string, string>> => {
    const l = (await request(server, 'GET', `/api/v1/namespaces/${ns}/configmaps`)).json<{ items: Cm[] }>();
    return Object.fromEntries(l.items.map((i) => [i.metadata!.name!, i.data!.v!]));
  };
  const cacheState = (): Record<string, string> => Object.fromEntries(informer.list(ns).map((i) => [i.metadata!.name!, i.data!.v!]));

  beforeAll(async () => {
    server = await startServer({ args: ['--compaction-interval', '1', '--min-request-timeout', '2'] });
    for (const n of [ns, 'noise']) {
      const r = await request(server, 'POST', '/api/v1/namespaces', { body: { metadata: { name: n } } });
      if (r.status !== 201) throw new Error(`setup: creating namespace ${n} answered ${r.status}: ${r.body}`);
    }
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(server.kubeconfig);
    core = kc.makeApiClient(k8s.CoreV1Api);
    informer = k8s.makeInformer<Cm>(kc, `/api/v1/namespaces/${ns}/configmaps`, () => {
      listCalls++;
      return core.listNamespacedConfigMap({ namespace: ns });
    });
    const rec = (verb: string) => (o: Cm) => seen.push(`${verb} ${o.metadata!.name} ${o.data?.v ?? ''}`);
    informer.on('add', rec('add'));
    informer.on('update', rec('update'));
    informer.on('delete', rec('delete'));
    informer.on('error', (e) => {
      errors.push(e);
    });
    await informer.start();
    await until('initial list', () => listCalls >= 1);
  });
  afterAll(async () => {
    await informer?.stop();
    await server?.cleanup();
  });

  it('sees every change, in order, across several server-side watch restarts', async () => {
    const names = ['a', 'b', 'c'];
    for (const n of names) await write.create(n, '0');
    const rounds = 25;
    const t0 = Date.now();
    for (let i = 1; i <= rounds; i++) {
      for (const n of names) await write.update(n, String(i));
      await sleep(200); // ~5 s in all: the watch is restarted at least once (2..4 s each)
    }
    expect(Date.now() - t0).toBeGreaterThan(4000);
    await until('all updates', () => names.every((n) => seen.includes(`update ${n} ${rounds}`)));
    for (const n of names) {
      const mine = seen.filter((s) => s.split(' ')[1] === n);
      expect(mine).toEqual([`add ${n} 0`, ...Array.from({ length: rounds }, (_, i) => `update ${n} ${i + 1}`)]);
    }
    expect(cacheState()).toEqual(await serverState());
  });

  it('across a forced 410 Gone: relists and reports what changed while its revision was compacted', async () => {
    await write.delete('b');
    await until('delete b', () => seen.includes(`delete b ${25}`));
    const listsBefore = listCalls;
    await stopInformerWhileWatching(informer);
    const rvBefore = (informer as unknown as k8s.ListWatch<Cm>).latestResourceVersion();
    const seenWhenStopped = seen.length;
    // While stopped: changes the informer can only learn from a relist...
    await write.create('d', 'new');
    await write.update('c', 'changed');
    await write.delete('a');
    // ...and history moves past the informer's revision (compaction every second). A watch from
    // rvBefore starts at the revision after it, which etcd still serves when it is the compacted
    // revision itself: wait until that one is gone too.
    let n = 0;
    await until(
      'compaction past the informer revision',
      async () => {
        await request(server, 'POST', '/api/v1/namespaces/noise/configmaps', { body: { metadata: { name: `n${n++}` } } });
        const r = await request(server, 'GET', `/api/v1/namespaces/${ns}/configmaps?resourceVersion=${Number(rvBefore) + 1}&resourceVersionMatch=Exact`);
        return r.status === 410;
      },
      20_000,
    );
    // The same revision on a watch: HTTP 200 then an ERROR event carrying 410.
    const direct = await request(server, 'GET', `/api/v1/namespaces/${ns}/configmaps?watch=1&resourceVersion=${rvBefore}`);
    expect(JSON.parse(direct.body.trim().split('\n')[0]!)).toMatchObject({ type: 'ERROR', object: { code: 410 } });

    expect(seen.length).toBe(seenWhenStopped); // it was stopped: no watch reported these
    const mark = seen.length;
    await informer.start(); // re-watches from rvBefore -> 410 -> relist
    await until('relist', () => listCalls > listsBefore);
    expect(listsBefore).toBe(1); // no relist before: the restarts above resumed from their revision
    await until('relist events', () => seen.length >= mark + 3);
    expect(seen.slice(mark, mark + 3).sort()).toEqual(['add d new', 'delete a 25', 'update c changed']);
    expect(cacheState()).toEqual(await serverState());

    // And it keeps watching after the relist.
    await write.update('d', 'after');
    await write.delete('c');
    await until('live events after relist', () => seen.includes('update d after') && seen.includes('delete c changed'));
    expect(seen.indexOf('update d after')).toBeLessThan(seen.indexOf('delete c changed'));
    expect(cacheState()).toEqual(await serverState());
    // The only error reported is the abort of our own stop() call.
    expect(errors.filter((e) => (e as Error).name !== 'AbortError')).toEqual([]);
  });
});
