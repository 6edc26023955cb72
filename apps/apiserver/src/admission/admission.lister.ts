/**
 * What an admission plugin reads of one collection (LimitRanges, PriorityClasses,
 * StorageClasses, ServiceAccounts, ...): this node's watch-fed copy (WatchedCollection), so a
 * pod create costs no storage read for them, as kube's plugins read their informers' listers.
 * The copy is used once it holds every write this node has answered for
 * (WatchedCollection.current: a local wait, no quorum round), so a client that creates a
 * LimitRange and then a pod through the same node always sees it applied. Otherwise (before the
 * first list, while the watch catches up after a relist, on external etcd) the read goes to
 * storage at MostRecent. A get of a name the copy does not hold is read from storage too (an
 * object created a moment ago through another node, which this node has not applied yet), as
 * kube's ServiceAccount plugin looks up a missing account live. Readers must not mutate what
 * they get.
 */
import type { KubeObject } from '@app/apimachinery';
import { collectionPrefix, objectKey, type KindDeclaration } from '@app/registry';
import type { Storage } from '@app/storage';
import { WatchedCollection } from '../pipeline/watched-collection.js';

export class AdmissionLister {
  private copy: WatchedCollection<KubeObject> | undefined;

  constructor(
    private readonly storage: Storage,
    private readonly decl: KindDeclaration,
    /** Names the copy in log lines. */
    private readonly label: string,
  ) {}

  start(): void {
    if (this.copy) return;
    this.copy = new WatchedCollection<KubeObject>(this.storage, collectionPrefix(this.decl, ''), (o) => o, this.label, this.decl.namespaced);
    this.copy.start();
  }

  stop(): void {
    this.copy?.stop();
    this.copy = undefined;
  }

  /** The objects of one namespace (`''` for a cluster-scoped kind: all of them). */
  async list(namespace: string): Promise<KubeObject[]> {
    const copy = this.copy;
    if (copy && (await copy.current())) return this.decl.namespaced ? copy.inNamespace(namespace) : [...copy.entries()].map(([, o]) => o);
    const res = await this.storage.list(collectionPrefix(this.decl, namespace), { consistency: { mode: 'MostRecent' }, skipUndecodable: true });
    return res.items;
  }

  /** One object, or undefined when storage does not hold it either. */
  async get(namespace: string, name: string): Promise<KubeObject | undefined> {
    const copy = this.copy;
    const held = copy && (await copy.current()) ? copy.get(this.decl.namespaced ? namespace : '', name) : undefined;
    return held ?? (await this.storage.get(objectKey(this.decl, namespace, name), { mode: 'MostRecent' }));
  }
}
