/**
 * etcd's Lock and Election services (docs/etcd-api.md "Lock and Election"): etcd serves them
 * beside KV as recipes over its own KV, Lease and Watch, and so do we, through the loopback
 * client (etcd.loopback.ts). The key layout is etcd's, so our services, etcd's and the
 * client-side recipes (etcdctl lock, etcdctl elect, clientv3/concurrency) share locks and
 * elections:
 * - a holder or candidate is the key `<name>/<lease id in hex>`, written with its lease; the one
 *   with the lowest create revision under `<name>/` holds the lock or leads;
 * - a waiter watches the deletion of the newest key created before its own, until none is left;
 * - a request without a lease gets one of 60 s that nothing keeps alive (etcd's session default).
 * Every error travels with code UNKNOWN and etcd's text, as from etcd's services.
 */
import { status as GrpcStatus } from '@grpc/grpc-js';
import type { ServerWritableCall, ServiceHandlers, UnaryCall } from '@app/grpc';
import { EtcdApiError, num, toServiceError, type Msg } from './etcd.convert.js';
import type { EtcdLoopback, LoopbackWatch } from './etcd.loopback.js';

const KV = 'etcdserverpb.KV';

/** The TTL of a lease granted for a request that names none (etcd's session default). */
const SESSION_TTL_SECONDS = 60;

/** How often a waiting call checks whether its client went away. */
const CANCEL_POLL_MS = 250;

export const ERR_NOT_LEADER = 'election: not leader';
export const ERR_NO_LEADER = 'election: no leader';
export const ERR_MISSING_LEADER = '"leader" field must be provided';
export const ERR_SESSION_EXPIRED = 'mutex: session is expired';

/** A waiting call whose client went away. */
class Cancelled extends EtcdApiError {
  constructor() {
    super(GrpcStatus.CANCELLED, 'context canceled');
  }
}

const unknown = (message: string) => new EtcdApiError(GrpcStatus.UNKNOWN, message);

/** The first key after every key with prefix `p` (etcd's prefix range end); "\0" when there is none. */
export function prefixEnd(p: Buffer): Buffer {
  const end = Buffer.from(p);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i]! < 0xff) {
      end[i]!++;
      return end.subarray(0, i + 1);
    }
  }
  return Buffer.from([0]);
}

/** The key of lease `lease` (decimal int64) under prefix `pfx`. */
function leaseKey(pfx: Buffer, lease: string): Buffer {
  return Buffer.concat([pfx, Buffer.from(BigInt(lease).toString(16))]);
}

/** A Range of the key under `pfx` created first (etcd's WithFirstCreate). */
function firstCreated(pfx: Buffer): Msg {
  return { key: pfx, range_end: prefixEnd(pfx), sort_order: 'ASCEND', sort_target: 'CREATE', limit: 1 };
}

/** What the services share: KV calls, lease sessions and waits on deletions. */
class Recipes {
  constructor(private readonly loop: EtcdLoopback) {}

  txn(req: Msg): Promise<Msg> {
    return this.loop.call(KV, 'Txn', req);
  }

  range(req: Msg): Promise<Msg> {
    return this.loop.call(KV, 'Range', req);
  }

  /** The lease of a session: `lease` itself, or a new one of SESSION_TTL_SECONDS for 0. */
  async session(lease: unknown): Promise<string> {
    const id = String(lease ?? '0');
    if (id !== '0') return id;
    const r = await this.loop.call('etcdserverpb.Lease', 'LeaseGrant', { TTL: SESSION_TTL_SECONDS });
    return String(r.ID);
  }

  /** Resolves when `key` is deleted at or after revision `rev`; rejects when `cancelled` turns true or the watch fails. */
  waitDelete(key: Buffer, rev: number, cancelled: () => boolean): Promise<void> {
    return new Promise((resolve, reject) => {
      let poll: NodeJS.Timeout | undefined = undefined;
      // The watch may answer before loop.watch() returns it.
      const opened: { watch?: LoopbackWatch } = {};
      let finished = false;
      const done = (err?: Error): void => {
        if (finished) return;
        finished = true;
        clearInterval(poll);
        opened.watch?.close();
        if (err) reject(err);
        else resolve();
      };
      const w = this.loop.watch(
        { key, start_revision: rev },
        (r) => {
          if (r.canceled)
            return done(
              new EtcdApiError(
                r.compact_revision && num(r.compact_revision) > 0 ? GrpcStatus.OUT_OF_RANGE : GrpcStatus.UNKNOWN,
                String(r.cancel_reason || 'watch canceled'),
              ),
            );
          if ((r.events as Msg[] | undefined)?.some((e) => e.type === 'DELETE')) done();
        },
        (status) => done(new EtcdApiError(status?.code ?? GrpcStatus.UNAVAILABLE, status?.details ?? 'lost watcher waiting for delete')),
      );
      opened.watch = w;
      if (finished) return w.close();
      poll = setInterval(() => {
        if (cancelled()) done(new Cancelled());
      }, CANCEL_POLL_MS);
    });
  }

