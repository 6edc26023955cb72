/**
 * Applies replicated etcd commands (etcd.command.ts) to the MVCC store, and holds the lease
 * table they maintain (docs/etcd-api.md "Replicated commands" and "Leases").
 *
 * A command is evaluated at its log position against the store as every earlier entry left it:
 * compares, ranges and the keys a DeleteRange or a lease revocation removes are read then, and
 * the outcome is written as ONE plain MVCC transaction (one revision for the whole Txn, as in
 * etcd). Every replica reads the same state at the same position, so all write the same thing.
 *
 * Lease state is replicated data: a lease is the record `ETCD_RESERVED_PREFIX + "lease/<id>"`
 * (JSON `{"ttl":N}`) and a key's attachment `ETCD_RESERVED_PREFIX + "attach/<key>"` (the lease
 * id), written in the same transaction as the change that makes them, so snapshots and restarts
 * carry them. The in-memory table mirrors those records; only the remaining time of each lease
 * is local (like etcd's lessor, which does not persist expiry either): a grant or keep-alive
 * sets it to the TTL on every replica, and a new leader refreshes all of them (EtcdLessor).
 */
import { MvccError, NOT_NOW, validateCommand, validateKey, type ApplyEntry, type KeyValue, type MvccStore, type Op, type TxnCommand } from '@app/mvcc';
import type {
  EtcdCommand,
  EtcdCompare,
  EtcdKv,
  EtcdOp,
  EtcdOpResponse,
  EtcdResult,
  EtcdTxnResponse,
  EtcdTxnSpec,
  EtcdErrorCode,
  EtcdKeyRange,
  EtcdPutSpec,
} from './etcd.command.js';
import { lonePut } from './etcd.command.js';
import { ETCD_RESERVED_PREFIX, readRange, shapeRange, visibleIn } from './etcd.range.js';
import { compareKeys } from '@app/mvcc';

/** Prefix of the lease records (leaseRecord). */
export const LEASE_PREFIX = `${ETCD_RESERVED_PREFIX}lease/`;
/** Prefix of the attachment records (attachmentRecord). */
export const ATTACH_PREFIX = `${ETCD_RESERVED_PREFIX}attach/`;

/** The store record of lease `id` (decimal) with its TTL in seconds. */
export function leaseRecord(id: string, ttl: number): { key: string; value: Buffer } {
  return { key: LEASE_PREFIX + id, value: Buffer.from(JSON.stringify({ ttl })) };
}

/** The store record that attaches `key` to lease `id` (decimal, not '0'). */
export function attachmentRecord(key: string, id: string): { key: string; value: Buffer } {
  return { key: ATTACH_PREFIX + key, value: Buffer.from(id) };
}

/** Resolves on the next turn of the event loop (after the I/O and microtasks queued now). */
const nextTurn = (): Promise<void> => new Promise((r) => setImmediate(r));

/** One lease as the table holds it. `expiry` is this node's clock (ms). */
export interface LeaseEntry {
  id: string;
  ttl: number;
  keys: Set<string>;
  expiry: number;
}

