/**
 * Schema of core/v1 Endpoints (k8s.io/api/core/v1 types.go), registered under Kubernetes'
 * definition names.
 */
import { defineSchema, fieldOf, objectRootSchema, type JSONSchemaProps } from '@app/apimachinery';
import { CORE, gvk, int32, ObjectReferenceSchema, str } from '../core.schema.js';

/** core/v1 EndpointAddress. */
export const EndpointAddressSchema = defineSchema(`${CORE}.EndpointAddress`, {
  type: 'object',
  description: 'One address of an endpoint.',
  required: ['ip'],
  properties: {
    hostname: str('Hostname of the endpoint (a DNS label).'),
    ip: str('IP of the endpoint; not loopback, link-local or multicast.'),
    nodeName: str('Node hosting the endpoint.'),
    targetRef: fieldOf(ObjectReferenceSchema, { description: 'The object providing the endpoint.' }),
  },
  'x-kubernetes-map-type': 'atomic',
});

/** core/v1 EndpointPort. */
export const EndpointPortSchema = defineSchema(`${CORE}.EndpointPort`, {
  type: 'object',
  description: 'A port of an endpoint.',
  required: ['port'],
  properties: {
    appProtocol: str('Application protocol of the port.'),
    name: str('Name of the port; must match the service port name; required when there are several ports.'),
    port: int32('The port number, 1-65535.'),
    protocol: { type: 'string', default: 'TCP', enum: ['SCTP', 'TCP', 'UDP'], description: 'TCP (default), UDP or SCTP.' },
  },
  'x-kubernetes-map-type': 'atomic',
});

/** core/v1 EndpointSubset. */
export const EndpointSubsetSchema = defineSchema(`${CORE}.EndpointSubset`, {
  type: 'object',
  description: 'Addresses sharing a set of ports.',
  properties: {
    addresses: { type: 'array', description: 'Ready addresses.', items: EndpointAddressSchema, 'x-kubernetes-list-type': 'atomic' },
    notReadyAddresses: { type: 'array', description: 'Addresses not ready yet.', items: EndpointAddressSchema, 'x-kubernetes-list-type': 'atomic' },
    ports: { type: 'array', description: 'Ports of the addresses.', items: EndpointPortSchema, 'x-kubernetes-list-type': 'atomic' },
  },
});

/** core/v1 Endpoints. */
export const EndpointsSchema: JSONSchemaProps = defineSchema(
  `${CORE}.Endpoints`,
  objectRootSchema(gvk('Endpoints'), 'The addresses and ports backing a service (the legacy form of EndpointSlices).', {
    subsets: { type: 'array', description: 'Sets of addresses with their ports.', items: EndpointSubsetSchema, 'x-kubernetes-list-type': 'atomic' },
  }),
);