  /**
   * Waits until no key under `pfx` has a create revision at most `maxCreateRev`: the newest of
   * them is waited on, then the question is asked again. Resolves with the last Range's header.
   */
  async waitDeletes(pfx: Buffer, maxCreateRev: number, cancelled: () => boolean): Promise<Msg> {
    for (;;) {
      if (cancelled()) throw new Cancelled();
      const r = await this.range({
        key: pfx,
        range_end: prefixEnd(pfx),
        sort_order: 'DESCEND',
        sort_target: 'CREATE',
        limit: 1,
        max_create_revision: maxCreateRev,
      });
      const kvs = r.kvs as Msg[];
      if (kvs.length === 0) return r.header as Msg;
      await this.waitDelete(kvs[0]!.key as Buffer, num(r.header.revision), cancelled);
    }
  }
}

/**
 * A unary handler whose work may wait: it learns whether its client went away. Its failures,
 * those of the KV and Lease calls under it included, answer with code UNKNOWN and their text,
 * as etcd's services answer (they return their client's errors, which gRPC sends as UNKNOWN).
 */
function waiting(fn: (req: Msg, cancelled: () => boolean) => Promise<Msg>) {
  return (call: UnaryCall): void => {
    fn(call.request, () => call.cancelled).then(
      (r) => call.respond(r),
      (e: unknown) => {
        const st = toServiceError(e);
        call.fail({ code: GrpcStatus.UNKNOWN, details: st.details ?? '' });
      },
    );
  };
}

/** etcd's Lock service: Lock waits for the named lock and answers with the holder's key; Unlock deletes a key. */
export function lockService(loop: EtcdLoopback): ServiceHandlers {
  const r = new Recipes(loop);
  return {
    Lock: waiting(async (req, cancelled) => {
      const lease = await r.session(req.lease);
      const pfx = Buffer.concat([req.name as Buffer, Buffer.from('/')]);
      const myKey = leaseKey(pfx, lease);
      // Join the waiters with this lease's key (a second Lock with the same lease reuses it) and
      // read the holder in the same transaction.
      const t = await r.txn({
        compare: [{ key: myKey, target: 'CREATE', result: 'EQUAL', create_revision: 0 }],
        success: [{ request_put: { key: myKey, value: Buffer.alloc(0), lease } }, { request_range: firstCreated(pfx) }],
        failure: [{ request_range: { key: myKey } }, { request_range: firstCreated(pfx) }],
      });
      const responses = t.responses as Msg[];
      const myRev = t.succeeded ? num(t.header.revision) : num((responses[0]!.response_range.kvs as Msg[])[0]!.create_revision);
      const owner = responses[1]!.response_range.kvs as Msg[];
      if (owner.length === 0 || num(owner[0]!.create_revision) === myRev) return { header: t.header, key: myKey };
      try {
        await r.waitDeletes(pfx, myRev - 1, cancelled);
      } catch (e) {
        // The waiter leaves: its key would otherwise hold the lock for a client that is gone.
        await loop.call(KV, 'DeleteRange', { key: myKey }).catch(() => undefined);
        throw e;
      }
      // The key may have gone with its lease while this call waited: then it holds nothing.
      const mine = await r.range({ key: myKey });
      if ((mine.kvs as Msg[]).length === 0) throw unknown(ERR_SESSION_EXPIRED);
      return { header: mine.header, key: myKey };
    }),
    Unlock: waiting(async (req) => {
      const d = await loop.call(KV, 'DeleteRange', { key: req.key });
      return { header: d.header };
    }),
  };
}

/** The leader key a request names (Proclaim, Resign), or etcd's error for a request without one. */
function leaderOf(req: Msg): Msg {
  const l = req.leader as Msg | null | undefined;
  if (!l) throw unknown(ERR_MISSING_LEADER);
  return l;
}

