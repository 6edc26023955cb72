/**
 * The warnings kube gives on writes of pods, pod templates and claims (pkg/api/pod and
 * pkg/api/persistentvolumeclaim warnings): what the API accepts but a user most likely did not
 * mean or should no longer use. Warnings are advice: they never refuse a request, and each
 * check is bounded (a body can hold long lists), so none of them costs more than its list.
 */
import { parseQuantity, type KubeObject } from '@app/apimachinery';
import type { RequestContext, Strategy } from '@app/registry';
import { asMap } from '../core.helpers.js';

type Obj = Record<string, unknown>;
const list = (v: unknown): Obj[] => (Array.isArray(v) ? v.map(asMap) : []);
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
/** A field path's child (`a.b`, or `b` at the root), as field.Path prints it. */
const child = (path: string, ...names: string[]): string => [path, ...names].filter((p) => p !== '').join('.');

/** Port comparisons the port warnings may make in one pod (they are advice: past it they stop). */
const PORT_WARNING_COMPARISONS = 100_000;
/** Path comparisons the overlapping-path warnings may make in one pod. */
const PATH_WARNING_COMPARISONS = 100_000;

/** Node labels kube has replaced, with its message for each. */
const DEPRECATED_NODE_LABELS = new Map([
  ['beta.kubernetes.io/arch', 'deprecated since v1.14; use "kubernetes.io/arch" instead'],
  ['beta.kubernetes.io/os', 'deprecated since v1.14; use "kubernetes.io/os" instead'],
  ['failure-domain.beta.kubernetes.io/region', 'deprecated since v1.17; use "topology.kubernetes.io/region" instead'],
  ['failure-domain.beta.kubernetes.io/zone', 'deprecated since v1.17; use "topology.kubernetes.io/zone" instead'],
  ['beta.kubernetes.io/instance-type', 'deprecated since v1.17; use "node.kubernetes.io/instance-type" instead'],
]);

/** Pod annotations that no longer do anything. */
const DEPRECATED_ANNOTATIONS: [string, string][] = [
  ['scheduler.alpha.kubernetes.io/critical-pod', 'non-functional in v1.16+; use the "priorityClassName" field instead'],
  ['security.alpha.kubernetes.io/sysctls', 'non-functional in v1.11+; use the "sysctls" field instead'],
  ['security.alpha.kubernetes.io/unsafe-sysctls', 'non-functional in v1.11+; use the "sysctls" field instead'],
];

/** Volume sources that are deprecated or no longer mounted by any kubelet. */
const DEPRECATED_VOLUMES: [string, string][] = [
  ['photonPersistentDisk', 'deprecated in v1.11, non-functional in v1.16+'],
  ['gitRepo', 'deprecated in v1.11'],
  ['scaleIO', 'deprecated in v1.16, non-functional in v1.22+'],
  ['flocker', 'deprecated in v1.22, non-functional in v1.25+'],
  ['storageos', 'deprecated in v1.22, non-functional in v1.25+'],
  ['quobyte', 'deprecated in v1.22, non-functional in v1.25+'],
  ['glusterfs', 'deprecated in v1.25, non-functional in v1.26+'],
];
const LATE_DEPRECATED_VOLUMES: [string, string][] = [
  ['cephfs', 'deprecated in v1.28, non-functional in v1.31+'],
  ['rbd', 'deprecated in v1.28, non-functional in v1.31+'],
];

export const SECCOMP_POD_ANNOTATION = 'seccomp.security.alpha.kubernetes.io/pod';
export const SECCOMP_CONTAINER_ANNOTATION_PREFIX = 'container.seccomp.security.alpha.kubernetes.io/';
export const APPARMOR_ANNOTATION_PREFIX = 'container.apparmor.security.beta.kubernetes.io/';
export const BETA_STORAGE_CLASS_ANNOTATION = 'volume.beta.kubernetes.io/storage-class';

/** `path: fractional byte value "q" is invalid, must be an integer` when `value` has a fraction of a byte. */
function fractionalBytes(value: unknown, path: string): string[] {
  if (typeof value !== 'string' && typeof value !== 'number') return [];
  try {
    const q = parseQuantity(String(value));
    if (q.milliValue() % 1000n === 0n) return [];
    return [`${path}: fractional byte value ${JSON.stringify(q.toString())} is invalid, must be an integer`];
  } catch {
    return []; // an unparsable quantity is validation's to refuse
  }
}

