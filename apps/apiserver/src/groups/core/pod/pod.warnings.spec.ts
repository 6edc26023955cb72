import type { KubeObject } from '@app/apimachinery';
import type { RequestContext } from '@app/registry';
import { applyAppArmorVersionSkew } from './pod.strategy.js';
import { claimWarnings, podWarnings } from './pod.warnings.js';

const c = (extra: Record<string, unknown> = {}) => ({ name: 'app', image: 'nginx', ...extra });

describe('pod warnings', () => {
  it('names deprecated node labels in node selectors, node affinity and topology spread', () => {
    expect(
      podWarnings({
        spec: {
          containers: [c()],
          nodeSelector: { 'beta.kubernetes.io/os': 'linux', 'kubernetes.io/os': 'linux' },
          affinity: {
            nodeAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: {
                nodeSelectorTerms: [{ matchExpressions: [{ key: 'failure-domain.beta.kubernetes.io/zone', operator: 'Exists' }] }],
              },
              preferredDuringSchedulingIgnoredDuringExecution: [
                {
                  weight: 1,
                  preference: {
                    matchExpressions: [
                      { key: 'x', operator: 'Exists' },
                      { key: 'beta.kubernetes.io/arch', operator: 'Exists' },
                    ],
                  },
                },
              ],
            },
          },
          topologySpreadConstraints: [
            { maxSkew: 1, topologyKey: 'failure-domain.beta.kubernetes.io/region', whenUnsatisfiable: 'DoNotSchedule', labelSelector: {} },
            { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'DoNotSchedule' },
          ],
        },
      }),
    ).toEqual([
      'spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use "kubernetes.io/os" instead',
      'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key: failure-domain.beta.kubernetes.io/zone is deprecated since v1.17; use "topology.kubernetes.io/zone" instead',
      'spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference.matchExpressions[1].key: beta.kubernetes.io/arch is deprecated since v1.14; use "kubernetes.io/arch" instead',
      'spec.topologySpreadConstraints[0].topologyKey: failure-domain.beta.kubernetes.io/region is deprecated since v1.17; use "topology.kubernetes.io/region" instead',
      'spec.topologySpreadConstraints[1].labelSelector: a null labelSelector results in matching no pod',
    ]);
  });

  it('names deprecated annotations and volume sources, under the template path in a template', () => {
    const template = {
      metadata: { annotations: { 'scheduler.alpha.kubernetes.io/critical-pod': '', 'seccomp.security.alpha.kubernetes.io/pod': 'runtime/default' } },
      spec: {
        containers: [c()],
        volumes: [
          { name: 'g', gitRepo: { repository: 'https://example.com/r.git' } },
          { name: 's', storageos: { volumeName: 'v' } },
          { name: 'r', rbd: { monitors: ['m'], image: 'i' } },
          { name: 'e', ephemeral: { volumeClaimTemplate: { spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1.5' } } } } } },
        ],
      },
    };
    expect(podWarnings(template, 'spec.template')).toEqual([
      'spec.template.metadata.annotations[scheduler.alpha.kubernetes.io/critical-pod]: non-functional in v1.16+; use the "priorityClassName" field instead',
      'spec.template.spec.volumes[0].gitRepo: deprecated in v1.11',
      'spec.template.spec.volumes[1].storageOS: deprecated in v1.22, non-functional in v1.25+',
      'spec.template.spec.volumes[2].rbd: deprecated in v1.28, non-functional in v1.31+',
      'spec.template.spec.volumes[3].ephemeral.volumeClaimTemplate.spec.resources.requests[storage]: fractional byte value "1500m" is invalid, must be an integer',
      'spec.template.metadata.annotations[seccomp.security.alpha.kubernetes.io/pod]: non-functional in v1.27+; use the "seccompProfile" field instead',
    ]);
    // The seccomp annotation is not named when the field is set beside it.
    const withField = { ...template, spec: { ...template.spec, volumes: [], securityContext: { seccompProfile: { type: 'RuntimeDefault' } } } };
    expect(podWarnings(withField, 'spec.template')).toEqual([
      'spec.template.metadata.annotations[scheduler.alpha.kubernetes.io/critical-pod]: non-functional in v1.16+; use the "priorityClassName" field instead',
    ]);
  });

  it('names a negative terminationGracePeriodSeconds, at the path of the template', () => {
    const spec = { containers: [c()], terminationGracePeriodSeconds: -1 };
    expect(podWarnings({ spec }, 'spec.template')).toEqual([
      'spec.template.spec.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be treated as 1',
    ]);
    expect(podWarnings({ spec }, 'spec.jobTemplate.spec.template')).toEqual([
      'spec.jobTemplate.spec.template.spec.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be treated as 1',
    ]);
    expect(podWarnings({ spec: { ...spec, terminationGracePeriodSeconds: 0 } }, 'spec.template')).toEqual([]);
  });

  it('names fractional byte quantities of containers and the pod overhead', () => {
    expect(
      podWarnings({
        spec: {
          overhead: { memory: '100.5', cpu: '0.5' },
          containers: [c({ resources: { limits: { memory: '1.5Mi', cpu: '100m' }, requests: { 'ephemeral-storage': '0.5' } } })],
        },
      }),
    ).toEqual([
      'spec.overhead[memory]: fractional byte value "100500m" is invalid, must be an integer',
      // 1.5Mi is a whole number of bytes.
      'spec.containers[0].resources.requests[ephemeral-storage]: fractional byte value "500m" is invalid, must be an integer',
    ]);
  });

  it('names per-container seccomp annotations without a field, and AppArmor annotations in templates only', () => {
    const annotations = {
      'container.seccomp.security.alpha.kubernetes.io/app': 'runtime/default',
      'container.apparmor.security.beta.kubernetes.io/app': 'runtime/default',
    };
    const seccomp =
      'metadata.annotations[container.seccomp.security.alpha.kubernetes.io/app]: non-functional in v1.27+; use the "seccompProfile" field instead';
    expect(podWarnings({ metadata: { annotations }, spec: { containers: [c()] } })).toEqual([seccomp]);
    expect(podWarnings({ metadata: { annotations }, spec: { containers: [c()] } }, 'spec.template')).toEqual([
      `spec.template.${seccomp}`,
      'spec.template.metadata.annotations[container.apparmor.security.beta.kubernetes.io/app]: deprecated since v1.30; use the "appArmorProfile" field instead',
    ]);
    const fields = {
      containers: [c({ securityContext: { seccompProfile: { type: 'RuntimeDefault' } } })],
      securityContext: { appArmorProfile: { type: 'RuntimeDefault' } },
    };
    expect(podWarnings({ metadata: { annotations }, spec: fields }, 'spec.template')).toEqual([]);
  });

  it('names overlapping paths of configMap, secret, downward API and projected volumes', () => {
    expect(
      podWarnings({
        spec: {
          containers: [c()],
          volumes: [
            {
              name: 'cm',
              configMap: {
                name: 'conf',
                items: [
                  { key: 'a', path: 'etc/app' },
                  { key: 'b', path: 'etc/app/' },
                  { key: 'c', path: 'etc/app/x' },
                  { key: 'd', path: 'other' },
                ],
              },
            },
            {
              name: 'p',
              projected: {
                sources: [{ secret: { name: 's', items: [{ key: 'k', path: 'token' }] } }, {}, { serviceAccountToken: { path: 'token' } }],
              },
            },
          ],
        },
      }),
    ).toEqual([
      'volume "cm" (ConfigMap "conf"): overlapping paths: "etc/app" with "etc/app"',
      'volume "cm" (ConfigMap "conf"): overlapping paths: "etc/app/x" with "etc/app"',
      'volume "p" (Projected) has no sources provided',
      'volume "p" (Projected ServiceAccountToken): overlapping paths: "token" with "token"',
    ]);
  });

  it('names pod (anti-)affinity terms without a label selector', () => {
    expect(
      podWarnings({
        spec: {
          containers: [c()],
          affinity: {
            podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'zone' }, { topologyKey: 'zone', labelSelector: {} }] },
            podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1, podAffinityTerm: { topologyKey: 'zone' } }] },
          },
        },
      }),
    ).toEqual([
      'spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector: a null labelSelector results in matching no pod',
      'spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.labelSelector: a null labelSelector results in matching no pod',
    ]);
  });

  it('keeps the overlapping-path check bounded for a volume with very many items', () => {
    // Pairwise, 100,000 items would be 5 billion comparisons: minutes of a blocked event loop.
    const items = Array.from({ length: 100_000 }, (_, i) => ({ key: `k${i}`, path: `p${i}` }));
    const out = podWarnings({ spec: { containers: [c()], volumes: [{ name: 'big', configMap: { name: 'big', items } }] } });
    // Paths compare as strings, as kube compares them: "p10/" begins with "p1".
    expect(out[0]).toBe('volume "big" (ConfigMap "big"): overlapping paths: "p10" with "p1"');
  });

  it('names the beta storage class annotation and fractional sizes of a claim', () => {
    const pvc = {
      metadata: { name: 'c', annotations: { 'volume.beta.kubernetes.io/storage-class': 'fast' } },
      spec: { resources: { requests: { storage: '1.5' }, limits: { storage: '2Gi' } } },
    } as unknown as KubeObject;
    expect(claimWarnings(pvc)).toEqual([
      'metadata.annotations[volume.beta.kubernetes.io/storage-class]: deprecated since v1.8; use "storageClassName" attribute instead',
      'spec.resources.requests[storage]: fractional byte value "1500m" is invalid, must be an integer',
    ]);
  });
});

