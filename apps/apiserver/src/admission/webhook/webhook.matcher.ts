/**
 * Which admission webhooks a request goes to (conventions.md "Outbound admission webhooks"):
 * a webhook's rules (operations, API groups and versions, resources with subresources, scope),
 * its namespace selector (labels of the request's namespace, or of the Namespace itself) and its
 * object selector (labels of the new or the old object); its CEL match conditions are compiled
 * here and evaluated by the dispatcher for each call. Pure functions over the stored
 * configurations, the request and the namespace's labels.
 */
import { labelSelectorFromStruct, type LabelSelector, type LabelSelectorStruct } from '@app/apimachinery';
import { compileMatchConditions, type MatchCondition } from './webhook.conditions.js';

type Obj = Record<string, unknown>;

/** One rule of a webhook (admissionregistration/v1 RuleWithOperations). */
export interface WebhookRule {
  operations: string[];
  apiGroups: string[];
  apiVersions: string[];
  resources: string[];
  scope: string;
}

/** A webhook of a stored configuration, in the form the dispatcher uses. */
export interface Webhook {
  /** The configuration's name. */
  configuration: string;
  /** Its place in the configuration. */
  index: number;
  name: string;
  rules: WebhookRule[];
  namespaceSelector: LabelSelector;
  objectSelector: LabelSelector;
  /** Whether namespaceSelector is `{}` (then no namespace lookup is needed). */
  namespaceSelectorEmpty: boolean;
  failurePolicy: 'Fail' | 'Ignore';
  matchPolicy: 'Exact' | 'Equivalent';
  sideEffects: string;
  timeoutSeconds: number;
  admissionReviewVersions: string[];
  reinvocationPolicy: 'Never' | 'IfNeeded';
  /** Its CEL match conditions, compiled (webhook.conditions.ts). */
  matchConditions: MatchCondition[];
  clientConfig: { url?: string; service?: { namespace: string; name: string; path?: string; port: number }; caBundle?: string };
}

/** What a request looks like to the matcher. */
export interface MatchRequest {
  operation: string;
  group: string;
  version: string;
  /** The plural resource name. */
  resource: string;
  subresource: string;
  namespaced: boolean;
  /** The request's namespace ('' for cluster-scoped kinds). */
  namespace: string;
  object?: Obj;
  oldObject?: Obj;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
const obj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});

/** A label selector field (stored defaulted to `{}`; absent read as `{}` too). A bad one selects nothing. */
function selector(v: unknown): { sel: LabelSelector; empty: boolean } {
  const s = obj(v) as LabelSelectorStruct;
  try {
    const sel = labelSelectorFromStruct(s);
    return { sel, empty: sel.isEmpty() };
  } catch {
    return { sel: labelSelectorFromStruct(null), empty: false };
  }
}

/** The webhooks of a stored configuration object, with the v1 defaults for anything absent. */
export function webhooksOf(config: Obj, mutating: boolean): Webhook[] {
  const meta = obj(config.metadata);
  const list = Array.isArray(config.webhooks) ? config.webhooks : [];
  return list.map((raw, index) => {
    const w = obj(raw);
    const ns = selector(w.namespaceSelector);
    const os = selector(w.objectSelector);
    const cc = obj(w.clientConfig);
    const svc = cc.service === undefined ? undefined : obj(cc.service);
    return {
      configuration: str(meta.name),
      index,
      name: str(w.name),
      rules: (Array.isArray(w.rules) ? w.rules : []).map((r) => {
        const rule = obj(r);
        return {
          operations: strings(rule.operations),
          apiGroups: strings(rule.apiGroups),
          apiVersions: strings(rule.apiVersions),
          resources: strings(rule.resources),
          scope: str(rule.scope) || '*',
        };
      }),
      namespaceSelector: ns.sel,
      namespaceSelectorEmpty: ns.empty,
      objectSelector: os.sel,
      failurePolicy: w.failurePolicy === 'Ignore' ? 'Ignore' : 'Fail',
      matchPolicy: w.matchPolicy === 'Exact' ? 'Exact' : 'Equivalent',
      sideEffects: str(w.sideEffects),
      timeoutSeconds: typeof w.timeoutSeconds === 'number' ? w.timeoutSeconds : 10,
      admissionReviewVersions: strings(w.admissionReviewVersions),
      reinvocationPolicy: mutating && w.reinvocationPolicy === 'IfNeeded' ? 'IfNeeded' : 'Never',
      matchConditions: compileMatchConditions(w.matchConditions),
      clientConfig: {
        url: typeof cc.url === 'string' ? cc.url : undefined,
        service: svc && {
          namespace: str(svc.namespace),
          name: str(svc.name),
          path: typeof svc.path === 'string' ? svc.path : undefined,
          port: typeof svc.port === 'number' ? svc.port : 443,
        },
        caBundle: typeof cc.caBundle === 'string' && cc.caBundle !== '' ? cc.caBundle : undefined,
      },
    };
  });
}

