/**
 * etcd's Lock and Election services on one of our nodes against etcd 3.4 itself (Debian's
 * etcd-server): the same script of Lock, Unlock, Campaign, Proclaim, Leader, Observe and Resign
 * calls runs on both through grpc-js, and the two transcripts (answers and errors, keys with
 * their lease ids named, values, what an Observe stream saw) must be the same. The script
 * checks the recipes' guarantees on each side as it goes: one holder of a lock at a time, a
 * waiter's turn when the holder unlocks or its lease goes, a candidate that leads only when the
 * leader resigns, a waiter whose deadline passed leaving no key behind. The JSON gateway's
 * paths of the same calls are checked on our node.
 */
import { dirname } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { findProtoFile } from '@app/raft';
import { startEtcd, type EtcdCluster } from './support/etcd.js';
import { prerequisite } from './support/prereq.js';
import { delay, getFreePorts, startServer, type ServerHandle } from './support/server.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Msg = Record<string, any>;

const files = ['etcd/rpc.proto', 'etcd/v3lock.proto', 'etcd/v3election.proto'].map((f) => findProtoFile(f));
const def = protoLoader.loadSync(files, { keepCase: true, longs: String, enums: String, defaults: true, oneofs: false, includeDirs: [dirname(files[0]!)] });
const loaded = grpc.loadPackageDefinition(def) as unknown as {
  etcdserverpb: Record<'KV' | 'Lease', grpc.ServiceClientConstructor>;
  v3lockpb: { Lock: grpc.ServiceClientConstructor };
  v3electionpb: { Election: grpc.ServiceClientConstructor };
};

type Answer = { ok: Msg } | { error: { code: number; details: string } };

interface Side {
  kv: grpc.Client;
  lease: grpc.Client;
  lock: grpc.Client;
  election: grpc.Client;
}

function side(addr: string): Side {
  const creds = grpc.credentials.createInsecure();
  return {
    kv: new loaded.etcdserverpb.KV(addr, creds),
    lease: new loaded.etcdserverpb.Lease(addr, creds),
    lock: new loaded.v3lockpb.Lock(addr, creds),
    election: new loaded.v3electionpb.Election(addr, creds),
  };
}

function call(client: grpc.Client, method: string, req: Msg, deadlineMs = 20_000): Promise<Answer> {
  return new Promise((resolve) =>
    (client as unknown as Record<string, (r: Msg, o: grpc.CallOptions, cb: (e: grpc.ServiceError | null, v: Msg) => void) => void>)[method]!.call(
      client,
      req,
      { deadline: Date.now() + deadlineMs },
      (e, v) => resolve(e ? { error: { code: e.code, details: e.details } } : { ok: v }),
    ),
  );
}

async function ok(client: grpc.Client, method: string, req: Msg): Promise<Msg> {
  const a = await call(client, method, req);
  if ('error' in a) throw new Error(`${method}: ${a.error.code} ${a.error.details}`);
  return a.ok;
}

/** Resolves true when `p` settles within `ms`. */
async function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  return Promise.race([p.then(() => true), delay(ms).then(() => false)]);
}

/**
 * The script, on one side: returns its transcript. Keys are written with the names of their
 * leases (`<A>`), so that both sides' transcripts compare although lease ids differ.
 */
