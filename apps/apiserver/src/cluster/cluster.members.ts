/**
 * Cluster membership at run time (docs/cluster.md "Membership"). Raft's configuration holds
 * only numeric ids; names, peer addresses, API URLs and roles are member records replicated in
 * the MVCC store under MEMBER_PREFIX, so every node (including one that joins later or restarts)
 * learns every peer address from its own applied state and keeps its transport in step.
 *
 * Adding a node follows etcd and the Raft thesis (4.2.1): the record is written, the node
 * joins as a learner (it receives the log, usually by snapshot, but does not vote), and it is
 * promoted to voter once its match index has caught up with the leader's commit index, so a
 * new empty voter never stalls commits. Removing a node is the Raft removal plus the record's
 * deletion. Configuration changes must be proposed on the leader: elsewhere the calls fail
 * with NotLeaderError naming the leader's API URL, for the caller to retry there.
 */
import type { MvccEvent, MvccStore } from '@app/mvcc';
import type { GrpcTransport, RaftNode } from '@app/raft';
import { LOG_FORMATS_APPLIED, type RaftProposer } from '@app/storage';
import { ClusterConfigError, nodeIdFromName, normalizePeerAddress, validateNodeName, type ClusterMemberSpec } from './cluster.ids.js';

/** Key prefix of member records in the MVCC store (outside /registry: never served as a resource). */
export const MEMBER_PREFIX = '/kapi/cluster/members/';
/**
 * Key prefix of removal markers: `<prefix><name>` exists while a member of that name is
 * removed. Founding members (--initial-cluster, also the list a joining node was started with)
 * count as members before they write their record; the marker keeps a removed one from
 * counting again. Written with the record's deletion, deleted when the name is added back.
 */
export const REMOVED_PREFIX = '/kapi/cluster/removed/';

/** How long a leader removing itself waits for leadership to move (an election timeout is 1 s). */
const LEADER_TRANSFER_TIMEOUT_MS = 10_000;

/** A replicated member record. */
export interface MemberRecord {
  name: string;
  id: number;
  /** `host:port` of the Raft transport. */
  peerURL: string;
  /** The node's API URL, when it registered itself. */
  clientURL?: string;
  /** The node's etcd v3 API URLs, comma-separated (--advertise-client-urls, else --listen-client-urls), when it serves one. */
  etcdClientURL?: string;
  /**
   * The optional Raft log formats the node's build applies (LOG_FORMATS_APPLIED), written when
   * it registered itself. A record without it (written by an earlier build, or by the leader
   * for a node that has not registered yet) lists none.
   */
  logFormats?: string[];
  role: 'voter' | 'learner';
}

/** A member as GET /cluster/members shows it. */
export interface MemberView extends MemberRecord {
  isLeader: boolean;
  /** Replication progress; present when the answering node is the leader. */
  matchIndex?: number;
  progress?: string;
}

/** The request needs the leader; `leaderURL` is its API URL when known. */
export class NotLeaderError extends Error {
  override readonly name = 'NotLeaderError';
  constructor(
    message: string,
    readonly leaderName?: string,
    readonly leaderURL?: string,
  ) {
    super(message);
  }
}

/** The request conflicts with the current membership (unknown name, id collision, pending change). */
export class MembershipConflictError extends Error {
  override readonly name = 'MembershipConflictError';
}

const enc = new TextEncoder();
const dec = new TextDecoder();

function parseRecord(value: Uint8Array): MemberRecord | undefined {
  try {
    const o = JSON.parse(dec.decode(value)) as MemberRecord;
    if (typeof o.name !== 'string' || typeof o.id !== 'number' || typeof o.peerURL !== 'string') return undefined;
    if (o.logFormats !== undefined && !(Array.isArray(o.logFormats) && o.logFormats.every((f) => typeof f === 'string'))) delete o.logFormats;
    return o;
  } catch {
    return undefined;
  }
}

