/**
 * A pod's `eviction` subresource (conventions: a virtual type; kube's
 * pkg/registry/core/pod/storage/eviction.go): POST a policy/v1 Eviction naming the pod, and the pod
 * is deleted with the Eviction's DeleteOptions, as `kubectl drain` does it. No
 * PodDisruptionBudget is served here, so no budget can hold an eviction back: every eviction of
 * an existing pod is a delete. The answer is kube's: 201 with a Status of Success.
 */
import { Errors, DeleteOptionsSchema, defineSchema, fieldOf, objectRootSchema, type KubeObject } from '@app/apimachinery';
import type { DeleteOptions, RequestContext, SubresourceDeclaration } from '@app/registry';
import { DeleteOptionsQueryDto } from '../../../http/options.dto.js';

/** What the handler uses of the server; the core group module fills it in at start. */
export interface EvictionDeps {
  /** Deletes the pod as a DELETE request would (404 when it does not exist). */
  deletePod(ns: string, name: string, options: DeleteOptions, ctx: RequestContext): Promise<void>;
}

/** The deps, set once the stores exist. */
export class EvictionPorts {
  deps?: EvictionDeps;
}

/** policy/v1 Eviction. */
export const EvictionSchema = defineSchema(
  'io.k8s.api.policy.v1.Eviction',
  objectRootSchema({ group: 'policy', version: 'v1', kind: 'Eviction' }, 'Evicts a pod: the body of its eviction subresource.', {
    deleteOptions: fieldOf(DeleteOptionsSchema, { description: 'How the pod is deleted.' }),
  }),
);

/** The subresource, with the ports its handler uses. */
export function evictionSubresource(ports: EvictionPorts): SubresourceDeclaration {
  return {
    verbs: ['create'],
    kind: { group: 'policy', version: 'v1', kind: 'Eviction', protobufMessage: 'k8s.io.api.policy.v1.Eviction', schema: EvictionSchema },
    rest: {
      async create(ns: string, name: string, eviction: KubeObject, ctx: RequestContext): Promise<KubeObject> {
        if (!ports.deps) throw Errors.internal('the eviction subresource is not wired');
        if ((eviction.metadata?.name ?? '') !== name) throw Errors.badRequest('name in URL does not match name in Eviction object');
        const options = new DeleteOptionsQueryDto().toDeleteOptions(eviction.deleteOptions ?? {});
        const dryRun = ctx.dryRun || (options.dryRun?.length ?? 0) > 0;
        await ports.deps.deletePod(ns, name, options, { ...ctx, dryRun });
        return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 } as unknown as KubeObject;
      },
    },
  };
}