async function script(s: Side, base: string): Promise<unknown[]> {
  const out: unknown[] = [];
  const names = new Map<string, string>();
  const grant = async (name: string): Promise<string> => {
    const id = String((await ok(s.lease, 'LeaseGrant', { TTL: 30 })).ID);
    names.set(BigInt(id).toString(16), name);
    return id;
  };
  const text = (b: Buffer | string): string => {
    const t = Buffer.from(b).toString('utf8').replace(base, '');
    return t.replace(/\/([0-9a-f]+)$/, (m, hex: string) => (names.has(hex) ? `/<${names.get(hex)}>` : '/<other lease>'));
  };
  /** An answer as the transcript holds it: the error, or the fields named (keys and values as text). */
  const note = (step: string, a: Answer, pick: (m: Msg) => unknown = () => 'ok'): void => {
    out.push([step, 'error' in a ? a.error : pick(a.ok)]);
  };
  /** The keys under `p`, as text, sorted (their order on the store follows the random lease ids). */
  const keysUnder = async (p: string): Promise<string[]> =>
    ((await ok(s.kv, 'Range', { key: Buffer.from(base + p), range_end: Buffer.from(base + p.slice(0, -1) + '0') })).kvs as Msg[])
      .map((kv) => text(kv.key as Buffer))
      .sort();

  // Lock.
  const A = await grant('A');
  const B = await grant('B');
  const C = await grant('C');
  const lockName = Buffer.from(base + 'lock');
  const a1 = await call(s.lock, 'Lock', { name: lockName, lease: A });
  note('lock A', a1, (m) => ({ key: text(m.key), header: m.header !== null }));
  note('lock A again (the same hold)', await call(s.lock, 'Lock', { name: lockName, lease: A }), (m) => text(m.key));
  const b1 = call(s.lock, 'Lock', { name: lockName, lease: B });
  expect(await settlesWithin(b1, 500)).toBe(false);
  let waiters: string[] = [];
  for (let i = 0; i < 100 && waiters.length < 2; i++) {
    waiters = await keysUnder('lock/');
    if (waiters.length < 2) await delay(50);
  }
  out.push(['waiters', waiters]);
  note('unlock A', await call(s.lock, 'Unlock', { key: ('ok' in a1 ? a1.ok.key : '') as Buffer }));
  note('lock B after the unlock', await b1, (m) => text(m.key));
  // A waiter whose deadline passes leaves: its key goes with it, and B still holds the lock.
  const late = await call(s.lock, 'Lock', { name: lockName, lease: C }, 600);
  // Which error comes is a race on etcd (its own deadline answers UNKNOWN, the client's is
  // DEADLINE_EXCEEDED), so only the failure is compared.
  out.push(['lock C with a short deadline', 'error' in late ? 'failed' : 'acquired']);
  let left: string[] = [];
  for (let i = 0; i < 40; i++) {
    left = await keysUnder('lock/');
    if (left.length === 1) break;
    await delay(100);
  }
  out.push(['after the deadline', left]);
  // The holder's lease goes: the next waiter holds the lock.
  const a2 = call(s.lock, 'Lock', { name: lockName, lease: A });
  expect(await settlesWithin(a2, 300)).toBe(false);
  await ok(s.lease, 'LeaseRevoke', { ID: B });
  note('lock A after B revoked', await a2, (m) => text(m.key));
  note('lock with a lease that does not exist', await call(s.lock, 'Lock', { name: Buffer.from(base + 'other'), lease: '123456789' }));
  const own = await call(s.lock, 'Lock', { name: Buffer.from(base + 'own'), lease: 0 });
  note('lock without a lease', own, (m) => text(m.key));
  if ('ok' in own) {
    const hex = Buffer.from(own.ok.key as Buffer)
      .toString()
      .split('/')
      .pop()!;
    const ttl = await ok(s.lease, 'LeaseTimeToLive', { ID: BigInt('0x' + hex).toString() });
    out.push(['its lease', { grantedTTL: ttl.grantedTTL }]);
  }

  // Election.
  const election = Buffer.from(base + 'election');
  note('leader of an empty election', await call(s.election, 'Leader', { name: election }));
  const seen: string[] = [];
  const observer = (s.election as unknown as { Observe(r: Msg): grpc.ClientReadableStream<Msg> }).Observe({ name: election });
  observer.on('data', (r: Msg) => seen.push(Buffer.from(r.kv.value as Buffer).toString()));
  observer.on('error', () => undefined);
  const one = await call(s.election, 'Campaign', { name: election, lease: C, value: Buffer.from('one') });
  note('campaign C', one, (m) => ({
    name: text(m.leader.name),
    key: text(m.leader.key),
    lease: names.get(BigInt(m.leader.lease).toString(16)),
    header: m.header !== null,
  }));
  const leaderC = 'ok' in one ? one.ok.leader : undefined;
  note('leader', await call(s.election, 'Leader', { name: election }), (m) => ({
    key: text(m.kv.key),
    value: text(m.kv.value),
    rev: m.kv.create_revision === leaderC?.rev,
  }));
  const two = call(s.election, 'Campaign', { name: election, lease: A, value: Buffer.from('two') });
  expect(await settlesWithin(two, 500)).toBe(false);
  note('proclaim', await call(s.election, 'Proclaim', { leader: leaderC, value: Buffer.from('uno') }));
  note('leader after proclaim', await call(s.election, 'Leader', { name: election }), (m) => text(m.kv.value));
  note(
    'proclaim with a stale revision',
    await call(s.election, 'Proclaim', { leader: { ...leaderC, rev: String(Number(leaderC?.rev) - 1) }, value: Buffer.from('x') }),
  );
  note('proclaim without a leader key', await call(s.election, 'Proclaim', { value: Buffer.from('x') }));
  note('resign without a leader key', await call(s.election, 'Resign', {}));
  note('resign C', await call(s.election, 'Resign', { leader: leaderC }));
  const won = await two;
  note('campaign A after C resigned', won, (m) => ({ key: text(m.leader.key), lease: names.get(BigInt(m.leader.lease).toString(16)) }));
  // The observer sees the new leader before its value changes (else it could read the newer value first).
  for (let i = 0; i < 100 && !seen.includes('two'); i++) await delay(50);
  // Campaigning again with the leader's own lease keeps the leadership and posts the new value.
  note('campaign A again', await call(s.election, 'Campaign', { name: election, lease: A, value: Buffer.from('deux') }), (m) => text(m.leader.key));
  note('leader after campaigning again', await call(s.election, 'Leader', { name: election }), (m) => text(m.kv.value));
  for (let i = 0; i < 40 && seen.length < 4; i++) await delay(50);
  observer.cancel();
  out.push(['observed', seen]);
  if ('ok' in won) note('resign A', await call(s.election, 'Resign', { leader: won.ok.leader }));
  note('leader after resigning', await call(s.election, 'Leader', { name: election }));
  return out;
}