/** Options of ClusterMembership. */
export interface ClusterMembershipOptions {
  selfName: string;
  selfId: number;
  /** This node's peer address and API URL (for its own record). */
  selfPeerURL: string;
  selfClientURL: string;
  /** This node's etcd v3 API URL, when it serves one. */
  selfEtcdClientURL?: string;
  /** --initial-cluster members (all voters at founding). */
  initial: readonly ClusterMemberSpec[];
  node: RaftNode;
  store: MvccStore;
  proposer: RaftProposer;
  transport: GrpcTransport | undefined;
  /** Longest wait for a learner to catch up before promotion (default 60 s). */
  catchUpTimeoutMs?: number;
}

/** Who asked for a change, and whether another node already forwarded it here. */
export interface ChangeOptions {
  requestedBy?: string;
  /** Set on a change received from another node: it is not forwarded again. */
  forwarded?: boolean;
}

/** Carries out a change on the leader (cluster.forward.ts). */
export type MembershipForwarder = (
  change: { op: 'add' | 'remove' | 'promote'; name: string; peerURL?: string; requestedBy: string },
  leader: MemberRecord,
) => Promise<MemberRecord | void>;

/** The refusals of promote(), in etcd's words (its MemberPromote errors without the prefix). */
export const NOT_A_LEARNER = 'can only promote a learner member';
export const LEARNER_NOT_READY = 'can only promote a learner member which is in sync with leader';

/** A learner whose log reached the leader's commit index, give or take a few entries in flight. */
function caughtUp(match: number, commit: number): boolean {
  return match > 0 && match >= commit - 10;
}

/** Member records, the transport's peer list, and the add, promote and remove operations. */
export class ClusterMembership {
  private readonly peers = new Map<number, string>();
  /** Ids of the removal markers (REMOVED_PREFIX). */
  private readonly removedIds = new Set<number>();
  /** The log formats each member's record lists, by member id (see applies). */
  private readonly formats = new Map<number, ReadonlySet<string>>();
  private unsubscribe: (() => void)[] = [];
  private changing = false;
  private forwarder: MembershipForwarder | undefined;

  constructor(private readonly o: ClusterMembershipOptions) {
    for (const m of o.initial) this.peers.set(m.id, m.peerAddress);
  }

  /** Subscribes to record changes and loads the records already applied. */
  async start(): Promise<void> {
    this.unsubscribe.push(this.o.store.subscribe((e) => this.onEvent(e)));
    this.unsubscribe.push(this.o.store.onReset(() => void this.resync()));
    await this.resync();
    // A removed member that still sends Raft messages is told so (as etcd's peers answer it).
    this.o.transport?.setRemovedCheck((id) => this.isRemoved(id));
  }

  stop(): void {
    this.o.transport?.setRemovedCheck(undefined);
    for (const u of this.unsubscribe.splice(0)) u();
  }

  /** True when `id` has a removal marker and is not in the configuration applied here. */
  isRemoved(id: number): boolean {
    return this.removedIds.has(id) && !this.inConfiguration(id);
  }

  private onEvent(e: MvccEvent): void {
    if (e.key.startsWith(REMOVED_PREFIX)) {
      if (e.type === 'put') this.removedIds.add(Number(dec.decode(e.value.value)));
      else if (e.prevValue) this.removedIds.delete(Number(dec.decode(e.prevValue.value)));
      return;
    }
    if (!e.key.startsWith(MEMBER_PREFIX)) return;
    if (e.type === 'put') {
      const r = parseRecord(e.value.value);
      if (r) {
        this.setPeer(r.id, r.peerURL);
        this.formats.set(r.id, new Set(r.logFormats));
      }
    } else if (e.prevValue) {
      const r = parseRecord(e.prevValue.value);
      if (r) this.formats.delete(r.id);
      // A removal deletes the record after the configuration change is applied. A record
      // deleted while its member is still in the configuration (by hand, through the etcd API)
      // leaves the peer where it was: dropping it would cut this node off from a member the
      // quorum still counts.
      if (r && r.id !== this.o.selfId && !this.inConfiguration(r.id)) {
        this.peers.delete(r.id);
        this.o.transport?.removePeer(r.id);
      }
    }
  }

