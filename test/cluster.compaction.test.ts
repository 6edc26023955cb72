/**
 * History compaction in a cluster of three real processes (docs/cluster.md, docs/storage.md
 * "Compaction"): the leader proposes each compaction through the Raft log, so under a steady
 * stream of writes every node reports the same compacted revision at the same time. Compacting
 * on each node's own timer would leave the nodes at different revisions most of the time (their
 * timers tick at different moments while the revision moves). A request below the compacted
 * revision then gets 410 on every node.
 *
 * Test-only tuning: --compaction-interval 1 (seconds) on every node.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPki } from '@app/pki';
import { delay, getFreePort, metricValue, request, startServer, type ServerHandle } from './support/server.js';

const NAMES = ['n1', 'n2', 'n3'];
const CM = '/api/v1/namespaces/default/configmaps';

describe('compaction in a 3-node cluster', () => {
  let dir: string;
  const nodes: ServerHandle[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kapi-compaction-'));
    await createPki({ outDir: join(dir, 'pki'), hosts: ['127.0.0.1'] });
    const ports = new Map<string, number>();
    for (const n of NAMES) ports.set(n, await getFreePort());
    const initial = NAMES.map((n) => `${n}=127.0.0.1:${ports.get(n)}`).join(',');
    const args = (n: string) => [
      '--name',
      n,
      '--pki-dir',
      join(dir, 'pki'),
      '--listen-peer-port',
      String(ports.get(n)),
      '--initial-cluster',
      initial,
      '--compaction-interval',
      '1',
    ];
    nodes.push(...(await Promise.all(NAMES.map((n) => startServer({ args: args(n), dataDir: join(dir, n), readyTimeoutMs: 40_000 })))));
  });

  afterAll(async () => {
    for (const h of nodes) await h.cleanup();
    await rm(dir, { recursive: true, force: true });
  });

  it('every node compacts at the same revision while writes go on, and answers 410 below it', async () => {
    let writing = true;
    let written = 0;
    // ~60 writes/s spread over the three nodes: the revision moves between any two timer ticks.
    const writer = (async () => {
      for (let i = 0; writing; i++) {
        const r = await request(nodes[i % 3]!, 'POST', CM, {
          body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `c-${i}` }, data: { i: String(i) } },
        });
        if (r.status === 201) written++;
        await delay(15);
      }
    })();
    const samples: number[][] = [];
    try {
      await delay(3000);
      for (let s = 0; s < 15; s++) {
        samples.push(await Promise.all(nodes.map((n) => metricValue(n, 'etcd_debugging_mvcc_compact_revision'))));
        await delay(250);
      }
    } finally {
      writing = false;
      await writer;
    }
    expect(written).toBeGreaterThan(100);
    // Compaction ran (the revision at the previous tick is past the first writes)...
    expect(Math.min(...samples.map((s) => Math.min(...s)))).toBeGreaterThan(0);
    // ...and the nodes agree: a sample may rarely straddle the moment one compaction applies.
    const agreeing = samples.filter((s) => s.every((v) => v === s[0])).length;
    expect(agreeing).toBeGreaterThanOrEqual(12);
    // Every node refuses the same old revision.
    const compacted = samples[samples.length - 1]![0]!;
    await delay(1500);
    for (const n of nodes) {
      const old = await request(n, 'GET', `${CM}?resourceVersion=${compacted - 1}&resourceVersionMatch=Exact`);
      expect({ node: n.url, status: old.status }).toEqual({ node: n.url, status: 410 });
      expect(old.json<{ reason: string }>().reason).toBe('Expired');
    }
  });
});