const anyOf = (list: string[], value: string): boolean => list.includes('*') || list.includes(value);

/**
 * Whether one rule's resources name `resource[/subresource]` (kube's rules.Matcher.resource):
 * `*` any resource without subresource, `x/` and `*` every subresource of x (and x itself),
 * `*` then `/s` subresource s of any resource.
 */
function resourceMatches(resources: string[], resource: string, subresource: string): boolean {
  return resources.some((r) => {
    const slash = r.indexOf('/');
    const res = slash < 0 ? r : r.slice(0, slash);
    const sub = slash < 0 ? '' : r.slice(slash + 1);
    return (res === '*' || res === resource) && (sub === '*' || sub === subresource);
  });
}

/** Whether the rule's scope admits the request (the Namespace object itself is cluster-scoped). */
function scopeMatches(scope: string, req: MatchRequest): boolean {
  if (scope === '*' || scope === '') return true;
  if (scope === 'Cluster') return !req.namespaced;
  return req.namespaced;
}

/** Whether a rule matches the request (kube's rules.Matcher.Matches). */
export function ruleMatches(rule: WebhookRule, req: MatchRequest): boolean {
  return (
    anyOf(rule.operations, req.operation) &&
    anyOf(rule.apiGroups, req.group) &&
    anyOf(rule.apiVersions, req.version) &&
    resourceMatches(rule.resources, req.resource, req.subresource) &&
    scopeMatches(rule.scope, req)
  );
}

const labelsOf = (o: Obj | undefined): Record<string, string> | undefined => {
  const labels = obj(obj(o?.metadata).labels);
  return Object.keys(labels).length ? (labels as Record<string, string>) : undefined;
};

/**
 * Whether the object selector matches: the new or the old object's labels. An empty selector
 * matches every request; a non-empty one never matches an object without labels.
 */
export function objectSelectorMatches(w: Webhook, req: MatchRequest): boolean {
  if (w.objectSelector.isEmpty()) return true;
  return [req.object, req.oldObject].some((o) => o !== undefined && w.objectSelector.matches(labelsOf(o) ?? {}));
}

/**
 * Whether the namespace selector matches, given the labels of the request's namespace
 * (undefined when the namespace does not exist). Cluster-scoped kinds other than Namespace
 * always match; a Namespace is judged by its own labels.
 */
export function namespaceSelectorMatches(w: Webhook, req: MatchRequest, namespaceLabels: Record<string, string> | undefined): boolean {
  if (w.namespaceSelectorEmpty) return true;
  const isNamespace = req.group === '' && req.resource === 'namespaces' && !req.subresource;
  if (isNamespace) {
    const labels = labelsOf(req.object) ?? labelsOf(req.oldObject) ?? {};
    return w.namespaceSelector.matches(labels);
  }
  if (!req.namespaced) return true;
  return w.namespaceSelector.matches(namespaceLabels ?? {});
}

/** Whether a webhook's rules send the request to it (selectors are judged apart). */
export function rulesMatch(w: Webhook, req: MatchRequest): boolean {
  return w.rules.some((r) => ruleMatches(r, req));
}

/** Whether a Namespace-scoped request needs the namespace's labels to judge `w`. */
export function needsNamespaceLabels(w: Webhook, req: MatchRequest): boolean {
  return !w.namespaceSelectorEmpty && req.namespaced && req.namespace !== '';
}
