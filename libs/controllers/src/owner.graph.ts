/**
 * The garbage collector's owner -> dependents graph and its pure decision rules (Kubernetes'
 * garbagecollector GraphBuilder, attemptToDeleteItem and processDeletingDependentsItem,
 * re-derived from the documented behaviour: kubernetes.io "Garbage Collection" and
 * "Owners and Dependents"). Nothing here does I/O: the controller feeds it storage events and
 * acts on the work items and decisions it returns, so every rule is unit-testable.
 *
 * Identity rules (metav1.OwnerReference): an owner is identified by its uid; the reference also
 * names apiVersion (group), kind and name, and all of them must match. A reference from a
 * namespaced dependent resolves to a cluster-scoped owner or to a namespaced owner in the SAME
 * namespace only; a cluster-scoped dependent can only have cluster-scoped owners (a namespaced
 * owner reference from it never resolves and counts as absent).
 */
import type { KubeObject } from '@app/apimachinery';

/** The finalizer that makes the garbage collector orphan an owner's dependents. */
export const FINALIZER_ORPHAN = 'orphan';
/** The finalizer that keeps an owner until its blocking dependents are gone (Foreground). */
export const FINALIZER_FOREGROUND = 'foregroundDeletion';

/** metav1.OwnerReference (the fields the collector reads). */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** Where an object lives and who it is. `namespace` is '' for cluster-scoped objects. */
export interface ObjectIdentity {
  apiVersion: string;
  group: string;
  kind: string;
  namespace: string;
  name: string;
  uid: string;
}

/** One object as the graph knows it. */
export interface GraphNode {
  identity: ObjectIdentity;
  owners: OwnerReference[];
  /** metadata.deletionTimestamp is set. */
  beingDeleted: boolean;
  /** Being deleted with the foregroundDeletion finalizer: waits for its blocking dependents. */
  deletingDependents: boolean;
  /** Being deleted with the orphan finalizer: its dependents must be released first. */
  orphaning: boolean;
}

/** Work the controller must do: re-judge an object (delete it, drop refs, finalize) or orphan its dependents. */
export interface WorkItem {
  kind: 'attemptToDelete' | 'attemptToOrphan';
  uid: string;
}

/** The group of an apiVersion: 'v1' -> '' (core), 'apps/v1' -> 'apps'. */
export function groupOf(apiVersion: string): string {
  const i = apiVersion.indexOf('/');
  return i < 0 ? '' : apiVersion.slice(0, i);
}

/** The well-formed owner references of an object (malformed entries are ignored, never a crash). */
export function ownerReferencesOf(obj: KubeObject): OwnerReference[] {
  const raw = obj.metadata?.ownerReferences;
  if (!Array.isArray(raw)) return [];
  const out: OwnerReference[] = [];
  for (const r of raw as unknown[]) {
    if (!r || typeof r !== 'object') continue;
    const o = r as Record<string, unknown>;
    if (typeof o.uid !== 'string' || !o.uid || typeof o.kind !== 'string' || typeof o.name !== 'string' || typeof o.apiVersion !== 'string') continue;
    const ref: OwnerReference = { apiVersion: o.apiVersion, kind: o.kind, name: o.name, uid: o.uid };
    if (typeof o.controller === 'boolean') ref.controller = o.controller;
    if (typeof o.blockOwnerDeletion === 'boolean') ref.blockOwnerDeletion = o.blockOwnerDeletion;
    out.push(ref);
  }
  return out;
}

/** The finalizers of an object ([] when absent or malformed). */
export function finalizersOf(obj: KubeObject): string[] {
  const f = obj.metadata?.finalizers;
  return Array.isArray(f) ? (f as unknown[]).filter((x): x is string => typeof x === 'string') : [];
}

/** Builds the graph node of a stored object; undefined when it lacks uid, name or type. */
export function nodeFromObject(obj: KubeObject): GraphNode | undefined {
  const m = obj?.metadata;
  if (!m || typeof m.uid !== 'string' || !m.uid || typeof m.name !== 'string' || typeof obj.kind !== 'string' || typeof obj.apiVersion !== 'string') {
    return undefined;
  }
  const beingDeleted = m.deletionTimestamp !== undefined && m.deletionTimestamp !== null;
  const fins = finalizersOf(obj);
  return {
    identity: {
      apiVersion: obj.apiVersion,
      group: groupOf(obj.apiVersion),
      kind: obj.kind,
      namespace: typeof m.namespace === 'string' ? m.namespace : '',
      name: m.name,
      uid: m.uid,
    },
    owners: ownerReferencesOf(obj),
    beingDeleted,
    deletingDependents: beingDeleted && fins.includes(FINALIZER_FOREGROUND),
    orphaning: beingDeleted && fins.includes(FINALIZER_ORPHAN),
  };
}

