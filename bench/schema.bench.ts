/**
 * Large-schema benchmark (`npm run bench:schema`): create and get throughput of a kind with a
 * large schema (PersistentVolume, validated, defaulted and tracked against the whole
 * PersistentVolumeSpec tree of volume sources) against ConfigMap's, in the same run on the same
 * server, with bench/lean.client.ts (keep-alive, one request in flight per connection).
 * Each phase runs twice in ABBA order (ConfigMap, PersistentVolume, PersistentVolume, ConfigMap),
 * each after the server has gone quiet, and the better run of each counts, so neither kind gets
 * the warmer process or the other's leftover controller work. Prints each phase, then the ratios PersistentVolume/ConfigMap, with the target
 * >= 0.8 for creates and gets. Exit code 1 when a ratio is below target or a phase had errors.
 *
 * Flags: --seconds N (env BENCH_SECONDS, default 4), --concurrency N (env BENCH_CONCURRENCY,
 * default 32), --rich (the CSI PersistentVolume with about twice the fields).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { LeanPool, type BenchClient } from './lean.client.js';
import { formatTable, runPhase, type PhaseResult } from './api.bench.js';
import { startServer, type ServerHandle } from '../test/support/server.js';
import { isEntryPoint } from '../cluster/entry-point.js';

/** The bound: PersistentVolume throughput as a share of ConfigMap's. */
export const TARGET_RATIO = 0.8;

/** The metadata both kinds carry, so that only their own fields differ. */
const meta = (name: string, namespace?: string) => ({ name, ...(namespace ? { namespace } : {}), labels: { app: 'bench', tier: 'storage' } });

/** Ten ~20-byte data keys, as bench/api.bench.ts sends. */
export function configMapBody(name: string): string {
  const data: Record<string, string> = {};
  for (let k = 0; k < 10; k++) data[`key-${k}`] = `value-${k}-${name.slice(-8)}`;
  return JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: meta(name, 'default'), data });
}

/**
 * An NFS PersistentVolume as the Kubernetes documentation writes one: about as many fields as
 * the ConfigMap, so the comparison measures the schema (PersistentVolumeSpec's tree of volume
 * sources against ConfigMap's two maps), not a bigger object. Write cost grows with the number
 * of fields (managed-fields tracking, encoding): `--rich` sends a CSI volume with node affinity,
 * a claim reference and annotations instead, about twice the fields.
 */
export function persistentVolumeBody(name: string, rich = false): string {
  if (!rich) {
    return JSON.stringify({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: meta(name),
      spec: {
        capacity: { storage: '10Gi' },
        accessModes: ['ReadWriteMany'],
        persistentVolumeReclaimPolicy: 'Retain',
        storageClassName: 'nfs',
        mountOptions: ['hard', 'nfsvers=4.1'],
        nfs: { server: 'nfs.example.com', path: `/exports/${name}` },
      },
    });
  }
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { ...meta(name), annotations: { 'pv.kubernetes.io/provisioned-by': 'csi.example.com' } },
    spec: {
      capacity: { storage: '10Gi' },
      accessModes: ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: 'Delete',
      storageClassName: 'fast',
      volumeMode: 'Filesystem',
      mountOptions: ['discard', 'noatime'],
      claimRef: { kind: 'PersistentVolumeClaim', namespace: 'default', name: `claim-${name}`, apiVersion: 'v1' },
      csi: {
        driver: 'csi.example.com',
        volumeHandle: `vol-${name}`,
        fsType: 'ext4',
        volumeAttributes: { 'storage.kubernetes.io/csiProvisionerIdentity': '1700000000000-8081-csi.example.com', tier: 'gold' },
        nodeStageSecretRef: { name: 'csi-secret', namespace: 'kube-system' },
      },
      nodeAffinity: {
        required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['zone-a', 'zone-b'] }] }] },
      },
    },
  });
}

/** CPU seconds (user + system) a process has used so far, from /proc; undefined when unknown. */
function cpuSeconds(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ 100)
  } catch {
    return undefined;
  }
}

/** Waits until the server uses under 10% of a core over half a second (at most 15 s). */
async function quiesce(pid: number | undefined): Promise<void> {
  for (let i = 0; i < 30; i++) {
    const a = cpuSeconds(pid);
    await new Promise((r) => setTimeout(r, 500));
    const b = cpuSeconds(pid);
    if (a === undefined || b === undefined || b - a < 0.05) return;
  }
}

/** The ratio of two phases' throughput, rounded to 2 digits. */
export function ratio(pv: PhaseResult, cm: PhaseResult): number {
  return cm.perSecond > 0 ? Math.round((pv.perSecond / cm.perSecond) * 100) / 100 : 0;
}

