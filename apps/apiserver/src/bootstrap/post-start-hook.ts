/**
 * Post-start hooks (kube-apiserver's of the same name): work that runs once the server listens,
 * in `order`, each to completion before the next: the first-start objects, the admin
 * kubeconfig, the controller election, the cluster self-registration. A provider in any module
 * marks itself with `@PostStartHook({ name, order })` and implements `PostStartHookProvider`.
 * The node is ready only after every hook has completed, and /readyz lists each as
 * `poststarthook/<name>`.
 */
import { Injectable } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';

/** The decorator and its metadata. */
export const PostStartHook = DiscoveryService.createDecorator<{ name: string; order: number }>();

/** What a post-start hook provider implements. */
export interface PostStartHookProvider {
  runPostStartHook(): Promise<void>;
}

/** State of one hook. */
export interface PostStartHookStatus {
  name: string;
  done: boolean;
}

/** Finds and runs the post-start hooks. */
@Injectable()
export class PostStartHooks {
  private hooks: Array<{ name: string; order: number; run: () => Promise<void>; done: boolean }> | undefined;

  constructor(private readonly discovery: DiscoveryService) {}

  private found(): NonNullable<PostStartHooks['hooks']> {
    this.hooks ??= this.discovery
      .getProviders({ metadataKey: PostStartHook.KEY })
      .map((w) => {
        const meta = this.discovery.getMetadataByDecorator(PostStartHook, w)!;
        const p = w.instance as PostStartHookProvider;
        return { ...meta, run: () => p.runPostStartHook(), done: false };
      })
      .sort((a, b) => a.order - b.order);
    return this.hooks;
  }

  /** Runs every hook in order; rejects with the first failure. */
  async runAll(): Promise<void> {
    for (const h of this.found()) {
      await h.run();
      h.done = true;
    }
  }

  /** Each hook and whether it has completed. */
  status(): PostStartHookStatus[] {
    return this.found().map((h) => ({ name: h.name, done: h.done }));
  }

  /** True once every hook has completed. */
  allDone(): boolean {
    return this.found().every((h) => h.done);
  }
}