/** The warnings of a claim spec at `path` (GetWarningsForPersistentVolumeClaimSpec). */
export function claimSpecWarnings(spec: unknown, path: string): string[] {
  const resources = asMap(asMap(spec).resources);
  return [
    ...fractionalBytes(asMap(resources.requests).storage, `${child(path, 'resources', 'requests')}[storage]`),
    ...fractionalBytes(asMap(resources.limits).storage, `${child(path, 'resources', 'limits')}[storage]`),
  ];
}

/** The warnings of a PersistentVolumeClaim: the beta storage class annotation, fractional sizes. */
export function claimWarnings(pvc: KubeObject): string[] {
  const out: string[] = [];
  if (asMap(pvc.metadata.annotations)[BETA_STORAGE_CLASS_ANNOTATION] !== undefined)
    out.push(`metadata.annotations[${BETA_STORAGE_CLASS_ANNOTATION}]: deprecated since v1.8; use "storageClassName" attribute instead`);
  return [...out, ...claimSpecWarnings(pvc.spec, 'spec')];
}

function nodeSelectorTermWarnings(term: unknown, path: string): string[] {
  const out: string[] = [];
  list(asMap(term).matchExpressions).forEach((e, i) => {
    const key = String(e.key ?? '');
    const msg = DEPRECATED_NODE_LABELS.get(key);
    if (msg) out.push(`${path}.matchExpressions[${i}].key: ${key} is ${msg}`);
  });
  return out;
}

/** A budget of comparisons shared by one pod's bounded checks. */
interface Budget {
  left: number;
}

/**
 * The path among `seen` that `path` overlaps (equal, or either a prefix of the other with a
 * slash after it, compared as strings as kube does), or '' for none; an empty path overlaps nothing.
 */
function overlapOf(seen: Set<string>, path: string, budget: Budget): string {
  if (path === '') return '';
  if (seen.has(path)) return path;
  for (const item of seen) {
    if (--budget.left < 0) return '';
    if (item === '') continue;
    if ((item + '/').startsWith(path) || (path + '/').startsWith(item)) return item;
  }
  return '';
}

function pathOverlaps(paths: string[], message: string, budget: Budget): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const p of paths) {
    const normalized = p.replace(/\/+$/, '');
    const collision = overlapOf(seen, normalized, budget);
    if (collision !== '') out.push(`${message}: ${JSON.stringify(normalized)} with ${JSON.stringify(collision)}`);
    seen.add(normalized);
  }
  return out;
}

const itemPaths = (items: unknown): string[] => list(items).map((i) => String(i.path ?? ''));

/** Volumes that map two keys to the same file, or a file to a directory of another (warningsForOverlappingVirtualPaths). */
function overlappingPathWarnings(volumes: Obj[], budget: Budget): string[] {
  const out: string[] = [];
  for (const v of volumes) {
    const name = JSON.stringify(String(v.name ?? ''));
    const cm = asMap(v.configMap);
    if (Array.isArray(cm.items))
      out.push(...pathOverlaps(itemPaths(cm.items), `volume ${name} (ConfigMap ${JSON.stringify(String(cm.name ?? ''))}): overlapping paths`, budget));
    const secret = asMap(v.secret);
    if (Array.isArray(secret.items))
      out.push(
        ...pathOverlaps(itemPaths(secret.items), `volume ${name} (Secret ${JSON.stringify(String(secret.secretName ?? ''))}): overlapping paths`, budget),
      );
    const downward = asMap(v.downwardAPI);
    if (Array.isArray(downward.items)) out.push(...pathOverlaps(itemPaths(downward.items), `volume ${name} (DownwardAPI): overlapping paths`, budget));
    if (!isObj(v.projected)) continue;
    const all = new Set<string>();
    for (const source of list(v.projected.sources)) {
      if (Object.keys(source).length === 0) {
        out.push(`volume ${name} (Projected) has no sources provided`);
        continue;
      }
      let paths: string[] = [];
      let message = '';
      const [pcm, psecret, pdownward, token, bundle] = ['configMap', 'secret', 'downwardAPI', 'serviceAccountToken', 'clusterTrustBundle'].map(
        (k) => source[k],
      );
      if (isObj(pcm) && Array.isArray(pcm.items)) {
        paths = itemPaths(pcm.items);
        message = `volume ${name} (Projected ConfigMap ${JSON.stringify(String(pcm.name ?? ''))}): overlapping paths`;
      } else if (isObj(psecret) && Array.isArray(psecret.items)) {
        paths = itemPaths(psecret.items);
        message = `volume ${name} (Projected Secret ${JSON.stringify(String(psecret.name ?? ''))}): overlapping paths`;
      } else if (isObj(pdownward) && Array.isArray(pdownward.items)) {
        paths = itemPaths(pdownward.items);
        message = `volume ${name} (Projected DownwardAPI): overlapping paths`;
      } else if (isObj(token)) {
        paths = [String(token.path ?? '')];
        message = `volume ${name} (Projected ServiceAccountToken): overlapping paths`;
      } else if (isObj(bundle)) {
        paths = [String(bundle.path ?? '')];
        message = `volume ${name} (Projected ClusterTrustBundle ${JSON.stringify(String(bundle.name ?? bundle.signerName ?? ''))}): overlapping paths`;
      }
      if (paths.length === 0) continue;
      out.push(...pathOverlaps(paths, message, budget));
      // Then against the paths of the sources before it, in sorted order.
      const unique = [...new Set(paths)];
      out.push(...pathOverlaps([...unique, ...all].sort(), message, budget));
      for (const p of unique) all.add(p);
    }
  }
  return out;
}

