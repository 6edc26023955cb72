import { fieldErrorMessage, type KubeObject } from '@app/apimachinery';
import type { RequestContext } from '@app/registry';
import { EPHEMERAL_CONTAINERS_STRATEGY } from './pod.ephemeral.js';
import { defaultPullPolicy, podStrategy, qosClassOf } from './pod.strategy.js';
import { validatePodSpec } from './pod.validation.js';
import { withPodSpecWarnings } from './pod.warnings.js';

const ctx: RequestContext = { user: { username: 'u', groups: [] }, dryRun: false, warnings: [], now: () => new Date() };
const pod = (spec: Record<string, unknown>): KubeObject => ({ metadata: { name: 'p', namespace: 'default' }, spec });
const c = (extra: Record<string, unknown> = {}) => ({ name: 'app', image: 'nginx:1.27', ...extra });
const errs = (spec: Record<string, unknown>) => podStrategy.validate!(pod(spec), ctx).map(fieldErrorMessage);

describe('Pod strategy', () => {
  it('accepts a pod with one container', () => {
    expect(errs({ containers: [c()] })).toEqual([]);
  });

  it('checks container names and images', () => {
    expect(errs({ containers: [] })).toEqual(['spec.containers: Required value']);
    expect(errs({ containers: [{ image: 'x' }] })).toEqual(['spec.containers[0].name: Required value']);
    expect(errs({ containers: [c({ name: 'App' })] })[0]).toMatch(/^spec\.containers\[0\]\.name: Invalid value: "App": a lowercase RFC 1123 label/);
    expect(errs({ containers: [c(), c()] })).toEqual(['spec.containers[1].name: Duplicate value: "app"']);
    expect(errs({ containers: [c({ image: undefined })] })).toEqual(['spec.containers[0].image: Required value']);
    expect(errs({ containers: [c({ image: ' nginx' })] })).toEqual([
      'spec.containers[0].image: Invalid value: " nginx": must not have leading or trailing whitespace',
    ]);
  });

  it('checks ports', () => {
    expect(errs({ containers: [c({ ports: [{ containerPort: 70000 }] })] })).toEqual([
      'spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive',
    ]);
    expect(errs({ containers: [c({ ports: [{}] })] })).toEqual(['spec.containers[0].ports[0].containerPort: Required value']);
    expect(
      errs({
        containers: [
          c({
            ports: [
              { containerPort: 80, name: 'http' },
              { containerPort: 81, name: 'http' },
            ],
          }),
        ],
      }),
    ).toEqual(['spec.containers[0].ports[1].name: Duplicate value: "http"']);
    expect(errs({ containers: [c({ ports: [{ containerPort: 80, name: 'a-very-long-port-name' }] })] })).toEqual([
      'spec.containers[0].ports[0].name: Invalid value: "a-very-long-port-name": must be no more than 15 characters',
    ]);
  });

  it('refuses a host port taken twice, and only warns of repeats the API accepts', () => {
    expect(
      errs({
        containers: [
          c({ ports: [{ containerPort: 80, hostPort: 8080 }] }),
          c({
            name: 'b',
            ports: [
              { containerPort: 81, hostPort: 8080 },
              { containerPort: 82, hostPort: 8080, protocol: 'UDP' },
            ],
          }),
        ],
      }),
    ).toEqual(['spec.containers[1].ports[0].hostPort: Duplicate value: "TCP//8080"']);
    const warned = (spec: Record<string, unknown>) => {
      const w: RequestContext = { ...ctx, warnings: [] };
      expect(podStrategy.validate!(pod(spec), w)).toEqual([]);
      return w.warnings;
    };
    expect(
      warned({
        containers: [
          c({
            env: [
              { name: 'A', value: '1' },
              { name: 'A', value: '2' },
              { name: 'B', value: 'x' },
              { name: 'B', value: '$(B):y' },
            ],
            ports: [{ containerPort: 80 }, { containerPort: 80 }, { containerPort: 80, hostPort: 8080 }, { containerPort: 90, hostIP: '10.0.0.1' }],
          }),
        ],
        hostAliases: [{ ip: '10.0.0.9' }, { ip: '10.0.0.9' }],
        imagePullSecrets: [{ name: 's' }, { name: 's' }, {}],
      }),
    ).toEqual([
      'spec.hostAliases[1].ip: duplicate ip "10.0.0.9"',
      'spec.imagePullSecrets[1].name: duplicate name "s"',
      'spec.imagePullSecrets[2].name: invalid empty name ""',
      'spec.containers[0].env[1]: hides previous definition of "A", which may be dropped when using apply',
      'spec.containers[0].ports[1]: duplicate port definition with spec.containers[0].ports[0]',
      'spec.containers[0].ports[2]: overlapping port definition with spec.containers[0].ports[0]',
      'spec.containers[0].ports[2]: overlapping port definition with spec.containers[0].ports[1]',
      'spec.containers[0].ports[3]: hostIP set without hostPort: {Name: HostPort:0 ContainerPort:90 Protocol:TCP HostIP:10.0.0.1}',
    ]);
  });

  it('gives pod template warnings on create and on updates that change the spec', () => {
    const strategy = withPodSpecWarnings({ validate: () => [] }, ['spec', 'template', 'spec']);
    const env = [
      { name: 'A', value: '1' },
      { name: 'A', value: '2' },
    ];
    const d = (generation: number): KubeObject => ({ metadata: { name: 'd', generation }, spec: { template: { spec: { containers: [c({ env })] } } } });
    const run = (f: (w: RequestContext) => void): string[] => {
      const w: RequestContext = { ...ctx, warnings: [] };
      f(w);
      return w.warnings;
    };
    const warning = 'spec.template.spec.containers[0].env[1]: hides previous definition of "A", which may be dropped when using apply';
    expect(run((w) => strategy.validate!(d(1), w))).toEqual([warning]);
    expect(run((w) => strategy.validateUpdate!(d(1), d(1), w))).toEqual([]);
    expect(run((w) => strategy.validateUpdate!(d(2), d(1), w))).toEqual([warning]);
  });

  it('checks resources: requests at most limits, quantities not negative', () => {
    expect(errs({ containers: [c({ resources: { limits: { cpu: '1' }, requests: { cpu: '2' } } })] })).toEqual([
      'spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1',
    ]);
    expect(errs({ containers: [c({ resources: { requests: { memory: '-1Mi' } } })] })).toEqual([
      'spec.containers[0].resources.requests[memory]: Invalid value: "-1Mi": must be greater than or equal to 0',
    ]);
  });

  it('checks volume mounts against volumes, the restart policy and the volumes themselves', () => {
    expect(errs({ containers: [c({ volumeMounts: [{ name: 'nope', mountPath: '/x' }] })] })).toEqual([
      'spec.containers[0].volumeMounts[0].name: Not found: "nope"',
    ]);
    expect(errs({ containers: [c()], restartPolicy: 'Sometimes' })).toEqual([
      'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
    ]);
    expect(errs({ containers: [c()], volumes: [{ name: 'v' }] })).toEqual(['spec.volumes[0]: Required value: must specify a volume type']);
  });

  it('allows only images, deadlines, added tolerations and a negative grace period set to 1 to change', () => {
    const old = pod({ containers: [c()], terminationGracePeriodSeconds: 30 });
    const forbidden = [expect.stringMatching(/^spec: Forbidden: pod updates may not change fields other than `spec.containers\[\*\].image`/)];
    expect(
      podStrategy.validateUpdate!(pod({ containers: [c({ image: 'nginx:1.28' })], terminationGracePeriodSeconds: 30, activeDeadlineSeconds: 5 }), old, ctx),
    ).toEqual([]);
    const e = podStrategy.validateUpdate!(pod({ containers: [c({ ports: [{ containerPort: 80 }] })], terminationGracePeriodSeconds: 30 }), old, ctx).map(
      fieldErrorMessage,
    );
    expect(e).toEqual(forbidden);
    // The grace period changes only from a negative value (stored by an earlier build) to 1.
    expect(podStrategy.validateUpdate!(pod({ containers: [c()], terminationGracePeriodSeconds: 10 }), old, ctx).map(fieldErrorMessage)).toEqual(forbidden);
    const negative = pod({ containers: [c()], terminationGracePeriodSeconds: -5 });
    expect(podStrategy.validateUpdate!(pod({ containers: [c()], terminationGracePeriodSeconds: 1 }), negative, ctx)).toEqual([]);
    expect(podStrategy.validateUpdate!(pod({ containers: [c()], terminationGracePeriodSeconds: 2 }), negative, ctx).map(fieldErrorMessage)).toEqual(forbidden);
  });

  it('treats a negative terminationGracePeriodSeconds of a Pod as 1, on create and update, without refusing it', () => {
    const created = pod({ containers: [c()], terminationGracePeriodSeconds: -1 });
    podStrategy.prepareForCreate!(created, ctx);
    expect(created.spec).toMatchObject({ terminationGracePeriodSeconds: 1 });
    expect(podStrategy.validate!(created, ctx)).toEqual([]);
    const updated = pod({ containers: [c()], terminationGracePeriodSeconds: -30 });
    podStrategy.prepareForUpdate!(updated, created, ctx);
    expect(updated.spec).toMatchObject({ terminationGracePeriodSeconds: 1 });
    expect(podStrategy.validateUpdate!(updated, created, ctx)).toEqual([]);
    // A pod template keeps its value: accepted, with kube's warning (see pod.warnings.spec.ts).
    expect(validatePodSpec({ containers: [c()], terminationGracePeriodSeconds: -1 }, 'spec.template.spec')).toEqual([]);
  });

  it('defaults pull policy, requests from limits, and starts Pending with its QoS class', () => {
    expect([defaultPullPolicy('nginx'), defaultPullPolicy('nginx:latest'), defaultPullPolicy('nginx:1.27'), defaultPullPolicy('reg:5000/nginx')]).toEqual([
      'Always',
      'Always',
      'IfNotPresent',
      'Always',
    ]);
    const p = pod({ containers: [c({ resources: { limits: { cpu: '1', memory: '1Gi' } } })] });
    podStrategy.prepareForCreate!(p, ctx);
    expect(p.spec).toMatchObject({
      securityContext: {},
      containers: [{ imagePullPolicy: 'IfNotPresent', resources: { requests: { cpu: '1', memory: '1Gi' } } }],
    });
    expect(p.status).toEqual({ phase: 'Pending', qosClass: 'Guaranteed' });
    expect(qosClassOf({ containers: [c()] })).toBe('BestEffort');
    expect(qosClassOf({ containers: [c({ resources: { requests: { cpu: '1' } } })] })).toBe('Burstable');
  });

  it('ephemeral containers: none on create or in a template; added only, through the subresource, setting only the allowed fields', () => {
    expect(errs({ containers: [c()], ephemeralContainers: [{ name: 'e', image: 'busybox' }] })).toEqual([
      'spec.ephemeralContainers: Forbidden: cannot be set on create',
    ]);
    expect(validatePodSpec({ containers: [c()], ephemeralContainers: [{ name: 'e', image: 'busybox' }] }, 'spec.template.spec').map(fieldErrorMessage)).toEqual(
      ['spec.template.spec.ephemeralContainers: Forbidden: ephemeral containers not allowed in pod template'],
    );
    const old = pod({ containers: [c()] });
    const next = pod({ containers: [c({ image: 'changed' })], ephemeralContainers: [{ name: 'e', image: 'busybox', resources: {}, stdin: false }] });
    next.metadata.labels = { changed: 'yes' };
    EPHEMERAL_CONTAINERS_STRATEGY.prepareForUpdate(next, old, ctx);
    // Only the ephemeral containers change (defaulted), and the generation with them.
    expect(next.spec).toEqual({
      containers: [c()],
      ephemeralContainers: [{ name: 'e', image: 'busybox', imagePullPolicy: 'Always', resources: {}, stdin: false }],
    });
    expect(next.metadata).toEqual({ ...old.metadata, generation: 1 });
    // Empty values of the refused fields are no values.
    expect(EPHEMERAL_CONTAINERS_STRATEGY.validateUpdate!(next, old, ctx)).toEqual([]);
    const removed = pod({ containers: [c()] });
    expect(EPHEMERAL_CONTAINERS_STRATEGY.validateUpdate!(removed, next, ctx).map(fieldErrorMessage)).toEqual([
      'spec.ephemeralContainers: Forbidden: existing ephemeral containers "e" may not be removed\n',
    ]);
    const changed = pod({ containers: [c()], ephemeralContainers: [{ name: 'e', image: 'alpine' }] });
    expect(EPHEMERAL_CONTAINERS_STRATEGY.validateUpdate!(changed, next, ctx).map(fieldErrorMessage)).toEqual([
      'spec.ephemeralContainers[e]: Forbidden: existing ephemeral containers "e" may not be changed\n',
    ]);
    const probed = pod({
      containers: [c()],
      ephemeralContainers: [{ name: 'p', image: 'busybox', livenessProbe: { exec: { command: ['true'] } }, lifecycle: {} }],
    });
    expect(EPHEMERAL_CONTAINERS_STRATEGY.validateUpdate!(probed, old, ctx).map(fieldErrorMessage)).toEqual([
      'spec.ephemeralContainers[0].livenessProbe: Forbidden: cannot be set for an Ephemeral Container',
    ]);
  });
});
