/**
 * The binary Put log formats (a lone Put, and several packed into one entry) are proposed only
 * while every member's build applies them (its member record lists `etcd-put` and `etcd-puts`
 * among its log formats; docs/etcd-api.md "Replicated commands"). A member whose record does not
 * list them (as an earlier build writes it) makes every node fall back to the JSON form, one
 * entry per Put, which all builds with the etcd API apply: the replicas never diverge during a
 * rolling upgrade. Checked on the Raft log itself, read from a stopped node's disk.
 * Resending proposals (docs/raft.md "Resent proposals") follows the same gate, on `proposal-dedup`:
 * off while that member's record lacks it, on again once it lists it.
 */
import { dirname, join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { ClassicLevel } from 'classic-level';
import { findProtoFile } from '@app/raft';
import { NODE_NAMES, startThreeNodeCluster, type TestCluster } from './support/cluster.helper.js';
import { delay, getFreePorts, metricValue, request, type ServerHandle } from './support/server.js';

const NAMES = NODE_NAMES;
/** Entry record: crc32(4) version(1) type(1) term(8) index(8), then the entry data. */
const ENTRY_DATA_OFFSET = 22;
/** RaftNode's envelope before a proposal's command: proposer id (4) and sequence (8). */
const ENVELOPE_BYTES = 12;

interface MemberView {
  name: string;
  logFormats?: string[];
}

describe('the binary Put log format and members of other builds', () => {
  let cluster: TestCluster | undefined;
  const nodes = new Map<string, ServerHandle>();
  const clientPorts = new Map<string, number>();
  let KV: grpc.ServiceClientConstructor;

  const put = (name: string, key: string, value: string): Promise<void> => {
    const c = new KV(`127.0.0.1:${clientPorts.get(name)}`, grpc.credentials.createInsecure());
    return new Promise<void>((resolve, reject) =>
      (c.Put as (r: object, cb: (e: Error | null) => void) => void).call(c, { key: Buffer.from(key), value: Buffer.from(value) }, (e) => {
        c.close();
        if (e) reject(e);
        else resolve();
      }),
    );
  };
  const get = (name: string, key: string): Promise<string[]> => {
    const c = new KV(`127.0.0.1:${clientPorts.get(name)}`, grpc.credentials.createInsecure());
    return new Promise<string[]>((resolve, reject) =>
      (c.Range as (r: object, cb: (e: Error | null, v: { kvs: { value: Buffer }[] }) => void) => void).call(c, { key: Buffer.from(key) }, (e, v) => {
        c.close();
        if (e) reject(e);
        else resolve(v.kvs.map((kv) => kv.value.toString()));
      }),
    );
  };
  /** Puts every key at once through one connection to `name`. */
  const putAll = async (name: string, keys: string[]): Promise<void> => {
    const c = new KV(`127.0.0.1:${clientPorts.get(name)}`, grpc.credentials.createInsecure());
    try {
      await Promise.all(
        keys.map(
          (key) =>
            new Promise<void>((resolve, reject) =>
              (c.Put as (r: object, cb: (e: Error | null) => void) => void).call(c, { key: Buffer.from(key), value: Buffer.from('v') }, (e) =>
                e ? reject(e) : resolve(),
              ),
            ),
        ),
      );
    } finally {
      c.close();
    }
  };
  const keys = (prefix: string): string[] => Array.from({ length: 50 }, (_, i) => `${prefix}${i}`);
  /** The member records as `on` has applied them. */
  const members = async (on: string): Promise<MemberView[]> =>
    (await request(nodes.get(on)!, 'GET', '/cluster/members?local=true')).json<{ members: MemberView[] }>().members;
  const until = async (what: string, cond: () => Promise<boolean>): Promise<void> => {
    for (let i = 0; i < 300; i++) {
      if (await cond().catch(() => false)) return;
      await delay(100);
    }
    throw new Error(`timed out waiting for ${what}`);
  };

  beforeAll(async () => {
    const rpc = findProtoFile('etcd/rpc.proto');
    const def = protoLoader.loadSync(rpc, { keepCase: true, longs: Number, defaults: true, includeDirs: [dirname(rpc)] });
    KV = (grpc.loadPackageDefinition(def) as unknown as { etcdserverpb: { KV: grpc.ServiceClientConstructor } }).etcdserverpb.KV;
    const ports = await getFreePorts(3);
    NAMES.forEach((n, i) => clientPorts.set(n, ports[i]!));
    cluster = await startThreeNodeCluster('kapi-logformat-', (n) => [
      '--storage-backend',
      'builtin',
      '--listen-client-urls',
      `http://127.0.0.1:${clientPorts.get(n)}`,
    ]);
    cluster.nodes.forEach((h, i) => nodes.set(NAMES[i]!, h));
  }, 90_000);

  afterAll(async () => {
    await cluster?.cleanup();
  });

  it('falls back to the JSON form while a member does not list the binary one, and uses it again once all do', async () => {
    // Every node registers the formats its build applies.
    await until('every member record to list etcd-put', async () => {
      const list = await members('n1');
      return list.length === 3 && list.every((m) => m.logFormats?.includes('etcd-put') === true);
    });
    // Every build here deduplicates proposals, so every node resends them.
    for (const n of NAMES) await until(`${n} to resend proposals`, async () => (await metricValue(nodes.get(n)!, 'kapi_raft_proposal_resend_enabled')) === 1);
    await put('n1', '/fmt/a-all-new', 'a');
    // Puts that arrive together are packed into entries of several.
    await putAll('n1', keys('/fmt/pack-new/'));
    expect(await metricValue(nodes.get('n1')!, 'kapi_etcd_packed_puts_total')).toBeGreaterThan(1);

    // n3 stops and its record is rewritten as an earlier build leaves it: no log formats.
    await nodes.get('n3')!.stop();
    const old = (await members('n1')).find((m) => m.name === 'n3')!;
    const { logFormats, ...withoutFormats } = old as MemberView & Record<string, unknown>;
    expect(logFormats).toEqual(['etcd-put', 'etcd-puts', 'proposal-dedup']);
    delete withoutFormats.isLeader;
    delete withoutFormats.matchIndex;
    delete withoutFormats.progress;
    await put('n1', '/kapi/cluster/members/n3', JSON.stringify(withoutFormats));
    for (const n of ['n1', 'n2'])
      await until(`${n} to apply the rewritten record`, async () => (await members(n)).find((m) => m.name === 'n3')?.logFormats === undefined);
    // A member that does not list proposal-dedup could append a resent copy twice as leader.
    for (const n of ['n1', 'n2']) expect(await metricValue(nodes.get(n)!, 'kapi_raft_proposal_resend_enabled')).toBe(0);
    await put('n1', '/fmt/b-mixed', 'b');
    await put('n2', '/fmt/c-via-n2', 'c');
    const packedBefore = await metricValue(nodes.get('n1')!, 'kapi_etcd_packed_puts_total');
    await putAll('n1', keys('/fmt/pack-mixed/'));
    expect(await metricValue(nodes.get('n1')!, 'kapi_etcd_packed_puts_total')).toBe(packedBefore);

    // n3 comes back: it applies what it missed, then registers its formats again.
    await nodes.get('n3')!.start();
    await until('n3 to register its formats again', async () => (await members('n1')).find((m) => m.name === 'n3')?.logFormats?.includes('etcd-put') === true);
    await until('n1 to resend proposals again', async () => (await metricValue(nodes.get('n1')!, 'kapi_raft_proposal_resend_enabled')) === 1);
    await put('n1', '/fmt/d-upgraded', 'd');

    // Every replica holds every write.
    for (const n of NAMES) {
      await until(`${n} to hold the last write`, async () => (await get(n, '/fmt/d-upgraded')).length === 1);
      expect(await get(n, '/fmt/a-all-new')).toEqual(['a']);
      expect(await get(n, '/fmt/b-mixed')).toEqual(['b']);
      expect(await get(n, '/fmt/c-via-n2')).toEqual(['c']);
      for (const k of [...keys('/fmt/pack-new/'), ...keys('/fmt/pack-mixed/')]) expect(await get(n, k)).toEqual(['v']);
    }

    // The formats the writes travelled in, as n2 logged them.
    await nodes.get('n2')!.stop();
    const db = new ClassicLevel<string, Uint8Array>(join(nodes.get('n2')!.dataDir, 'raft'), { keyEncoding: 'utf8', valueEncoding: 'view' });
    const formatOf = new Map<string, string>();
    try {
      for await (const value of db.values({ gt: 'e', lt: 'f' })) {
        if (value.length <= ENTRY_DATA_OFFSET + ENVELOPE_BYTES) continue;
        const command = Buffer.from(value.subarray(ENTRY_DATA_OFFSET + ENVELOPE_BYTES));
        for (const k of ['/fmt/a-all-new', '/fmt/b-mixed', '/fmt/c-via-n2', '/fmt/d-upgraded']) {
          if (command.includes(k)) formatOf.set(k, String.fromCharCode(command[0]!));
        }
        // The entries that carried the concurrent Puts, by form.
        for (const phase of ['new', 'mixed']) {
          if (!command.includes(`/fmt/pack-${phase}/`)) continue;
          const form = `pack-${phase} ${String.fromCharCode(command[0]!)}`;
          formatOf.set(form, String(Number(formatOf.get(form) ?? 0) + 1));
        }
      }
    } finally {
      await db.close();
    }
    const forms = Object.fromEntries(formatOf);
    expect(forms).toMatchObject({ '/fmt/a-all-new': 'P', '/fmt/b-mixed': 'E', '/fmt/c-via-n2': 'E', '/fmt/d-upgraded': 'P', 'pack-mixed E': '50' });
    // With every member on this build, the 50 Puts went in fewer entries, packs among them.
    expect(
      Object.keys(forms)
        .filter((f) => f.startsWith('pack-'))
        .sort(),
    ).toEqual(Number(forms['pack-new P'] ?? 0) > 0 ? ['pack-mixed E', 'pack-new M', 'pack-new P'] : ['pack-mixed E', 'pack-new M']);
    expect(Number(forms['pack-new M']) + Number(forms['pack-new P'] ?? 0)).toBeLessThan(50);
  }, 120_000);
});
