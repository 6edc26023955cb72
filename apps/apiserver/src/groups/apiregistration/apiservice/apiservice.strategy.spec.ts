import type { KubeObject } from '@app/apimachinery';
import type { RequestContext } from '@app/registry';
import { apiServiceAvailable, apiServiceService } from './apiservice.kind.js';
import { localAPIService, localAvailableCondition } from './apiservice.registration.js';
import { apiServiceStatusStrategy, apiServiceStrategy } from './apiservice.strategy.js';

const ctx: RequestContext = { user: { username: 'u', groups: [] }, dryRun: false, warnings: [], now: () => new Date() };
const svc = (name: string, spec: Record<string, unknown>): KubeObject => ({
  metadata: { name },
  spec: { group: 'metrics.example.com', version: 'v1beta1', groupPriorityMinimum: 100, versionPriority: 100, ...spec },
});
const msgs = (o: KubeObject) => apiServiceStrategy.validate!(o, ctx).map((e) => `${e.field}: ${e.detail}`);

describe('APIService strategy', () => {
  it('accepts a remote and a local APIService', () => {
    expect(msgs(svc('v1beta1.metrics.example.com', { service: { namespace: 'kube-system', name: 'metrics', port: 443 }, caBundle: 'Y2E=' }))).toEqual([]);
    expect(msgs(localAPIService('', 'v1'))).toEqual([]);
    expect(msgs(localAPIService('apps', 'v1'))).toEqual([]);
  });
  it('requires the name <version>.<group>, a group unless legacy v1, a DNS-1035 version and priorities in range', () => {
    expect(msgs(svc('v1.metrics.example.com', { group: '', version: 'V1', groupPriorityMinimum: 0, versionPriority: 1001 }))).toEqual([
      'metadata.name: must be `spec.version+"."+spec.group`: "V1."',
      'spec.group: only v1 may have an empty group and it better be legacy kube',
      "spec.version: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
      'spec.groupPriorityMinimum: must be positive and less than 20000',
      'spec.versionPriority: must be positive and less than 1000',
    ]);
  });
  it('refuses TLS settings on a local APIService and checks a remote one', () => {
    expect(msgs(svc('v1beta1.metrics.example.com', { caBundle: 'Y2E=', insecureSkipTLSVerify: true }))).toEqual([
      'spec.caBundle: local APIServices may not have a caBundle',
      'spec.insecureSkipTLSVerify: local APIServices may not have insecureSkipTLSVerify',
    ]);
    expect(msgs(svc('v1beta1.metrics.example.com', { service: { port: 70000 }, caBundle: 'Y2E=', insecureSkipTLSVerify: true }))).toEqual([
      'spec.service.namespace: ',
      'spec.service.name: ',
      'spec.service.port: port is not valid: must be between 1 and 65535, inclusive',
      'spec.insecureSkipTLSVerify: may not be true if caBundle is present',
    ]);
  });
  it('starts status empty; /status checks condition statuses', () => {
    const o = svc('v1beta1.metrics.example.com', {});
    o.status = { conditions: [{ type: 'Available', status: 'True' }] };
    apiServiceStrategy.prepareForCreate!(o, ctx);
    expect(o.status).toEqual({});
    o.status = { conditions: [{ type: 'Available', status: 'Maybe' }] };
    expect(apiServiceStatusStrategy.validateUpdate!(o, o, ctx)).toEqual([
      { type: 'FieldValueNotSupported', field: 'status.conditions[0].status', value: 'Maybe', detail: 'supported values: "True", "False", "Unknown"' },
    ]);
  });
  it('prints SERVICE and AVAILABLE as kubectl does', () => {
    const local = { ...localAPIService('apps', 'v1'), status: { conditions: [localAvailableCondition(new Date(0))] } };
    expect([apiServiceService(local), apiServiceAvailable(local)]).toEqual(['Local', 'True']);
    const remote = svc('v1beta1.metrics.example.com', { service: { namespace: 'ns', name: 'm' } });
    expect([apiServiceService(remote), apiServiceAvailable(remote)]).toEqual(['ns/m', 'Unknown']);
    remote.status = { conditions: [{ type: 'Available', status: 'False', reason: 'ServiceNotFound' }] };
    expect(apiServiceAvailable(remote)).toBe('False (ServiceNotFound)');
  });
  it('gives local APIServices kube-apiserver priorities, labelled as managed', () => {
    expect(localAPIService('', 'v1')).toMatchObject({
      metadata: { name: 'v1.', labels: { 'kube-aggregator.kubernetes.io/automanaged': 'onstart' } },
      spec: { group: '', version: 'v1', groupPriorityMinimum: 18000, versionPriority: 1 },
    });
    expect(localAPIService('example.io', 'v1alpha1').spec).toMatchObject({ groupPriorityMinimum: 1000, versionPriority: 15 });
  });
});
