/**
 * The store's space quota and its NOSPACE alarm (etcd's `--quota-backend-bytes`; docs/storage.md
 * "Space quota").
 *
 * Each node samples the size of its own store on disk. A write that would add data while the
 * store is over its quota is refused before it is proposed, and the node raises a NOSPACE alarm
 * for itself. Alarms are replicated records (ALARM_PREFIX), so once one member raised one, every
 * member refuses writes that add data until an operator disarms it (etcd's `alarm disarm`),
 * after freeing space: deletes, compaction and defragmentation are always taken. A write is
 * refused only before it is proposed, never at apply: what the log holds is applied on every
 * member alike.
 *
 * The cluster's own records (under CLUSTER_RECORDS_PREFIX: members, alarms) cost nothing, so a
 * full store can still change its membership and be disarmed.
 *
 * A CORRUPT alarm (raised by an operator here: no corruption checker runs) refuses every write
 * but those of the cluster's own records, as etcd's does, with its "corrupt cluster".
 */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Op, TxnCommand } from '@app/mvcc';
import type { EtcdCommand, EtcdOp, EtcdTxnSpec } from './etcd.command.js';
import { StorageError } from './storage.interface.js';

/** Keys of the cluster's own records, which the quota does not count. */
export const CLUSTER_RECORDS_PREFIX = '/kapi/cluster/';
/** Replicated alarms: `<prefix><member id, decimal>/<alarm>`, the value the alarm's name. */
export const ALARM_PREFIX = '/kapi/cluster/alarms/';

/** etcd's default quota is 2 GiB; this store keeps a value in up to three records, so 8 GiB (etcd's suggested maximum). */
export const DEFAULT_QUOTA_BACKEND_BYTES = 8 * 1024 * 1024 * 1024;
/** What a put costs beyond its key and value (etcd's quota counts a fixed overhead per key too). */
export const PUT_OVERHEAD_BYTES = 64;
/** What a lease grant costs. */
export const LEASE_GRANT_BYTES = 64;
/** How often the store's size on disk is sampled. */
export const SIZE_SAMPLE_MS = 1000;

/** The alarms etcd's Maintenance service knows (its AlarmType). */
export type AlarmName = 'NOSPACE' | 'CORRUPT';
/** One raised alarm: which member raised it and what. */
export interface AlarmMember {
  memberId: number;
  alarm: AlarmName;
}

/** etcd's words for a write refused for space: clients (kube-apiserver among them) match on them. */
export const NO_SPACE_MESSAGE = 'etcdserver: mvcc: database space exceeded';
/** etcd's words for a write refused while a CORRUPT alarm is raised. */
export const CORRUPT_MESSAGE = 'etcdserver: corrupt cluster';

/** The parts of the MVCC store the quota reads. */
export interface QuotaStore {
  subscribe(listener: (e: { key: string; type: 'put' | 'delete' }) => void): () => void;
  onReset(listener: () => void): () => void;
  range(prefix: string): Promise<{ kvs: { key: string }[] }>;
}

/** Options of SpaceQuota. */
export interface SpaceQuotaOptions {
  /** The quota in bytes; 0 or less: no quota (alarms are still kept and listed). */
  quotaBytes: number;
  /** This member's id (the alarm it raises is its own). */
  selfId: number;
  /** The store's current size on disk. */
  sizeOf: () => Promise<number>;
  store: QuotaStore;
  /** Writes or removes an alarm record (a put or delete proposed through the log). */
  write: (command: TxnCommand) => Promise<unknown>;
  /** Told when this node raises its alarm. */
  onRaise?: (size: number, quota: number) => void;
}

function alarmKey(a: AlarmMember): string {
  return `${ALARM_PREFIX}${a.memberId}/${a.alarm}`;
}

/** The alarm a record's key names, or undefined for a key that is not one. */
export function parseAlarmKey(key: string): AlarmMember | undefined {
  if (!key.startsWith(ALARM_PREFIX)) return undefined;
  const [id, alarm, ...rest] = key.slice(ALARM_PREFIX.length).split('/');
  if (rest.length > 0 || !/^[0-9]+$/.test(id ?? '') || (alarm !== 'NOSPACE' && alarm !== 'CORRUPT')) return undefined;
  return { memberId: Number(id), alarm };
}