/** etcd's Election service. */
export function electionService(loop: EtcdLoopback): ServiceHandlers {
  const r = new Recipes(loop);
  /** Puts `value` on the leader key while it is still the one created at `rev`. */
  const proclaim = async (key: Buffer, rev: number, lease: string, value: Buffer): Promise<Msg> => {
    const t = await r.txn({
      compare: [{ key, target: 'CREATE', result: 'EQUAL', create_revision: rev }],
      success: [{ request_put: { key, value, lease } }],
      failure: [],
    });
    if (!t.succeeded) throw unknown(ERR_NOT_LEADER);
    return t.header as Msg;
  };
  /** Deletes the leader key while it is still the one created at `rev`. */
  const resign = (key: Buffer, rev: number): Promise<Msg> =>
    r.txn({ compare: [{ key, target: 'CREATE', result: 'EQUAL', create_revision: rev }], success: [{ request_delete_range: { key } }], failure: [] });
  return {
    Campaign: waiting(async (req, cancelled) => {
      const lease = await r.session(req.lease);
      const name = req.name as Buffer;
      const pfx = Buffer.concat([name, Buffer.from('/')]);
      const key = leaseKey(pfx, lease);
      const value = req.value as Buffer;
      const t = await r.txn({
        compare: [{ key, target: 'CREATE', result: 'EQUAL', create_revision: 0 }],
        success: [{ request_put: { key, value, lease } }],
        failure: [{ request_range: { key } }],
      });
      let rev = num(t.header.revision);
      if (!t.succeeded) {
        // This lease campaigns already: it keeps its place and posts the new value.
        const kv = ((t.responses as Msg[])[0]!.response_range.kvs as Msg[])[0]!;
        rev = num(kv.create_revision);
        if (!Buffer.from(kv.value as Buffer).equals(value)) {
          try {
            await proclaim(key, rev, lease, value);
          } catch (e) {
            await resign(key, rev).catch(() => undefined);
            throw e;
          }
        }
      }
      try {
        await r.waitDeletes(pfx, rev - 1, cancelled);
      } catch (e) {
        // A candidate whose client went away withdraws; one whose wait failed otherwise stays.
        if (e instanceof Cancelled) await resign(key, rev).catch(() => undefined);
        throw e;
      }
      return { header: t.header, leader: { name, key, rev, lease } };
    }),
    Proclaim: waiting(async (req) => {
      const l = leaderOf(req);
      const lease = await r.session(l.lease);
      return { header: await proclaim(l.key as Buffer, num(l.rev), lease, req.value as Buffer) };
    }),
    Leader: waiting(async (req) => {
      const pfx = Buffer.concat([req.name as Buffer, Buffer.from('/')]);
      const g = await r.range(firstCreated(pfx));
      const kvs = g.kvs as Msg[];
      if (kvs.length === 0) throw unknown(ERR_NO_LEADER);
      return { header: g.header, kv: kvs[0] };
    }),
    Resign: waiting(async (req) => {
      const l = leaderOf(req);
      const t = await resign(l.key as Buffer, num(l.rev));
      return { header: t.header };
    }),
    Observe: (call: ServerWritableCall) => void observe(r, loop, call),
  };
}

/**
 * Observe: the current leader's key and value, then every change of its value, then the next
 * leader's when its key is deleted, and so on until the client goes away. A failed read or
 * watch ends the stream with OK, as etcd's does (the client observes again).
 */
async function observe(r: Recipes, loop: EtcdLoopback, call: ServerWritableCall): Promise<void> {
  const pfx = Buffer.concat([call.request.name as Buffer, Buffer.from('/')]);
  let current: { close(): void } | undefined;
  call.once('cancelled', () => current?.close());
  /** Watches from `create` until `stop` says so for a response; resolves false when the watch ended otherwise. */
  const follow = (create: Msg, stop: (resp: Msg) => boolean): Promise<boolean> =>
    new Promise((resolve) => {
      let settled = false;
      const opened: { watch?: LoopbackWatch } = {};
      const settle = (v: boolean) => {
        if (settled) return;
        settled = true;
        opened.watch?.close();
        resolve(v);
      };
      const w = loop.watch(
        create,
        (resp) => {
          if (resp.canceled) return settle(false);
          if (stop(resp)) settle(true);
        },
        () => settle(false),
      );
      opened.watch = w;
      if (settled) w.close();
      current = { close: () => settle(false) };
    });
  try {
    while (!call.cancelled) {
      const g = await r.range(firstCreated(pfx));
      let header = g.header as Msg;
      let kv = (g.kvs as Msg[])[0];
      if (!kv) {
        // No leader: wait for the first put under the prefix.
        const found = await follow({ key: pfx, range_end: prefixEnd(pfx), start_revision: header.revision }, (resp) => {
          const put = (resp.events as Msg[] | undefined)?.find((e) => e.type === 'PUT');
          if (!put) return false;
          kv = put.kv as Msg;
          header = { ...(resp.header as Msg), revision: kv.mod_revision };
          return true;
        });
        if (!found) break;
      }
      if (call.cancelled) break;
      call.write({ header, kv });
      // The leader's value changes until its key is deleted.
      const deleted = await follow({ key: kv!.key, start_revision: num(header.revision) + 1 }, (resp) => {
        for (const e of (resp.events as Msg[] | undefined) ?? []) {
          if (e.type === 'DELETE') return true;
          call.write({ header: resp.header, kv: e.kv });
        }
        return false;
      });
      if (!deleted) break;
    }
  } catch {
    // A failed read: the stream ends, as etcd's does.
  }
  if (!call.cancelled) call.end();
}
