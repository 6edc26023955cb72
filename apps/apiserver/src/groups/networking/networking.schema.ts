/**
 * Schemas of networking.k8s.io/v1 Ingress, IngressClass and NetworkPolicy: spec (and the
 * Ingress's status) derived from the protobuf messages with the core and networking overlays
 * (an Ingress backend's resource is core's TypedLocalObjectReference).
 */
import { defineSchema, fieldOf, objectRootSchema, protoSchema, type JSONSchemaProps } from '@app/apimachinery';
import { CORE_OVERLAYS } from '../core/core.overlays.js';
import { NETWORKING_OVERLAYS } from './networking.overlays.js';

const GROUP = 'networking.k8s.io';
const message = (name: string): JSONSchemaProps => protoSchema(`k8s.io.api.networking.v1.${name}`, CORE_OVERLAYS, NETWORKING_OVERLAYS);

/** networking.k8s.io/v1 Ingress (namespaced). */
export const IngressSchema: JSONSchemaProps = defineSchema(
  'io.k8s.api.networking.v1.Ingress',
  objectRootSchema({ group: GROUP, version: 'v1', kind: 'Ingress' }, 'Rules that let HTTP(S) traffic from outside the cluster reach Services.', {
    spec: fieldOf(message('IngressSpec'), { description: 'The routing wanted.' }),
    status: fieldOf(message('IngressStatus'), { description: 'What the ingress controller last reported; read-only.' }),
  }),
);

/** networking.k8s.io/v1 IngressClass (cluster-scoped). */
export const IngressClassSchema: JSONSchemaProps = defineSchema(
  'io.k8s.api.networking.v1.IngressClass',
  objectRootSchema(
    { group: GROUP, version: 'v1', kind: 'IngressClass' },
    'A class of Ingresses and the controller that serves them. The annotation ingressclass.kubernetes.io/is-default-class: "true" makes it the class of new Ingresses that name none.',
    { spec: fieldOf(message('IngressClassSpec'), { description: 'The controller and its parameters.' }) },
  ),
);

/** networking.k8s.io/v1 NetworkPolicy (namespaced). */
export const NetworkPolicySchema: JSONSchemaProps = defineSchema(
  'io.k8s.api.networking.v1.NetworkPolicy',
  objectRootSchema({ group: GROUP, version: 'v1', kind: 'NetworkPolicy' }, 'The network traffic allowed to and from a set of pods.', {
    spec: fieldOf(message('NetworkPolicySpec'), { description: 'The pods selected and the traffic allowed.' }),
  }),
);