  /** True when `id` is a voter or learner of the configuration applied here. */
  private inConfiguration(id: number): boolean {
    const { voters, learners } = this.o.node.members();
    return voters.includes(id) || learners.includes(id);
  }

  private setPeer(id: number, addr: string): void {
    if (id === this.o.selfId || this.peers.get(id) === addr) return;
    this.peers.set(id, addr);
    this.o.transport?.addPeer(id, addr);
  }

  private async resync(): Promise<void> {
    this.removedIds.clear();
    for (const kv of (await this.o.store.range(REMOVED_PREFIX)).kvs) this.removedIds.add(Number(dec.decode(kv.value)));
    const records = await this.records();
    this.formats.clear();
    for (const r of records) {
      this.setPeer(r.id, r.peerURL);
      this.formats.set(r.id, new Set(r.logFormats));
    }
  }

  /**
   * True when every member of the Raft configuration applied here (voters and learners) has a
   * record listing `format` among its log formats. A member without a record (a founding member
   * that has not registered yet, a node being added) counts as not applying it.
   */
  applies(format: string): boolean {
    const { voters, learners } = this.o.node.members();
    for (const id of voters) if (!this.formats.get(id)?.has(format)) return false;
    for (const id of learners) if (!this.formats.get(id)?.has(format)) return false;
    return true;
  }

  /** Ids of the members --initial-cluster named (the same list on every node of a cluster). */
  founders(): number[] {
    return this.o.initial.map((m) => m.id);
  }

  /** Member records as applied locally. */
  async records(): Promise<MemberRecord[]> {
    const res = await this.o.store.range(MEMBER_PREFIX);
    return res.kvs.map((kv) => parseRecord(kv.value)).filter((r): r is MemberRecord => r !== undefined);
  }

  /** Names removed from the cluster and not added back (their removal markers). */
  private async removedNames(): Promise<Set<string>> {
    const res = await this.o.store.range(REMOVED_PREFIX);
    return new Set(res.kvs.map((kv) => kv.key.slice(REMOVED_PREFIX.length)));
  }

