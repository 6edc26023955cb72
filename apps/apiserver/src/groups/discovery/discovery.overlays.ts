/**
 * What the discovery/v1 protobuf messages cannot say about the schemas derived from them
 * (schema.proto.ts): descriptions, and the scalar defaults of pkg/apis/discovery/v1
 * defaults.go (an EndpointPort's name is "" and its protocol TCP when unset). Address types,
 * protocols and every other rule are checked by endpointslice.validation.ts with Kubernetes'
 * messages, not by the schema.
 */
import type { SchemaOverlays } from '@app/apimachinery';

const D = 'k8s.io.api.discovery.v1';
const d = (description: string) => ({ description });

/** EndpointSlice addressType values, sorted as Kubernetes lists them. */
export const ADDRESS_TYPES: readonly string[] = ['FQDN', 'IPv4', 'IPv6'];
/** EndpointPort protocols, sorted as Kubernetes lists them. */
export const PORT_PROTOCOLS: readonly string[] = ['SCTP', 'TCP', 'UDP'];

/** The discovery/v1 overlays. */
export const DISCOVERY_OVERLAYS: SchemaOverlays = {
  [`${D}.Endpoint`]: {
    description: 'One backend of a Service: its addresses (interchangeable) and what is known about it.',
    fields: {
      addresses: d('Addresses of the endpoint, of the slice addressType; 1 to 100 of them, all serving the same backend.'),
      conditions: d('Readiness, serving and terminating state of the endpoint.'),
      hostname: d('Hostname of the endpoint (a lowercase DNS label), e.g. for DNS records; endpoints sharing one are interchangeable.'),
      targetRef: d('The object (usually a Pod) this endpoint stands for.'),
      deprecatedTopology: d('Topology labels of the v1beta1 API. Not writable through v1: a v1 write that changes the endpoints clears it.'),
      nodeName: d('Name of the Node hosting the endpoint.'),
      zone: d('Name of the zone the endpoint is in.'),
      hints: d('How the endpoint should be consumed (topology aware routing).'),
    },
  },
  [`${D}.EndpointConditions`]: {
    description: 'The state of an endpoint; an unset condition is unknown.',
    fields: {
      ready: d('Whether the endpoint is ready for traffic; unknown (unset) is read as ready. Not true while terminating unless readiness is overridden.'),
      serving: d('Like ready, but set whether or not the endpoint is terminating; unset: defer to ready.'),
      terminating: d('Whether the endpoint is terminating; unset is read as not terminating.'),
    },
  },
  [`${D}.EndpointHints`]: {
    description: 'Hints on how an endpoint should be consumed.',
    fields: {
      forZones: d('Zones that should consume this endpoint (at most 8).'),
      forNodes: d('Nodes that should consume this endpoint (at most 8; alpha, PreferSameTrafficDistribution: dropped unless the gate is on).'),
    },
  },
  [`${D}.ForZone`]: { description: 'A zone that should consume an endpoint.', fields: { name: d('Name of the zone.') } },
  [`${D}.ForNode`]: { description: 'A node that should consume an endpoint.', fields: { name: d('Name of the node.') } },
  [`${D}.EndpointPort`]: {
    description: 'A port every endpoint of the slice exposes.',
    fields: {
      name: { description: 'Name of the port, unique in the slice: "" or a DNS label; for a Service, the name of its port. Default "".', default: '' },
      protocol: { description: 'TCP (default), UDP or SCTP.', default: 'TCP' },
      port: d('The port number; unset: every port, as the consumer reads it.'),
      appProtocol: d('Application protocol of the port: an IANA service name, a kubernetes.io/ name (such as kubernetes.io/h2c) or a domain-prefixed name.'),
    },
    extra: { 'x-kubernetes-map-type': 'atomic' },
  },
};
