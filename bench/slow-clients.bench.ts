/**
 * Slow-client benchmark (`npm run bench:slow-clients`): what one client that stops reading
 * costs a node in memory, against the size of the history it asks for.
 *
 * Starts one node with the etcd API on, writes N ConfigMaps of B bytes through the Kubernetes API
 * (default 20,000 of 4 KiB), and then runs each phase in turn: it opens one stream whose client never
 * reads, and samples the node's RSS (VmRSS) every 250 ms for S seconds (default 10):
 *
 * - `none`: no stream, the anchor (how much RSS moves by itself over the same time);
 * - `replay`: a Kubernetes watch over HTTP/2 from the resourceVersion before the first ConfigMap
 *   (the server replays the whole history);
 * - `initial`: a Kubernetes watch over HTTP/2 with resourceVersion unset (the whole collection
 *   as ADDED events first);
 * - `etcd`: an etcd Watch of the ConfigMaps' keys from revision 1 with prev_kv (every version
 *   and its previous one).
 *
 * Each phase prints the peak RSS added over its start, that figure as a share of the history's
 * size (N x B), and whether the node kept the stream open (Kubernetes watches over HTTP/2
 * are cut off only when their queue passes the slow-watcher bound: docs/watch.md). A stream is
 * closed and the node left to settle before the next phase. Figures are reported, not enforced:
 * exit code 0 when every phase ran, 2 on a setup failure.
 *
 * Flags: --objects N, --value-bytes B, --seconds S.
 */
import * as http2 from 'node:http2';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { findProtoFile } from '@app/raft';
import { getFreePorts, request, startServer, type ServerHandle } from '../test/support/server.js';
import { rssMiB } from './api.bench.js';
import { positive } from './flags.js';
import { isEntryPoint } from '../cluster/entry-point.js';

const NS = 'bench-slow';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One phase's figures. */
export interface SlowPhase {
  readonly name: string;
  readonly addedMiB: number;
  readonly open: boolean;
}

/** A stream whose client does not read: `open()` tells whether the server still serves it. */
interface Stalled {
  open(): boolean;
  close(): void;
}

function stalledWatch(server: ServerHandle, path: string): Stalled {
  const session = http2.connect(server.url, { ca: server.caPem, cert: server.adminCertPem, key: server.adminKeyPem });
  session.on('error', () => undefined);
  const stream = session.request({ ':method': 'GET', ':path': path });
  stream.pause();
  let closed = false;
  stream.on('error', () => undefined);
  stream.on('close', () => (closed = true));
  return { open: () => !closed, close: () => session.destroy() };
}

function stalledEtcdWatch(port: number, key: string): Stalled {
  const rpc = findProtoFile('etcd/rpc.proto');
  const def = protoLoader.loadSync(rpc, { keepCase: true, longs: Number, defaults: true, includeDirs: [dirname(rpc)] });
  const { Watch } = (grpc.loadPackageDefinition(def) as unknown as { etcdserverpb: { Watch: grpc.ServiceClientConstructor } }).etcdserverpb;
  const client = new Watch(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  const call = (client as unknown as { Watch(): grpc.ClientDuplexStream<object, object> }).Watch();
  let closed = false;
  call.on('error', () => (closed = true));
  call.on('end', () => (closed = true));
  call.pause();
  const end = Buffer.from(key);
  end[end.length - 1]!++;
  call.write({ create_request: { key: Buffer.from(key), range_end: end, start_revision: 1, prev_kv: true } });
  return {
    open: () => !closed,
    close: () => {
      call.cancel();
      client.close();
    },
  };
}

/** Runs the phases; prints a table and returns the figures. */
export async function runSlowClientsBench(opts: { objects: number; valueBytes: number; seconds: number }): Promise<SlowPhase[]> {
  const value = 'x'.repeat(opts.valueBytes);
  const [etcdPort] = await getFreePorts(1);
  const server = await startServer({ args: ['--compaction-interval', '0', '--listen-client-urls', `http://127.0.0.1:${etcdPort}`], readyTimeoutMs: 60_000 });
  try {
    const rss = (): number => rssMiB(server.pid) ?? NaN;
    const created = await request(server, 'POST', '/api/v1/namespaces', { body: { metadata: { name: NS } } });
    if (created.status !== 201) throw new Error(`namespace: HTTP ${created.status}`);
    const before = JSON.parse((await request(server, 'GET', `/api/v1/namespaces/${NS}/configmaps`)).body) as { metadata: { resourceVersion: string } };
    for (let i = 0; i < opts.objects; i += 64) {
      const batch = Array.from({ length: Math.min(64, opts.objects - i) }, (_, j) =>
        request(server, 'POST', `/api/v1/namespaces/${NS}/configmaps`, { body: { metadata: { name: `s${i + j}` }, data: { v: value } } }),
      );
      for (const r of await Promise.all(batch)) if (r.status !== 201) throw new Error(`create: HTTP ${r.status} ${r.body.slice(0, 200)}`);
    }
    const phases: [string, () => Stalled | undefined][] = [
      ['none', () => undefined],
      ['replay', () => stalledWatch(server, `/api/v1/namespaces/${NS}/configmaps?watch=1&resourceVersion=${before.metadata.resourceVersion}`)],
      ['initial', () => stalledWatch(server, `/api/v1/namespaces/${NS}/configmaps?watch=1`)],
      ['etcd', () => stalledEtcdWatch(etcdPort!, `/registry/configmaps/${NS}/`)],
    ];
    const out: SlowPhase[] = [];
    for (const [name, open] of phases) {
      // Let the node settle (its collector included) before the phase starts.
      await sleep(2000);
      const start = rss();
      const s = open();
      let peak = start;
      for (let t = 0; t < opts.seconds * 4; t++) {
        await sleep(250);
        peak = Math.max(peak, rss());
      }
      out.push({ name, addedMiB: peak - start, open: s ? s.open() : true });
      s?.close();
    }
    const historyMiB = (opts.objects * opts.valueBytes) / 1024 / 1024;
    const lines = [
      `slow clients: one node, ${opts.objects} ConfigMaps of ${opts.valueBytes} bytes (history ${historyMiB.toFixed(0)} MiB), a client that does not read, RSS sampled for ${opts.seconds} s`,
      `${'phase'.padEnd(10)}${'RSS added MiB'.padStart(15)}${'of history'.padStart(12)}  stream`,
      ...out.map(
        (p) =>
          `${p.name.padEnd(10)}${p.addedMiB.toFixed(0).padStart(15)}${`${((100 * p.addedMiB) / historyMiB).toFixed(0)}%`.padStart(12)}  ${p.name === 'none' ? '-' : p.open ? 'open' : 'cut off'}`,
      ),
    ];
    process.stdout.write(lines.join('\n') + '\n');
    return out;
  } finally {
    await server.cleanup();
  }
}

if (isEntryPoint(import.meta.url)) {
  try {
    const { values } = parseArgs({ options: { objects: { type: 'string' }, 'value-bytes': { type: 'string' }, seconds: { type: 'string' } } });
    await runSlowClientsBench({
      objects: Math.round(positive(values.objects, 20_000, 'objects')),
      valueBytes: Math.round(positive(values['value-bytes'], 4096, 'value-bytes')),
      seconds: positive(values.seconds, 10, 'seconds'),
    });
    process.exit(0);
  } catch (e) {
    process.stderr.write(`slow-clients bench: ${(e as Error).message}\n`);
    process.exit(2);
  }
}
