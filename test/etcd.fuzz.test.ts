/**
 * Generated requests against the etcd endpoint of a real node: every unary method that reads or
 * writes data (KV, Lease, the Lock and Election services, the read-only parts of Cluster and
 * Maintenance, Auth) gets request messages built from its type in proto/etcd, with field
 * values drawn towards the edges (negative, zero and 64-bit revisions and ids, empty and binary
 * keys, the server's own key prefixes, enum numbers outside the enum, nested Txns, several
 * members of a oneof at once), and undecodable bytes besides. What must hold:
 *
 * - every answer is a gRPC status the method may give for bad input, never UNKNOWN (a handler
 *   that threw where it should have refused) nor INTERNAL for a message that decodes;
 * - the node stays up and serves: after the run an etcd Put and Range round trip, `/readyz`
 *   answers 200, the member list still names the node, and no watcher is left behind.
 *
 * Watch and LeaseKeepAlive get streams of up to five generated requests, each read for 0.1 s:
 * the server may end one only with such a status, and every answer must decode.
 * Lock and Campaign wait for their lock or election: they get fewer requests, each cut off after
 * 0.5 s, and leases 1 to 3 (ids the generator often picks) exist while they run.
 *
 * The runs come from a fixed seed (KAPI_FUZZ_SEED picks another; KAPI_FUZZ_RUNS the number of
 * requests per method), so a failure replays exactly; fast-check shrinks it to a small request.
 */