  /**
   * Rewrites `name`'s record as `next` makes it from the record as it is, only if no other write
   * of the record came in between (a compare on its modRevision): this node's registration and
   * the leader's promotion of it may race, and a blind write of a stale copy would undo the
   * other (a promoted member listed as a learner again). `next` returning undefined writes
   * nothing. A lost race is read again after a ReadIndex barrier and retried.
   */
  private async update(name: string, next: (current: MemberRecord | undefined) => MemberRecord | undefined): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      if (attempt > 0) await this.o.proposer.readBarrier();
      const kv = await this.o.store.get(MEMBER_PREFIX + name);
      const r = next(kv ? parseRecord(kv.value) : undefined);
      if (r === undefined) return;
      const key = MEMBER_PREFIX + r.name;
      const res = await this.o.proposer.propose({
        compares: [{ key, target: 'modRevision', value: kv?.modRevision ?? 0 }],
        success: [{ type: 'put', key, value: enc.encode(JSON.stringify(r)) }],
        failure: [],
      });
      if (res.succeeded) return;
      if (attempt >= 4) throw new MembershipConflictError(`the record of ${name} kept changing while it was written`);
    }
  }

  /** Writes `r`; `added` (a member added by add()) also clears a removal marker of its name. */
  private async write(r: MemberRecord, added = false): Promise<void> {
    await this.o.proposer.propose({
      compares: [],
      success: [
        { type: 'put', key: MEMBER_PREFIX + r.name, value: enc.encode(JSON.stringify(r)) },
        ...(added ? [{ type: 'delete' as const, key: REMOVED_PREFIX + r.name }] : []),
      ],
      failure: [],
    });
  }

  /**
   * Makes sure this node's own record exists and names its current URLs and log formats (the
   * node runs it at start, again after a failure, and every 10 s to put right a record another
   * node or an earlier build rewrote). Founding members register as voters; a node that joined
   * keeps the role the leader wrote for it. Throws while this node is not in the configuration
   * applied here.
   */
  async registerSelf(): Promise<void> {
    // Not (yet, or any more) a member: a joining node waits for the configuration that adds it,
    // and a removed one must not bring its record back.
    const { voters, learners } = this.o.node.members();
    if (!voters.includes(this.o.selfId) && !learners.includes(this.o.selfId))
      throw new Error(`${this.o.selfName} is not a member of the configuration applied here`);
    const formats = [...LOG_FORMATS_APPLIED];
    const founding = this.o.initial.some((m) => m.name === this.o.selfName);
    await this.update(this.o.selfName, (mine) => {
      if (
        mine &&
        mine.clientURL === this.o.selfClientURL &&
        mine.peerURL === this.o.selfPeerURL &&
        mine.etcdClientURL === this.o.selfEtcdClientURL &&
        JSON.stringify(mine.logFormats ?? []) === JSON.stringify(formats)
      )
        return undefined;
      return {
        name: this.o.selfName,
        id: this.o.selfId,
        peerURL: this.o.selfPeerURL,
        clientURL: this.o.selfClientURL,
        ...(this.o.selfEtcdClientURL ? { etcdClientURL: this.o.selfEtcdClientURL } : {}),
        logFormats: formats,
        role: mine?.role ?? (founding ? 'voter' : 'learner'),
      };
    });
  }

  /** Members with roles; progress figures when this node leads. */
  async list(opts: { local?: boolean } = {}): Promise<{ leader?: string; term: number; reportedBy: string; linearizable: boolean; members: MemberView[] }> {
    // By default the records are read after a ReadIndex barrier, like a "Most Recent" API read:
    // any node answers with every change acknowledged before the request (a node cut off from
    // the majority fails instead). `local` answers from this node's replica at once, e.g. to
    // look at a minority side during a partition.
    if (!opts.local) await this.o.proposer.readBarrier();
    const st = this.o.node.status();
    const records = await this.records();
    const byId = new Map(records.map((r) => [r.id, r]));
    // Founding members that have not registered yet still belong to the list; removed ones not.
    const removed = await this.removedNames();
    for (const m of this.o.initial) {
      if (!byId.has(m.id) && !removed.has(m.name)) byId.set(m.id, { name: m.name, id: m.id, peerURL: m.peerAddress, role: 'voter' });
    }
    const progress = new Map(st.peers.map((p) => [p.id, p]));
    const members: MemberView[] = [...byId.values()]
      .map((r) => {
        const p = progress.get(r.id);
        const v: MemberView = { ...r, isLeader: r.id === st.lead };
        if (p) {
          v.role = p.learner ? 'learner' : 'voter';
          v.matchIndex = p.match;
          v.progress = p.state;
        }
        return v;
      })
      .sort((a, b) => a.name.localeCompare(b.name));
    return { leader: byId.get(st.lead)?.name, term: st.term, reportedBy: this.o.selfName, linearizable: !opts.local, members };
  }

  /**
   * The leader removing itself, as etcd allows: leadership goes first to the voter whose log is
   * most complete (Raft's transfer, thesis 3.10, which waits for it to catch up), and the new
   * leader carries out the removal (forwarded like a change sent to a follower). Fails with
   * MembershipConflictError when no other voter exists or leadership did not move in time
   * (nothing was changed then; the caller may retry).
   */
  private async removeSelfAsLeader(name: string, opts: ChangeOptions): Promise<void> {
    if (this.changing) throw new MembershipConflictError('another membership change is in progress');
    const st = this.o.node.status();
    const target = st.peers.filter((p) => p.id !== this.o.selfId && !p.learner).sort((a, b) => b.match - a.match)[0];
    if (!target) throw new MembershipConflictError(`${name} is the only voter: the last voter of a cluster cannot be removed`);
    if (!this.forwarder) throw new MembershipConflictError(`${name} is the leader and cannot reach another member to carry out its removal`);
    this.changing = true;
    try {
      this.o.node.transferLeadership(target.id);
      const deadline = Date.now() + LEADER_TRANSFER_TIMEOUT_MS;
      while (this.o.node.status().lead !== target.id) {
        if (Date.now() > deadline) throw new MembershipConflictError(`${name} is the leader and leadership did not move to another voter in time; retry`);
        await new Promise((r) => setTimeout(r, 20));
      }
    } finally {
      this.changing = false;
    }
    const leader = await this.reachableRecord(target.id);
    if (!leader) throw new MembershipConflictError(`no record of the new leader (id ${target.id}); retry`);
    await this.forwarder({ op: 'remove', name, requestedBy: opts.requestedBy ?? '' }, leader);
  }

  /**
   * The record of member `id` for reaching it: its replicated record, or for a founding member
   * that has not written one yet, its --initial-cluster address.
   */
  private async reachableRecord(id: number): Promise<MemberRecord | undefined> {
    const founding = this.o.initial.find((m) => m.id === id);
    return (
      (await this.records()).find((r) => r.id === id) ?? (founding && { name: founding.name, id: founding.id, peerURL: founding.peerAddress, role: 'voter' })
    );
  }

  /** Changes that reach a node other than the leader are sent to the leader through `f`. */
  setForwarder(f: MembershipForwarder | undefined): void {
    this.forwarder = f;
  }

  /**
   * Undefined on the leader. Elsewhere the leader's record when the change can be forwarded to
   * it; else NotLeaderError naming the leader (no leader known, no forwarder, or the change was
   * itself forwarded here).
   */
  private async leaderToForwardTo(opts: ChangeOptions): Promise<MemberRecord | undefined> {
    const st = this.o.node.status();
    if (st.role === 'leader') return undefined;
    const leader = st.lead === 0 ? undefined : await this.reachableRecord(st.lead);
    if (leader && this.forwarder && !opts.forwarded) return leader;
    throw new NotLeaderError(
      leader ? `not the leader: membership changes go to ${leader.name}${leader.clientURL ? ` at ${leader.clientURL}` : ''}` : 'no leader known; retry later',
      leader?.name,
      leader?.clientURL,
    );
  }

  /**
   * Adds `name` at `peerURL` as a learner, waits for it to catch up, then promotes it. Resolves
   * with the final role ('learner' when it did not catch up within the timeout; promote later by
   * posting again, or with promote()). Throws ClusterConfigError, NotLeaderError, MembershipConflictError.
   */
  async add(name: string, peerURLRaw: string, opts: ChangeOptions = {}): Promise<MemberRecord> {
    const bad = validateNodeName(name);
    if (bad) throw new ClusterConfigError(bad);
    const peerURL = normalizePeerAddress(peerURLRaw);
    const leader = await this.leaderToForwardTo(opts);
    if (leader) return (await this.forwarder!({ op: 'add', name, peerURL, requestedBy: opts.requestedBy ?? '' }, leader)) as MemberRecord;
    if (this.changing) throw new MembershipConflictError('another membership change is in progress');
    this.changing = true;
    try {
      const id = nodeIdFromName(name);
      const records = await this.records();
      const clash = records.find((r) => r.id === id && r.name !== name) ?? this.o.initial.find((m) => m.id === id && m.name !== name);
      if (clash) throw new MembershipConflictError(`node name ${name} has the same id as ${clash.name}`);
      const existing = records.find((r) => r.name === name);
      const inConfig = this.o.node.status().peers.find((p) => p.id === id);
      let rec: MemberRecord = { name, id, peerURL, clientURL: existing?.clientURL, role: inConfig && !inConfig.learner ? 'voter' : 'learner' };
      // The record first: every node learns the address before Raft sends the learner anything.
      await this.write(rec, true);
      if (!inConfig) await this.o.node.addLearner(id);
      if (rec.role === 'learner') {
        if (await this.waitCaughtUp(id)) {
          await this.o.node.promote(id);
          // The node may have registered itself meanwhile (its URLs, its log formats): keep that.
          const promoted = rec;
          await this.update(name, (current) => (rec = { ...(current ?? promoted), role: 'voter' }));
        }
      }
      return rec;
    } finally {
      this.changing = false;
    }
  }

  /**
   * Promotes learner `name` to voter now, as etcd's MemberPromote does: refused (no waiting) when
   * the member is a voter already or has not caught up with the leader's log. Resolves with the
   * member's record. Throws MembershipConflictError, NotLeaderError.
   */
  async promote(name: string, opts: ChangeOptions = {}): Promise<MemberRecord> {
    const leader = await this.leaderToForwardTo(opts);
    if (leader) return (await this.forwarder!({ op: 'promote', name, requestedBy: opts.requestedBy ?? '' }, leader)) as MemberRecord;
    if (this.changing) throw new MembershipConflictError('another membership change is in progress');
    const rec = (await this.records()).find((r) => r.name === name);
    const initial = (await this.removedNames()).has(name) ? undefined : this.o.initial.find((m) => m.name === name);
    const id = rec?.id ?? initial?.id;
    if (id === undefined) throw new MembershipConflictError(`no member named ${name}`);
    const st = this.o.node.status();
    const p = st.peers.find((x) => x.id === id);
    if (!p?.learner) throw new MembershipConflictError(NOT_A_LEARNER);
    if (!caughtUp(p.match, st.commit)) throw new MembershipConflictError(LEARNER_NOT_READY);
    this.changing = true;
    try {
      await this.o.node.promote(id);
      const base: MemberRecord = rec ?? { name, id, peerURL: initial!.peerAddress, role: 'voter' };
      let out: MemberRecord = { ...base, role: 'voter' };
      await this.update(name, (current) => (out = { ...(current ?? base), role: 'voter' }));
      return out;
    } finally {
      this.changing = false;
    }
  }

  /** True once the learner's match index reached the leader's commit index (within the timeout). */
  private async waitCaughtUp(id: number): Promise<boolean> {
    const deadline = Date.now() + (this.o.catchUpTimeoutMs ?? 60_000);
    while (Date.now() < deadline) {
      const st = this.o.node.status();
      if (st.role !== 'leader') throw new NotLeaderError('lost leadership while the learner caught up; retry on the new leader');
      const p = st.peers.find((x) => x.id === id);
      if (p && caughtUp(p.match, st.commit)) return true;
      await new Promise((r) => setTimeout(r, 100));
    }
    return false;
  }

  /** Removes `name` from the Raft configuration and deletes its record. */
  async remove(name: string, opts: ChangeOptions = {}): Promise<void> {
    const leader = await this.leaderToForwardTo(opts);
    if (leader) {
      await this.forwarder!({ op: 'remove', name, requestedBy: opts.requestedBy ?? '' }, leader);
      return;
    }
    if (this.changing) throw new MembershipConflictError('another membership change is in progress');
    const rec = (await this.records()).find((r) => r.name === name);
    const initial = (await this.removedNames()).has(name) ? undefined : this.o.initial.find((m) => m.name === name);
    const id = rec?.id ?? initial?.id;
    if (id === undefined) throw new MembershipConflictError(`no member named ${name}`);
    if (id === this.o.selfId) return this.removeSelfAsLeader(name, opts);
    this.changing = true;
    try {
      if (this.o.node.status().peers.some((p) => p.id === id)) await this.o.node.removeNode(id);
      await this.o.proposer.propose({
        compares: [],
        success: [
          { type: 'delete', key: MEMBER_PREFIX + name },
          { type: 'put', key: REMOVED_PREFIX + name, value: enc.encode(String(id)) },
        ],
        failure: [],
      });
    } finally {
      this.changing = false;
    }
  }
}
