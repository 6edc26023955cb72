/**
 * Quota evaluation, pure (Kubernetes' pkg/quota/v1 and its evaluators in
 * pkg/quota/v1/evaluator/core, and the charge decision of the ResourceQuota admission
 * plugin's controller.go). Shared by the ResourceQuota admission plugin, which charges a request
 * to the quotas of its namespace, and the resourcequota controller, which recomputes status.used
 * from the stored objects.
 *
 * - Pods: `pods` and the compute resources (cpu/memory/ephemeral-storage as requests, their
 *   `requests.*` and `limits.*`, hugepages, `requests.<extended>`), from the pod's spec as a
 *   kubelet would size it (init containers and sidecars, overhead); a pod in a terminal phase, or
 *   past its deletion grace period, is counted by `count/pods` only. Scopes: Terminating,
 *   NotTerminating, BestEffort, NotBestEffort, PriorityClass, CrossNamespacePodAffinity.
 * - Services: `services`, `services.loadbalancers`, `services.nodeports`.
 * - PersistentVolumeClaims: `persistentvolumeclaims`, `requests.storage`, and both per storage
 *   class (`<class>.storageclass.storage.k8s.io/...`).
 * - Every other resource: the object count `count/<resource>[.<group>]` (and the legacy names
 *   configmaps, secrets, replicationcontrollers, resourcequotas).
 *
 * Usage is a map resource name -> Quantity. Units and formats follow resource.Quantity: adding
 * to a zero takes the other's format, as Go's Quantity.Add does.
 */
import { parseQuantity, Quantity, type KubeObject } from '@app/apimachinery';
import { asMap, mapsOf } from '../groups/core/core.helpers.js';
import { claimClass } from '../groups/storage/storageclass/storageclass.kind.js';

/** Resource name -> quantity. */
export type ResourceList = Map<string, Quantity>;
/** What an evaluator is for: a resource of a group ('' for core). */
export interface GroupResource {
  group: string;
  resource: string;
}
/** One scope requirement (spec.scopes as Exists, plus spec.scopeSelector.matchExpressions). */
export interface ScopeRequirement {
  scopeName: string;
  operator: string;
  values?: string[];
}

const ZERO = Quantity.fromInt(0);
const ONE = Quantity.fromInt(1);

// --- resource lists (quota/v1 resources.go) ---

/** Reads a JSON resource list; values that do not parse are skipped (validation refuses them). */
export function readList(v: unknown): ResourceList {
  const out: ResourceList = new Map();
  for (const [k, raw] of Object.entries(asMap(v))) {
    try {
      out.set(k, parseQuantity(String(raw)));
    } catch {
      // not a quantity
    }
  }
  return out;
}

/** The JSON form of a resource list, keys sorted. */
export function writeList(l: ResourceList): Record<string, string> {
  return Object.fromEntries([...l.keys()].sort().map((k) => [k, l.get(k)!.toString()]));
}

/** a + b, Go's Quantity.Add: a zero takes the other's format. */
function plus(a: Quantity, b: Quantity): Quantity {
  return a.isZero() ? b : a.add(b);
}

/** quota.Add. */
export function add(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = new Map();
  for (const [k, v] of a) out.set(k, b.has(k) ? plus(v, b.get(k)!) : v);
  for (const [k, v] of b) if (!out.has(k)) out.set(k, v);
  return out;
}

/** quota.SubtractWithNonNegativeResult: a - b per key of a, never below zero. */
export function subtractNonNegative(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = new Map();
  for (const [k, v] of a) {
    const o = b.get(k);
    const d = o ? v.sub(o) : v;
    out.set(k, d.nanos < 0n ? ZERO : d);
  }
  return out;
}

/** quota.Mask: only the named keys. */
export function mask(l: ResourceList, names: Iterable<string>): ResourceList {
  const keep = new Set(names);
  return new Map([...l].filter(([k]) => keep.has(k)));
}

/** quota.RemoveZeros. */
export function removeZeros(l: ResourceList): ResourceList {
  return new Map([...l].filter(([, v]) => !v.isZero()));
}

