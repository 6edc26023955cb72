/**
 * kube's warnings on writes of pods, workloads and claims, as kubectl prints them: deprecated
 * node labels, annotations and volume sources, fractional byte quantities, overlapping volume
 * paths, label-less affinity terms; and the AppArmor annotations of a new Pod kept in step with
 * its `appArmorProfile` fields.
 */
import { type ServerHandle, kubectl, startServer } from './support/server.js';

const NS = 'default';

describe('pod, workload and claim warnings', () => {
  let server: ServerHandle;

  beforeAll(async () => {
    server = await startServer();
  });

  afterAll(async () => {
    await server?.cleanup();
  });

  it('kubectl apply of a Deployment prints the template warnings under spec.template', async () => {
    const r = await kubectl(server, ['apply', '-n', NS, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'old-ways' },
        spec: {
          selector: { matchLabels: { app: 'old' } },
          template: {
            metadata: { labels: { app: 'old' }, annotations: { 'seccomp.security.alpha.kubernetes.io/pod': 'runtime/default' } },
            spec: {
              nodeSelector: { 'beta.kubernetes.io/os': 'linux' },
              containers: [
                { name: 'app', image: 'nginx', resources: { requests: { memory: '100.5' } }, volumeMounts: [{ name: 'conf', mountPath: '/etc/conf' }] },
              ],
              volumes: [
                {
                  name: 'conf',
                  configMap: {
                    name: 'conf',
                    items: [
                      { key: 'a', path: 'app' },
                      { key: 'b', path: 'app/extra' },
                    ],
                  },
                },
                { name: 'src', gitRepo: { repository: 'https://example.com/r.git' } },
              ],
              affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'kubernetes.io/hostname' }] } },
            },
          },
        },
      }),
    });
    expect(r.stdout).toContain('deployment.apps/old-ways created');
    for (const warning of [
      'spec.template.spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use "kubernetes.io/os" instead',
      'spec.template.spec.volumes[1].gitRepo: deprecated in v1.11',
      'volume "conf" (ConfigMap "conf"): overlapping paths: "app/extra" with "app"',
      'spec.template.metadata.annotations[seccomp.security.alpha.kubernetes.io/pod]: non-functional in v1.27+; use the "seccompProfile" field instead',
      'spec.template.spec.containers[0].resources.requests[memory]: fractional byte value "100500m" is invalid, must be an integer',
      'spec.template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector: a null labelSelector results in matching no pod',
    ])
      expect(r.stderr).toContain(`Warning: ${warning}`);
  });

  it('a Pod created with an AppArmor annotation gets the field, with a warning; one with the field gets the annotation', async () => {
    const key = 'container.apparmor.security.beta.kubernetes.io/app';
    const byAnnotation = await kubectl(server, ['create', '-n', NS, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'armor-annotation', annotations: { [key]: 'runtime/default' } },
        spec: { containers: [{ name: 'app', image: 'nginx' }] },
      }),
    });
    expect(byAnnotation.stderr).toContain(`Warning: metadata.annotations[${key}]: deprecated since v1.30; use the "appArmorProfile" field instead`);
    const field = await kubectl(server, [
      'get',
      'pod',
      'armor-annotation',
      '-n',
      NS,
      '-o',
      'jsonpath={.spec.containers[0].securityContext.appArmorProfile.type}',
    ]);
    expect(field.stdout).toBe('RuntimeDefault');

    const byField = await kubectl(server, ['create', '-n', NS, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'armor-field' },
        spec: { securityContext: { appArmorProfile: { type: 'Localhost', localhostProfile: 'k8s-nginx' } }, containers: [{ name: 'app', image: 'nginx' }] },
      }),
    });
    expect(byField.stderr).not.toContain('Warning:');
    const annotation = await kubectl(server, ['get', 'pod', 'armor-field', '-n', NS, '-o', 'json']);
    expect((JSON.parse(annotation.stdout) as { metadata: { annotations: Record<string, string> } }).metadata.annotations[key]).toBe('localhost/k8s-nginx');
  });

  it('claims and the claim templates of a StatefulSet warn about fractional sizes and the beta class annotation', async () => {
    const pvc = await kubectl(server, ['create', '-n', NS, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name: 'old-class', annotations: { 'volume.beta.kubernetes.io/storage-class': 'fast' } },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1.5' } } },
      }),
    });
    expect(pvc.stdout).toContain('persistentvolumeclaim/old-class created');
    expect(pvc.stderr).toContain(
      'Warning: metadata.annotations[volume.beta.kubernetes.io/storage-class]: deprecated since v1.8; use "storageClassName" attribute instead',
    );
    expect(pvc.stderr).toContain('Warning: spec.resources.requests[storage]: fractional byte value "1500m" is invalid, must be an integer');

    const sts = await kubectl(server, ['create', '-n', NS, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        metadata: { name: 'db' },
        spec: {
          serviceName: 'db',
          selector: { matchLabels: { app: 'db' } },
          template: { metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'db', image: 'postgres' }] } },
          volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '0.5' } } } }],
        },
      }),
    });
    expect(sts.stdout).toContain('statefulset.apps/db created');
    expect(sts.stderr).toContain(
      'Warning: spec.volumeClaimTemplates[0].resources.requests[storage]: fractional byte value "500m" is invalid, must be an integer',
    );
  });
});
