/**
 * Schema of discovery.k8s.io/v1 EndpointSlice: its addressType, endpoints and ports, derived
 * from the protobuf message with the core and discovery overlays (an endpoint's targetRef is
 * core's ObjectReference).
 */
import { defineSchema, fieldOf, objectRootSchema, protoSchema, type JSONSchemaProps } from '@app/apimachinery';
import { CORE_OVERLAYS } from '../core/core.overlays.js';
import { DISCOVERY_OVERLAYS } from './discovery.overlays.js';

const slice: JSONSchemaProps = protoSchema('k8s.io.api.discovery.v1.EndpointSlice', CORE_OVERLAYS, DISCOVERY_OVERLAYS);
const field = (name: string, description: string): JSONSchemaProps => fieldOf(slice.properties![name]!, { description });

/** discovery.k8s.io/v1 EndpointSlice (namespaced). */
export const EndpointSliceSchema: JSONSchemaProps = defineSchema(
  'io.k8s.api.discovery.v1.EndpointSlice',
  objectRootSchema(
    { group: 'discovery.k8s.io', version: 'v1', kind: 'EndpointSlice' },
    'A subset of the endpoints of a Service. The slices of a Service carry the label kubernetes.io/service-name and together list all its endpoints.',
    {
      addressType: field('addressType', 'Type of every address in the slice: IPv4, IPv6 or FQDN. Required and immutable.'),
      endpoints: field('endpoints', 'The endpoints of the slice, unique, at most 1000.'),
      ports: field('ports', 'Ports every endpoint exposes, with unique names; empty: no ports defined; a port without a number: all ports.'),
    },
    { required: ['addressType'] },
  ),
);