function affinityTermWarnings(terms: unknown, path: string, weighted: boolean): string[] {
  const out: string[] = [];
  list(terms).forEach((t, i) => {
    const term = weighted ? asMap(t.podAffinityTerm) : t;
    if (term.labelSelector === undefined || term.labelSelector === null)
      out.push(`${path}[${i}]${weighted ? '.podAffinityTerm' : ''}.labelSelector: a null labelSelector results in matching no pod`);
  });
  return out;
}

/**
 * Warnings for a pod or pod template `pod` (its `metadata` and `spec`), whose fields are named
 * under `prefix` ('' for a Pod, `spec.template` for a workload's template), in kube's order:
 * deprecated node labels in scheduling constraints, deprecated annotations and volume sources,
 * overlapping volume paths, names repeated where the API accepts them (host alias IPs, image
 * pull secrets, environment variables that hide an earlier definition), an image pull secret
 * without a name, fractional byte quantities, seccomp (and, in templates, AppArmor) annotations
 * without their field, container ports that repeat or overlap another, a negative
 * terminationGracePeriodSeconds, and pod (anti-)affinity terms without a label selector.
 */
export function podWarnings(pod: Obj, prefix = ''): string[] {
  const spec = asMap(pod.spec);
  const annotations = asMap(asMap(pod.metadata).annotations);
  const specPath = child(prefix, 'spec');
  const annotationPath = (key: string): string => `${child(prefix, 'metadata', 'annotations')}[${key}]`;
  const budget: Budget = { left: PATH_WARNING_COMPARISONS };
  const out: string[] = [];

  for (const key of Object.keys(asMap(spec.nodeSelector))) {
    const msg = DEPRECATED_NODE_LABELS.get(key);
    if (msg) out.push(`${specPath}.nodeSelector[${key}]: ${msg}`);
  }
  const affinity = asMap(spec.affinity);
  const nodeAffinity = asMap(affinity.nodeAffinity);
  const requiredPath = `${specPath}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms`;
  list(asMap(nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution).nodeSelectorTerms).forEach((term, i) =>
    out.push(...nodeSelectorTermWarnings(term, `${requiredPath}[${i}]`)),
  );
  list(nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution).forEach((term, i) =>
    out.push(
      ...nodeSelectorTermWarnings(term.preference, `${specPath}.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[${i}].preference`),
    ),
  );
  list(spec.topologySpreadConstraints).forEach((t, i) => {
    const path = `${specPath}.topologySpreadConstraints[${i}]`;
    const key = String(t.topologyKey ?? '');
    const msg = DEPRECATED_NODE_LABELS.get(key);
    if (msg) out.push(`${path}.topologyKey: ${key} is ${msg}`);
    if (t.labelSelector === undefined || t.labelSelector === null) out.push(`${path}.labelSelector: a null labelSelector results in matching no pod`);
  });

  for (const [key, msg] of DEPRECATED_ANNOTATIONS) if (annotations[key] !== undefined) out.push(`${annotationPath(key)}: ${msg}`);

  const volumes = list(spec.volumes);
  volumes.forEach((v, i) => {
    const path = `${specPath}.volumes[${i}]`;
    for (const [source, msg] of DEPRECATED_VOLUMES) if (isObj(v[source])) out.push(`${path}.${source === 'storageos' ? 'storageOS' : source}: ${msg}`);
    const claim = asMap(asMap(v.ephemeral).volumeClaimTemplate);
    if (isObj(asMap(v.ephemeral).volumeClaimTemplate)) out.push(...claimSpecWarnings(claim.spec, `${path}.ephemeral.volumeClaimTemplate.spec`));
    for (const [source, msg] of LATE_DEPRECATED_VOLUMES) if (isObj(v[source])) out.push(`${path}.${source}: ${msg}`);
  });
  out.push(...overlappingPathWarnings(volumes, budget));

  const seenIps = new Set<string>();
  list(spec.hostAliases).forEach((h, i) => {
    const ip = String(h.ip ?? '');
    if (seenIps.has(ip)) out.push(`${specPath}.hostAliases[${i}].ip: duplicate ip ${JSON.stringify(ip)}`);
    else seenIps.add(ip);
  });
  const seenSecrets = new Set<string>();
  const secrets = list(spec.imagePullSecrets);
  secrets.forEach((s, i) => {
    const name = String(s.name ?? '');
    if (seenSecrets.has(name)) out.push(`${specPath}.imagePullSecrets[${i}].name: duplicate name ${JSON.stringify(name)}`);
    else seenSecrets.add(name);
  });
  secrets.forEach((s, i) => {
    if (!s.name) out.push(`${specPath}.imagePullSecrets[${i}].name: invalid empty name ""`);
  });

  const overhead = asMap(spec.overhead);
  out.push(...fractionalBytes(overhead.memory, `${specPath}.overhead[memory]`));
  out.push(...fractionalBytes(overhead['ephemeral-storage'], `${specPath}.overhead[ephemeral-storage]`));

  const podSecurity = asMap(spec.securityContext);
  if (podSecurity.seccompProfile === undefined && annotations[SECCOMP_POD_ANNOTATION] !== undefined)
    out.push(`${annotationPath(SECCOMP_POD_ANNOTATION)}: non-functional in v1.27+; use the "seccompProfile" field instead`);

  const containers: [Obj, string][] = [];
  for (const field of ['initContainers', 'containers', 'ephemeralContainers'])
    list(spec[field]).forEach((c, i) => containers.push([c, `${specPath}.${field}[${i}]`]));
  for (const [c, cp] of containers) {
    const name = String(c.name ?? '');
    const security = asMap(c.securityContext);
    const seccompKey = SECCOMP_CONTAINER_ANNOTATION_PREFIX + name;
    if (security.seccompProfile === undefined && annotations[seccompKey] !== undefined)
      out.push(`${annotationPath(seccompKey)}: non-functional in v1.27+; use the "seccompProfile" field instead`);
    // A Pod's AppArmor annotations become fields on create (appArmorVersionSkew), which warns.
    const appArmorKey = APPARMOR_ANNOTATION_PREFIX + name;
    if (prefix !== '' && podSecurity.appArmorProfile === undefined && security.appArmorProfile === undefined && annotations[appArmorKey] !== undefined)
      out.push(`${annotationPath(appArmorKey)}: deprecated since v1.30; use the "appArmorProfile" field instead`);
    const resources = asMap(c.resources);
    const limits = asMap(resources.limits);
    const requests = asMap(resources.requests);
    out.push(...fractionalBytes(limits.memory, `${cp}.resources.limits[memory]`));
    out.push(...fractionalBytes(requests.memory, `${cp}.resources.requests[memory]`));
    out.push(...fractionalBytes(limits['ephemeral-storage'], `${cp}.resources.limits[ephemeral-storage]`));
    out.push(...fractionalBytes(requests['ephemeral-storage'], `${cp}.resources.requests[ephemeral-storage]`));
    const names = new Set<string>();
    list(c.env).forEach((e, i) => {
      const envName = String(e.name ?? '');
      if (!names.has(envName)) {
        names.add(envName);
        return;
      }
      // A later definition that builds on the earlier one ("$(X)" in its value) is fine.
      const ref = `$(${envName})`;
      const value = typeof e.value === 'string' ? e.value : '';
      if (e.valueFrom !== undefined || value === ref || !value.includes(ref))
        out.push(`${cp}.env[${i}]: hides previous definition of ${JSON.stringify(envName)}, which may be dropped when using apply`);
    });
  }

  const byPort = new Map<string, { field: string; hostIP: string; hostPort: number }[]>();
  let comparisons = 0;
  for (const [c, cp] of containers) {
    list(c.ports).forEach((p, i) => {
      const field = `${cp}.ports[${i}]`;
      const hostIP = String(p.hostIP ?? '');
      const hostPort = typeof p.hostPort === 'number' ? p.hostPort : 0;
      if (hostIP !== '' && hostPort === 0)
        out.push(
          `${field}: hostIP set without hostPort: {Name:${String(p.name ?? '')} HostPort:${hostPort} ContainerPort:${String(p.containerPort ?? 0)} Protocol:${String(p.protocol ?? 'TCP')} HostIP:${hostIP}}`,
        );
      const key = `${String(p.containerPort ?? 0)}/${String(p.protocol ?? 'TCP')}`;
      const others = byPort.get(key);
      if (!others) {
        byPort.set(key, [{ field, hostIP, hostPort }]);
        return;
      }
      for (const o of others) {
        if (++comparisons > PORT_WARNING_COMPARISONS) break;
        if (hostIP === o.hostIP && hostPort === o.hostPort) out.push(`${field}: duplicate port definition with ${o.field}`);
        else if (hostPort === 0 || o.hostPort === 0) out.push(`${field}: overlapping port definition with ${o.field}`);
        else if (hostPort === o.hostPort && (hostIP === '') !== (o.hostIP === '')) out.push(`${field}: dangerously ambiguous port definition with ${o.field}`);
      }
      others.push({ field, hostIP, hostPort });
    });
  }

  const grace = spec.terminationGracePeriodSeconds;
  if (typeof grace === 'number' && grace < 0)
    out.push(`${specPath}.terminationGracePeriodSeconds: must be >= 0; negative values are invalid and will be treated as 1`);

  for (const kind of ['podAffinity', 'podAntiAffinity']) {
    const a = asMap(affinity[kind]);
    const path = `${specPath}.affinity.${kind}`;
    out.push(...affinityTermWarnings(a.requiredDuringSchedulingIgnoredDuringExecution, `${path}.requiredDuringSchedulingIgnoredDuringExecution`, false));
    out.push(...affinityTermWarnings(a.preferredDuringSchedulingIgnoredDuringExecution, `${path}.preferredDuringSchedulingIgnoredDuringExecution`, true));
  }
  return out;
}