function putCost(key: string, valueBytes: number): number {
  return key.startsWith(CLUSTER_RECORDS_PREFIX) ? 0 : key.length + valueBytes + PUT_OVERHEAD_BYTES;
}

function opsCost(ops: readonly Op[]): number {
  let n = 0;
  for (const op of ops) if (op.type === 'put') n += putCost(op.key, op.value.byteLength);
  return n;
}

/** True when every key `command` reads or writes is one of the cluster's own records (a compaction touches them all). */
export function onlyClusterRecords(command: TxnCommand): boolean {
  if (command.compact !== undefined) return false;
  const ops = [...command.compares, ...command.success, ...command.failure];
  return ops.length > 0 && ops.every((op) => op.key.startsWith(CLUSTER_RECORDS_PREFIX));
}

/** Bytes a command of the store adds, at most (the larger branch; deletes and compaction add nothing). */
export function txnCommandCost(command: TxnCommand): number {
  return Math.max(opsCost(command.success), opsCost(command.failure));
}

function etcdOpsCost(ops: readonly EtcdOp[]): number {
  let n = 0;
  for (const op of ops) {
    if ('put' in op) n += putCost(op.put.key, op.put.value.byteLength);
    else if ('txn' in op) n += etcdTxnCost(op.txn);
  }
  return n;
}

function etcdTxnCost(txn: EtcdTxnSpec): number {
  return Math.max(etcdOpsCost(txn.success), etcdOpsCost(txn.failure));
}

/** Bytes an etcd command adds, at most (a lease grant a fixed cost; revoke and keepalive nothing). */
export function etcdCommandCost(command: EtcdCommand): number {
  if ('txn' in command) return etcdTxnCost(command.txn);
  if ('grant' in command) return LEASE_GRANT_BYTES;
  return 0;
}

