import { fieldErrorMessage, type KubeObject } from '@app/apimachinery';
import type { RequestContext } from '@app/registry';
import { RESIZE_STRATEGY } from './pod.resize.js';
import { podStrategy } from './pod.strategy.js';

type Obj = Record<string, unknown>;
const ctx: RequestContext = { user: { username: 'u', groups: [] }, dryRun: false, warnings: [], now: () => new Date() };
const res = (cpu: string, memory: string, limits?: { cpu?: string; memory?: string }) => ({ requests: { cpu, memory }, ...(limits ? { limits } : {}) });

/**
 * A stored pod as the pod strategy leaves it after create (defaults, status with its QoS class).
 * Cloned, as the server's objects are decoded: structuredClone makes objects of the realm the
 * strategy's own clones come from, which a deep equality between the two needs under Jest.
 */
function stored(spec: Obj): KubeObject {
  const p: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default', generation: 1, labels: { app: 'a' } }, spec };
  podStrategy.prepareForCreate!(p, ctx);
  return structuredClone(p);
}

/** The resize of `old` with `body` (a whole pod, as PUT sends or a patch produces): the stored result and the errors. */
function resize(old: KubeObject, change: (p: KubeObject) => void): { pod: KubeObject; errors: string[] } {
  const body = structuredClone(old);
  change(body);
  RESIZE_STRATEGY.prepareForUpdate(body, old, ctx);
  return { pod: body, errors: RESIZE_STRATEGY.validateUpdate!(body, old, ctx).map(fieldErrorMessage) };
}
const containers = (p: KubeObject): Obj[] => (p.spec as Obj).containers as Obj[];