describe('etcd Lock and Election services against etcd 3.4', () => {
  let have = false;
  let etcd: EtcdCluster | undefined;
  let node: ServerHandle | undefined;
  let port = 0;
  const clients: Side[] = [];

  beforeAll(async () => {
    have = prerequisite('etcd', 'the etcd Lock and Election services compared with etcd 3.4 (test/etcd.concurrency.test.ts)');
    [port] = await getFreePorts(1);
    const started = await Promise.all([
      have ? startEtcd({ members: 1 }) : Promise.resolve(undefined),
      startServer({ args: ['--storage-backend', 'builtin', '--listen-client-urls', `http://127.0.0.1:${port}`], readyTimeoutMs: 40_000 }),
    ]);
    [etcd, node] = started;
  }, 90_000);

  afterAll(async () => {
    for (const c of clients) for (const x of Object.values(c)) (x as grpc.Client).close();
    await node?.cleanup();
    await etcd?.cleanup();
  });

  it('answers the script as etcd does, and keeps its guarantees', async () => {
    const ours = side(`127.0.0.1:${port}`);
    clients.push(ours);
    const base = `/conc/${process.pid}/`;
    const mine = await script(ours, base);
    // What the script must show on our node whatever etcd says (errors as etcd's text).
    expect(mine).toEqual([
      ['lock A', { key: 'lock/<A>', header: true }],
      ['lock A again (the same hold)', 'lock/<A>'],
      ['waiters', ['lock/<A>', 'lock/<B>']],
      ['unlock A', 'ok'],
      ['lock B after the unlock', 'lock/<B>'],
      ['lock C with a short deadline', 'failed'],
      ['after the deadline', ['lock/<B>']],
      ['lock A after B revoked', 'lock/<A>'],
      // etcd's services answer every error as UNKNOWN with its text.
      ['lock with a lease that does not exist', { code: grpc.status.UNKNOWN, details: 'etcdserver: requested lease not found' }],
      ['lock without a lease', 'own/<other lease>'],
      ['its lease', { grantedTTL: '60' }],
      ['leader of an empty election', { code: grpc.status.UNKNOWN, details: 'election: no leader' }],
      ['campaign C', { name: 'election', key: 'election/<C>', lease: 'C', header: true }],
      ['leader', { key: 'election/<C>', value: 'one', rev: true }],
      ['proclaim', 'ok'],
      ['leader after proclaim', 'uno'],
      ['proclaim with a stale revision', { code: grpc.status.UNKNOWN, details: 'election: not leader' }],
      ['proclaim without a leader key', { code: grpc.status.UNKNOWN, details: '"leader" field must be provided' }],
      ['resign without a leader key', { code: grpc.status.UNKNOWN, details: '"leader" field must be provided' }],
      ['resign C', 'ok'],
      ['campaign A after C resigned', { key: 'election/<A>', lease: 'A' }],
      ['campaign A again', 'election/<A>'],
      ['leader after campaigning again', 'deux'],
      ['observed', ['one', 'uno', 'two', 'deux']],
      ['resign A', 'ok'],
      ['leader after resigning', { code: grpc.status.UNKNOWN, details: 'election: no leader' }],
    ]);
    if (!etcd) return;
    const theirs = side(etcd.members[0]!.clientURL.replace(/^http:\/\//, ''));
    clients.push(theirs);
    expect(await script(theirs, base)).toEqual(mine);
  }, 120_000);

  it('serves the same calls on the JSON gateway, Observe as a stream of JSON lines', async () => {
    const url = `http://127.0.0.1:${port}`;
    const post = async (path: string, body: Msg): Promise<{ status: number; json: Msg }> => {
      const r = await fetch(url + path, { method: 'POST', body: JSON.stringify(body) });
      return { status: r.status, json: (await r.json()) as Msg };
    };
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const name = b64(`/gw-conc/${process.pid}/e`);
    const lease = (await post('/v3/lease/grant', { TTL: 30 })).json.ID as string;
    const locked = await post('/v3/lock/lock', { name: b64(`/gw-conc/${process.pid}/l`), lease });
    expect(locked.status).toBe(200);
    expect(Buffer.from(locked.json.key as string, 'base64').toString()).toBe(`/gw-conc/${process.pid}/l/${BigInt(lease).toString(16)}`);
    expect((await post('/v3/lock/unlock', { key: locked.json.key })).status).toBe(200);
    const noLeader = await post('/v3/election/leader', { name });
    expect(noLeader.status).toBe(500);
    expect(noLeader.json).toMatchObject({ code: grpc.status.UNKNOWN, message: 'election: no leader' });
    // Observe: the response stays open and carries one JSON line per leader value.
    const controller = new AbortController();
    const observed = await fetch(url + '/v3/election/observe', { method: 'POST', body: JSON.stringify({ name }), signal: controller.signal });
    const campaign = await post('/v3/election/campaign', { name, lease, value: b64('gw') });
    expect(campaign.status).toBe(200);
    expect(campaign.json.leader).toMatchObject({ name, lease });
    expect((await post('/v3/election/proclaim', { leader: campaign.json.leader, value: b64('gw2') })).status).toBe(200);
    const reader = observed.body!.getReader();
    let text = '';
    while (text.split('\n').filter((l) => l !== '').length < 2) text += new TextDecoder().decode((await reader.read()).value);
    controller.abort();
    const values = text
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => Buffer.from((JSON.parse(l) as { result: { kv: { value: string } } }).result.kv.value, 'base64').toString());
    expect(values).toEqual(['gw', 'gw2']);
    expect((await post('/v3/election/resign', { leader: campaign.json.leader })).status).toBe(200);
  }, 60_000);
});
