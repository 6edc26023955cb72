/**
 * The external etcd backend (docs/storage-backends.md) against a real etcd: three members of
 * Debian's etcd-server on loopback with mutual TLS (certificates from our PKI: peer.crt serves,
 * admin.crt is the API servers' client certificate), and two API servers sharing it and one PKI
 * directory. kubectl CRUD through either, a watch on one seeing writes through the other,
 * continue tokens of one accepted by the other, 410 below a compaction, one controller runner
 * elected through the Lease, and serving on after an etcd member is killed.
 */
import * as https from 'node:https';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPki } from '@app/pki';
import { startEtcd, type EtcdCluster } from './support/etcd.js';
import { prerequisite } from './support/prereq.js';
import { kubectl, request, startServer, waitFor, type ServerHandle } from './support/server.js';

interface Ev {
  type: string;
  object: { metadata: { name?: string; resourceVersion?: string }; code?: number; reason?: string };
}

/** A watch over HTTP/1.1 collecting its events. */
class Watch {
  readonly events: Ev[] = [];
  status = 0;
  private readonly req: import('node:http').ClientRequest;
  private rest = '';
  constructor(server: ServerHandle, path: string) {
    const u = new URL(path, server.url);
    this.req = https.request({
      host: u.hostname,
      port: u.port,
      path: u.pathname + u.search,
      ca: server.caPem,
      cert: server.adminCertPem,
      key: server.adminKeyPem,
      agent: false,
    });
    this.req.on('error', () => undefined);
    this.req.on('response', (res) => {
      this.status = res.statusCode ?? 0;
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        this.rest += c;
        let i: number;
        while ((i = this.rest.indexOf('\n')) >= 0) {
          const line = this.rest.slice(0, i);
          this.rest = this.rest.slice(i + 1);
          if (line.trim()) this.events.push(JSON.parse(line) as Ev);
        }
      });
    });
    this.req.end();
  }
  /** Waits for an event matching `pred`. */
  async see(what: string, pred: (e: Ev) => boolean, ms = 20_000): Promise<Ev> {
    return waitFor(what, async () => this.events.find(pred), ms);
  }
  close(): void {
    this.req.destroy();
  }
}

const cm = (name: string, ns = 'default') => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data: { v: name } });

