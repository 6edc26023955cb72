import type { KubeObject } from '@app/apimachinery';
import { aggregatedRemoteResources } from '../../../http/discovery.js';
import { apiServiceView, compareByVersionPriority, compareKubeVersions, endpointsView, resolveService, serviceView, Unreachable } from './aggregation.logic.js';
import { withAvailability } from './availability.controller.js';
import { remoteUserHeaders } from './remote-apis.js';

const ref = { namespace: 'kube-system', name: 'metrics', port: 443 };
const svc = (spec: Record<string, unknown>) => serviceView({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'metrics' }, spec } as KubeObject);
const eps = (subsets: unknown[]) => endpointsView({ apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'metrics' }, subsets } as unknown as KubeObject);

function unreachable(f: () => unknown): { reason: string; message: string } {
  try {
    f();
  } catch (e) {
    if (e instanceof Unreachable) return { reason: e.reason, message: e.message };
    throw e;
  }
  throw new Error('resolved');
}

describe('resolveService', () => {
  const clusterIp = svc({ type: 'ClusterIP', clusterIP: '10.0.0.7', ports: [{ name: 'https', port: 443, targetPort: 4443 }] });

  it('goes to the cluster IP at the service port by default, and to an ExternalName by name', () => {
    expect(resolveService(ref, clusterIp, undefined, false).href).toBe('https://10.0.0.7/');
    expect(resolveService({ ...ref, port: 8443 }, svc({ type: 'ExternalName', externalName: 'metrics.example.com' }), undefined, false).href).toBe(
      'https://metrics.example.com:8443/',
    );
    expect(unreachable(() => resolveService(ref, svc({ clusterIP: 'None', ports: [{ port: 443 }] }), undefined, false)).message).toBe(
      'cannot route to service with ClusterIP None',
    );
  });

  it('goes to a ready endpoint at the port named as the service port with routing', () => {
    const e = eps([
      { addresses: [{ ip: '192.0.2.1' }], ports: [{ name: 'other', port: 1 }] },
      { addresses: [{ ip: '192.0.2.2' }, { ip: 'fd00::2' }], notReadyAddresses: [{ ip: '192.0.2.9' }], ports: [{ name: 'https', port: 4443 }] },
    ]);
    expect(resolveService(ref, clusterIp, e, true, () => 0).href).toBe('https://192.0.2.2:4443/');
    expect(resolveService(ref, clusterIp, e, true, () => 1).href).toBe('https://[fd00::2]:4443/');
  });

  it("answers kube-aggregator's reasons when it cannot", () => {
    expect(unreachable(() => resolveService(ref, undefined, undefined, true))).toEqual({
      reason: 'ServiceNotFound',
      message: 'service/metrics in "kube-system" is not present',
    });
    expect(unreachable(() => resolveService({ ...ref, port: 80 }, clusterIp, undefined, true))).toEqual({
      reason: 'ServicePortError',
      message: 'service/metrics in "kube-system" is not listening on port 80',
    });
    expect(unreachable(() => resolveService(ref, clusterIp, undefined, true)).reason).toBe('EndpointsNotFound');
    expect(unreachable(() => resolveService(ref, clusterIp, eps([{ addresses: [], ports: [{ name: 'https', port: 1 }] }]), true))).toEqual({
      reason: 'MissingEndpoints',
      message: 'endpoints for service/metrics in "kube-system" have no addresses with port name "https"',
    });
    expect(unreachable(() => resolveService(ref, svc({ type: 'ExternalName', externalName: 'x' }), undefined, true)).message).toBe(
      'unsupported service type "ExternalName"',
    );
  });
});

describe('apiServiceView', () => {
  it('reads the service (port 443 by default), the decoded caBundle and the Available condition', () => {
    const v = apiServiceView({
      apiVersion: 'apiregistration.k8s.io/v1',
      kind: 'APIService',
      metadata: { name: 'v1beta1.metrics.k8s.io' },
      spec: {
        group: 'metrics.k8s.io',
        version: 'v1beta1',
        service: { namespace: 'ns', name: 's' },
        caBundle: Buffer.from('PEM').toString('base64'),
        groupPriorityMinimum: 100,
        versionPriority: 5,
      },
      status: { conditions: [{ type: 'Available', status: 'True' }] },
    } as KubeObject);
    expect(v).toEqual({
      name: 'v1beta1.metrics.k8s.io',
      group: 'metrics.k8s.io',
      version: 'v1beta1',
      groupPriorityMinimum: 100,
      versionPriority: 5,
      service: { namespace: 'ns', name: 's', port: 443 },
      caBundle: 'PEM',
      insecureSkipTLSVerify: false,
      available: true,
    });
  });
});