/** The quota check of one node, and the replicated alarms it keeps track of. */
export class SpaceQuota {
  private size = 0;
  private readonly alarms = new Map<string, AlarmMember>();
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void)[] = [];
  private raising: Promise<void> | undefined;
  /** This node's last raise failed (a lost leader, say): the next sample over the quota raises again. */
  private raiseFailed = false;
  private stopped = false;

  constructor(private readonly o: SpaceQuotaOptions) {}

  /** The quota in bytes (0: none). */
  get quotaBytes(): number {
    return Math.max(0, this.o.quotaBytes);
  }

  /** The store's size as last sampled. */
  get sizeBytes(): number {
    return this.size;
  }

  /** Loads the alarms applied so far, follows their changes, and starts sampling the size. */
  async start(): Promise<void> {
    this.unsubscribe.push(
      this.o.store.subscribe((e) => {
        const a = parseAlarmKey(e.key);
        if (!a) return;
        if (e.type === 'put') this.alarms.set(e.key, a);
        else this.alarms.delete(e.key);
      }),
    );
    this.unsubscribe.push(this.o.store.onReset(() => void this.reload()));
    await this.reload();
    await this.sample();
    const tick = (): void => {
      this.timer = setTimeout(() => {
        void this.sample().finally(() => {
          if (!this.stopped) tick();
        });
      }, SIZE_SAMPLE_MS);
      this.timer.unref();
    };
    tick();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    for (const u of this.unsubscribe.splice(0)) u();
  }

  /** Samples the size now (after a defragmentation, say). */
  async sample(): Promise<number> {
    try {
      this.size = await this.o.sizeOf();
    } catch {
      // A size that cannot be read keeps the last sample.
    }
    const quota = this.quotaBytes;
    if (this.raiseFailed && !this.stopped && quota > 0 && this.size > quota && !this.noSpace()) this.raise();
    return this.size;
  }

  private async reload(): Promise<void> {
    const kvs = (await this.o.store.range(ALARM_PREFIX)).kvs;
    this.alarms.clear();
    for (const kv of kvs) {
      const a = parseAlarmKey(kv.key);
      if (a) this.alarms.set(kv.key, a);
    }
  }

  /** The alarms raised, as this node's replica has them, by member id and name. */
  list(): AlarmMember[] {
    return [...this.alarms.values()].sort((a, b) => a.memberId - b.memberId || a.alarm.localeCompare(b.alarm));
  }

  /** True while some member's NOSPACE alarm is raised. */
  noSpace(): boolean {
    return this.raised('NOSPACE');
  }

  private raised(name: AlarmName): boolean {
    for (const a of this.alarms.values()) if (a.alarm === name) return true;
    return false;
  }

  /** check() for a command of the store. */
  checkTxn(command: TxnCommand): void {
    // Whether the command touches only the cluster's records matters only for a CORRUPT alarm:
    // not looked at on the usual path, where no alarm is raised.
    this.check(txnCommandCost(command), this.alarms.size > 0 && onlyClusterRecords(command));
  }

  /** check() for an etcd command. */
  checkEtcd(command: EtcdCommand): void {
    this.check(etcdCommandCost(command), false);
  }

  /**
   * Throws when a write adding `cost` bytes may not be proposed: StorageError('NoSpace') while a
   * NOSPACE alarm is raised or when the store would pass its quota (then this node raises its
   * alarm); StorageError('Corrupt') for any write while a CORRUPT alarm is raised, unless it
   * touches `onlyClusterRecords`.
   */
  check(cost: number, onlyClusterRecords = false): void {
    if (!onlyClusterRecords && this.alarms.size > 0 && this.raised('CORRUPT')) {
      throw new StorageError('Corrupt', '', `${CORRUPT_MESSAGE}: a CORRUPT alarm is raised; writes are refused until it is disarmed`);
    }
    if (cost <= 0) return;
    if (this.noSpace()) throw this.refusal();
    const quota = this.quotaBytes;
    if (quota > 0 && this.size + cost > quota) {
      this.raise();
      throw this.refusal();
    }
  }

  private refusal(): StorageError {
    const quota = this.quotaBytes;
    const over = quota > 0 ? ` (this node's store: ${this.size} bytes of its ${quota}-byte quota)` : '';
    return new StorageError('NoSpace', '', `${NO_SPACE_MESSAGE}${over}: a NOSPACE alarm is raised; delete data, compact, defragment, then disarm the alarm`);
  }

  /**
   * Settles once the alarm this node is raising, if any, is applied here or has failed. A refused
   * write is answered only then, as etcd answers its NOSPACE after its alarm request: a client
   * told "database space exceeded" finds the alarm listed.
   */
  async alarmSettled(): Promise<void> {
    await this.raising;
  }

  /**
   * Raises this node's NOSPACE alarm through the log (once; a failure is retried by the next
   * refused write, or by the next sample while the store is still over its quota).
   */
  private raise(): void {
    const mine = { memberId: this.o.selfId, alarm: 'NOSPACE' as const };
    if (this.raising || this.alarms.has(alarmKey(mine))) return;
    if (!this.raiseFailed) this.o.onRaise?.(this.size, this.quotaBytes);
    this.raiseFailed = false;
    this.raising = this.activate(mine)
      .catch(() => {
        this.raiseFailed = true;
      })
      .finally(() => {
        this.raising = undefined;
      });
  }

  /** Raises an alarm (etcd's Alarm ACTIVATE). */
  async activate(a: AlarmMember): Promise<void> {
    const key = alarmKey(a);
    await this.o.write({ compares: [], success: [{ type: 'put', key, value: new TextEncoder().encode(a.alarm) }], failure: [] });
    this.alarms.set(key, a);
  }

  /** Disarms an alarm (etcd's Alarm DEACTIVATE); the size is checked again by the next write. */
  async deactivate(a: AlarmMember): Promise<void> {
    const key = alarmKey(a);
    await this.o.write({ compares: [], success: [{ type: 'delete', key }], failure: [] });
    this.alarms.delete(key);
    await this.sample();
  }
}

/** Bytes of the files under `dir`, summed recursively (0 when it cannot be read). */
export async function directorySize(dir: string): Promise<number> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  let total = 0;
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) total += await directorySize(p);
    else if (e.isFile()) total += (await stat(p).catch(() => ({ size: 0 }))).size;
  }
  return total;
}