/** quota.Equals. */
export function listsEqual(a: ResourceList, b: ResourceList): boolean {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) if (!b.get(k)?.equals(v)) return false;
  return true;
}

/** prettyPrint of the admission controller: `name=value` sorted by name, comma-separated. */
export function prettyPrint(l: ResourceList): string {
  return [...l.keys()]
    .sort()
    .map((k) => `${k}=${l.get(k)!.toString()}`)
    .join(',');
}

function maxInto(into: ResourceList, other: ResourceList): void {
  for (const [k, v] of other) {
    const cur = into.get(k);
    if (!cur || v.cmp(cur) > 0) into.set(k, v);
  }
}

function addInto(into: ResourceList, other: ResourceList): void {
  for (const [k, v] of other) into.set(k, into.has(k) ? plus(into.get(k)!, v) : v);
}

// --- pods (evaluator/core/pods.go) ---

const POD_RESOURCES = new Set([
  'count/pods',
  'cpu',
  'memory',
  'ephemeral-storage',
  'requests.cpu',
  'requests.memory',
  'requests.ephemeral-storage',
  'limits.cpu',
  'limits.memory',
  'limits.ephemeral-storage',
  'pods',
]);
/** Quota resources that oblige every container to set them (the compatibility rule of pods.go). */
const REQUIRED_ON_CONTAINERS = new Set(['cpu', 'memory', 'requests.cpu', 'requests.memory', 'limits.cpu', 'limits.memory']);

const isNative = (n: string) => !n.includes('/') || n.includes('kubernetes.io/');
const isExtendedQuotaName = (n: string) => !isNative(n) && n.startsWith('requests.');
const isExtendedResource = (n: string) => !isNative(n) && !n.startsWith('requests.');

/** resourcehelper.PodRequests / PodLimits: containers summed, init containers (and sidecars) as the kubelet sizes them, plus overhead. */
export function podAggregate(pod: KubeObject, which: 'requests' | 'limits'): ResourceList {
  const spec = asMap(pod.spec);
  const of = (c: Record<string, unknown>) => readList(asMap(asMap(c.resources)[which]));
  const total: ResourceList = new Map();
  for (const c of mapsOf(spec.containers)) addInto(total, of(c));
  const sidecars: ResourceList = new Map();
  const initMax: ResourceList = new Map();
  for (const c of mapsOf(spec.initContainers)) {
    const own = of(c);
    let candidate: ResourceList;
    if (c.restartPolicy === 'Always') {
      addInto(total, own);
      addInto(sidecars, own);
      candidate = new Map(sidecars);
    } else {
      candidate = new Map(own);
      addInto(candidate, sidecars);
    }
    maxInto(initMax, candidate);
  }
  maxInto(total, initMax);
  // Overhead is added to requests, and to limits only where the pod has a limit for it.
  const overhead = readList(spec.overhead);
  if (which === 'requests') addInto(total, overhead);
  else for (const [k, v] of overhead) if (total.has(k)) total.set(k, plus(total.get(k)!, v));
  return total;
}

/** podComputeUsageHelper: the quota names of a pod's (or a container's) requests and limits. */
function computeUsage(requests: ResourceList, limits: ResourceList): ResourceList {
  const out: ResourceList = new Map([['pods', ONE]]);
  for (const r of ['cpu', 'memory', 'ephemeral-storage']) {
    const req = requests.get(r);
    if (req) {
      out.set(r, req);
      out.set(`requests.${r}`, req);
    }
    const lim = limits.get(r);
    if (lim) out.set(`limits.${r}`, lim);
  }
  for (const [r, q] of requests) {
    if (r.startsWith('hugepages-')) {
      out.set(r, q);
      out.set(`requests.${r}`, q);
    }
    if (isExtendedResource(r)) out.set(`requests.${r}`, q);
  }
  return out;
}