describe('version order', () => {
  it("sorts as kube's CompareKubeAwareVersionStrings", () => {
    expect(['v1alpha1', 'foo', 'v2beta1', 'v1', 'v11alpha2', 'v2', 'v1beta2', 'bar', 'v1beta1'].sort(compareKubeVersions)).toEqual([
      'v2',
      'v1',
      'v2beta1',
      'v1beta2',
      'v1beta1',
      'v11alpha2',
      'v1alpha1',
      'bar',
      'foo',
    ]);
    const vs = [
      { version: 'v1', versionPriority: 10 },
      { version: 'v2alpha1', versionPriority: 20 },
      { version: 'v1beta1', versionPriority: 10 },
    ];
    expect(vs.sort(compareByVersionPriority).map((v) => v.version)).toEqual(['v2alpha1', 'v1', 'v1beta1']);
  });
});

describe('withAvailability', () => {
  const obj = (conds: unknown[]) =>
    ({ apiVersion: 'apiregistration.k8s.io/v1', kind: 'APIService', metadata: { name: 'x' }, status: { conditions: conds } }) as KubeObject;
  const now = new Date('2026-01-02T03:04:05Z');

  it('changes nothing when the condition is the same, keeps the transition time when only the reason changes', () => {
    const a = { status: 'False' as const, reason: 'MissingEndpoints', message: 'm' };
    expect(withAvailability(obj([{ type: 'Available', ...a, lastTransitionTime: 't0' }]), a, now)).toBeUndefined();
    const next = withAvailability(obj([{ type: 'Available', ...a, lastTransitionTime: 't0' }]), { ...a, reason: 'ServiceNotFound' }, now);
    expect((next!.status as { conditions: unknown[] }).conditions).toEqual([{ type: 'Available', ...a, reason: 'ServiceNotFound', lastTransitionTime: 't0' }]);
    const up = withAvailability(obj([{ type: 'Other', status: 'True' }]), { status: 'True', reason: 'Passed', message: 'all checks passed' }, now);
    expect((up!.status as { conditions: unknown[] }).conditions).toEqual([
      { type: 'Other', status: 'True' },
      { type: 'Available', status: 'True', reason: 'Passed', message: 'all checks passed', lastTransitionTime: '2026-01-02T03:04:05Z' },
    ]);
  });
});

describe('remoteUserHeaders', () => {
  it('names the user, every group and every extra (keys escaped)', () => {
    expect(remoteUserHeaders({ username: 'alice', groups: ['a', 'b'], extra: { 'example.com/scopes': ['x', 'y'], empty: [] } })).toEqual({
      'X-Remote-User': 'alice',
      'X-Remote-Group': ['a', 'b'],
      'X-Remote-Extra-example.com%2Fscopes': ['x', 'y'],
    });
  });
  it('names the UID only when asked to (the RemoteRequestHeaderUID gate) and the user has one', () => {
    const user = { username: 'alice', uid: 'u-1', groups: [] };
    expect(remoteUserHeaders(user)).toEqual({ 'X-Remote-User': 'alice' });
    expect(remoteUserHeaders(user, true)).toEqual({ 'X-Remote-User': 'alice', 'X-Remote-Uid': 'u-1' });
    expect(remoteUserHeaders({ username: 'bob', groups: [] }, true)).toEqual({ 'X-Remote-User': 'bob' });
  });
});

describe('aggregatedRemoteResources', () => {
  it('puts subresources under their resource with their own kinds', () => {
    expect(
      aggregatedRemoteResources('g.example.com', 'v1', [
        { name: 'widgets', singularName: 'widget', namespaced: true, kind: 'Widget', verbs: ['get', 'list'], shortNames: ['wd'] },
        { name: 'widgets/status', namespaced: true, kind: 'Widget', verbs: ['get'] },
        { name: 'widgets/scale', namespaced: true, kind: 'Scale', group: 'autoscaling', version: 'v1', verbs: ['get'] },
        { name: 'gadgets', namespaced: false, kind: 'Gadget', verbs: ['get'] },
      ]),
    ).toEqual([
      {
        resource: 'widgets',
        responseKind: { group: 'g.example.com', version: 'v1', kind: 'Widget' },
        scope: 'Namespaced',
        singularResource: 'widget',
        verbs: ['get', 'list'],
        shortNames: ['wd'],
        subresources: [
          { subresource: 'status', responseKind: { group: 'g.example.com', version: 'v1', kind: 'Widget' }, verbs: ['get'] },
          { subresource: 'scale', responseKind: { group: 'autoscaling', version: 'v1', kind: 'Scale' }, verbs: ['get'] },
        ],
      },
      {
        resource: 'gadgets',
        responseKind: { group: 'g.example.com', version: 'v1', kind: 'Gadget' },
        scope: 'Cluster',
        singularResource: 'gadget',
        verbs: ['get'],
      },
    ]);
  });
});
