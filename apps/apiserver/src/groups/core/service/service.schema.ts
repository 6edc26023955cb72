/**
 * Schema of core/v1 Service (k8s.io/api/core/v1 types.go), registered under Kubernetes'
 * definition names, with kube's defaults (type ClusterIP, sessionAffinity None, protocol TCP).
 */
import { ConditionSchema, defineSchema, fieldOf, IntOrStringSchema, objectRootSchema, type JSONSchemaProps } from '@app/apimachinery';
import { bool, CORE, gvk, int32, str } from '../core.schema.js';

const strings = (description: string): JSONSchemaProps => ({ type: 'array', description, items: { type: 'string' }, 'x-kubernetes-list-type': 'atomic' });

/** core/v1 ServicePort. */
export const ServicePortSchema = defineSchema(`${CORE}.ServicePort`, {
  type: 'object',
  description: 'A port the service exposes.',
  required: ['port'],
  properties: {
    appProtocol: str('Application protocol of the port (an IANA name or a prefixed name).'),
    name: str('Name of the port (a DNS label); required when the service has more than one port.'),
    nodePort: int32('Port on every node (NodePort and LoadBalancer only).'),
    port: int32('The port the service exposes, 1-65535.'),
    protocol: { type: 'string', default: 'TCP', enum: ['SCTP', 'TCP', 'UDP'], description: 'TCP (default), UDP or SCTP.' },
    targetPort: fieldOf(IntOrStringSchema, { description: 'Port number or name on the pods; defaults to port.' }),
  },
});

const PortStatusSchema = defineSchema(`${CORE}.PortStatus`, {
  type: 'object',
  description: 'Status of one port of a load balancer.',
  required: ['port', 'protocol'],
  properties: { error: str('Why the port is in error, as a CamelCase reason.'), port: int32('The port.'), protocol: str('TCP, UDP or SCTP.') },
});

const LoadBalancerStatusSchema = defineSchema(`${CORE}.LoadBalancerStatus`, {
  type: 'object',
  description: 'Status of a load balancer.',
  properties: {
    ingress: {
      type: 'array',
      description: 'Ingress points of the load balancer.',
      items: {
        type: 'object',
        description: 'An ingress point of the load balancer.',
        properties: {
          hostname: str('DNS name of the ingress point.'),
          ip: str('IP of the ingress point.'),
          ipMode: str('VIP or Proxy.'),
          ports: { type: 'array', description: 'Ports of the ingress point.', items: PortStatusSchema, 'x-kubernetes-list-type': 'atomic' },
        },
      },
      'x-kubernetes-list-type': 'atomic',
    },
  },
});

/** core/v1 ServiceSpec. */
export const ServiceSpecSchema = defineSchema(`${CORE}.ServiceSpec`, {
  type: 'object',
  description: 'What the service exposes and how.',
  properties: {
    allocateLoadBalancerNodePorts: bool('Whether node ports are allocated for a LoadBalancer service (default true).'),
    clusterIP: str('The virtual IP of the service, "None" for a headless service, or empty.'),
    clusterIPs: strings('The virtual IPs of the service, at most one per IP family; the first equals clusterIP.'),
    externalIPs: strings('IPs on which nodes also accept traffic for the service.'),
    externalName: str('DNS name the service is an alias of (type ExternalName).'),
    externalTrafficPolicy: str('Cluster or Local: how external traffic is routed.'),
    healthCheckNodePort: int32('Node port of the health check (LoadBalancer with Local policy).'),
    internalTrafficPolicy: str('Cluster or Local: how traffic from inside the cluster is routed.'),
    ipFamilies: strings('IPv4 and/or IPv6.'),
    ipFamilyPolicy: str('SingleStack, PreferDualStack or RequireDualStack.'),
    loadBalancerClass: str('Class of the load balancer implementation.'),
    loadBalancerIP: str('Deprecated: requested load balancer IP.'),
    loadBalancerSourceRanges: strings('Client IP ranges allowed through the load balancer.'),
    ports: {
      type: 'array',
      description: 'Ports the service exposes.',
      items: ServicePortSchema,
      'x-kubernetes-list-map-keys': ['port', 'protocol'],
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-patch-merge-key': 'port',
      'x-kubernetes-patch-strategy': 'merge',
    },
    publishNotReadyAddresses: bool('Whether endpoints include pods that are not ready.'),
    selector: {
      type: 'object',
      description: 'Pods with these labels back the service.',
      additionalProperties: { type: 'string' },
      'x-kubernetes-map-type': 'atomic',
    },
    sessionAffinity: { type: 'string', default: 'None', enum: ['ClientIP', 'None'], description: 'None (default) or ClientIP.' },
    sessionAffinityConfig: {
      type: 'object',
      description: 'Settings of the session affinity.',
      properties: {
        clientIP: {
          type: 'object',
          description: 'ClientIP affinity settings.',
          properties: { timeoutSeconds: int32('Sticky time, 1-86400 seconds (default 10800).') },
        },
      },
    },
    trafficDistribution: str('Preference for routing traffic, e.g. PreferClose.'),
    type: {
      type: 'string',
      default: 'ClusterIP',
      enum: ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'],
      description: 'ClusterIP (default), NodePort, LoadBalancer or ExternalName.',
    },
  },
});

/** core/v1 ServiceStatus. */
export const ServiceStatusSchema = defineSchema(`${CORE}.ServiceStatus`, {
  type: 'object',
  description: 'Current status of the service.',
  properties: {
    conditions: {
      type: 'array',
      description: 'Current conditions of the service.',
      items: ConditionSchema,
      'x-kubernetes-list-map-keys': ['type'],
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-patch-merge-key': 'type',
      'x-kubernetes-patch-strategy': 'merge',
    },
    loadBalancer: fieldOf(LoadBalancerStatusSchema, { description: 'Status of the load balancer, if any.' }),
  },
});

/** core/v1 Service. */
export const ServiceSchema: JSONSchemaProps = defineSchema(
  `${CORE}.Service`,
  objectRootSchema(gvk('Service'), 'A named abstraction of a set of pods (selected by labels) and the ports it exposes.', {
    spec: fieldOf(ServiceSpecSchema, { description: 'What the service exposes and how.' }),
    status: fieldOf(ServiceStatusSchema, { description: 'Current status of the service. Read-only.' }),
  }),
);