/** QuotaV1Pod: whether a pod's compute resources are charged (not terminal, not stuck past its grace period). */
export function podCharged(pod: KubeObject, now: Date): boolean {
  const phase = asMap(pod.status).phase;
  if (phase === 'Failed' || phase === 'Succeeded') return false;
  const ts = pod.metadata.deletionTimestamp;
  const grace = pod.metadata.deletionGracePeriodSeconds;
  if (typeof ts === 'string' && typeof grace === 'number' && now.getTime() > Date.parse(ts) + grace * 1000) return false;
  return true;
}

/** PodUsageFunc. */
export function podUsage(pod: KubeObject, now: Date): ResourceList {
  const out: ResourceList = new Map([['count/pods', ONE]]);
  if (!podCharged(pod, now)) return out;
  return add(out, computeUsage(podAggregate(pod, 'requests'), podAggregate(pod, 'limits')));
}

/** qos.GetPodQOS(pod) == BestEffort: no container sets a non-zero cpu or memory request or limit. */
export function isBestEffort(pod: KubeObject): boolean {
  const spec = asMap(pod.spec);
  for (const c of [...mapsOf(spec.containers), ...mapsOf(spec.initContainers)]) {
    const res = asMap(c.resources);
    for (const list of [readList(res.requests), readList(res.limits)]) {
      for (const r of ['cpu', 'memory']) if (list.get(r) && !list.get(r)!.isZero()) return false;
    }
  }
  return true;
}

function crossNamespaceTerms(terms: unknown, weighted: boolean): boolean {
  return mapsOf(terms).some((t) => {
    const term = weighted ? asMap(t.podAffinityTerm) : t;
    return (Array.isArray(term.namespaces) && term.namespaces.length > 0) || (term.namespaceSelector !== undefined && term.namespaceSelector !== null);
  });
}

/** usesCrossNamespacePodAffinity. */
function usesCrossNamespaceAffinity(pod: KubeObject): boolean {
  const aff = asMap(asMap(pod.spec).affinity);
  return [asMap(aff.podAffinity), asMap(aff.podAntiAffinity)].some(
    (a) =>
      crossNamespaceTerms(a.requiredDuringSchedulingIgnoredDuringExecution, false) ||
      crossNamespaceTerms(a.preferredDuringSchedulingIgnoredDuringExecution, true),
  );
}

/** podMatchesScopeFunc. */
export function podMatchesScope(req: ScopeRequirement, pod: KubeObject): boolean {
  const spec = asMap(pod.spec);
  switch (req.scopeName) {
    case 'Terminating':
    case 'NotTerminating': {
      const ads = spec.activeDeadlineSeconds;
      const terminating = typeof ads === 'number' && ads >= 0;
      return req.scopeName === 'Terminating' ? terminating : !terminating;
    }
    case 'BestEffort':
      return isBestEffort(pod);
    case 'NotBestEffort':
      return !isBestEffort(pod);
    case 'PriorityClass': {
      const pc = typeof spec.priorityClassName === 'string' ? spec.priorityClassName : '';
      const values = req.values ?? [];
      switch (req.operator) {
        case 'Exists':
          return pc !== '';
        case 'DoesNotExist':
          return pc === '';
        case 'In':
          return pc !== '' && values.includes(pc);
        case 'NotIn':
          return pc === '' || !values.includes(pc);
        default:
          return false;
      }
    }
    case 'CrossNamespacePodAffinity':
      return usesCrossNamespaceAffinity(pod);
    default:
      return false;
  }
}

/**
 * The pods evaluator's Constraints: when a quota limits cpu or memory (requests or limits),
 * every container must set them. Returns the `must specify ...` text, or undefined.
 */
export function podConstraints(required: readonly string[], pod: KubeObject): string | undefined {
  const wanted = required.filter((r) => REQUIRED_ON_CONTAINERS.has(r));
  if (!wanted.length) return undefined;
  const missing = new Map<string, Set<string>>();
  const spec = asMap(pod.spec);
  for (const c of [...mapsOf(spec.containers), ...mapsOf(spec.initContainers)]) {
    const res = asMap(c.resources);
    const has = computeUsage(readList(res.requests), readList(res.limits));
    for (const r of wanted) {
      if (has.has(r)) continue;
      if (!missing.has(r)) missing.set(r, new Set());
      missing.get(r)!.add(String(c.name ?? ''));
    }
  }
  if (!missing.size) return undefined;
  const parts = [...missing.keys()].sort().map((r) => `${r} for: ${[...missing.get(r)!].sort().join(',')}`);
  return `must specify ${parts.join('; ')}`;
}

