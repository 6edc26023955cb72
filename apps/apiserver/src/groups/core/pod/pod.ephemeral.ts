/**
 * A pod's `ephemeralcontainers` subresource (kube's EphemeralContainersREST, what `kubectl
 * debug` patches): GET answers the pod; PUT and PATCH change only `spec.ephemeralContainers`,
 * everything else (the rest of spec, status, metadata) is kept as stored. Ephemeral containers
 * are only added: one that exists may be neither removed nor changed, its name is unique among
 * all the pod's containers, and it sets none of the fields that serve (ports, probes,
 * lifecycle, resources) (pod.validation.ts). A change bumps the pod's generation, as a spec
 * change does. On create, and through the pod's own update, they cannot be set.
 */
import { isDeepStrictEqual } from 'node:util';
import { replaceContents, type SubresourceDeclaration, type SubresourceStrategy } from '@app/registry';
import { asMap } from '../core.helpers.js';
import { defaultEphemeralContainers } from './pod.strategy.js';
import { validateEphemeralContainersUpdate, validatePodSpec } from './pod.validation.js';

/** The strategy of pods/ephemeralcontainers. */
export const EPHEMERAL_CONTAINERS_STRATEGY: SubresourceStrategy = {
  prepareForUpdate(obj, old) {
    const next = structuredClone(old);
    const spec = asMap(next.spec);
    const ephemeral = asMap(obj.spec).ephemeralContainers;
    if (ephemeral === undefined || ephemeral === null) delete spec.ephemeralContainers;
    else spec.ephemeralContainers = ephemeral;
    next.spec = spec;
    defaultEphemeralContainers(spec);
    if (!isDeepStrictEqual(next.spec, old.spec)) next.metadata.generation = ((old.metadata.generation as number | undefined) ?? 0) + 1;
    replaceContents(obj, next);
  },
  validateUpdate(obj, old) {
    return [...validatePodSpec(asMap(obj.spec)), ...validateEphemeralContainersUpdate(asMap(obj.spec), asMap(old.spec))];
  },
};

/** The `ephemeralcontainers` subresource declaration. */
export function ephemeralContainersSubresource(): SubresourceDeclaration {
  return { verbs: ['get', 'patch', 'update'], strategy: EPHEMERAL_CONTAINERS_STRATEGY };
}