describe('two API servers on one external etcd (3 members, TLS)', () => {
  let dir: string;
  let etcd: EtcdCluster;
  let a: ServerHandle;
  let b: ServerHandle;
  // false only when the run opted out of etcd (KAPI_TEST_WITHOUT=etcd): then recorded as not
  // covered, and each test returns at once.
  let haveEtcd = false;

  beforeAll(async () => {
    haveEtcd = prerequisite('etcd', 'the external etcd backend: two API servers on a three-member etcd (test/etcd3.backend.test.ts)');
    if (!haveEtcd) return;
    dir = await mkdtemp(join(tmpdir(), 'kapi-etcd3-'));
    const pki = join(dir, 'pki');
    await createPki({ outDir: pki, hosts: ['127.0.0.1', 'localhost'] });
    etcd = await startEtcd({ members: 3, pkiDir: pki });
    // One PKI for both: the continue-token key derives from its service-account key.
    [a, b] = await Promise.all(['a', 'b'].map((name) => startServer({ args: [...etcd.apiServerArgs(), '--pki-dir', pki, '--name', name] })));
  }, 120_000);

  afterAll(async () => {
    await a?.cleanup();
    await b?.cleanup();
    await etcd?.cleanup();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('serves kubectl CRUD through either server on the shared data, readyz checking etcd', async () => {
    if (!haveEtcd) return;
    await kubectl(a, ['create', 'configmap', 'crud', '--from-literal=k=1']);
    expect((await kubectl(b, ['get', 'configmap', 'crud', '-o', 'jsonpath={.data.k}'])).stdout).toBe('1');
    await kubectl(b, ['patch', 'configmap', 'crud', '-p', '{"data":{"k":"2"}}']);
    const got = JSON.parse((await kubectl(a, ['get', 'configmap', 'crud', '-o', 'json'])).stdout) as {
      data: { k: string };
      metadata: { resourceVersion: string };
    };
    expect(got.data.k).toBe('2');
    // resourceVersions are etcd revisions: the key's mod_revision in etcd.
    const kv = JSON.parse(await etcd.etcdctl(['get', '/registry/core/configmaps/default/crud', '-w', 'json'])) as { kvs: Array<{ mod_revision: number }> };
    expect(String(kv.kvs[0]!.mod_revision)).toBe(got.metadata.resourceVersion);
    await kubectl(a, ['delete', 'configmap', 'crud']);
    const gone = await kubectl(b, ['get', 'configmap', 'crud'], { expectFail: true });
    expect(gone.stderr).toContain('NotFound');

    const ready = await request(a, 'GET', '/readyz?verbose');
    expect(ready.body).toContain('[+]etcd ok');
    expect(ready.body).not.toContain('raft');
    expect((await request(a, 'GET', '/livez?verbose')).body).not.toContain('etcd');
    // No Raft group, no member records.
    expect((await request(a, 'GET', '/cluster/members')).status).toBe(404);
    expect((await request(b, 'GET', '/version')).json<{ major: string }>().major).toBe('1');
  });

  it('delivers writes through one server to a watch on the other', async () => {
    if (!haveEtcd) return;
    const list = (await request(b, 'GET', '/api/v1/namespaces/default/configmaps')).json<{ metadata: { resourceVersion: string } }>();
    const w = new Watch(b, `/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${list.metadata.resourceVersion}`);
    try {
      await request(a, 'POST', '/api/v1/namespaces/default/configmaps', { body: cm('watched') });
      await request(a, 'DELETE', '/api/v1/namespaces/default/configmaps/watched');
      await w.see('DELETED watched', (e) => e.type === 'DELETED' && e.object.metadata.name === 'watched');
      expect(w.events.map((e) => e.type)).toEqual(['ADDED', 'DELETED']);
    } finally {
      w.close();
    }
  });

  it("continues a paged list on the other server at the first page's revision", async () => {
    if (!haveEtcd) return;
    await kubectl(a, ['create', 'namespace', 'pages']);
    for (let i = 0; i < 5; i++) await request(a, 'POST', '/api/v1/namespaces/pages/configmaps', { body: cm(`p${i}`, 'pages') });
    // The namespace also holds kube-root-ca.crt (the root-CA publisher's), first by name.
    await waitFor('kube-root-ca.crt', async () => (await request(a, 'GET', '/api/v1/namespaces/pages/configmaps/kube-root-ca.crt')).status === 200);
    type List = { metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number }; items: Array<{ metadata: { name: string } }> };
    const first = (await request(a, 'GET', '/api/v1/namespaces/pages/configmaps?limit=2')).json<List>();
    expect(first.items.map((o) => o.metadata.name)).toEqual(['kube-root-ca.crt', 'p0']);
    expect(first.metadata.remainingItemCount).toBe(4);
    await request(a, 'POST', '/api/v1/namespaces/pages/configmaps', { body: cm('p5', 'pages') });
    const second = await request(b, 'GET', `/api/v1/namespaces/pages/configmaps?limit=2&continue=${encodeURIComponent(first.metadata.continue!)}`);
    expect(second.status).toBe(200);
    const page = second.json<List>();
    expect(page.items.map((o) => o.metadata.name)).toEqual(['p1', 'p2']);
    expect(page.metadata.resourceVersion).toBe(first.metadata.resourceVersion);
    const third = (await request(a, 'GET', `/api/v1/namespaces/pages/configmaps?limit=2&continue=${encodeURIComponent(page.metadata.continue!)}`)).json<List>();
    // p5 came after the first page's revision.
    expect(third.items.map((o) => o.metadata.name)).toEqual(['p3', 'p4']);
    expect(third.metadata.continue ?? '').toBe('');
  });

  it('answers 410 Gone for revisions below a compaction of etcd', async () => {
    if (!haveEtcd) return;
    type List = { metadata: { resourceVersion: string; continue?: string } };
    const old = (await request(a, 'GET', '/api/v1/namespaces/pages/configmaps?limit=1')).json<List>();
    // Two writes: etcd keeps the compaction revision itself, so a watch from the revision after
    // the list's is compacted only when the compaction is beyond it.
    await request(a, 'POST', '/api/v1/namespaces/pages/configmaps', { body: cm('after', 'pages') });
    await request(a, 'POST', '/api/v1/namespaces/pages/configmaps', { body: cm('after2', 'pages') });
    const status = JSON.parse(await etcd.etcdctl(['endpoint', 'status', '-w', 'json'])) as Array<{ Status: { header: { revision: number } } }>;
    await etcd.etcdctl(['compact', String(status[0]!.Status.header.revision)]);

    const exact = await request(b, 'GET', `/api/v1/namespaces/pages/configmaps?resourceVersion=${old.metadata.resourceVersion}&resourceVersionMatch=Exact`);
    expect(exact.status).toBe(410);
    const cont = await request(b, 'GET', `/api/v1/namespaces/pages/configmaps?limit=1&continue=${encodeURIComponent(old.metadata.continue!)}`);
    expect(cont.status).toBe(410);
    expect(cont.json<{ reason: string }>().reason).toBe('Expired');
    const w = new Watch(a, `/api/v1/namespaces/pages/configmaps?watch=true&resourceVersion=${old.metadata.resourceVersion}`);
    try {
      await waitFor('410 from the watch', async () => w.status === 410 || w.events.some((e) => e.type === 'ERROR' && e.object.code === 410) || undefined).catch(
        (e: Error) => {
          throw new Error(`${e.message}: status ${w.status}, events ${JSON.stringify(w.events)}`);
        },
      );
    } finally {
      w.close();
    }
  });

  it('elects one controller runner through the Lease, and the other takes over when it stops', async () => {
    if (!haveEtcd) return;
    const log = (s: ServerHandle): string => s.stdout + s.stderr;
    const leader = await waitFor('a controller runner', async () => [a, b].find((s) => log(s).includes('acquired lease')));
    const other = leader === a ? b : a;
    const lease = JSON.parse((await kubectl(other, ['get', 'lease', '-n', 'kube-system', 'kube-controller-manager', '-o', 'json'])).stdout) as {
      spec: { holderIdentity: string };
    };
    expect(lease.spec.holderIdentity.startsWith(`${leader === a ? 'a' : 'b'}_`)).toBe(true);
    expect(log(other)).not.toContain('acquired lease');
    await leader.stop();
    await waitFor('the other server to take over', async () => log(other).includes('acquired lease') || undefined, 60_000);
    await leader.start();
    expect(log(leader).split('acquired lease').length).toBe(2);
  });

  it('keeps serving reads, writes and watches when an etcd member is killed', async () => {
    if (!haveEtcd) return;
    const list = (await request(b, 'GET', '/api/v1/namespaces/default/configmaps')).json<{ metadata: { resourceVersion: string } }>();
    const w = new Watch(b, `/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${list.metadata.resourceVersion}`);
    try {
      await etcd.kill(0);
      // A write whose outcome was unknown is answered 5xx; the retry then finds it created.
      for (const s of [a, b]) {
        const name = `survivor-${s === a ? 'a' : 'b'}`;
        await waitFor(`a create through ${name}`, async () => {
          const r = await request(s, 'POST', '/api/v1/namespaces/default/configmaps', { body: cm(name) });
          return r.status === 201 || r.status === 409 || undefined;
        });
        expect((await kubectl(s === a ? b : a, ['get', 'configmap', name, '-o', 'name'])).stdout.trim()).toBe(`configmap/${name}`);
      }
      await w.see('the writes after the kill', (e) => e.object.metadata.name === 'survivor-b');
      await waitFor('readyz after the kill', async () => (await request(a, 'GET', '/readyz')).status === 200 || undefined);
    } finally {
      w.close();
    }
  });
});
