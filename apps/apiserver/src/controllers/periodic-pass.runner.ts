/**
 * A controller that works in periodic passes over the pods and nodes (the node lifecycle, taint
 * eviction and pod garbage collectors): a pass every `period()` ms while this node holds the
 * controller Lease, never two at once; a failed pass is logged and the next one tries again.
 * Writes go through the stores as the controller's kube-system service account.
 */
import type { KubeObject } from '@app/apimachinery';
import type { KindDeclaration, KindRegistry } from '@app/registry';
import type { Storage } from '@app/storage';
import { CollectionReader, ReaderSet } from '../pipeline/collection-reader.js';
import type { Projection } from '../pipeline/watched-collection.js';
import type { StoreFactory } from '../tokens.js';
import { controllerContext, type ControllerRunner } from './controller.runner.js';

export abstract class PeriodicPassRunner implements ControllerRunner {
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  /** The collections read through `collection`, started and stopped with the controller. */
  private readonly readerSet = new ReaderSet();

  protected constructor(
    protected readonly registry: KindRegistry,
    protected readonly storage: Storage,
    protected readonly stores: StoreFactory,
    /** The component named in logs and as field manager. */
    private readonly component: string,
    /** The kube-system service account it writes as. */
    private readonly user: string,
  ) {}

  protected decl(group: string, plural: string): KindDeclaration | undefined {
    return this.registry.lookup(group, 'v1', plural) as KindDeclaration | undefined;
  }

  protected abstract period(): number;
  protected abstract run(): Promise<void>;
  protected reset(): void {}

  start(): void {
    if (!this.decl('', 'pods') || !this.decl('', 'nodes')) return;
    this.timer = setInterval(() => void this.pass(), this.period());
    this.timer.unref();
    this.readerSet.start();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.readerSet.stop();
    this.reset();
  }

  /**
   * A collection the passes read: from a watch-fed copy (shared with other controllers reading it
   * in the same projection) while the controller runs, else from storage (CollectionReader).
   */
  protected collection(group: string, plural: string, label: string, project?: Projection<KubeObject>): CollectionReader {
    return this.readerSet.add(new CollectionReader(this.storage, () => this.decl(group, plural), label, project));
  }

  /** One pass now (none while another runs, or once stopped). */
  async pass(): Promise<void> {
    if (this.running || !this.timer) return;
    this.running = true;
    try {
      await this.run();
    } catch (e) {
      process.stderr.write(`${this.component}: ${(e as Error).message}\n`);
    } finally {
      this.running = false;
    }
  }

  /** Updates a pod (namespaced) or a node, conditional on its resourceVersion. */
  protected write(obj: KubeObject, subresource?: 'status'): Promise<{ object: KubeObject }> {
    const plural = obj.metadata.namespace ? 'pods' : 'nodes';
    return this.stores.storeFor(this.decl('', plural)!).update(obj.metadata.namespace ?? '', obj.metadata.name ?? '', obj, {
      ctx: controllerContext(this.user),
      fieldValidation: 'Ignore',
      fieldManager: this.component,
      ...(subresource ? { subresource } : {}),
    });
  }
}