/**
 * True when `owner` is the object `ref` (held by a dependent in `dependentNamespace`, '' when
 * the dependent is cluster-scoped) points at: same uid, group, kind and name, and an owner
 * namespace allowed by the scope rules above.
 */
export function referenceMatches(ref: OwnerReference, dependentNamespace: string, owner: ObjectIdentity): boolean {
  if (owner.uid !== ref.uid || owner.kind !== ref.kind || owner.name !== ref.name || owner.group !== groupOf(ref.apiVersion)) return false;
  if (owner.namespace === '') return true;
  return dependentNamespace !== '' && owner.namespace === dependentNamespace;
}

/** How one owner reference of a dependent stands. */
export type OwnerState =
  /** The owner exists and is not waiting for its dependents. */
  | 'solid'
  /** The owner is absent (deleted, never existed, another uid under the name, out of scope). */
  | 'dangling'
  /** The owner is being deleted in the foreground and waits for its dependents. */
  | 'waiting'
  /** The owner's kind is not served: nothing can be concluded yet. */
  | 'unknown';

/** What to do with a dependent after judging its owners. */
export type DependentDecision =
  | { action: 'none' }
  /** Keep the object but drop references to these owner uids (it still has a solid owner). */
  | { action: 'removeOwnerReferences'; uids: string[] }
  /** Set blockOwnerDeletion=false on references to these owner uids (cycle breaking), then delete. */
  | { action: 'delete'; policy: 'Background' | 'Foreground' | 'Orphan'; unblock: string[] };

/**
 * Decides a dependent's fate from its owner references (Kubernetes attemptToDeleteItem):
 * - no references: leave it;
 * - at least one solid owner: keep it, dropping references to dangling and waiting owners
 *   (so a foreground owner stops waiting for an object that is not going away);
 * - an unknown owner (kind not served) and no solid one: leave it for a later resync;
 * - every owner absent or waiting: delete it. When some owner waits and the object has
 *   dependents of its own, delete it in the foreground so the chain is deleted bottom-up; if one
 *   of those dependents is itself deleting in the foreground (a possible cycle), first unblock
 *   the references to the waiting owners. Otherwise honour an orphan/foregroundDeletion
 *   finalizer already on the object, else delete in the background.
 */
export function decideDependent(input: {
  refs: Array<{ ref: OwnerReference; state: OwnerState }>;
  finalizers: string[];
  hasDependents: boolean;
  aDependentIsDeletingDependents: boolean;
}): DependentDecision {
  const { refs } = input;
  if (refs.length === 0) return { action: 'none' };
  const solid = refs.filter((r) => r.state === 'solid');
  const dangling = refs.filter((r) => r.state === 'dangling');
  const waiting = refs.filter((r) => r.state === 'waiting');
  const unknown = refs.filter((r) => r.state === 'unknown');
  if (solid.length > 0) {
    const drop = [...dangling, ...waiting].map((r) => r.ref.uid);
    return drop.length ? { action: 'removeOwnerReferences', uids: [...new Set(drop)] } : { action: 'none' };
  }
  if (unknown.length > 0) return { action: 'none' };
  if (waiting.length > 0 && input.hasDependents) {
    const unblock = input.aDependentIsDeletingDependents ? waiting.filter((r) => r.ref.blockOwnerDeletion === true).map((r) => r.ref.uid) : [];
    return { action: 'delete', policy: 'Foreground', unblock };
  }
  if (input.finalizers.includes(FINALIZER_ORPHAN)) return { action: 'delete', policy: 'Orphan', unblock: [] };
  if (input.finalizers.includes(FINALIZER_FOREGROUND)) return { action: 'delete', policy: 'Foreground', unblock: [] };
  return { action: 'delete', policy: 'Background', unblock: [] };
}

/**
 * The graph: nodes by uid and an index owner uid -> dependent uids. The index is keyed by the
 * owner's uid whether or not the owner is (still) a node, so an owner that disappears still
 * finds the dependents that point at it. Updates are O(references of the object changed).
 */
export class OwnerGraph {
  private readonly nodes = new Map<string, GraphNode>();
  private readonly dependents = new Map<string, Set<string>>();

  /** Number of objects known. */
  get size(): number {
    return this.nodes.size;
  }

  /** The node of a uid, if known. */
  get(uid: string): GraphNode | undefined {
    return this.nodes.get(uid);
  }

  /** Every known uid. */
  uids(): string[] {
    return [...this.nodes.keys()];
  }

  /** Known objects whose ownerReferences name `ownerUid`. */
  dependentsOf(ownerUid: string): GraphNode[] {
    const s = this.dependents.get(ownerUid);
    if (!s) return [];
    const out: GraphNode[] = [];
    for (const uid of s) {
      const n = this.nodes.get(uid);
      if (n) out.push(n);
    }
    return out;
  }

