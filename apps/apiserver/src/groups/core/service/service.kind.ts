/**
 * core/v1 Service (namespaced): its declaration, with kubectl's columns (NAME TYPE CLUSTER-IP
 * EXTERNAL-IP PORT(S) AGE; -o wide: SELECTOR) and the status subresource. DELETE answers with
 * the deleted Service, as kube-apiserver's service storage does. Cluster IPs and node ports are
 * allocated around its writes (service.allocator.ts).
 */
import { ageOf, statusSubresource, type KindDeclaration } from '@app/registry';
import { asMap } from '../core.helpers.js';
import { ServiceProxyPorts, serviceProxySubresource } from './service.proxy.js';
import { ServiceSchema } from './service.schema.js';
import { serviceAllocatorPort } from './service.allocator.js';
import { serviceExternalIpCell, servicePortsCell, serviceSelectorCell, serviceStatusStrategy, serviceStrategy } from './service.strategy.js';

/** The Service declaration. */
/** What the service proxy reads of the server; the core group module fills it in at start. */
export const serviceProxyPorts = new ServiceProxyPorts();

export const serviceKind: KindDeclaration = {
  group: '',
  version: 'v1',
  kind: 'Service',
  plural: 'services',
  singular: 'service',
  shortNames: ['svc'],
  categories: ['all'],
  namespaced: true,
  // The name is a DNS-1035 label, checked by the strategy (ValidateServiceName) with its own
  // message; the generic subdomain check would add a second, different one.
  nameValidation: 'pathSegment',
  schema: ServiceSchema,
  protobufMessage: 'k8s.io.api.core.v1.Service',
  strategy: serviceStrategy,
  subresources: { status: { verbs: statusSubresource().verbs, strategy: serviceStatusStrategy }, proxy: serviceProxySubresource(serviceProxyPorts) },
  generation: 'none',
  deleteReturnsObject: true,
  allocator: serviceAllocatorPort,
  tableColumns: [
    { name: 'Type', type: 'string', priority: 0, description: 'Type of the service', cell: (o) => String(asMap(o.spec).type ?? 'ClusterIP') },
    {
      name: 'Cluster-IP',
      type: 'string',
      priority: 0,
      description: 'The virtual IP of the service',
      cell: (o) => (asMap(o.spec).clusterIP ? String(asMap(o.spec).clusterIP) : '<none>'),
    },
    { name: 'External-IP', type: 'string', priority: 0, description: 'External addresses of the service', cell: (o) => serviceExternalIpCell(o) },
    { name: 'Port(s)', type: 'string', priority: 0, description: 'Ports of the service', cell: (o) => servicePortsCell(o) },
    { name: 'Age', type: 'string', priority: 0, description: 'Time since creation', cell: (o, now) => ageOf(o, now) },
    { name: 'Selector', type: 'string', priority: 1, description: 'Labels of the pods behind the service', cell: (o) => serviceSelectorCell(o) },
  ],
};
