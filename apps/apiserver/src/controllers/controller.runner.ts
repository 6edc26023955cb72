/**
 * Marks a provider as a built-in controller run by the controller manager
 * (controllers/controllers.module.ts): it is started when this node acquires the controller
 * Lease and stopped when it loses it or shuts down. A runner builds a fresh controller each
 * time it starts, so a node that leads again starts from a clean state.
 */
import { DiscoveryService } from '@nestjs/core';
import type { RequestContext } from '@app/registry';

/** The decorator and its metadata (the controller's name, as kube-controller-manager names it). */
export const ManagedController = DiscoveryService.createDecorator<{ name: string }>();

/** What a controller provider implements. */
export interface ControllerRunner {
  start(): void;
  stop(): void;
}

/**
 * The request context of a controller's own writes: the service account kube-controller-manager
 * runs it as (`system:serviceaccount:kube-system:<name>`), in `system:masters` since the server
 * writes for itself, and no dry run.
 */
export function controllerContext(serviceAccount: string): RequestContext {
  return {
    user: { username: `system:serviceaccount:kube-system:${serviceAccount}`, groups: ['system:masters', 'system:authenticated'] },
    dryRun: false,
    warnings: [],
    now: () => new Date(),
  } as RequestContext;
}