// --- services, claims, object counts ---

const SERVICE_RESOURCES = new Set(['count/services', 'services', 'services.nodeports', 'services.loadbalancers']);

/** The services evaluator's Usage. */
export function serviceUsage(svc: KubeObject): ResourceList {
  const spec = asMap(svc.spec);
  const ports = mapsOf(spec.ports);
  const out: ResourceList = new Map([
    ['count/services', ONE],
    ['services', ONE],
    ['services.loadbalancers', ZERO],
    ['services.nodeports', ZERO],
  ]);
  if (spec.type === 'NodePort') out.set('services.nodeports', Quantity.fromInt(ports.length));
  if (spec.type === 'LoadBalancer') {
    const n = spec.allocateLoadBalancerNodePorts === false ? ports.filter((p) => typeof p.nodePort === 'number' && p.nodePort !== 0).length : ports.length;
    out.set('services.nodeports', Quantity.fromInt(n));
    out.set('services.loadbalancers', ONE);
  }
  return out;
}

const CLASS_SUFFIX = '.storageclass.storage.k8s.io/';
const CLAIM_RESOURCES = ['persistentvolumeclaims', 'requests.storage'];

/** Rounds a quantity up to whole units (Quantity.RoundUp(0)). */
function roundUp(q: Quantity): Quantity {
  const whole = q.value();
  return Quantity.fromInt(whole, q.format).equals(q) ? q : Quantity.fromInt(whole, q.format);
}

/** The claims evaluator's Usage: the request (or the larger allocated size), in whole bytes. */
export function claimUsage(pvc: KubeObject): ResourceList {
  const out: ResourceList = new Map([
    ['persistentvolumeclaims', ONE],
    ['count/persistentvolumeclaims', ONE],
  ]);
  const cls = claimClass(pvc);
  if (cls) out.set(`${cls}${CLASS_SUFFIX}persistentvolumeclaims`, ONE);
  const requested = readList(asMap(asMap(pvc.spec).resources).requests).get('storage');
  if (requested) {
    let storage = roundUp(requested);
    const allocated = readList(asMap(pvc.status).allocatedResources).get('storage');
    if (allocated && allocated.cmp(storage) > 0) storage = roundUp(allocated);
    out.set('requests.storage', storage);
    if (cls) out.set(`${cls}${CLASS_SUFFIX}requests.storage`, storage);
  }
  return out;
}

/** The names kube's generic evaluator keeps the legacy short names for. */
const LEGACY_COUNT_NAMES: Record<string, string> = {
  configmaps: 'configmaps',
  resourcequotas: 'resourcequotas',
  replicationcontrollers: 'replicationcontrollers',
  secrets: 'secrets',
};

/** generic.ObjectCountQuotaResourceNameFor: `count/<resource>` for core, `count/<resource>.<group>` otherwise. */
export function objectCountName(gr: GroupResource): string {
  return gr.group ? `count/${gr.resource}.${gr.group}` : `count/${gr.resource}`;
}

/** The object count names of a resource: its count name and, for the legacy core ones, the short name. */
function countNames(gr: GroupResource): string[] {
  const legacy = gr.group === '' ? LEGACY_COUNT_NAMES[gr.resource] : undefined;
  return legacy ? [objectCountName(gr), legacy] : [objectCountName(gr)];
}

/** Which evaluator a resource has. */
/** Which of kube's evaluators computes the usage of `gr`'s objects ('count': object counts only). */
export function evaluatorOf(gr: GroupResource): 'pods' | 'services' | 'claims' | 'count' {
  if (gr.group === '' && gr.resource === 'pods') return 'pods';
  if (gr.group === '' && gr.resource === 'services') return 'services';
  if (gr.group === '' && gr.resource === 'persistentvolumeclaims') return 'claims';
  return 'count';
}