async function run(seconds: number, concurrency: number, rich: boolean): Promise<number> {
  let server: ServerHandle | undefined;
  let pool: BenchClient | undefined;
  try {
    server = await startServer({ readyTimeoutMs: 60_000 });
    pool = new LeanPool(server.url, { connections: concurrency, tls: { ca: server.caPem, cert: server.adminCertPem, key: server.adminKeyPem } });
    const p = pool;
    const created = { cm: [] as string[], pv: [] as string[] };
    const best = new Map<string, PhaseResult>();
    const keep = (r: PhaseResult) => {
      const prev = best.get(r.name);
      if (!prev || r.perSecond > prev.perSecond) best.set(r.name, r);
    };
    const createCm = (round: number) =>
      runPhase(
        'creates ConfigMap',
        p,
        seconds,
        concurrency,
        (i) => ({ method: 'POST', path: '/api/v1/namespaces/default/configmaps', body: configMapBody(`cm-${round}-${i}`), tag: `cm-${round}-${i}` }),
        [201],
        (r) => created.cm.push(r.tag!),
      );
    const createPv = (round: number) =>
      runPhase(
        'creates PersistentVolume',
        p,
        seconds,
        concurrency,
        (i) => ({ method: 'POST', path: '/api/v1/persistentvolumes', body: persistentVolumeBody(`pv-${round}-${i}`, rich), tag: `pv-${round}-${i}` }),
        [201],
        (r) => created.pv.push(r.tag!),
      );
    const getCm = () =>
      runPhase(
        'gets ConfigMap',
        p,
        seconds,
        concurrency,
        (i) => ({ method: 'GET', path: `/api/v1/namespaces/default/configmaps/${created.cm[i % created.cm.length]}` }),
        [200],
      );
    const getPv = () =>
      runPhase(
        'gets PersistentVolume',
        p,
        seconds,
        concurrency,
        (i) => ({ method: 'GET', path: `/api/v1/persistentvolumes/${created.pv[i % created.pv.length]}` }),
        [200],
      );
    // ABBA order, each phase after the server has gone quiet: the controllers that watch every
    // write (garbage collector, storage protection) catch up on a create phase afterwards, and
    // that work must not be charged to whichever kind runs next.
    const pid = server.pid;
    const cpuPerRequest = new Map<string, number>();
    for (const phase of [() => createCm(0), () => createPv(0), () => createPv(1), () => createCm(1), getCm, getPv, getPv, getCm]) {
      await quiesce(pid);
      const before = cpuSeconds(pid);
      const r = await phase();
      const after = cpuSeconds(pid);
      if (before !== undefined && after !== undefined && r.requests > 0) {
        const ms = ((after - before) * 1000) / r.requests;
        cpuPerRequest.set(r.name, Math.min(ms, cpuPerRequest.get(r.name) ?? Infinity));
      }
      keep(r);
    }
    for (const [phaseName, ms] of cpuPerRequest) process.stdout.write(`server CPU per request, ${phaseName}: ${ms.toFixed(3)} ms\n`);
    const phases = [...best.values()];
    process.stdout.write(`${formatTable(phases)}\n\n`);
    const get = (n: string) => best.get(n)!;
    const creates = ratio(get('creates PersistentVolume'), get('creates ConfigMap'));
    const gets = ratio(get('gets PersistentVolume'), get('gets ConfigMap'));
    const met = (r: number) => (r >= TARGET_RATIO ? 'MET' : 'NOT MET');
    process.stdout.write(`creates PersistentVolume/ConfigMap = ${creates.toFixed(2)}   (target >= ${TARGET_RATIO})   ${met(creates)}\n`);
    process.stdout.write(`gets    PersistentVolume/ConfigMap = ${gets.toFixed(2)}   (target >= ${TARGET_RATIO})   ${met(gets)}\n`);
    const errors = phases.some((r) => r.errors > 0);
    return errors || creates < TARGET_RATIO || gets < TARGET_RATIO ? 1 : 0;
  } finally {
    await pool?.close();
    await server?.cleanup();
  }
}

if (isEntryPoint(import.meta.url)) {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: { seconds: { type: 'string' }, concurrency: { type: 'string' }, rich: { type: 'boolean' } },
  });
  const seconds = Number(values.seconds ?? process.env.BENCH_SECONDS ?? 4);
  const concurrency = Number(values.concurrency ?? process.env.BENCH_CONCURRENCY ?? 32);
  try {
    process.exit(await run(seconds, concurrency, values.rich === true));
  } catch (e) {
    process.stderr.write(`bench:schema: ${(e as Error).message}\n`);
    process.exit(2);
  }
}