describe('pods/resize', () => {
  const burstable = () =>
    stored({
      containers: [
        { name: 'web', image: 'nginx:1.27', resources: res('100m', '128Mi', { cpu: '500m', memory: '256Mi' }) },
        { name: 'log', image: 'busybox:1.36', resources: res('50m', '64Mi', { cpu: '200m', memory: '128Mi' }) },
      ],
    });

  it('changes the CPU and memory of a container and the resize policy, bumping the generation', () => {
    const old = burstable();
    const { pod, errors } = resize(old, (p) => {
      containers(p)[0]!.resources = res('200m', '192Mi', { cpu: '800m', memory: '512Mi' });
      containers(p)[0]!.resizePolicy = [{ resourceName: 'memory', restartPolicy: 'RestartContainer' }];
    });
    expect(errors).toEqual([]);
    expect(containers(pod)[0]).toMatchObject({ resources: res('200m', '192Mi', { cpu: '800m', memory: '512Mi' }), resizePolicy: [{ resourceName: 'memory' }] });
    expect(containers(pod)[1]).toEqual(containers(old)[1]);
    expect(pod.metadata.generation).toBe(2);
    // Lowering a memory limit is allowed: whether it can be applied is the node's to decide.
    expect(resize(old, (p) => void (containers(p)[0]!.resources = res('100m', '128Mi', { cpu: '500m', memory: '200Mi' }))).errors).toEqual([]);
  });

  it('drops every other change the body carries: image, labels, status', () => {
    const old = burstable();
    const { pod, errors } = resize(old, (p) => {
      containers(p)[0]!.image = 'nginx:1.28';
      containers(p)[0]!.resources = res('150m', '128Mi', { cpu: '500m', memory: '256Mi' });
      p.metadata.labels = { app: 'b' };
      p.status = { phase: 'Running', qosClass: 'Burstable' };
    });
    expect(errors).toEqual([]);
    expect(containers(pod)[0]).toMatchObject({ image: 'nginx:1.27', resources: { requests: { cpu: '150m' } } });
    expect(pod.metadata.labels).toEqual({ app: 'a' });
    expect(pod.status).toEqual(old.status);
    // Nothing resizable changed: the generation stays.
    expect(resize(old, (p) => void (containers(p)[0]!.image = 'x')).pod.metadata.generation).toBe(1);
  });

  it('refuses other resources, removed requests or limits, and requests above limits', () => {
    const old = burstable();
    expect(
      resize(old, (p) => void ((containers(p)[0]!.resources as Obj).limits = { cpu: '500m', memory: '256Mi', 'ephemeral-storage': '1Gi' })).errors,
    ).toEqual(['spec: Forbidden: only cpu and memory resources are mutable']);
    expect(resize(old, (p) => void (containers(p)[0]!.resources = { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '500m' } })).errors).toEqual([
      'spec.containers[0].resources.limits: Forbidden: resource limits cannot be removed',
    ]);
    // A request with no limit to default it from: removing it is refused.
    const noCpuLimit = stored({ containers: [{ name: 'web', image: 'nginx:1.27', resources: res('100m', '128Mi', { memory: '256Mi' }) }] });
    expect(resize(noCpuLimit, (p) => void (containers(p)[0]!.resources = { requests: { memory: '128Mi' }, limits: { memory: '256Mi' } })).errors).toEqual([
      'spec.containers[0].resources.requests: Forbidden: resource requests cannot be removed',
    ]);
    // With a limit, a removed request is defaulted from it (as any pod body is): a change, not a removal.
    const defaulted = resize(old, (p) => void (containers(p)[1]!.resources = { limits: { cpu: '200m', memory: '128Mi' }, requests: { memory: '64Mi' } }));
    expect(defaulted.errors).toEqual([]);
    expect(containers(defaulted.pod)[1]!.resources).toEqual(res('200m', '64Mi', { cpu: '200m', memory: '128Mi' }));
    expect(resize(old, (p) => void (containers(p)[0]!.resources = res('1', '128Mi', { cpu: '500m', memory: '256Mi' }))).errors).toEqual([
      'spec.containers[0].resources.requests: Invalid value: "1": must be less than or equal to cpu limit of 500m',
    ]);
  });

  it('refuses a renamed or reordered container', () => {
    const old = burstable();
    const swapped = resize(old, (p) => void ((p.spec as Obj).containers = [...containers(p)].reverse()));
    expect(swapped.errors).toEqual([
      'spec.containers[0].name: Forbidden: containers may not be renamed or reordered on resize',
      'spec.containers[1].name: Forbidden: containers may not be renamed or reordered on resize',
    ]);
  });

  it('refuses a change of the QoS class, naming the class the pod has', () => {
    const guaranteed = stored({ containers: [{ name: 'web', image: 'nginx:1.27', resources: { limits: { cpu: '500m', memory: '256Mi' } } }] });
    expect(guaranteed.status).toMatchObject({ qosClass: 'Guaranteed' });
    // Both together keep it Guaranteed; the limit alone would make it Burstable.
    expect(resize(guaranteed, (p) => void (containers(p)[0]!.resources = res('1', '512Mi', { cpu: '1', memory: '512Mi' }))).errors).toEqual([]);
    expect(resize(guaranteed, (p) => void (containers(p)[0]!.resources = res('500m', '256Mi', { cpu: '1', memory: '256Mi' }))).errors).toEqual([
      'spec: Invalid value: "Guaranteed": Pod QOS Class may not change as a result of resizing',
    ]);
    const bestEffort = stored({ containers: [{ name: 'web', image: 'nginx:1.27' }] });
    expect(resize(bestEffort, (p) => void (containers(p)[0]!.resources = { requests: { memory: '40Mi' } })).errors).toEqual([
      'spec: Invalid value: "BestEffort": Pod QOS Class may not change as a result of resizing',
    ]);
  });

  it('resizes sidecars, not other init containers', () => {
    const old = stored({
      initContainers: [
        { name: 'setup', image: 'busybox:1.36', resources: res('10m', '16Mi') },
        { name: 'proxy', image: 'envoy:1', restartPolicy: 'Always', resources: res('10m', '16Mi') },
      ],
      containers: [{ name: 'web', image: 'nginx:1.27', resources: res('100m', '128Mi') }],
    });
    const init = (p: KubeObject): Obj[] => (p.spec as Obj).initContainers as Obj[];
    const sidecar = resize(old, (p) => void (init(p)[1]!.resources = res('20m', '32Mi')));
    expect(sidecar.errors).toEqual([]);
    expect(init(sidecar.pod)[1]!.resources).toEqual(res('20m', '32Mi'));
    expect(resize(old, (p) => void (init(p)[0]!.resources = res('20m', '32Mi'))).errors).toEqual([
      'spec: Forbidden: only cpu and memory resources are mutable',
    ]);
  });
});