describe('AppArmor version skew on pod create', () => {
  const ctx = (): RequestContext => ({ warnings: [] }) as unknown as RequestContext;
  const key = 'container.apparmor.security.beta.kubernetes.io/app';

  it('writes the annotation of a container whose profile is set by field', () => {
    const pod = {
      metadata: { name: 'p' },
      spec: { securityContext: { appArmorProfile: { type: 'Localhost', localhostProfile: 'k8s-nginx' } }, containers: [c()] },
    };
    const w = ctx();
    applyAppArmorVersionSkew(pod as unknown as KubeObject, w);
    expect(pod.metadata).toEqual({ name: 'p', annotations: { [key]: 'localhost/k8s-nginx' } });
    expect(w.warnings).toEqual([]);
  });

  it('fills the field from an annotation, warning that the annotation is deprecated', () => {
    const pod = { metadata: { name: 'p', annotations: { [key]: 'runtime/default' } }, spec: { containers: [c()] } } as unknown as KubeObject;
    const w = ctx();
    applyAppArmorVersionSkew(pod, w);
    expect((pod.spec as { containers: unknown[] }).containers[0]).toEqual(c({ securityContext: { appArmorProfile: { type: 'RuntimeDefault' } } }));
    expect(w.warnings).toEqual([`metadata.annotations[${key}]: deprecated since v1.30; use the "appArmorProfile" field instead`]);
  });

  it('warns about an annotation it cannot turn into a field, and leaves Windows pods alone', () => {
    const bad = { metadata: { name: 'p', annotations: { [key]: 'localhost/' } }, spec: { containers: [c()] } } as unknown as KubeObject;
    const w = ctx();
    applyAppArmorVersionSkew(bad, w);
    expect((bad.spec as { containers: unknown[] }).containers[0]).toEqual(c());
    expect(w.warnings).toHaveLength(1);
    const windows = {
      metadata: { name: 'p', annotations: { [key]: 'runtime/default' } },
      spec: { os: { name: 'windows' }, containers: [c()] },
    } as unknown as KubeObject;
    const w2 = ctx();
    applyAppArmorVersionSkew(windows, w2);
    expect(w2.warnings).toEqual([]);
    expect((windows.spec as { containers: unknown[] }).containers[0]).toEqual(c());
  });
});
