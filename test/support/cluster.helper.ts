/**
 * A three-node cluster of real server processes for e2e tests: one shared PKI, a Raft peer port
 * per node, every node started with the same extra flags. The handles are in node order.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import * as https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPki } from '@app/pki';
import { getFreePort, startServer, type ServerHandle } from './server.js';

/** The nodes' names, in the order of `TestCluster.nodes`. */
export const NODE_NAMES: readonly string[] = ['n1', 'n2', 'n3'];

/** The running cluster; `cleanup` stops every node and removes its directory. */
export interface TestCluster {
  readonly nodes: ServerHandle[];
  /** The cluster's directory: `pki/` and one data dir per node. */
  readonly dir: string;
  cleanup(): Promise<void>;
}

/**
 * Starts nodes n1..n3 under a new temporary directory named from `prefix`, each with
 * `extraArgs` (the same flags for all, or the flags of each node by name).
 */
export async function startThreeNodeCluster(
  prefix: string,
  extraArgs: readonly string[] | ((name: string) => readonly string[]),
  env: Readonly<Record<string, string>> = {},
): Promise<TestCluster> {
  const names = NODE_NAMES;
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const nodes: ServerHandle[] = [];
  const cleanup = async (): Promise<void> => {
    for (const h of nodes) await h.cleanup();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await createPki({ outDir: join(dir, 'pki'), hosts: ['127.0.0.1'] });
    const ports = new Map<string, number>();
    for (const n of names) ports.set(n, await getFreePort());
    const initial = names.map((n) => `${n}=127.0.0.1:${ports.get(n)}`).join(',');
    const args = (n: string) => [
      '--name',
      n,
      '--pki-dir',
      join(dir, 'pki'),
      '--listen-peer-port',
      String(ports.get(n)),
      '--initial-cluster',
      initial,
      ...(typeof extraArgs === 'function' ? extraArgs(n) : extraArgs),
    ];
    const started = await Promise.allSettled(names.map((n) => startServer({ args: args(n), dataDir: join(dir, n), readyTimeoutMs: 40_000, env })));
    for (const s of started) if (s.status === 'fulfilled') nodes.push(s.value);
    const failed = started.find((s) => s.status === 'rejected');
    if (failed) throw failed.reason;
  } catch (e) {
    await cleanup();
    throw e;
  }
  return { nodes, dir, cleanup };
}

/**
 * POST with a connection of its own, not the harness's pooled clients: a member add answers
 * only once the new member caught up, and the harness may close its pooled clients meanwhile.
 */
export function rawPost(target: ServerHandle, path: string, body: unknown): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const u = new URL(path, target.url);
    const req = https.request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: 'POST',
        ca: target.caPem,
        cert: target.adminCertPem,
        key: target.adminKeyPem,
        agent: false,
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}