/** Evaluator.MatchingResources: the names among `names` that objects of `gr` consume. */
export function matchingResources(gr: GroupResource, names: Iterable<string>): string[] {
  const out: string[] = [];
  const kind = evaluatorOf(gr);
  for (const n of names) {
    if (kind === 'pods') {
      if (POD_RESOURCES.has(n) || n.startsWith('hugepages-') || n.startsWith('requests.hugepages-') || isExtendedQuotaName(n)) out.push(n);
    } else if (kind === 'services') {
      if (SERVICE_RESOURCES.has(n)) out.push(n);
    } else if (kind === 'claims') {
      if (n === 'count/persistentvolumeclaims' || CLAIM_RESOURCES.includes(n) || CLAIM_RESOURCES.some((r) => n.endsWith(`${CLASS_SUFFIX}${r}`))) out.push(n);
    } else if (countNames(gr).includes(n)) out.push(n);
  }
  return out;
}

/** Evaluator.Usage of one object of `gr`. */
export function usageOf(gr: GroupResource, obj: KubeObject, now: Date): ResourceList {
  switch (evaluatorOf(gr)) {
    case 'pods':
      return podUsage(obj, now);
    case 'services':
      return serviceUsage(obj);
    case 'claims':
      return claimUsage(obj);
    default:
      return new Map(countNames(gr).map((n) => [n, ONE]));
  }
}

/** Whether one scope requirement matches an object of `gr` (only pods have scopes; others match none). */
export function matchesScope(gr: GroupResource, req: ScopeRequirement, obj: KubeObject): boolean {
  return evaluatorOf(gr) === 'pods' ? podMatchesScope(req, obj) : false;
}

/** getScopeSelectorsFromQuota: spec.scopes as Exists requirements, then spec.scopeSelector's. */
export function scopeRequirements(quota: KubeObject): ScopeRequirement[] {
  const spec = asMap(quota.spec);
  const scopes = Array.isArray(spec.scopes) ? spec.scopes.map((s) => ({ scopeName: String(s), operator: 'Exists' })) : [];
  const exprs = mapsOf(asMap(spec.scopeSelector).matchExpressions).map((e) => ({
    scopeName: String(e.scopeName ?? ''),
    operator: String(e.operator ?? ''),
    values: Array.isArray(e.values) ? e.values.map(String) : [],
  }));
  return [...scopes, ...exprs];
}

/** generic.Matches: the quota limits something objects of `gr` consume, and the object matches all its scopes. */
export function quotaMatches(quota: KubeObject, gr: GroupResource, obj: KubeObject): boolean {
  if (matchingResources(gr, Object.keys(asMap(asMap(quota.status).hard))).length === 0) return false;
  return scopeRequirements(quota).every((r) => matchesScope(gr, r, obj));
}

/**
 * Whether the admission plugin looks at this operation of `gr` at all (Evaluator.Handles): pods
 * and object counts on create; services and claims on create and update (a type or size may
 * change); a pod's resources again when they change in place (an update of pods/resize). No
 * other subresource.
 */
export function handles(gr: GroupResource, operation: string, subresource = ''): boolean {
  const kind = evaluatorOf(gr);
  if (subresource !== '') return kind === 'pods' && subresource === 'resize' && operation === 'UPDATE';
  if (kind === 'services' || kind === 'claims') return operation === 'CREATE' || operation === 'UPDATE';
  return operation === 'CREATE';
}

// --- the charge decision (admission controller.go CheckRequest) ---

/** A request as the charge decision sees it. */
export interface QuotaRequest {
  operation: 'CREATE' | 'UPDATE';
  /** '' for the resource itself; `resize` for a pod's resources changed in place. */
  subresource?: string;
  gr: GroupResource;
  object: KubeObject;
  oldObject?: KubeObject;
}

/** A refusal: the text after `<resource> "<name>" is forbidden: `. */
export class QuotaRefusal extends Error {}

/**
 * CheckRequest: checks `req` against every quota of its namespace and returns the new
 * status.used of each quota it charges (by quota name), or throws QuotaRefusal with Kubernetes'
 * message. Quotas are read as they are stored (status.hard, status.used).
 */