/**
 * `strategy` giving kube's pod warnings (podWarnings) for the pod spec at `keys` (`['spec']` for
 * a Pod, `['spec', 'template', 'spec']` for a workload's template): on create, and on an update
 * that changes the spec (the generation moves; `everyUpdate` for Pods and PodTemplates, which
 * kube warns on at every update). `more` adds a kind's own warnings after the template's.
 */
export function withPodSpecWarnings(strategy: Strategy, keys: readonly string[], everyUpdate = false, more?: (obj: KubeObject) => string[]): Strategy {
  const { validate, validateUpdate } = strategy;
  const templateKeys = keys.slice(0, -1);
  const prefix = templateKeys.join('.');
  const warn = (obj: KubeObject, ctx: RequestContext | undefined): void => {
    // Internal callers may validate without a request to answer.
    if (!ctx) return;
    let pod: unknown = obj;
    for (const k of templateKeys) pod = asMap(pod)[k];
    ctx.warnings.push(...podWarnings(asMap(pod), prefix));
    if (more) ctx.warnings.push(...more(obj));
  };
  return {
    ...strategy,
    validate(obj, ctx) {
      warn(obj, ctx);
      return validate?.(obj, ctx) ?? [];
    },
    validateUpdate(obj, old, ctx) {
      if (everyUpdate || obj.metadata.generation !== old.metadata.generation) warn(obj, ctx);
      return validateUpdate ? validateUpdate(obj, old, ctx) : (validate?.(obj, ctx) ?? []);
    },
  };
}