/** An etcd error raised while evaluating a command: the command has no effect. */
export class EtcdFailure extends Error {
  constructor(
    readonly code: EtcdErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** Evaluation state of one Txn: its writes so far, visible to its later ops. */
interface TxnContext {
  overlay: Map<string, KeyValue | null>;
  /** Attachment changes so far: key -> lease id ('0': detached). */
  attach: Map<string, string>;
  ops: Op[];
  /** The revision the Txn writes at (the store's current + 1). */
  writeRev: number;
  /** Writes of the entries before this one in the same store batch. */
  batch: Map<string, KeyValue | null>;
  /** The store's state of keys read ahead for the batch (absent key: null). */
  base: Map<string, KeyValue | null>;
}

/** The branch a Txn takes (its compares held), and the path of each nested Txn on that branch. */
interface TxnPath {
  ok: boolean;
  nested: (TxnPath | undefined)[];
}

/** The operations a Txn runs on `path`, nested Txns flattened, in order. */
function* opsOnPath(spec: EtcdTxnSpec, path: TxnPath): Generator<Exclude<EtcdOp, { txn: EtcdTxnSpec }>> {
  for (const [i, op] of (path.ok ? spec.success : spec.failure).entries()) {
    if ('txn' in op) yield* opsOnPath(op.txn, path.nested[i]!);
    else yield op;
  }
}

/** The highest revision a Range of `spec` reads at, in either branch (0: none). */
function rangeRevision(spec: EtcdTxnSpec): number {
  let max = 0;
  for (const op of [...spec.success, ...spec.failure]) {
    if ('range' in op && op.range.revision && op.range.revision > max) max = op.range.revision;
    else if ('txn' in op) max = Math.max(max, rangeRevision(op.txn));
  }
  return max;
}

/** The lease table and the evaluation of etcd commands on one replica. */
export class EtcdApplier {
  private readonly leases = new Map<string, LeaseEntry>();
  private readonly keyLease = new Map<string, string>();
  private loaded: Promise<void>;
  /** The revision after the last staged batch (see pendingRevision). */
  private pending = 0;

  /**
   * `opts.putFastPath` false evaluates KV.Put requests on the general path too, the reference
   * the fast path is checked against (etcd.applier.property.spec.ts).
   */
  constructor(
    private readonly store: MvccStore,
    private readonly now: () => number = Date.now,
    private readonly opts: { putFastPath?: boolean } = {},
  ) {
    this.loaded = this.load();
    this.loaded.catch(() => undefined);
  }

  /** Rebuilds the table from the store (after a snapshot replaced it). */
  reload(): Promise<void> {
    this.pending = 0;
    this.loaded = this.load();
    return this.loaded;
  }

  /** Resolves once the table reflects the store. */
  ready(): Promise<void> {
    return this.loaded;
  }

  private async load(): Promise<void> {
    const [leases, attached] = await Promise.all([this.store.range(LEASE_PREFIX), this.store.range(ATTACH_PREFIX)]);
    this.leases.clear();
    this.keyLease.clear();
    const now = this.now();
    for (const kv of leases.kvs) {
      const id = kv.key.slice(LEASE_PREFIX.length);
      const { ttl } = JSON.parse(Buffer.from(kv.value).toString('utf8')) as { ttl: number };
      this.leases.set(id, { id, ttl, keys: new Set(), expiry: now + ttl * 1000 });
    }
    for (const kv of attached.kvs) {
      const key = kv.key.slice(ATTACH_PREFIX.length);
      const id = Buffer.from(kv.value).toString('utf8');
      this.keyLease.set(key, id);
      this.leases.get(id)?.keys.add(key);
    }
  }

  /** The lease `key` is attached to ('0': none). */
  leaseOf(key: string): string {
    return this.keyLease.get(key) ?? '0';
  }

  /**
   * The lease `key` was attached to at `revision` (its attachment record is written in the same
   * revision as the Put that sets it); '0' when none, or when that revision is compacted.
   */
  async leaseAt(key: string, revision: number): Promise<string> {
    try {
      const kv = await this.store.get(ATTACH_PREFIX + key, revision);
      return kv ? Buffer.from(kv.value).toString('utf8') : '0';
    } catch (e) {
      if (e instanceof MvccError && (e.code === 'Compacted' || e.code === 'InvalidKey')) return '0';
      throw e;
    }
  }

  /** `kvs` with the leases they had at `revision` (undefined: the current ones). */
  async withLeases(kvs: readonly EtcdKv[], revision: number | undefined): Promise<EtcdKv[]> {
    if (revision === undefined) return kvs.map((kv) => ({ ...kv, lease: this.leaseOf(kv.key) }));
    return Promise.all(kvs.map(async (kv) => ({ ...kv, lease: await this.leaseAt(kv.key, revision) })));
  }

  /** One lease, or undefined. */
  lease(id: string): LeaseEntry | undefined {
    return this.leases.get(id);
  }

  /** Every lease id. */
  leaseIds(): string[] {
    return [...this.leases.keys()];
  }

  /** Restarts every lease's clock at its full TTL (a new leader does this, as etcd's Promote). */
  refreshAll(): void {
    const now = this.now();
    for (const l of this.leases.values()) l.expiry = now + l.ttl * 1000;
  }

  /** Leases whose time ran out on this node's clock. */
  expired(): string[] {
    const now = this.now();
    return [...this.leases.values()].filter((l) => l.expiry <= now).map((l) => l.id);
  }

  /** Applies one entry (see applyMany). */
  async apply(index: number, cmd: EtcdCommand): Promise<EtcdResult> {
    const [r] = await this.applyMany([{ index, cmd }]);
    return r!;
  }

  /**
   * Applies consecutive entries as ONE store batch (group apply): each is evaluated in log order
   * against the store plus the writes of the entries before it in the batch, and the table is
   * updated as each is evaluated (a later entry sees an earlier one's lease). A command that
   * fails (an etcd error) writes only its index. Deterministic across replicas except for lease
   * clocks. The table changes before the batch is written: if the write fails the state machine
   * stops for good (MvccStateMachine), so no reader sees the table ahead of the store for long.
   */
  async applyMany(entries: readonly { index: number; cmd: EtcdCommand }[]): Promise<EtcdResult[]> {
    const { results, written } = await this.stage(entries);
    await written;
    return results;
  }

  /**
   * applyMany in two steps: resolves with the answers as soon as the entries are evaluated,
   * with `written` settling once their batch is in the store. The answers are final at that
   * point (the entries are committed in the log and evaluation is deterministic), so a proposer
   * may be answered before the write lands; readers that must see the effects wait for the
   * store (MvccStateMachine.waitApplied, or waitForRevision up to pendingRevision()).
   */
  async stage(entries: readonly { index: number; cmd: EtcdCommand }[]): Promise<{ results: EtcdResult[]; written: Promise<void> }> {
    await this.loaded;
    const applied = this.store.appliedIndex();
    const batch = new Map<string, KeyValue | null>();
    // The single keys the entries name, read up front (synchronously, see
    // MvccStore.getLatestNow): they seed the batch's base state.
    const base = await this.prefetch(entries.filter((e) => e.index > applied).map((e) => e.cmd));
    let rev = this.store.currentRevision();
    const toWrite: ApplyEntry[] = [];
    // Consecutive items of one index are the Puts of one packed entry (etcd.command.ts): one
    // store entry, each of them a transaction of its own after the first.
    const write = (index: number, command?: TxnCommand): void => {
      const last = toWrite[toWrite.length - 1];
      if (last?.index !== index) toWrite.push(command ? { index, command } : { index });
      else if (!command) return;
      else if (!last.command) last.command = command;
      else (last.more ??= []).push(command);
    };
    const results: EtcdResult[] = [];
    for (const { index, cmd } of entries) {
      // Already in the store (a replay): the table was loaded from that state; nothing to do.
      if (index <= applied) {
        results.push({ revision: rev });
        continue;
      }
      // A KV.Put request, the common command, is evaluated at once (putNow), with the outcome of
      // the general path below but without its promises, maps and iterators per operation.
      const put = 'txn' in cmd && cmd.txn.kvPut && this.opts.putFastPath !== false ? lonePut(cmd) : undefined;
      const now = put && this.putNow(put, rev + 1, batch, base);
      if (now && 'error' in now) {
        write(index);
        results.push({ revision: rev, error: now.error });
        continue;
      }
      if (now) {
        rev++;
        write(index, { compares: [], success: now.ops, failure: [] });
        results.push({ revision: rev, txn: now.txn });
        continue;
      }
      const ctx: TxnContext = { overlay: new Map(), attach: new Map(), ops: [], writeRev: rev + 1, batch, base };
      // A Range at a revision that an earlier entry of this group wrote reads the store: what the
      // group staged so far is written first, so that every replica reads the same, however its
      // entries were grouped.
      if ('txn' in cmd && toWrite.length > 0 && rangeRevision(cmd.txn) > this.store.currentRevision()) {
        await this.store.applyBatch(toWrite.splice(0));
      }
      try {
        const extra = await this.evaluate(ctx, cmd);
        const invalid = ctx.ops.length > 0 ? validateCommand({ compares: [], success: ctx.ops, failure: [] }) : undefined;
        if (invalid) throw new EtcdFailure('INVALID_ARGUMENT', `etcdserver: ${invalid}`);
        for (const [key, v] of ctx.overlay) batch.set(key, v);
        for (const [key, id] of ctx.attach) this.setAttachment(key, id);
        const answer = extra();
        if (ctx.ops.length > 0) {
          rev++;
          write(index, { compares: [], success: ctx.ops, failure: [] });
        } else {
          write(index);
        }
        results.push({ revision: rev, ...answer });
      } catch (e) {
        if (!(e instanceof EtcdFailure)) throw e;
        write(index);
        results.push({ revision: rev, error: { code: e.code, message: e.message } });
      }
    }
    if (rev > this.pending) this.pending = rev;
    // The batch is built and handed to LevelDB on the next turn of the event loop: building it
    // is most of an apply's work, and the answers the caller sends first do not wait for it.
    const written =
      toWrite.length > 0
        ? nextTurn()
            .then(() => this.store.applyBatch(toWrite))
            .then(() => undefined)
        : Promise.resolve();
    // The caller may answer before it awaits this; keep an early failure from being unhandled.
    written.catch(() => undefined);
    return { results, written };
  }

  /**
   * The revision the store will be at once every staged batch is written (at least its current
   * one): a revision up to it exists, or is about to.
   */
  pendingRevision(): number {
    return Math.max(this.pending, this.store.currentRevision());
  }

  private async prefetch(cmds: EtcdCommand[]): Promise<Map<string, KeyValue | null>> {
    const keys = new Set<string>();
    const visit = (t: EtcdTxnSpec): void => {
      for (const c of t.compare) if (c.end === undefined) keys.add(c.key);
      for (const ops of [t.success, t.failure]) {
        for (const op of ops) {
          if ('put' in op) keys.add(op.put.key);
          else if ('del' in op && op.del.end === undefined) keys.add(op.del.key);
          else if ('txn' in op) visit(op.txn);
        }
      }
    };
    for (const cmd of cmds) if ('txn' in cmd) visit(cmd.txn);
    const base = new Map<string, KeyValue | null>();
    for (const k of keys) {
      if (validateKey(k) !== undefined) continue;
      const v = this.current(k);
      base.set(k, (v instanceof Promise ? await v : v) ?? null);
    }
    return base;
  }

  /**
   * Evaluates a KV.Put request (a Txn of one Put, no compares) against the batch so far, as
   * evaluate() would: the same checks in etcd's order, the same operations and answer. Applies
   * its effect on the batch and the lease table when it succeeds; an etcd error changes
   * nothing. Undefined when the key's current version cannot be read at once (a snapshot
   * import is rewriting the store): the caller then takes the general path.
   */
  private putNow(
    p: EtcdPutSpec,
    writeRev: number,
    batch: Map<string, KeyValue | null>,
    base: Map<string, KeyValue | null>,
  ): { ops: Op[]; txn: EtcdTxnResponse } | { error: { code: EtcdErrorCode; message: string } } | undefined {
    const key = p.key;
    // The batch's writes, then the state read ahead, then the store (null: absent at that layer).
    let prev: KeyValue | undefined;
    const staged = batch.get(key);
    const ahead = staged === undefined ? base.get(key) : staged;
    if (ahead !== undefined) prev = ahead ?? undefined;
    else {
      const cur = this.current(key);
      if (cur instanceof Promise) return undefined;
      prev = cur;
    }
    // A KV.Put request has its lease checked before its key (etcd's Put; checkPath).
    if (!p.ignoreLease && p.lease !== '0' && !this.leases.has(p.lease))
      return { error: { code: 'NOT_FOUND', message: 'etcdserver: requested lease not found' } };
    if ((p.ignoreValue || p.ignoreLease) && !prev) return { error: { code: 'INVALID_ARGUMENT', message: 'etcdserver: key not found' } };
    const value = p.ignoreValue ? prev!.value : p.value;
    const current = this.leaseOf(key);
    const lease = p.ignoreLease ? current : p.lease;
    if (lease !== '0' && !this.leases.has(lease)) return { error: { code: 'NOT_FOUND', message: 'etcdserver: requested lease not found' } };
    const ops: Op[] = [{ type: 'put', key, value }];
    if (lease !== current) ops.push(lease === '0' ? { type: 'delete', key: ATTACH_PREFIX + key } : { type: 'put', ...attachmentRecord(key, lease) });
    const invalid = validateCommand({ compares: [], success: ops, failure: [] });
    if (invalid) return { error: { code: 'INVALID_ARGUMENT', message: `etcdserver: ${invalid}` } };
    batch.set(key, {
      key,
      value,
      createRevision: prev ? prev.createRevision : writeRev,
      modRevision: writeRev,
      version: prev ? prev.version + 1 : 1,
    });
    if (lease !== current) this.setAttachment(key, lease);
    return { ops, txn: { succeeded: true, responses: [{ put: p.prevKv && prev ? { prevKv: { ...prev, lease: current } } : {} }] } };
  }

  /** The store's current version of `key`: read at once unless an import is rewriting the store. */
  private current(key: string): KeyValue | undefined | Promise<KeyValue | undefined> {
    const now = this.store.getLatestNow(key);
    return now === NOT_NOW ? this.store.get(key) : now;
  }

  /** Evaluates one command into ctx; returns what to do once it is accepted (and its answer). */
  private async evaluate(ctx: TxnContext, cmd: EtcdCommand): Promise<() => Partial<EtcdResult>> {
    if ('txn' in cmd) {
      // etcd's order: the compares of the Txn and of the nested Txns on its path are evaluated
      // first, against the state before it; then the Puts on that path are checked, then the
      // revisions of its Ranges; only then do its operations run.
      const path = await this.txnPath(ctx, cmd.txn);
      await this.checkPath(ctx, cmd.txn, path);
      const txn = await this.evalTxn(ctx, cmd.txn, path);
      return () => ({ txn });
    }
    if ('grant' in cmd) {
      const { id, ttl } = cmd.grant;
      if (this.leases.has(id)) throw new EtcdFailure('FAILED_PRECONDITION', 'etcdserver: lease already exists');
      ctx.ops.push({ type: 'put', ...leaseRecord(id, ttl) });
      return () => {
        this.leases.set(id, { id, ttl, keys: new Set(), expiry: this.now() + ttl * 1000 });
        return { grant: { id, ttl } };
      };
    }
    if ('revoke' in cmd) {
      const l = this.requireLease(cmd.revoke.id);
      // In key order, as etcd deletes them (the order of their delete events).
      for (const key of [...l.keys].sort(compareKeys)) {
        ctx.ops.push({ type: 'delete', key }, { type: 'delete', key: ATTACH_PREFIX + key });
        ctx.overlay.set(key, null);
        ctx.attach.set(key, '0');
      }
      ctx.ops.push({ type: 'delete', key: LEASE_PREFIX + l.id });
      return () => {
        this.leases.delete(l.id);
        return {};
      };
    }
    const l = this.requireLease(cmd.keepalive.id);
    return () => {
      l.expiry = this.now() + l.ttl * 1000;
      return { keepalive: { id: l.id, ttl: l.ttl } };
    };
  }

  private requireLease(id: string): LeaseEntry {
    const l = this.leases.get(id);
    if (!l) throw new EtcdFailure('NOT_FOUND', 'etcdserver: requested lease not found');
    return l;
  }

  private setAttachment(key: string, id: string): void {
    const old = this.keyLease.get(key);
    if (old !== undefined) this.leases.get(old)?.keys.delete(key);
    if (id === '0') {
      this.keyLease.delete(key);
      return;
    }
    this.keyLease.set(key, id);
    this.leases.get(id)?.keys.add(key);
  }

  private ctxLease(ctx: TxnContext, key: string): string {
    return ctx.attach.get(key) ?? this.leaseOf(key);
  }

  private async ctxGet(ctx: TxnContext, key: string): Promise<KeyValue | undefined> {
    // null means deleted (or absent) at that layer: it must not fall through to the next one.
    for (const layer of [ctx.overlay, ctx.batch, ctx.base]) {
      const o = layer.get(key);
      if (o !== undefined) return o ?? undefined;
    }
    return this.current(key);
  }

  private async ctxRange(ctx: TxnContext, r: EtcdKeyRange): Promise<KeyValue[]> {
    const { kvs } = await readRange(this.store, r);
    if (ctx.overlay.size === 0 && ctx.batch.size === 0) return kvs;
    const byKey = new Map(kvs.map((kv) => [kv.key, kv]));
    for (const overlay of [ctx.batch, ctx.overlay]) {
      for (const [key, v] of overlay) {
        if (!visibleIn(key, r)) continue;
        if (v === null) byKey.delete(key);
        else byKey.set(key, v);
      }
    }
    return [...byKey.values()].sort((a, b) => compareKeys(a.key, b.key));
  }

  private withLease(ctx: TxnContext, kv: KeyValue): EtcdKv {
    return { ...kv, lease: this.ctxLease(ctx, kv.key) };
  }

  private async compare(ctx: TxnContext, c: EtcdCompare): Promise<boolean> {
    const kvs = c.end === undefined ? [await this.ctxGet(ctx, c.key)].filter((kv): kv is KeyValue => kv !== undefined) : await this.ctxRange(ctx, c);
    if (kvs.length === 0) {
      if (c.target === 'VALUE') return false;
      return this.compareOne(c, { key: c.key, value: new Uint8Array(0), createRevision: 0, modRevision: 0, version: 0 }, '0');
    }
    return kvs.every((kv) => this.compareOne(c, kv, this.ctxLease(ctx, kv.key)));
  }

  private compareOne(c: EtcdCompare, kv: KeyValue, lease: string): boolean {
    let r: number;
    switch (c.target) {
      case 'VALUE':
        r = Buffer.compare(Buffer.from(kv.value), Buffer.from(String(c.value), 'base64'));
        break;
      case 'LEASE': {
        const a = BigInt(lease);
        const b = BigInt(c.value);
        r = a === b ? 0 : a > b ? 1 : -1;
        break;
      }
      case 'CREATE':
        r = kv.createRevision - Number(c.value);
        break;
      case 'MOD':
        r = kv.modRevision - Number(c.value);
        break;
      default:
        r = kv.version - Number(c.value);
    }
    switch (c.result) {
      case 'EQUAL':
        return r === 0;
      case 'GREATER':
        return r > 0;
      case 'LESS':
        return r < 0;
      default:
        return r !== 0;
    }
  }

  /** The branch `spec` takes, and that of every nested Txn on it, before any operation runs. */
  private async txnPath(ctx: TxnContext, spec: EtcdTxnSpec): Promise<TxnPath> {
    let ok = true;
    for (const c of spec.compare) {
      if (!(await this.compare(ctx, c))) {
        ok = false;
        break;
      }
    }
    const nested: (TxnPath | undefined)[] = [];
    for (const op of ok ? spec.success : spec.failure) nested.push('txn' in op ? await this.txnPath(ctx, op.txn) : undefined);
    return { ok, nested };
  }

  /**
   * etcd's checks of the operations on a Txn's path, before any runs: a Put with ignore_value or
   * ignore_lease needs its key, a Put's lease must exist; then a Range's revision must be neither
   * in the future (beyond the revision before this Txn) nor compacted.
   */
  private async checkPath(ctx: TxnContext, spec: EtcdTxnSpec, path: TxnPath): Promise<void> {
    const ops = [...opsOnPath(spec, path)];
    for (const op of ops) {
      if (!('put' in op)) continue;
      const p = op.put;
      const unknownLease = !p.ignoreLease && p.lease !== '0' && !this.leases.has(p.lease);
      // A KV.Put request has its lease checked first, a Put in a Txn its key (etcd's Put and checkPut).
      if (spec.kvPut && unknownLease) throw new EtcdFailure('NOT_FOUND', 'etcdserver: requested lease not found');
      if ((p.ignoreValue || p.ignoreLease) && !(await this.ctxGet(ctx, p.key))) throw new EtcdFailure('INVALID_ARGUMENT', 'etcdserver: key not found');
      if (unknownLease) throw new EtcdFailure('NOT_FOUND', 'etcdserver: requested lease not found');
    }
    for (const op of ops) {
      if (!('range' in op) || !op.range.revision || op.range.revision <= 0) continue;
      if (op.range.revision > ctx.writeRev - 1) throw new EtcdFailure('OUT_OF_RANGE', 'etcdserver: mvcc: required revision is a future revision');
      if (op.range.revision < this.store.compactedRevision()) throw new EtcdFailure('OUT_OF_RANGE', 'etcdserver: mvcc: required revision has been compacted');
    }
  }

  private async evalTxn(ctx: TxnContext, spec: EtcdTxnSpec, path: TxnPath): Promise<EtcdTxnResponse> {
    const responses: EtcdOpResponse[] = [];
    for (const [i, op] of (path.ok ? spec.success : spec.failure).entries()) responses.push(await this.evalOp(ctx, op, path.nested[i]));
    return { succeeded: path.ok, responses };
  }

  private async evalOp(ctx: TxnContext, op: EtcdTxnSpec['success'][number], path: TxnPath | undefined): Promise<EtcdOpResponse> {
    if ('txn' in op) return { txn: await this.evalTxn(ctx, op.txn, path!) };
    if ('range' in op) {
      const spec = op.range;
      let kvs: KeyValue[];
      if (spec.revision && spec.revision > 0) {
        try {
          kvs = (await readRange(this.store, spec, spec.revision)).kvs;
        } catch (e) {
          if (e instanceof MvccError && e.code === 'Compacted') throw new EtcdFailure('OUT_OF_RANGE', 'etcdserver: mvcc: required revision has been compacted');
          if (e instanceof MvccError && e.code === 'FutureRevision')
            throw new EtcdFailure('OUT_OF_RANGE', 'etcdserver: mvcc: required revision is a future revision');
          throw e;
        }
      } else {
        kvs = await this.ctxRange(ctx, spec);
      }
      const shaped = shapeRange(kvs, spec, (k) => this.ctxLease(ctx, k));
      if (spec.revision && spec.revision > 0) shaped.kvs = await this.withLeases(shaped.kvs, spec.revision);
      return { range: shaped };
    }
    if ('put' in op) {
      const p = op.put;
      const prev = await this.ctxGet(ctx, p.key);
      if ((p.ignoreValue || p.ignoreLease) && !prev) throw new EtcdFailure('INVALID_ARGUMENT', 'etcdserver: key not found');
      const value = p.ignoreValue ? prev!.value : p.value;
      const current = this.ctxLease(ctx, p.key);
      const lease = p.ignoreLease ? current : p.lease;
      if (lease !== '0' && !this.leases.has(lease)) throw new EtcdFailure('NOT_FOUND', 'etcdserver: requested lease not found');
      const kv: KeyValue = {
        key: p.key,
        value,
        createRevision: prev ? prev.createRevision : ctx.writeRev,
        modRevision: ctx.writeRev,
        version: prev ? prev.version + 1 : 1,
      };
      ctx.overlay.set(p.key, kv);
      ctx.ops.push({ type: 'put', key: p.key, value });
      if (lease !== current) {
        ctx.ops.push(lease === '0' ? { type: 'delete', key: ATTACH_PREFIX + p.key } : { type: 'put', ...attachmentRecord(p.key, lease) });
        ctx.attach.set(p.key, lease);
      }
      return { put: p.prevKv && prev ? { prevKv: { ...prev, lease: current } } : {} };
    }
    const d = op.del;
    const kvs = d.end === undefined ? [await this.ctxGet(ctx, d.key)].filter((kv): kv is KeyValue => kv !== undefined) : await this.ctxRange(ctx, d);
    const prevKvs: EtcdKv[] = [];
    for (const kv of kvs) {
      if (d.prevKv) prevKvs.push(this.withLease(ctx, kv));
      ctx.ops.push({ type: 'delete', key: kv.key });
      ctx.overlay.set(kv.key, null);
      if (this.ctxLease(ctx, kv.key) !== '0') {
        ctx.ops.push({ type: 'delete', key: ATTACH_PREFIX + kv.key });
        ctx.attach.set(kv.key, '0');
      }
    }
    return { del: { deleted: kvs.length, prevKvs } };
  }
}
