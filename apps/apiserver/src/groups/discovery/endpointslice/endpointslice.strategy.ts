/**
 * EndpointSlice behaviour (pkg/registry/discovery/endpointslice, Kubernetes 1.33):
 *  - generation is 1 on create and goes up by one on an update that changes anything outside
 *    metadata (addressType, endpoints, ports) or changes the labels;
 *  - a v1 write clears every endpoint's deprecatedTopology (the v1beta1 field), on update only
 *    when the endpoints changed;
 *  - hints.forNodes belongs to the alpha PreferSameTrafficDistribution gate, off here as in
 *    1.33's defaults: dropped on create, and on update unless the stored slice already uses it.
 */
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '@app/apimachinery';
import type { Strategy } from '@app/registry';
import { asMap } from '../../core/core.helpers.js';
import { validateEndpointSlice, validateEndpointSliceUpdate } from './endpointslice.validation.js';

type Obj = Record<string, unknown>;

const endpointsOf = (o: KubeObject): Obj[] =>
  Array.isArray(o.endpoints) ? (o.endpoints as unknown[]).filter((e): e is Obj => !!e && typeof e === 'object') : [];

/** The object without apiVersion, kind and metadata: what a generation counts. */
function body(o: KubeObject): Obj {
  const { apiVersion: _a, kind: _k, metadata: _m, ...rest } = o;
  return rest;
}

function dropTopology(o: KubeObject): void {
  for (const ep of endpointsOf(o)) delete ep.deprecatedTopology;
}

function dropNodeHints(o: KubeObject): void {
  for (const ep of endpointsOf(o)) {
    const hints = ep.hints;
    if (hints && typeof hints === 'object') delete (hints as Obj).forNodes;
  }
}

const usesNodeHints = (o: KubeObject): boolean =>
  endpointsOf(o).some((ep) => {
    const nodes = asMap(ep.hints).forNodes;
    return Array.isArray(nodes) && nodes.length > 0;
  });

/** The EndpointSlice strategy (generation: 'create' in the declaration; updates bump it here). */
export const endpointSliceStrategy: Strategy = {
  prepareForCreate(eps) {
    dropNodeHints(eps);
    dropTopology(eps);
  },
  prepareForUpdate(eps, old) {
    if (!isDeepStrictEqual(body(eps), body(old)) || !isDeepStrictEqual(eps.metadata.labels ?? {}, old.metadata.labels ?? {})) {
      eps.metadata.generation = ((old.metadata.generation as number | undefined) ?? 0) + 1;
    }
    if (!usesNodeHints(old)) dropNodeHints(eps);
    if (!isDeepStrictEqual(eps.endpoints, old.endpoints)) dropTopology(eps);
  },
  validate: validateEndpointSlice,
  validateUpdate: validateEndpointSliceUpdate,
};
