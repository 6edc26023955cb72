/**
 * How a controller reads a collection it syncs against (the pods of a ReplicaSet's namespace,
 * every PersistentVolume) without a storage list per sync: a watch-fed copy (WatchedCollection),
 * read once it holds every write this node has answered for, so the change a sync follows and
 * the controller's own writes are in it. While it cannot tell (before the first list, during a
 * relist, on external etcd, which has no `settled`), a read goes to storage as before.
 *
 * A reader reads storage until `start` (the controller's start when it takes the lead); from
 * then the copy is made at the first read, so a controller with nothing to sync keeps none, and
 * `stop` (the controller's stop when it loses the lead) drops it: a read after that goes to
 * storage again and makes no new copy until the next `start`. Controllers make their readers with
 * WatchQueueController's `collection`, which starts and stops them with the controller.
 */
import type { KubeObject } from '@app/apimachinery';
import { collectionPrefix, type KindDeclaration } from '@app/registry';
import type { Storage } from '@app/storage';
import { WatchedCollection, type Projection } from './watched-collection.js';

export class CollectionReader {
  private copy: WatchedCollection<KubeObject> | undefined;
  private started = false;

  constructor(
    private readonly storage: Storage,
    /** The kind, looked up at each read (it may be served only later). */
    private readonly decl: () => KindDeclaration | undefined,
    /** Names the copy in log lines. */
    private readonly label: string,
    /** What is kept of each object (all of it by default); reads from storage are projected too. */
    private readonly project: Projection<KubeObject> = (o) => o,
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
    this.copy?.stop();
    this.copy = undefined;
  }

  private async current(): Promise<WatchedCollection<KubeObject> | undefined> {
    if (!this.copy && this.started) {
      const decl = this.required();
      this.copy = new WatchedCollection(this.storage, collectionPrefix(decl, ''), this.project, this.label, decl.namespaced);
      this.copy.start();
    }
    const copy = this.copy;
    return copy && (await copy.current()) ? copy : undefined;
  }

  private async listed(namespace: string): Promise<KubeObject[]> {
    const res = await this.storage.list(collectionPrefix(this.required(), namespace), { consistency: { mode: 'MostRecent' } });
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