export function checkRequest(quotas: readonly KubeObject[], req: QuotaRequest, now: Date): Map<string, ResourceList> {
  const charged = new Map<string, ResourceList>();
  if (!handles(req.gr, req.operation, req.subresource)) return charged;
  const interesting: KubeObject[] = [];
  for (const q of quotas) {
    if (!quotaMatches(q, req.gr, req.object)) continue;
    const name = q.metadata.name ?? '';
    const status = asMap(q.status);
    const restricted = matchingResources(req.gr, Object.keys(asMap(status.hard)));
    if (evaluatorOf(req.gr) === 'pods') {
      const err = podConstraints(restricted, req.object);
      if (err) throw new QuotaRefusal(`failed quota: ${name}: ${err}`);
    }
    const used = asMap(status.used);
    if (restricted.some((r) => !(r in used))) {
      throw new QuotaRefusal(`status unknown for quota: ${name}, resources: ${[...restricted].sort().join(',')}`);
    }
    interesting.push(q);
  }
  const input = usageOf(req.gr, req.object, now);
  const negative = [...input].filter(([, v]) => v.nanos < 0n).map(([k]) => k);
  if (negative.length) throw new QuotaRefusal(`quota usage is negative for resource(s): ${negative.sort().join(',')}`);
  const deltas = new Map<KubeObject, ResourceList>();
  for (const q of interesting) deltas.set(q, input);
  if (req.operation === 'UPDATE' && req.oldObject) {
    const delta = subtractNonNegative(input, usageOf(req.gr, req.oldObject, now));
    for (const q of interesting) if (quotaMatches(q, req.gr, req.oldObject)) deltas.set(q, delta);
  }
  for (const q of interesting) {
    const delta = removeZeros(deltas.get(q)!);
    if (delta.size === 0) continue;
    const status = asMap(q.status);
    const hard = readList(status.hard);
    const used = readList(status.used);
    const requested = mask(delta, hard.keys());
    const next = add(used, requested);
    const exceeded = [...requested.keys()].filter((k) => next.get(k)!.cmp(hard.get(k)!) > 0);
    if (exceeded.length) {
      throw new QuotaRefusal(
        `exceeded quota: ${q.metadata.name}, requested: ${prettyPrint(mask(requested, exceeded))}, used: ${prettyPrint(mask(used, exceeded))}, limited: ${prettyPrint(mask(hard, exceeded))}`,
      );
    }
    if (!listsEqual(next, used)) charged.set(q.metadata.name ?? '', next);
  }
  return charged;
}

// --- recomputing usage (quota/v1 CalculateUsage, generic.CalculateUsageStats) ---

/**
 * The status.used a quota should have given the objects of its namespace: `objectsOf(gr)` lists
 * the stored objects of a resource (undefined when the resource is not served, so its names get
 * no usage, as for a resource kube has no evaluator for). Every tracked name starts at zero.
 */
export function calculateUsage(
  quota: KubeObject,
  resources: readonly GroupResource[],
  objectsOf: (gr: GroupResource) => KubeObject[] | undefined,
  now: Date,
): ResourceList {
  const hardNames = Object.keys(asMap(asMap(quota.spec).hard));
  const reqs = scopeRequirements(quota);
  let used: ResourceList = new Map();
  for (const gr of resources) {
    const names = matchingResources(gr, hardNames);
    if (!names.length) continue;
    const objects = objectsOf(gr);
    if (!objects) continue;
    let stats: ResourceList = new Map(names.map((n) => [n, ZERO]));
    for (const o of objects) {
      if (!reqs.every((r) => matchesScope(gr, r, o))) continue;
      stats = add(stats, usageOf(gr, o, now));
    }
    used = add(used, mask(stats, names));
  }
  return used;
}

/** The resources whose usage a quota's hard names could involve, among the served ones. */
export function resourcesFor(hardNames: readonly string[], served: readonly GroupResource[]): GroupResource[] {
  return served.filter((gr) => matchingResources(gr, hardNames).length > 0);
}
