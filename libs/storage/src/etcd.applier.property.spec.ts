/**
 * The applier's fast path for KV.Put requests against its general path: random runs of etcd
 * commands (Puts with every flag and lease, lease grants and revocations, deletions, Txns that
 * read and compare), applied in random groups to two real stores, one applier with the fast
 * path and one without, must give the same answers, the same lease table and the same store at
 * every revision.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { MvccStore } from '@app/mvcc';
import { EtcdApplier } from './etcd.applier.js';
import { decodeEtcdCommand, encodeEtcdCommand, type EtcdCommand } from './etcd.command.js';

const KEYS = ['/a', '/b', '/c', '', 'x\u0000y'];
const LEASES = ['0', '7', '8'];

const putCmd = fc
  .record({
    key: fc.constantFrom(...KEYS),
    value: fc.string({ maxLength: 3 }),
    lease: fc.constantFrom(...LEASES),
    prevKv: fc.boolean(),
    ignoreValue: fc.boolean(),
    ignoreLease: fc.boolean(),
  })
  .map(({ key, value, lease, prevKv, ignoreValue, ignoreLease }): EtcdCommand => ({
    txn: {
      compare: [],
      success: [
        {
          put: {
            key,
            value: Buffer.from(value),
            lease,
            ...(prevKv ? { prevKv } : {}),
            ...(ignoreValue ? { ignoreValue } : {}),
            ...(ignoreLease ? { ignoreLease } : {}),
          },
        },
      ],
      failure: [],
      kvPut: true,
    },
  }));

const command: fc.Arbitrary<EtcdCommand> = fc.oneof(
  { weight: 6, arbitrary: putCmd },
  { weight: 1, arbitrary: fc.constantFrom(...LEASES.slice(1)).map((id): EtcdCommand => ({ grant: { id, ttl: 60 } })) },
  { weight: 1, arbitrary: fc.constantFrom(...LEASES.slice(1)).map((id): EtcdCommand => ({ revoke: { id } })) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom(...KEYS.slice(0, 3))
      .map((key): EtcdCommand => ({ txn: { compare: [], success: [{ del: { key, prevKv: true } }], failure: [] } })),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(...KEYS.slice(0, 3)).map((key): EtcdCommand => ({
      txn: {
        compare: [{ key, target: 'VERSION', result: 'GREATER', value: 1 }],
        success: [{ range: { key: '/', end: '0' } }],
        failure: [{ put: { key, value: Buffer.from('t'), lease: '0' } }],
      },
    })),
  },
);

/** Every version of every key the store holds, at each revision up to its current one. */
async function history(store: MvccStore): Promise<unknown[]> {
  const out: unknown[] = [];
  for (let rev = 1; rev <= store.currentRevision(); rev++) {
    const { kvs } = await store.range('', { atRevision: rev });
    out.push(kvs.map((kv) => [kv.key, Buffer.from(kv.value).toString('hex'), kv.createRevision, kv.modRevision, kv.version]));
  }
  return out;
}

describe('EtcdApplier fast path for KV.Put requests', () => {
  it('answers and writes what the general path does', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(command, fc.boolean()), { minLength: 1, maxLength: 24 }), async (run) => {
        const dirs = await Promise.all([0, 1].map(() => mkdtemp(join(tmpdir(), 'etcd-fast-put-'))));
        const stores = await Promise.all(dirs.map((d) => MvccStore.open(d)));
        try {
          const appliers = [new EtcdApplier(stores[0]!, () => 1_000), new EtcdApplier(stores[1]!, () => 1_000, { putFastPath: false })];
          // Entries end a group where the run says so: groups of one and of several.
          const groups: EtcdCommand[][] = [[]];
          for (const [cmd, cut] of run) {
            groups.at(-1)!.push(decodeEtcdCommand(encodeEtcdCommand(cmd)));
            if (cut) groups.push([]);
          }
          let index = 0;
          for (const group of groups.filter((g) => g.length > 0)) {
            const entries = group.map((cmd) => ({ index: ++index, cmd }));
            const [fast, general] = await Promise.all(appliers.map((a) => a.applyMany(entries)));
            expect(fast).toEqual(general);
          }
          for (const key of KEYS) expect(appliers[0]!.leaseOf(key)).toBe(appliers[1]!.leaseOf(key));
          expect(appliers[0]!.leaseIds().sort()).toEqual(appliers[1]!.leaseIds().sort());
          expect(await history(stores[0]!)).toEqual(await history(stores[1]!));
        } finally {
          await Promise.all(stores.map((s) => s.close()));
          await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
        }
      }),
      { numRuns: 60 },
    );
  }, 120_000);
});
