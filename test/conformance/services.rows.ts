/**
 * Rules of Service cluster IP and node port allocation (pkg/registry/core/service/storage
 * alloc.go, ipallocator, portallocator) and of the `kubernetes` Service (pkg/controlplane
 * controller/kubernetesservice, the lease endpoint reconciler), on a server with the default
 * ranges: 10.0.0.0/24 and 30000-32767. The values the rows ask for are in the static bands
 * (10.0.0.1-16, 30000-30085), which random allocation leaves alone while the rest has room, so
 * other rows' Services never hold them first. The repair loop and concurrent allocation through
 * several servers are in test/service-allocation.test.ts.
 */
import type { RowGroup } from './conformance.types.js';

const NS = 'cf-svc';
const SVC = `/api/v1/namespaces/${NS}/services`;
type Obj = Record<string, unknown>;
const service = (name: string, spec: Obj = {}) => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name },
  spec: { selector: { app: name }, ports: [{ port: 80 }], ...spec },
});
const invalid = (name: string, detail: string) => `Service "${name}" is invalid: ${detail}`;

/** The group. */
export const SERVICES: RowGroup = {
  name: 'core/v1 Service allocation',
  namespace: NS,
  rows: [
    {
      id: 'svc-1',
      rule: 'default/kubernetes exists: ClusterIP on the first address of the range, port 443 named https, labelled component=apiserver, provider=kubernetes',
      source: 'upstream pkg/controlplane/controller/kubernetesservice controller.go (CreateOrUpdateMasterServiceIfNeeded)',
      upstream: '200 with spec.clusterIP 10.0.0.1 (the first IP of --service-cluster-ip-range) and ports [{name: https, port: 443, protocol: TCP}]',
      req: { method: 'GET', path: '/api/v1/namespaces/default/services/kubernetes' },
      expect: {
        status: 200,
        body: {
          metadata: { labels: { component: 'apiserver', provider: 'kubernetes' } },
          spec: { type: 'ClusterIP', clusterIP: '10.0.0.1', clusterIPs: ['10.0.0.1'], ports: [{ name: 'https', port: 443, protocol: 'TCP' }] },
        },
      },
      then: [
        {
          req: { method: 'GET', path: '/api/v1/namespaces/default/endpoints/kubernetes' },
          expect: { status: 200, body: { metadata: { labels: { 'endpointslice.kubernetes.io/skip-mirror': 'true' } } }, text: /"name":"https"/ },
        },
      ],
    },
    {
      id: 'svc-2',
      rule: 'A Service without clusterIP gets a free one of the range, with ipFamilies [IPv4] and ipFamilyPolicy SingleStack',
      source: 'upstream pkg/registry/core/service/storage alloc.go (allocateCreate, initIPFamilyFields)',
      upstream: '201 with spec.clusterIP and clusterIPs [the same] in 10.0.0.0/24',
      req: { method: 'POST', path: SVC, body: service('auto') },
      expect: {
        status: 201,
        body: { spec: { ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack' } },
        text: /"clusterIP":"10\.0\.0\.\d+","clusterIPs":\["10\.0\.0\.\d+"\]/,
      },
    },
    {
      id: 'svc-3',
      rule: 'A requested cluster IP another Service holds is 422 on spec.clusterIPs',
      source: 'upstream pkg/registry/core/service/storage alloc.go (allocIPs); ipallocator ErrAllocated',
      upstream: '422 spec.clusterIPs: Invalid value: []string{"10.0.0.10"}: failed to allocate IP 10.0.0.10: provided IP is already allocated',
      setup: [{ method: 'POST', path: SVC, body: service('ip-a', { clusterIP: '10.0.0.10' }) }],
      req: { method: 'POST', path: SVC, body: service('ip-b', { clusterIP: '10.0.0.10' }) },
      expect: {
        status: 422,
        reason: 'Invalid',
        message: invalid('ip-b', 'spec.clusterIPs: Invalid value: []string{"10.0.0.10"}: failed to allocate IP 10.0.0.10: provided IP is already allocated'),
        body: { details: { causes: [{ reason: 'FieldValueInvalid', field: 'spec.clusterIPs' }] } },
      },
    },
    {
      id: 'svc-4',
      rule: 'A requested cluster IP outside --service-cluster-ip-range is 422 naming the range',
      source: 'upstream pkg/registry/core/service/ipallocator (ErrNotInRange)',
      upstream:
        '422 spec.clusterIPs: Invalid value: []string{"10.1.0.5"}: failed to allocate IP 10.1.0.5: the provided IP (10.1.0.5) is not in the valid range. The range of valid IPs is 10.0.0.0/24',
      req: { method: 'POST', path: SVC, body: service('ip-out', { clusterIP: '10.1.0.5' }) },
      expect: {
        status: 422,
        message: invalid(
          'ip-out',
          'spec.clusterIPs: Invalid value: []string{"10.1.0.5"}: failed to allocate IP 10.1.0.5: the provided IP (10.1.0.5) is not in the valid range. The range of valid IPs is 10.0.0.0/24',
        ),
      },
    },
    {
      id: 'svc-5',
      rule: 'A NodePort Service gets a free node port; a requested one another Service holds is 422 on spec.ports[i].nodePort',
      source: 'upstream pkg/registry/core/service/storage alloc.go (initNodePorts); portallocator ErrAllocated',
      upstream: '201 with a nodePort in 30000-32767, then 422 spec.ports[0].nodePort: Invalid value: 30050: provided port is already allocated',
      setup: [
        { method: 'POST', path: SVC, body: service('np-a', { type: 'NodePort', ports: [{ port: 80, nodePort: 30050 }] }) },
        {
          method: 'POST',
          path: SVC,
          body: service('np-auto', { type: 'NodePort' }),
          expect: { status: 201, text: /"nodePort":3[0-2]\d{3}/ },
        },
      ],
      req: { method: 'POST', path: SVC, body: service('np-b', { type: 'NodePort', ports: [{ port: 80, nodePort: 30050 }] }) },
      expect: { status: 422, message: invalid('np-b', 'spec.ports[0].nodePort: Invalid value: 30050: provided port is already allocated') },
    },
    {
      id: 'svc-6',
      rule: 'A requested node port outside --service-node-port-range is 422 naming the range',
      source: 'upstream pkg/registry/core/service/portallocator (ErrNotInRange)',
      upstream: '422 spec.ports[0].nodePort: Invalid value: 80: provided port is not in the valid range. The range of valid ports is 30000-32767',
      req: { method: 'POST', path: SVC, body: service('np-out', { type: 'NodePort', ports: [{ port: 80, nodePort: 80 }] }) },
      expect: {
        status: 422,
        message: invalid(
          'np-out',
          'spec.ports[0].nodePort: Invalid value: 80: provided port is not in the valid range. The range of valid ports is 30000-32767',
        ),
      },
    },
    {
      id: 'svc-7',
      rule: 'Deleting a Service gives its cluster IP and node ports back',
      source: 'upstream pkg/registry/core/service/storage storage.go (afterDelete, releaseAllocatedResources)',
      upstream: "201 for a new Service taking the deleted one's IP and node port",
      setup: [
        { method: 'POST', path: SVC, body: service('gone', { type: 'NodePort', clusterIP: '10.0.0.11', ports: [{ port: 80, nodePort: 30060 }] }) },
        { method: 'DELETE', path: `${SVC}/gone` },
      ],
      req: { method: 'POST', path: SVC, body: service('heir', { type: 'NodePort', clusterIP: '10.0.0.11', ports: [{ port: 80, nodePort: 30060 }] }) },
      expect: { status: 201, body: { spec: { clusterIP: '10.0.0.11', ports: [{ nodePort: 30060 }] } } },
    },
    {
      id: 'svc-8',
      rule: 'A dry-run create shows a cluster IP and takes none',
      source: 'upstream pkg/registry/core/service/storage alloc.go (allocator.DryRun)',
      upstream: '201 with a clusterIP for the dry run; the same IP is then free for a real create',
      setup: [
        {
          method: 'POST',
          path: `${SVC}?dryRun=All`,
          body: service('dry', { clusterIP: '10.0.0.12' }),
          expect: { status: 201, body: { spec: { clusterIP: '10.0.0.12' } } },
        },
      ],
      req: { method: 'POST', path: SVC, body: service('wet', { clusterIP: '10.0.0.12' }) },
      expect: { status: 201 },
      then: [{ req: { method: 'GET', path: `${SVC}/dry` }, expect: { status: 404 } }],
    },
    {
      id: 'svc-9',
      rule: 'An update that leaves out clusterIP and node ports keeps them (kubectl replace)',
      source: 'upstream pkg/registry/core/service/storage storage.go (patchAllocatedValues)',
      upstream: '200 with the stored clusterIP and nodePort',
      setup: [
        { method: 'POST', path: SVC, body: service('kept', { type: 'NodePort', clusterIP: '10.0.0.13', ports: [{ name: 'web', port: 80, nodePort: 30080 }] }) },
      ],
      req: { method: 'PUT', path: `${SVC}/kept`, body: service('kept', { type: 'NodePort', ports: [{ name: 'web', port: 80 }] }) },
      expect: { status: 200, body: { spec: { clusterIP: '10.0.0.13', clusterIPs: ['10.0.0.13'], ports: [{ name: 'web', nodePort: 30080 }] } } },
    },
    {
      id: 'svc-10',
      rule: 'ipFamilyPolicy RequireDualStack is 422 on a single-stack cluster',
      source: 'upstream pkg/registry/core/service/storage alloc.go (initIPFamilyFields)',
      upstream: '422 spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services',
      req: { method: 'POST', path: SVC, body: service('dual', { ipFamilyPolicy: 'RequireDualStack' }) },
      expect: {
        status: 422,
        message: invalid('dual', 'spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services'),
      },
    },
    {
      id: 'svc-11',
      rule: 'A headless Service without selector takes no IP and lists both families under RequireDualStack',
      source: 'upstream pkg/registry/core/service/storage alloc.go (initIPFamilyFields: headless + selectorless)',
      upstream: '201 with clusterIP None, ipFamilyPolicy RequireDualStack, ipFamilies [IPv4, IPv6]',
      req: {
        method: 'POST',
        path: SVC,
        body: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'bare' }, spec: { clusterIP: 'None', ports: [{ port: 80 }] } },
      },
      expect: { status: 201, body: { spec: { clusterIP: 'None', clusterIPs: ['None'], ipFamilyPolicy: 'RequireDualStack', ipFamilies: ['IPv4', 'IPv6'] } } },
    },
  ],
};