  /** Dependents whose reference to `ownerUid` has blockOwnerDeletion=true (what Foreground waits for). */
  blockingDependentsOf(ownerUid: string): GraphNode[] {
    return this.dependentsOf(ownerUid).filter((d) => d.owners.some((r) => r.uid === ownerUid && r.blockOwnerDeletion === true));
  }

  /**
   * True when the owner a reference names is known to the graph and matches it (scope rules
   * included). False means "not known here": the caller confirms absence with a live read.
   */
  ownerKnown(ref: OwnerReference, dependentNamespace: string): GraphNode | undefined {
    const n = this.nodes.get(ref.uid);
    return n && referenceMatches(ref, dependentNamespace, n.identity) ? n : undefined;
  }

  /** Applies an ADDED or MODIFIED object; returns the work the change calls for. */
  upsert(obj: KubeObject): WorkItem[] {
    const node = nodeFromObject(obj);
    if (!node) return [];
    const uid = node.identity.uid;
    const old = this.nodes.get(uid);
    this.nodes.set(uid, node);
    const work: WorkItem[] = [];
    const oldOwners = old?.owners ?? [];
    for (const ref of oldOwners) {
      if (!node.owners.some((r) => r.uid === ref.uid)) this.unindex(ref.uid, uid);
      // An owner waiting in the foreground re-checks when a blocking reference to it goes away.
      const stillBlocks = node.owners.some((r) => r.uid === ref.uid && r.blockOwnerDeletion === true);
      if (ref.blockOwnerDeletion === true && !stillBlocks && this.nodes.get(ref.uid)?.deletingDependents) {
        work.push({ kind: 'attemptToDelete', uid: ref.uid });
      }
    }
    for (const ref of node.owners) {
      let s = this.dependents.get(ref.uid);
      if (!s) this.dependents.set(ref.uid, (s = new Set()));
      s.add(uid);
    }
    // A dependent with an owner not known here (absent, wrong scope) or waiting in the
    // foreground must be judged.
    if (this.needsJudging(node)) work.push({ kind: 'attemptToDelete', uid });
    if (node.deletingDependents && !old?.deletingDependents) {
      // Foreground deletion started: every dependent goes, and the owner may already be done.
      work.push({ kind: 'attemptToDelete', uid });
      for (const d of this.dependentsOf(uid)) work.push({ kind: 'attemptToDelete', uid: d.identity.uid });
    }
    if (node.orphaning && !old?.orphaning) work.push({ kind: 'attemptToOrphan', uid });
    return dedupe(work);
  }

  /** Applies a DELETED object; returns the work its disappearance calls for. */
  remove(obj: KubeObject): WorkItem[] {
    const uid = typeof obj?.metadata?.uid === 'string' ? obj.metadata.uid : undefined;
    return uid ? this.removeUid(uid) : [];
  }

  /** Forgets a uid (DELETED event, or absent from a relist). */
  removeUid(uid: string): WorkItem[] {
    const old = this.nodes.get(uid);
    if (!old) return [];
    this.nodes.delete(uid);
    const work: WorkItem[] = [];
    for (const ref of old.owners) {
      this.unindex(ref.uid, uid);
      if (this.nodes.get(ref.uid)?.deletingDependents) work.push({ kind: 'attemptToDelete', uid: ref.uid });
    }
    // Its dependents may now be dangling.
    for (const d of this.dependentsOf(uid)) work.push({ kind: 'attemptToDelete', uid: d.identity.uid });
    return dedupe(work);
  }

  /**
   * The periodic resync's work, computed from memory (no storage relist): dependents with an
   * owner not known here or waiting, owners waiting for dependents, owners to orphan.
   */
  resyncWork(): WorkItem[] {
    const work: WorkItem[] = [];
    for (const [uid, n] of this.nodes) {
      if (n.deletingDependents || this.needsJudging(n)) work.push({ kind: 'attemptToDelete', uid });
      if (n.orphaning) work.push({ kind: 'attemptToOrphan', uid });
    }
    return work;
  }

  private needsJudging(node: GraphNode): boolean {
    if (node.beingDeleted) return false;
    return node.owners.some((ref) => {
      const o = this.ownerKnown(ref, node.identity.namespace);
      return !o || o.deletingDependents;
    });
  }

  private unindex(ownerUid: string, depUid: string): void {
    const s = this.dependents.get(ownerUid);
    if (!s) return;
    s.delete(depUid);
    if (s.size === 0) this.dependents.delete(ownerUid);
  }
}

function dedupe(work: WorkItem[]): WorkItem[] {
  const seen = new Set<string>();
  return work.filter((w) => {
    const k = `${w.kind}/${w.uid}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
