/**
 * discovery.k8s.io/v1 EndpointSlice as a stored kind. The endpointslicemirroring controller
 * (controllers/endpointslicemirroring.controller.ts) writes the slices of Services without a
 * selector from their Endpoints; nothing writes slices for Services with a selector (no
 * endpointslice controller: pods are never ready here). kubectl's columns (pkg/printers
 * internalversion printEndpointSlice): NAME ADDRESSTYPE PORTS ENDPOINTS AGE.
 */
import type { KubeObject } from '@app/apimachinery';
import { ageOf, type KindDeclaration } from '@app/registry';
import { mapsOf } from '../../core/core.helpers.js';
import { EndpointSliceSchema } from '../discovery.schema.js';
import { endpointSliceStrategy } from './endpointslice.strategy.js';

/** Items a cell shows before ` + N more...`. */
const MAX_SHOWN = 3;

/** listWithMoreString: the first three, then how many more; <unset> when there are none. */
function firstThree(items: string[]): string {
  if (items.length > MAX_SHOWN) return `${items.slice(0, MAX_SHOWN).join(',')} + ${items.length - MAX_SHOWN} more...`;
  return items.length === 0 ? '<unset>' : items.join(',');
}

/** PORTS (formatDiscoveryPorts): each port's number, else its name, else `*`. */
export function endpointSlicePortsCell(o: KubeObject): string {
  return firstThree(mapsOf(o.ports).map((p) => (typeof p.port === 'number' ? String(p.port) : typeof p.name === 'string' ? p.name : '*')));
}

/** ENDPOINTS (formatDiscoveryEndpoints): every address of every endpoint. */
export function endpointSliceEndpointsCell(o: KubeObject): string {
  return firstThree(mapsOf(o.endpoints).flatMap((e) => (Array.isArray(e.addresses) ? e.addresses.map(String) : [])));
}

/** The EndpointSlice declaration. */
export const endpointSliceKind: KindDeclaration = {
  group: 'discovery.k8s.io',
  version: 'v1',
  kind: 'EndpointSlice',
  plural: 'endpointslices',
  singular: 'endpointslice',
  namespaced: true,
  schema: EndpointSliceSchema,
  protobufMessage: 'k8s.io.api.discovery.v1.EndpointSlice',
  strategy: endpointSliceStrategy,
  generation: 'create',
  tableColumns: [
    {
      name: 'AddressType',
      type: 'string',
      priority: 0,
      description: 'Type of the addresses in the slice',
      cell: (o) => String(o.addressType ?? ''),
    },
    { name: 'Ports', type: 'string', priority: 0, description: 'Ports exposed by the endpoints', cell: endpointSlicePortsCell },
    { name: 'Endpoints', type: 'string', priority: 0, description: 'Addresses of the endpoints', cell: endpointSliceEndpointsCell },
    { name: 'Age', type: 'string', priority: 0, description: 'Time since creation', cell: (o, now) => ageOf(o, now) },
  ],
};
