/**
 * How a controller reads a collection it syncs against (the pods of a ReplicaSet's namespace,
 * every PersistentVolume) without a storage list per sync: a watch-fed copy (WatchedCollection),
 * read once it holds every write this node has answered for, so the change a sync follows and
 * the controller's own writes are in it. A read while the copy's first list is under way waits
 * for that list (so the readers of a copy just made, as every controller's first syncs after
 * taking the lead, do not each list the collection beside it). While the copy cannot tell
 * (its list failed, during a relist, on external etcd, which has no `settled`), a read goes to
 * storage.
 *
 * A reader reads storage until `start` (the controller's start when it takes the lead); from
 * then the copy is made at the first read, so a controller with nothing to sync keeps none, and
 * `stop` (the controller's stop when it loses the lead) drops it: a read after that goes to
 * storage again and makes no new copy until the next `start`. Controllers make their readers with
 * the `collection` of WatchQueueController or PeriodicPassRunner, which starts and stops them
 * with the controller.
 *
 * Readers of one storage share their copies, as kube's controllers share informers: one copy per
 * collection and projection (the same projection function), made by the first reader that needs
 * it and stopped when the last one holding it stops. The workload controllers, which all read
 * whole pods, keep one copy of the pods between them instead of one each.
 */
import type { KubeObject } from '@app/apimachinery';
import { collectionPrefix, type KindDeclaration } from '@app/registry';
import type { Storage } from '@app/storage';
import { WatchedCollection, type Projection } from './watched-collection.js';

/** A copy and how many readers hold it. */
interface SharedCopy {
  readonly copy: WatchedCollection<KubeObject>;
  holders: number;
}

/** The copies in use, by storage, then collection prefix and projection. */
const sharedCopies = new WeakMap<Storage, Map<string, SharedCopy>>();
/** A number per projection function, for the keys of sharedCopies. */
const projectionIds = new WeakMap<Projection<KubeObject>, number>();
let nextProjectionId = 0;

/** The whole object: the projection of readers given none (one function, so that they share). */
const wholeObject: Projection<KubeObject> = (o) => o;

function copyKey(prefix: string, project: Projection<KubeObject>): string {
  let id = projectionIds.get(project);
  if (id === undefined) projectionIds.set(project, (id = nextProjectionId++));
  return `${id}:${prefix}`;
}

/** The copy of a collection in this projection, made (and started) when no reader holds one. */
function acquireCopy(
  storage: Storage,
  decl: KindDeclaration,
  project: Projection<KubeObject>,
  label: string,
): { key: string; copy: WatchedCollection<KubeObject> } {
  const prefix = collectionPrefix(decl, '');
  const key = copyKey(prefix, project);
  let copies = sharedCopies.get(storage);
  if (!copies) sharedCopies.set(storage, (copies = new Map()));
  let held = copies.get(key);
  if (!held) {
    held = { copy: new WatchedCollection(storage, prefix, project, label, decl.namespaced), holders: 0 };
    copies.set(key, held);
    held.copy.start();
  }
  held.holders++;
  return { key, copy: held.copy };
}

/** Gives a copy back; the last holder stops it. */
function releaseCopy(storage: Storage, key: string): void {
  const copies = sharedCopies.get(storage);
  const held = copies?.get(key);
  if (!held || --held.holders > 0) return;
  held.copy.stop();
  copies!.delete(key);
}

/** How many readers of this storage hold a copy of the collection in this projection (0: none is kept). */
export function sharedCopyHolders(storage: Storage, decl: KindDeclaration, project: Projection<KubeObject> = wholeObject): number {
  return sharedCopies.get(storage)?.get(copyKey(collectionPrefix(decl, ''), project))?.holders ?? 0;
}

/** The readers of one controller, started and stopped together with it. */
export class ReaderSet {
  private readonly readers: CollectionReader[] = [];
  private running = false;

  /** Adds a reader, started at once when the set runs. */
  add(reader: CollectionReader): CollectionReader {
    this.readers.push(reader);
    if (this.running) reader.start();
    return reader;
  }

  /** Stops a reader and takes it out of the set. */
  remove(reader: CollectionReader): void {
    const i = this.readers.indexOf(reader);
    if (i < 0) return;
    this.readers.splice(i, 1);
    reader.stop();
  }

  start(): void {
    this.running = true;
    for (const r of this.readers) r.start();
  }

  stop(): void {
    this.running = false;
    for (const r of this.readers) r.stop();
  }
}

export class CollectionReader {
  private copy: { key: string; copy: WatchedCollection<KubeObject> } | undefined;
  private started = false;

  constructor(
    private readonly storage: Storage,
    /** The kind, looked up at each read (it may be served only later). */
    private readonly decl: () => KindDeclaration | undefined,
    /** Names the copy in log lines. */
    private readonly label: string,
    /** What is kept of each object (all of it by default); reads from storage are projected too. */
    private readonly project: Projection<KubeObject> = wholeObject,
  ) {}

  /** The objects of one namespace. */
  async inNamespace(namespace: string): Promise<KubeObject[]> {
    const copy = await this.current();
    return copy ? copy.inNamespace(namespace) : this.listed(namespace);
  }

  /** Every object of the collection. */
  async all(): Promise<KubeObject[]> {
    const copy = await this.current();
    return copy ? copy.values() : this.listed('');
  }

  /** Lets reads make and use a copy (a copy of an earlier start is dropped first). */
  start(): void {
    this.stop();
    this.started = true;
  }

  /** Drops the copy; reads go to storage until the next `start`. */
  stop(): void {
    this.started = false;
    if (this.copy) releaseCopy(this.storage, this.copy.key);
    this.copy = undefined;
  }

  private async current(): Promise<WatchedCollection<KubeObject> | undefined> {
    if (!this.copy && this.started) this.copy = acquireCopy(this.storage, this.required(), this.project, this.label);
    const copy = this.copy?.copy;
    if (!copy) return undefined;
    // A copy still loading: its list, already under way, answers no later than a list of ours.
    if (!copy.isSynced()) await copy.listEnded();
    return (await copy.current()) ? copy : undefined;
  }

  private async listed(namespace: string): Promise<KubeObject[]> {
    // Objects that do not decode are left out, as the copy leaves them out (WatchedCollection).
    const res = await this.storage.list(collectionPrefix(this.required(), namespace), { consistency: { mode: 'MostRecent' }, skipUndecodable: true });
    const out: KubeObject[] = [];
    for (const o of res.items) {
      const p = this.project(o);
      if (p !== undefined) out.push(p);
    }
    return out;
  }

  private required(): KindDeclaration {
    const decl = this.decl();
    if (!decl) throw new Error(`${this.label}: the kind is not served`);
    return decl;
  }
}