import { dirname, join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as fc from 'fast-check';
import protobuf from 'protobufjs';
import { findProtoFile } from '@app/raft';
import { getFreePorts, metricValue, request, startServer, waitFor, type ServerHandle } from './support/server.js';

const RUNS = Number(process.env.KAPI_FUZZ_RUNS) || 150;
const SEED = Number(process.env.KAPI_FUZZ_SEED) || 42;

const protoDir = dirname(findProtoFile('etcd/rpc.proto'));
const root = protobuf.loadSync(['rpc.proto', 'v3lock.proto', 'v3election.proto'].map((f) => join(protoDir, f)));

/** Keys that mean something to the server, and some that mean nothing. */
const KEYS = [
  '',
  '\0',
  'a',
  'foo',
  '/registry/',
  '/registry/configmaps/default/x',
  '/kapi/',
  '/kapi/cluster/members/',
  '/kapi/cluster/alarms/',
  '\x01etcd/',
  '\x01etcd/lease/1',
  '\xff',
];

const bytesArb: fc.Arbitrary<Uint8Array> = fc.oneof(
  fc.constantFrom(...KEYS).map((k) => Buffer.from(k, 'latin1')),
  fc.tuple(fc.constantFrom(...KEYS), fc.string({ maxLength: 6 })).map(([k, s]) => Buffer.from(k + s, 'latin1')),
  fc.uint8Array({ maxLength: 24 }),
);
const int64Arb = (unsigned: boolean): fc.Arbitrary<string> =>
  fc
    .oneof(
      fc.constantFrom(0n, 1n, 2n, 3n, -1n, 2n ** 31n, 2n ** 53n + 1n, 2n ** 63n - 1n, -(2n ** 63n)),
      fc.bigInt({ min: -5n, max: 50n }),
      fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
    )
    .map((n) => String(unsigned && n < 0n ? -n : n));

/** Values of one field's type (a message nested at most `depth` more levels). */
function fieldArb(f: protobuf.Field, depth: number): fc.Arbitrary<unknown> {
  switch (f.type) {
    case 'int64':
    case 'sint64':
    case 'sfixed64':
      return int64Arb(false);
    case 'uint64':
    case 'fixed64':
      return int64Arb(true);
    case 'int32':
    case 'sint32':
    case 'sfixed32':
      return fc.oneof(fc.integer({ min: -3, max: 20 }), fc.integer());
    case 'uint32':
    case 'fixed32':
      return fc.nat();
    case 'bool':
      return fc.boolean();
    case 'string':
      return fc.oneof(fc.constantFrom('', 'root', 'n1', 'x'), fc.string({ maxLength: 12 }));
    case 'bytes':
      return bytesArb;
    default:
      break;
  }
  const t = f.resolvedType;
  if (t instanceof protobuf.Enum) return fc.oneof(fc.constantFrom(...Object.values(t.values)), fc.integer({ min: -2, max: 40 }));
  if (t instanceof protobuf.Type) return depth > 0 ? messageArb(t, depth - 1) : fc.constant({});
  throw new Error(`no generator for field ${f.fullName} of type ${f.type}`);
}

/** Objects of `type` (protobufjs fromObject form) with any subset of its fields set. */
function messageArb(type: protobuf.Type, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const fields: Record<string, fc.Arbitrary<unknown>> = {};
  for (const f of type.fieldsArray) {
    f.resolve();
    const one = fieldArb(f, depth);
    fields[f.name] = f.repeated ? fc.array(one, { maxLength: 3 }) : one;
  }
  return fc.record(fields, { requiredKeys: [] });
}

/** A request of `type` on the wire: several members of a oneof may be set (the last one counts). */
function encoded(type: protobuf.Type, depth = 3): fc.Arbitrary<Buffer> {
  return messageArb(type, depth).map((o) => {
    const w = protobuf.Writer.create();
    // Each field on its own, so that members of one oneof are all written (fromObject keeps one).
    for (const f of type.fieldsArray) {
      if (o[f.name] === undefined) continue;
      const single = type.fromObject({ [f.name]: o[f.name] });
      type.encode(single, w);
    }
    return Buffer.from(w.finish());
  });
}

/** The unary methods fuzzed: those that change the membership, alarms or the store's files are left out. */
const METHODS: [service: string, method: string][] = [
  ['etcdserverpb.KV', 'Range'],
  ['etcdserverpb.KV', 'Put'],
  ['etcdserverpb.KV', 'DeleteRange'],
  ['etcdserverpb.KV', 'Txn'],
  ['etcdserverpb.KV', 'Compact'],
  ['etcdserverpb.Lease', 'LeaseGrant'],
  ['etcdserverpb.Lease', 'LeaseRevoke'],
  ['etcdserverpb.Lease', 'LeaseTimeToLive'],
  ['etcdserverpb.Lease', 'LeaseLeases'],
  ['etcdserverpb.Cluster', 'MemberList'],
  ['etcdserverpb.Maintenance', 'Status'],
  ['etcdserverpb.Maintenance', 'Hash'],
  ['etcdserverpb.Maintenance', 'HashKV'],
  ['etcdserverpb.Auth', 'AuthStatus'],
  ['etcdserverpb.Auth', 'Authenticate'],
  ['etcdserverpb.Auth', 'UserAdd'],
  ['etcdserverpb.Auth', 'UserList'],
  ['etcdserverpb.Auth', 'RoleGet'],
  ['v3lockpb.Lock', 'Lock'],
  ['v3lockpb.Lock', 'Unlock'],
  ['v3electionpb.Election', 'Campaign'],
  ['v3electionpb.Election', 'Proclaim'],
  ['v3electionpb.Election', 'Leader'],
  ['v3electionpb.Election', 'Resign'],
];

/**
 * Whether an answer is one the method may give. INTERNAL never (the message decodes: it would be
 * an error the handler did not expect). UNKNOWN only from the Lock and Election services, and
 * only with one of etcd's messages: etcd's own services answer every failure that way (they pass
 * on their client's errors, which gRPC sends as UNKNOWN), and the server does the same.
 */
function acceptable(service: string, code: number, details: string): boolean {
  if (code === grpc.status.INTERNAL) return false;
  if (code !== grpc.status.UNKNOWN) return true;
  const concurrency = service.startsWith('v3lockpb.') || service.startsWith('v3electionpb.');
  return concurrency && /^(etcdserver: |election: |mutex: |"leader" field must be provided$)/.test(details);
}

/** Methods that wait (for a lock, for an election): fewer runs, each cut off sooner. */
const WAITING = new Set(['Lock', 'Campaign']);

/** Methods that refuse every request here (etcd users and roles are not kept; auth is off). */
const ALWAYS_REFUSED = new Set(['Authenticate', 'UserAdd', 'RoleGet']);

describe('the etcd endpoint under generated requests', () => {
  let node: ServerHandle;
  let client: grpc.Client;
  let endpoint: string;

  beforeAll(async () => {
    const [port] = await getFreePorts(1);
    endpoint = `127.0.0.1:${port}`;
    node = await startServer({ args: ['--storage-backend', 'builtin', '--listen-client-urls', `http://${endpoint}`], readyTimeoutMs: 40_000 });
    client = new grpc.Client(endpoint, grpc.credentials.createInsecure());
  }, 60_000);

  afterAll(async () => {
    client?.close();
    await node?.cleanup();
  });

  /** One call with raw bytes both ways; resolves with the status code (OK included). */
  const call = (path: string, body: Buffer, deadlineMs = 3000): Promise<{ code: number; details: string }> =>
    new Promise((resolve) => {
      client.makeUnaryRequest(
        path,
        (b: Buffer) => b,
        (b: Buffer) => b,
        body,
        { deadline: Date.now() + deadlineMs },
        (e) => resolve(e ? { code: e.code, details: e.details } : { code: grpc.status.OK, details: '' }),
      );
    });

  const pathOf = (service: string, method: string): string => `/${service}/${method}`;
  const requestType = (service: string, method: string): protobuf.Type => {
    const m = root.lookupService(service).methods[method]!;
    m.resolve();
    return m.resolvedRequestType!;
  };

  it.each(METHODS)(
    '%s/%s answers every generated request with a status it may give, never one it should not',
    async (service, method) => {
      const path = pathOf(service, method);
      const codes = new Map<number, number>();
      // Leases the generated ids often name (1, 2, 3), live for the whole run: with them some
      // requests take a lock or win an election rather than failing on a missing lease.
      const granted: number[] = [];
      for (const id of WAITING.has(method) ? [1, 2, 3] : []) {
        await call(pathOf('etcdserverpb.Lease', 'LeaseRevoke'), Buffer.from(root.lookupType('etcdserverpb.LeaseRevokeRequest').encode({ ID: id }).finish()));
        const grant = root.lookupType('etcdserverpb.LeaseGrantRequest').encode({ ID: id, TTL: 600 }).finish();
        granted.push((await call(pathOf('etcdserverpb.Lease', 'LeaseGrant'), Buffer.from(grant))).code);
      }
      expect(granted.every((c) => c === grpc.status.OK)).toBe(true);
      await fc.assert(
        fc.asyncProperty(encoded(requestType(service, method)), async (body) => {
          const { code, details } = await call(path, body, WAITING.has(method) ? 500 : 3000);
          codes.set(code, (codes.get(code) ?? 0) + 1);
          if (!acceptable(service, code, details)) throw new Error(`${path} answered ${grpc.status[code]} "${details}" to ${body.toString('hex')}`);
        }),
        { numRuns: WAITING.has(method) ? Math.ceil(RUNS / 3) : RUNS, seed: SEED, endOnFailure: false },
      );
      // The generator reaches past the refusals: some requests are served (none where every
      // request is refused).
      expect((codes.get(grpc.status.OK) ?? 0) > 0).toBe(!ALWAYS_REFUSED.has(method));
    },
    120_000,
  );

  /**
   * A stream that sends `bodies`, reads for `ms`, then cancels: the status the server ended it
   * with before that (undefined: still open), and its answers.
   */
  const stream = (path: string, bodies: Buffer[], ms = 100): Promise<{ status?: grpc.StatusObject; answers: Buffer[] }> =>
    new Promise((resolve) => {
      const s = client.makeBidiStreamRequest(
        path,
        (b: Buffer) => b,
        (b: Buffer) => b,
      );
      const answers: Buffer[] = [];
      let status: grpc.StatusObject | undefined;
      s.on('data', (b: Buffer) => answers.push(b));
      s.on('error', () => undefined);
      s.on('status', (st: grpc.StatusObject) => (status ??= st));
      for (const b of bodies) s.write(b);
      setTimeout(() => {
        const ended = status;
        s.cancel();
        resolve({ status: ended, answers });
      }, ms);
    });

  it.each([
    ['etcdserverpb.Watch', 'Watch', 'WatchResponse'],
    ['etcdserverpb.Lease', 'LeaseKeepAlive', 'LeaseKeepAliveResponse'],
  ])(
    '%s/%s takes streams of generated requests: answers that decode, and no status it should not give',
    async (service, method, answerType) => {
      const path = pathOf(service, method);
      const answer = root.lookupType(`etcdserverpb.${answerType}`);
      let answered = 0;
      await fc.assert(
        fc.asyncProperty(fc.array(encoded(requestType(service, method)), { minLength: 1, maxLength: 5 }), async (bodies) => {
          const { status, answers } = await stream(path, bodies);
          if (status && !acceptable(service, status.code, status.details)) {
            throw new Error(`${path} ended with ${grpc.status[status.code]} "${status.details}" after ${bodies.map((b) => b.toString('hex')).join(' ')}`);
          }
          for (const a of answers) answer.decode(a);
          answered += answers.length;
        }),
        { numRuns: Math.ceil(RUNS / 3), seed: SEED, endOnFailure: false },
      );
      expect(answered).toBeGreaterThan(0);
    },
    120_000,
  );

  it('answers bytes that do not decode as the request with INTERNAL and goes on serving', async () => {
    // A field header with wire type 7 (undefined), a length past the end, a truncated varint.
    for (const bad of ['0f', '0aff01', '08ffffff']) {
      const r = await call(pathOf('etcdserverpb.KV', 'Put'), Buffer.from(bad, 'hex'));
      expect(r.code).toBe(grpc.status.INTERNAL);
      expect(r.details).toMatch(/cannot parse the request/);
    }
  });

  it('still serves after the run: an etcd Put and Range, /readyz, and the member list', async () => {
    const put = root.lookupType('etcdserverpb.PutRequest');
    const range = root.lookupType('etcdserverpb.RangeRequest');
    const key = Buffer.from('/fuzz/after');
    const p = await call(pathOf('etcdserverpb.KV', 'Put'), Buffer.from(put.encode({ key, value: Buffer.from('ok') }).finish()));
    expect(p.code).toBe(grpc.status.OK);
    const got = await new Promise<Buffer>((resolve, reject) =>
      client.makeUnaryRequest(
        pathOf('etcdserverpb.KV', 'Range'),
        (b: Buffer) => b,
        (b: Buffer) => b,
        Buffer.from(range.encode({ key }).finish()),
        (e, v) => (e ? reject(e) : resolve(v!)),
      ),
    );
    const kvs = (root.lookupType('etcdserverpb.RangeResponse').decode(got) as unknown as { kvs: { value: Uint8Array }[] }).kvs;
    expect(Buffer.from(kvs[0]!.value).toString()).toBe('ok');
    expect((await request(node, 'GET', '/readyz')).status).toBe(200);
    // Every watcher of the cancelled Watch streams is released.
    await waitFor('no etcd watchers left', async () => (await metricValue(node, 'etcd_debugging_mvcc_watcher_total')) === 0, 10_000);
    const members = await request(node, 'GET', '/cluster/members');
    expect(members.status).toBe(200);
    expect(JSON.parse(members.body).members.length).toBe(1);
  });
});
