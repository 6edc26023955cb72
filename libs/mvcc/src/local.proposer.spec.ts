import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalProposer } from './local.proposer.js';
import { MvccStore } from './mvcc.store.js';
import type { MvccEvent, TxnCommand } from './mvcc.types.js';

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);

describe('LocalProposer (group commit)', () => {
  let dir: string;
  let store: MvccStore;
  let proposer: LocalProposer;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'proposer-'));
    store = await MvccStore.open(dir);
    proposer = new LocalProposer(store);
  });
  afterEach(async () => {
    await proposer.close();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('resolves each concurrent proposal with its own result, in fewer fsynced batches', async () => {
    const events: MvccEvent[] = [];
    store.subscribe((e) => events.push(e));
    const n = 200;
    const results = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        proposer.propose({ compares: [{ key: `/k/${i}`, target: 'absent' }], success: [{ type: 'put', key: `/k/${i}`, value: enc(String(i)) }], failure: [] }),
      ),
    );
    expect(results.every((r) => r.succeeded)).toBe(true);
    const revisions = results.map((r) => r.revision);
    expect(new Set(revisions).size).toBe(n);
    expect(Math.max(...revisions)).toBe(n);
    // Proposal i wrote key i at its own revision.
    for (let i = 0; i < n; i++) expect(results[i]!.results[0]!.current?.key).toBe(`/k/${i}`);
    expect(proposer.batches).toBeLessThan(n);
    expect(store.appliedIndex()).toBe(n);
    expect(events.map((e) => e.revision)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    expect((await store.range('/k/')).kvs).toHaveLength(n);
  });

  it('serializes contending compare-and-swaps: exactly one winner per revision', async () => {
    await proposer.propose({ compares: [], success: [{ type: 'put', key: '/ctr', value: enc('0') }], failure: [] });
    // 50 writers all CAS against modRevision 1 in the same batch window: one wins.
    const cas = (v: string): TxnCommand => ({
      compares: [{ key: '/ctr', target: 'modRevision', value: 1 }],
      success: [{ type: 'put', key: '/ctr', value: enc(v) }],
      failure: [{ type: 'get', key: '/ctr' }],
    });
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => proposer.propose(cas(String(i)))));
    const winners = results.filter((r) => r.succeeded);
    expect(winners).toHaveLength(1);
    for (const r of results.filter((x) => !x.succeeded)) expect(r.results[0]!.current?.modRevision).toBe(2);
    expect((await store.get('/ctr'))?.version).toBe(2);
  });

  it('rejects malformed and post-close proposals with typed errors', async () => {
    await expect(proposer.propose({ compares: [], success: [{ type: 'put', key: '', value: enc('x') }], failure: [] })).rejects.toMatchObject({
      code: 'InvalidCommand',
    });
    await proposer.close();
    await expect(proposer.propose({ compares: [], success: [], failure: [] })).rejects.toMatchObject({ code: 'Closed' });
  });

  it('acknowledged writes are on disk after reopen', async () => {
    await Promise.all([1, 2, 3].map((i) => proposer.propose({ compares: [], success: [{ type: 'put', key: `/d/${i}`, value: enc('v') }], failure: [] })));
    await proposer.close();
    await store.close();
    store = await MvccStore.open(dir);
    proposer = new LocalProposer(store);
    expect(store.appliedIndex()).toBe(3);
    expect((await store.range('/d/')).kvs).toHaveLength(3);
    const r = await proposer.propose({ compares: [], success: [{ type: 'put', key: '/d/4', value: enc('v') }], failure: [] });
    expect(r.revision).toBe(4);
    expect(store.appliedIndex()).toBe(4);
  });
});
