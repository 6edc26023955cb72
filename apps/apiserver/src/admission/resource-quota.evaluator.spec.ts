import type { KubeObject } from '@app/apimachinery';
import {
  calculateUsage,
  checkRequest,
  claimUsage,
  matchingResources,
  podConstraints,
  podMatchesScope,
  podUsage,
  QuotaRefusal,
  serviceUsage,
  usageOf,
  writeList,
  type GroupResource,
} from './resource-quota.evaluator.js';

const NOW = new Date('2026-01-01T00:00:00Z');
const PODS: GroupResource = { group: '', resource: 'pods' };
const CONFIGMAPS: GroupResource = { group: '', resource: 'configmaps' };

type Res = { requests?: Record<string, string>; limits?: Record<string, string> };
const pod = (containers: Res[], extra: Record<string, unknown> = {}, status?: Record<string, unknown>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', namespace: 'ns' },
  spec: { containers: containers.map((resources, i) => ({ name: `c${i}`, image: 'nginx', resources })), ...extra },
  ...(status ? { status } : {}),
});
const quota = (name: string, hard: Record<string, string>, used?: Record<string, string>, spec: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ResourceQuota',
  metadata: { name, namespace: 'ns', resourceVersion: '7' },
  spec: { hard, ...spec },
  status: { hard, ...(used ? { used } : {}) },
});
const refusal = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    if (e instanceof QuotaRefusal) return e.message;
    throw e;
  }
  throw new Error('not refused');
};

describe('pod usage', () => {
  it('counts requests as cpu/memory and requests.*, limits as limits.*, and the pod', () => {
    const u = writeList(podUsage(pod([{ requests: { cpu: '250m', memory: '64Mi' }, limits: { cpu: '500m' } }, { requests: { cpu: '250m' } }]), NOW));
    expect(u).toEqual({
      'count/pods': '1',
      cpu: '500m',
      'limits.cpu': '500m',
      memory: '64Mi',
      pods: '1',
      'requests.cpu': '500m',
      'requests.memory': '64Mi',
    });
  });

  it('sizes init containers as the largest of them, sidecars added to the containers', () => {
    const p = pod([{ requests: { cpu: '100m' } }], {
      initContainers: [
        { name: 'i1', image: 'x', resources: { requests: { cpu: '1' } } },
        { name: 's1', image: 'x', restartPolicy: 'Always', resources: { requests: { cpu: '200m' } } },
      ],
    });
    expect(writeList(podUsage(p, NOW))['requests.cpu']).toBe('1');
    const sidecarOnly = pod([{ requests: { cpu: '100m' } }], {
      initContainers: [{ name: 's', image: 'x', restartPolicy: 'Always', resources: { requests: { cpu: '200m' } } }],
    });
    expect(writeList(podUsage(sidecarOnly, NOW))['requests.cpu']).toBe('300m');
  });

  it('charges a terminal pod only its object count', () => {
    expect(writeList(podUsage(pod([{ requests: { cpu: '1' } }], {}, { phase: 'Succeeded' }), NOW))).toEqual({ 'count/pods': '1' });
    expect(writeList(podUsage(pod([{ requests: { cpu: '1' } }], {}, { phase: 'Running' }), NOW)).pods).toBe('1');
  });

  it('requires each container to set the quota-limited cpu and memory', () => {
    const p = pod([{ requests: { cpu: '1' } }, {}]);
    expect(podConstraints(['requests.cpu', 'pods'], p)).toBe('must specify requests.cpu for: c1');
    expect(podConstraints(['requests.memory', 'limits.cpu'], p)).toBe('must specify limits.cpu for: c0,c1; requests.memory for: c0,c1');
    expect(podConstraints(['pods', 'requests.ephemeral-storage'], p)).toBeUndefined();
  });
});

