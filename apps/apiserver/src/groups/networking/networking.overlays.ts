/**
 * What the networking/v1 protobuf messages cannot say about the schemas derived from them
 * (schema.proto.ts): descriptions, the required fields whose Go check reads the same
 * (`Required value`, so the two messages are one), and the scalar defaults of
 * pkg/apis/networking/v1 defaults.go (a NetworkPolicyPort's protocol, an IngressClass
 * parameters' scope). The NetworkPolicy's policyTypes default depends on its egress rules, so
 * networkpolicy.strategy.ts applies it. Enumerations are checked by the kinds' validation, with
 * Kubernetes' messages, not by the schema.
 */
import type { SchemaOverlays } from '@app/apimachinery';

const N = 'k8s.io.api.networking.v1';
const d = (description: string) => ({ description });

/** HTTPIngressPath pathType values, in the order Kubernetes lists them (sorted). */
export const PATH_TYPES: readonly string[] = ['Exact', 'ImplementationSpecific', 'Prefix'];
/** NetworkPolicy policyTypes values, in Kubernetes' order. */
export const POLICY_TYPES: readonly string[] = ['Ingress', 'Egress'];
/** NetworkPolicyPort protocols, in Kubernetes' order. */
export const PROTOCOLS: readonly string[] = ['TCP', 'UDP', 'SCTP'];
/** IngressClassParametersReference scopes (sorted, as Kubernetes lists them). */
export const PARAMETER_SCOPES: readonly string[] = ['Cluster', 'Namespace'];

