import type { KubeObject } from '@app/apimachinery';
import { defaultService, serviceExternalIpCell, servicePortsCell, validateService, validateServiceUpdate } from './service.strategy.js';

const svc = (spec: Record<string, unknown>, name = 'web'): KubeObject => ({ metadata: { name }, spec });
const msgs = (errs: Array<{ field: string; detail: string }>): string[] => errs.map((e) => `${e.field}: ${e.detail}`);

describe('Service strategy', () => {
  it('accepts a plain service and fills kube defaults', () => {
    const s = svc({ clusterIP: '10.96.0.10', ports: [{ port: 80 }], selector: { app: 'web' } });
    expect(validateService(s)).toEqual([]);
    defaultService(s);
    expect(s.spec).toMatchObject({
      clusterIPs: ['10.96.0.10'],
      ipFamilies: ['IPv4'],
      ipFamilyPolicy: 'SingleStack',
      internalTrafficPolicy: 'Cluster',
      ports: [{ port: 80, targetPort: 80 }],
    });
    const lb = svc({ type: 'LoadBalancer', ports: [{ port: 80 }] });
    defaultService(lb);
    expect(lb.spec).toMatchObject({ externalTrafficPolicy: 'Cluster', allocateLoadBalancerNodePorts: true });
  });

  it('refuses what ValidateService refuses', () => {
    expect(msgs(validateService(svc({}, '9lives')))[0]).toMatch(/^metadata\.name: a DNS-1035 label must consist of/);
    expect(msgs(validateService(svc({})))).toEqual(['spec.ports: ']);
    expect(validateService(svc({ clusterIP: 'None' }))).toEqual([]);
    expect(msgs(validateService(svc({ ports: [{ port: 80 }, { port: 80, name: 'b' }] })))).toEqual([
      'spec.ports[0].name: ',
      'spec.ports[1]: ', // the same port and protocol twice
    ]);
    expect(msgs(validateService(svc({ ports: [{ port: 70000, name: 'UPPER', targetPort: 'x--y' }] })))).toEqual([
      'spec.ports[0].name: ' +
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
      'spec.ports[0].port: must be between 1 and 65535, inclusive',
      "spec.ports[0].targetPort: must not contain consecutive hyphens ('--')",
    ]);
    expect(msgs(validateService(svc({ type: 'NodePort', clusterIP: 'None', ports: [{ port: 1, nodePort: 29999 }] })))).toEqual([
      "spec.clusterIPs[0]: may not be set to 'None' for NodePort services",
    ]);
    // The node port range is the allocator's to check; validation only wants a port number.
    expect(msgs(validateService(svc({ type: 'NodePort', ports: [{ port: 1, nodePort: 70000 }] })))).toEqual([
      'spec.ports[0].nodePort: must be between 1 and 65535, inclusive',
    ]);
    expect(msgs(validateService(svc({ type: 'ExternalName', externalName: 'bad_name' })))[0]).toMatch(/^spec\.externalName: a lowercase RFC 1123 subdomain/);
    expect(msgs(validateServiceUpdate(svc({ clusterIP: '10.0.0.2', ports: [{ port: 1 }] }), svc({ clusterIP: '10.0.0.1' })))).toEqual([
      'spec.clusterIPs[0]: may not change once set',
    ]);
  });

  it('PORT(S) and EXTERNAL-IP columns', () => {
    expect(
      servicePortsCell(
        svc({
          ports: [
            { port: 80, nodePort: 30080, protocol: 'TCP' },
            { port: 53, protocol: 'UDP' },
          ],
        }),
      ),
    ).toBe('80:30080/TCP,53/UDP');
    expect(serviceExternalIpCell(svc({ type: 'LoadBalancer' }))).toBe('<pending>');
    expect(serviceExternalIpCell({ ...svc({ type: 'LoadBalancer' }), status: { loadBalancer: { ingress: [{ ip: '1.2.3.4' }] } } })).toBe('1.2.3.4');
    expect(serviceExternalIpCell(svc({ type: 'ClusterIP', externalIPs: ['5.6.7.8'] }))).toBe('5.6.7.8');
  });
});