describe('scopes', () => {
  it('tells BestEffort, Terminating, PriorityClass and cross-namespace affinity pods apart', () => {
    const be = pod([{}]);
    const burst = pod([{ requests: { memory: '1Mi' } }], { activeDeadlineSeconds: 10, priorityClassName: 'high' });
    expect(podMatchesScope({ scopeName: 'BestEffort', operator: 'Exists' }, be)).toBe(true);
    expect(podMatchesScope({ scopeName: 'NotBestEffort', operator: 'Exists' }, burst)).toBe(true);
    expect(podMatchesScope({ scopeName: 'Terminating', operator: 'Exists' }, burst)).toBe(true);
    expect(podMatchesScope({ scopeName: 'NotTerminating', operator: 'Exists' }, be)).toBe(true);
    expect(podMatchesScope({ scopeName: 'PriorityClass', operator: 'In', values: ['high'] }, burst)).toBe(true);
    expect(podMatchesScope({ scopeName: 'PriorityClass', operator: 'NotIn', values: ['high'] }, be)).toBe(true);
    expect(podMatchesScope({ scopeName: 'PriorityClass', operator: 'Exists' }, be)).toBe(false);
    const cross = pod([{}], { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'k', namespaces: ['x'] }] } } });
    expect(podMatchesScope({ scopeName: 'CrossNamespacePodAffinity', operator: 'Exists' }, cross)).toBe(true);
    expect(podMatchesScope({ scopeName: 'CrossNamespacePodAffinity', operator: 'Exists' }, be)).toBe(false);
  });
});

describe('services, claims and object counts', () => {
  it('counts load balancers and node ports', () => {
    const svc = (type: string): KubeObject => ({ metadata: { name: 's' }, spec: { type, ports: [{ port: 80 }, { port: 443 }] } });
    expect(writeList(serviceUsage(svc('ClusterIP')))).toEqual({
      'count/services': '1',
      services: '1',
      'services.loadbalancers': '0',
      'services.nodeports': '0',
    });
    expect(writeList(serviceUsage(svc('LoadBalancer')))).toMatchObject({ 'services.loadbalancers': '1', 'services.nodeports': '2' });
  });

  it('charges claims their storage, per class too, rounded up to whole bytes', () => {
    const pvc: KubeObject = { metadata: { name: 'c' }, spec: { storageClassName: 'gold', resources: { requests: { storage: '1500m' } } } };
    expect(writeList(claimUsage(pvc))).toEqual({
      'count/persistentvolumeclaims': '1',
      'gold.storageclass.storage.k8s.io/persistentvolumeclaims': '1',
      'gold.storageclass.storage.k8s.io/requests.storage': '2',
      persistentvolumeclaims: '1',
      'requests.storage': '2',
    });
    expect(matchingResources({ group: '', resource: 'persistentvolumeclaims' }, ['gold.storageclass.storage.k8s.io/requests.storage', 'pods'])).toEqual([
      'gold.storageclass.storage.k8s.io/requests.storage',
    ]);
  });

  it('counts any other resource as count/<resource>.<group>, with the legacy names', () => {
    expect(writeList(usageOf(CONFIGMAPS, { metadata: {} }, NOW))).toEqual({ configmaps: '1', 'count/configmaps': '1' });
    expect(writeList(usageOf({ group: 'apps', resource: 'deployments' }, { metadata: {} }, NOW))).toEqual({ 'count/deployments.apps': '1' });
  });
});