/** The networking/v1 overlays. */
export const NETWORKING_OVERLAYS: SchemaOverlays = {
  [`${N}.IngressSpec`]: {
    description: 'How an Ingress routes traffic from outside the cluster to Services: host and path rules, a default backend, TLS.',
    fields: {
      ingressClassName: d('Name of the cluster IngressClass whose controller serves this Ingress; the default class is filled in on create when unset.'),
      defaultBackend: d('Where requests go that match no rule; required when there are no rules.'),
      tls: d('TLS settings: which hosts a certificate Secret covers (port 443, hosts told apart by SNI).'),
      rules: d('Host rules; a request matching none goes to the default backend.'),
    },
  },
  [`${N}.IngressStatus`]: {
    description: 'What the ingress controller last reported; written through the status subresource.',
    fields: { loadBalancer: d('The load balancer points serving this Ingress.') },
  },
  [`${N}.IngressLoadBalancerStatus`]: {
    description: 'The load balancer of an Ingress.',
    fields: { ingress: d('Its ingress points.') },
  },
  [`${N}.IngressLoadBalancerIngress`]: {
    description: 'One ingress point of the load balancer.',
    fields: {
      ip: d('IP address of the point, for IP-based load balancers.'),
      hostname: d('DNS name of the point, for DNS-based load balancers.'),
      ports: d('Ports of the point and their errors.'),
    },
  },
  [`${N}.IngressPortStatus`]: {
    description: 'The state of one load balancer port.',
    fields: {
      port: d('The port number.'),
      protocol: d('TCP, UDP or SCTP.'),
      error: d('The problem with this port, as a CamelCase reason (prefixed with a domain for provider-specific ones).'),
    },
  },
  [`${N}.IngressTLS`]: {
    description: 'One TLS certificate of an Ingress and the hosts it covers.',
    fields: {
      hosts: d("Hosts the certificate covers; unset: the controller's wildcard host."),
      secretName: d('Name of the Secret holding the certificate and key; may be left unset for SNI-only routing.'),
    },
  },
  [`${N}.IngressRule`]: {
    description: 'The paths served under one host.',
    fields: {
      host: d('Fully qualified domain name (no IP, no port), or a wildcard such as *.example.com matching exactly one label; unset: every host.'),
      http: d('The HTTP paths of this host.'),
    },
  },
  [`${N}.HTTPIngressRuleValue`]: {
    description: 'HTTP paths and the backends they lead to.',
    fields: { paths: d('The paths; at least one.') },
  },
  [`${N}.HTTPIngressPath`]: {
    description: 'One path and the backend its requests go to.',
    fields: {
      path: d('The path matched against the request URL; must start with "/" for Exact and Prefix.'),
      pathType: d(
        'How path matches (required): Exact (the whole path), Prefix (element by element, split on "/"), or ImplementationSpecific (as the IngressClass decides).',
      ),
      backend: d('Where matching requests go.'),
    },
  },
  [`${N}.IngressBackend`]: {
    description: 'The target of requests: a Service port or another resource, exactly one of them.',
    fields: {
      service: d('A Service of the Ingress namespace.'),
      resource: d('Another resource of the Ingress namespace (such as a storage bucket); excludes service.'),
    },
  },
  [`${N}.IngressServiceBackend`]: {
    description: 'A Service and one of its ports.',
    required: ['name'],
    fields: { name: d('Name of the Service, in the namespace of the Ingress.'), port: d('The port of the Service, by name or by number.') },
  },
  [`${N}.ServiceBackendPort`]: {
    description: 'A Service port, named or numbered (one of the two).',
    fields: { name: d('Name of the port on the Service.'), number: d('Number of the port on the Service.') },
    extra: { 'x-kubernetes-map-type': 'atomic' },
  },
  [`${N}.IngressClassSpec`]: {
    description: 'Which controller serves the Ingresses of a class, and its parameters.',
    fields: {
      controller: d('Name of the controller, a domain-prefixed path of at most 250 characters such as example.com/ingress-controller. Immutable.'),
      parameters: d('An object holding settings for the controller; optional.'),
    },
  },
  [`${N}.IngressClassParametersReference`]: {
    description: 'A reference to a cluster-scoped or namespaced object.',
    required: ['kind', 'name'],
    fields: {
      apiGroup: d('API group of the object; unset: the core group.'),
      kind: d('Kind of the object.'),
      name: d('Name of the object.'),
      scope: { description: 'Cluster (default) or Namespace.', default: 'Cluster' },
      namespace: d('Namespace of the object: required with scope Namespace, forbidden with scope Cluster.'),
    },
  },
  [`${N}.NetworkPolicySpec`]: {
    description: 'Which pods a NetworkPolicy isolates and what traffic it lets in and out of them.',
    fields: {
      podSelector: d('The pods of the namespace the policy applies to; empty: all of them.'),
      ingress: d('Incoming traffic allowed to the selected pods; empty: none (the pods are only isolated).'),
      egress: d('Outgoing traffic allowed from the selected pods; empty: none when Egress is among policyTypes.'),
      policyTypes: d('Ingress, Egress or both. Default: Ingress, plus Egress when there are egress rules.'),
    },
  },
  [`${N}.NetworkPolicyIngressRule`]: {
    description: 'Traffic allowed in: it must match the ports and come from the peers.',
    fields: { ports: d('Ports allowed (any of them); empty: every port.'), from: d('Sources allowed (any of them); empty: every source.') },
  },
  [`${N}.NetworkPolicyEgressRule`]: {
    description: 'Traffic allowed out: it must match the ports and go to the peers.',
    fields: { ports: d('Ports allowed (any of them); empty: every port.'), to: d('Destinations allowed (any of them); empty: every destination.') },
  },
  [`${N}.NetworkPolicyPort`]: {
    description: 'A port, or a range of ports, on one protocol.',
    fields: {
      protocol: { description: 'TCP (default), UDP or SCTP.', default: 'TCP' },
      port: d('A port number or a named pod port; unset: every port.'),
      endPort: d('Last port of a range starting at port (numeric port only, not below it).'),
    },
  },
  [`${N}.NetworkPolicyPeer`]: {
    description: 'Pods, namespaces or an IP block; ipBlock excludes the other two.',
    fields: {
      podSelector: d('Pods, in the policy namespace or in the namespaces namespaceSelector selects; empty: all.'),
      namespaceSelector: d('Namespaces whose pods are selected; empty: all namespaces.'),
      ipBlock: d('A CIDR, minus some sub-ranges.'),
    },
  },
  [`${N}.IPBlock`]: {
    description: 'A CIDR, minus some CIDRs inside it.',
    required: ['cidr'],
    fields: { cidr: d('The CIDR, such as 192.168.1.0/24 or 2001:db8::/64.'), except: d('CIDRs strictly inside cidr that are excluded.') },
  },
};
