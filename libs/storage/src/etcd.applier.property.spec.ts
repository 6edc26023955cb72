/**
 * The applier's fast path for KV.Put requests against its general path: random runs of etcd
 * commands (Puts with every flag and lease, lease grants and revocations, deletions, Txns that
 * read and compare), applied in random groups to two real stores, one applier with the fast
 * path and one without, must give the same answers, the same lease table and the same store at
 * every revision. And packed Puts against the same Puts one entry each: runs of lone Puts
 * packed into one Raft entry must give each Put the answer, and the store the revisions, that
 * entries of their own give.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { MvccStore } from '@app/mvcc';
import { EtcdApplier } from './etcd.applier.js';
import { decodeEtcdCommand, encodeEtcdCommand, encodeEtcdPuts, lonePut, type EtcdCommand, type EtcdResult } from './etcd.command.js';
import { MvccStateMachine, type EtcdPackedResult, type EtcdTxnResult } from './mvcc.state-machine.js';

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

describe('packed Puts', () => {
  it('answer and write what the same Puts do as entries of their own', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(command, fc.boolean()), { minLength: 1, maxLength: 30 }), async (run) => {
        const dirs = await Promise.all([0, 1].map(() => mkdtemp(join(tmpdir(), 'etcd-packed-put-'))));
        const stores = await Promise.all(dirs.map((d) => MvccStore.open(d)));
        try {
          const [packed, single] = stores.map((s) => new MvccStateMachine(s));
          // Consecutive lone Puts go into one pack until the run cuts it; anything else alone.
          const entries: EtcdCommand[][] = [];
          let open: EtcdCommand[] | undefined;
          for (const [cmd, cut] of run) {
            if (!lonePut(cmd)) {
              open = undefined;
              entries.push([cmd]);
              continue;
            }
            if (!open) entries.push((open = []));
            open.push(cmd);
            if (cut) open = undefined;
          }
          const answers = async (sm: MvccStateMachine, list: EtcdCommand[][], pack: boolean): Promise<EtcdResult[]> => {
            const out: Promise<EtcdResult[]>[] = [];
            let index = 0;
            for (const cmds of list) {
              const data = pack && cmds.length > 1 ? encodeEtcdPuts(cmds) : encodeEtcdCommand(cmds[0]!);
              const { deferred } = await sm.apply({ index: ++index, term: 1, data });
              out.push(deferred.then((r) => (cmds.length > 1 && pack ? (r as EtcdPackedResult).etcdPuts : [(r as EtcdTxnResult).etcd])));
            }
            await sm.waitApplied();
            return (await Promise.all(out)).flat();
          };
          const a = await answers(packed!, entries, true);
          const b = await answers(
            single!,
            entries.flat().map((c) => [c]),
            false,
          );
          expect(a).toEqual(b);
          expect(stores[0]!.appliedIndex()).toBe(entries.length);
          for (const key of KEYS) expect(packed!.etcd.leaseOf(key)).toBe(single!.etcd.leaseOf(key));
          expect(await history(stores[0]!)).toEqual(await history(stores[1]!));
          // A replay of the packed entries (their index is applied) changes nothing.
          const before = await history(stores[0]!);
          const last = entries.at(-1)!;
          const data = last.length > 1 ? encodeEtcdPuts(last) : encodeEtcdCommand(last[0]!);
          await (
            await packed!.apply({ index: entries.length, term: 1, data })
          ).deferred;
          await packed!.waitApplied();
          expect(await history(stores[0]!)).toEqual(before);
        } finally {
          await Promise.all(stores.map((s) => s.close()));
          await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
        }
      }),
      { numRuns: 60 },
    );
  }, 120_000);
});