describe('the charge decision', () => {
  const create = (object: KubeObject, gr = PODS) => ({ operation: 'CREATE' as const, gr, object });

  it('charges every matching quota and leaves the others', () => {
    const quotas = [
      quota('q', { pods: '2', 'requests.cpu': '1' }, { pods: '1', 'requests.cpu': '0' }),
      quota('cm', { 'count/configmaps': '3' }, { 'count/configmaps': '0' }),
    ];
    const charged = checkRequest(quotas, create(pod([{ requests: { cpu: '500m' } }])), NOW);
    expect([...charged.keys()]).toEqual(['q']);
    expect(writeList(charged.get('q')!)).toEqual({ pods: '2', 'requests.cpu': '500m' });
  });

  it('refuses what would exceed a quota with Kubernetes message', () => {
    const quotas = [quota('q', { pods: '2' }, { pods: '2' })];
    expect(refusal(() => checkRequest(quotas, create(pod([{}])), NOW))).toBe('exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2');
    const cpu = [quota('c', { 'requests.cpu': '1', pods: '10' }, { 'requests.cpu': '800m', pods: '1' })];
    expect(refusal(() => checkRequest(cpu, create(pod([{ requests: { cpu: '300m' } }])), NOW))).toBe(
      'exceeded quota: c, requested: requests.cpu=300m, used: requests.cpu=800m, limited: requests.cpu=1',
    );
  });

  it('refuses a pod without the limited requests, and a quota whose usage is not known yet', () => {
    expect(refusal(() => checkRequest([quota('q', { 'requests.cpu': '1' }, { 'requests.cpu': '0' })], create(pod([{}])), NOW))).toBe(
      'failed quota: q: must specify requests.cpu for: c0',
    );
    expect(refusal(() => checkRequest([quota('q', { pods: '1', 'count/pods': '3' })], create(pod([{}])), NOW))).toBe(
      'status unknown for quota: q, resources: count/pods,pods',
    );
  });

  it('only charges pods a scoped quota matches', () => {
    const be = [quota('be', { pods: '1' }, { pods: '1' }, { scopes: ['BestEffort'] })];
    expect(checkRequest(be, create(pod([{ requests: { cpu: '1' } }])), NOW).size).toBe(0);
    expect(refusal(() => checkRequest(be, create(pod([{}])), NOW))).toMatch(/^exceeded quota: be, requested: pods=1/);
  });

  it('charges an update only what it adds', () => {
    const svc = (type: string): KubeObject => ({ metadata: { name: 's' }, spec: { type, ports: [{ port: 80 }] } });
    const quotas = [quota('s', { services: '1', 'services.loadbalancers': '1' }, { services: '1', 'services.loadbalancers': '0' })];
    const charged = checkRequest(
      quotas,
      { operation: 'UPDATE', gr: { group: '', resource: 'services' }, object: svc('LoadBalancer'), oldObject: svc('ClusterIP') },
      NOW,
    );
    expect(writeList(charged.get('s')!)).toEqual({ services: '1', 'services.loadbalancers': '1' });
  });

  it("charges a pod's resources resized in place by what they grow, and no other pod update", () => {
    const quotas = [quota('c', { 'requests.cpu': '1', pods: '10' }, { 'requests.cpu': '600m', pods: '2' })];
    const resize = (from: string, to: string, subresource = 'resize') => ({
      operation: 'UPDATE' as const,
      subresource,
      gr: PODS,
      object: pod([{ requests: { cpu: to } }]),
      oldObject: pod([{ requests: { cpu: from } }]),
    });
    expect(writeList(checkRequest(quotas, resize('200m', '500m'), NOW).get('c')!)).toEqual({ pods: '2', 'requests.cpu': '900m' });
    expect(refusal(() => checkRequest(quotas, resize('200m', '700m'), NOW))).toBe(
      'exceeded quota: c, requested: requests.cpu=500m, used: requests.cpu=600m, limited: requests.cpu=1',
    );
    // Shrinking gives nothing back here (the quota controller recomputes usage).
    expect(checkRequest(quotas, resize('500m', '200m'), NOW).size).toBe(0);
    // The pod itself, or another subresource: not charged on update.
    expect(checkRequest(quotas, resize('200m', '700m', ''), NOW).size).toBe(0);
    expect(checkRequest(quotas, resize('200m', '700m', 'status'), NOW).size).toBe(0);
  });
});

describe('recomputed usage', () => {
  it('starts every tracked name at zero and sums the matching objects', () => {
    const q = quota('q', { pods: '5', 'requests.memory': '1Gi', 'count/configmaps': '3', 'count/widgets.example.com': '1' });
    const objects = (gr: GroupResource) =>
      gr.resource === 'pods'
        ? [pod([{ requests: { memory: '128Mi' } }]), pod([{ requests: { memory: '128Mi' } }], {}, { phase: 'Failed' })]
        : gr.resource === 'configmaps'
          ? [{ metadata: { name: 'kube-root-ca.crt' } }]
          : undefined;
    const used = calculateUsage(q, [PODS, CONFIGMAPS, { group: 'example.com', resource: 'widgets' }], objects, NOW);
    expect(writeList(used)).toEqual({ 'count/configmaps': '1', pods: '1', 'requests.memory': '128Mi' });
  });
});
