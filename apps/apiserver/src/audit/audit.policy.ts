/**
 * The audit policy (`--audit-policy-file`): an audit.k8s.io/v1 Policy, in YAML or JSON. Its
 * rules are tried in order and the first that matches a request sets the request's level and
 * the stages left out; a request no rule matches is not recorded (level None), as in
 * kube-apiserver. The file is read once at start; a policy that does not parse, has an unknown
 * field, breaks a rule below or has no rules stops the start with the field path of the fault.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { AUDIT_LEVELS, AUDIT_STAGES, type AuditAttributes, type AuditLevel, type AuditRequestConfig, type AuditStage } from '../pipeline/audit.port.js';

/** One group's resources in a rule (audit.k8s.io/v1 GroupResources). */
export interface GroupResources {
  group: string;
  resources: string[];
  resourceNames: string[];
}

/** One rule of the policy (audit.k8s.io/v1 PolicyRule). */
export interface AuditPolicyRule {
  level: AuditLevel;
  users: string[];
  userGroups: string[];
  verbs: string[];
  resources: GroupResources[];
  namespaces: string[];
  nonResourceURLs: string[];
  /** The rule's own stages together with the policy's. */
  omitStages: ReadonlySet<AuditStage>;
  omitManagedFields?: boolean;
}

/** A loaded policy. */
export interface AuditPolicy {
  rules: AuditPolicyRule[];
  omitStages: ReadonlySet<AuditStage>;
  omitManagedFields: boolean;
}

/** A policy that cannot be used; the message names the field at fault. */
export class AuditPolicyError extends Error {}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** DNS-1123 subdomain (a group name). */
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

class Problems {
  readonly list: string[] = [];
  add(path: string, message: string): void {
    this.list.push(`${path}: ${message}`);
  }
}

function unknownFields(o: Obj, known: readonly string[], path: string, p: Problems): void {
  for (const k of Object.keys(o)) if (!known.includes(k)) p.add(path ? `${path}.${k}` : k, 'unknown field');
}

function strings(o: Obj, key: string, path: string, p: Problems): string[] {
  const v = o[key];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) {
    p.add(`${path}.${key}`, 'must be a list of strings');
    return [];
  }
  return v as string[];
}

function stages(o: Obj, key: string, path: string, p: Problems): AuditStage[] {
  const out: AuditStage[] = [];
  strings(o, key, path, p).forEach((s, i) => {
    if ((AUDIT_STAGES as readonly string[]).includes(s)) out.push(s as AuditStage);
    else p.add(`${path}.${key}[${i}]`, `Invalid value: ${JSON.stringify(s)}: allowed stages are ${AUDIT_STAGES.join(',')}`);
  });
  return out;
}

function optionalBool(o: Obj, key: string, path: string, p: Problems): boolean | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') {
    p.add(`${path}.${key}`, 'must be true or false');
    return undefined;
  }
  return v;
}

function parseRule(raw: unknown, path: string, policyStages: readonly AuditStage[], p: Problems): AuditPolicyRule | undefined {
  if (!isObj(raw)) {
    p.add(path, 'must be an object');
    return undefined;
  }
  unknownFields(raw, ['level', 'users', 'userGroups', 'verbs', 'resources', 'namespaces', 'nonResourceURLs', 'omitStages', 'omitManagedFields'], path, p);
  const level = raw.level;
  if (level === undefined || level === null || level === '') p.add(`${path}.level`, 'Required value');
  else if (!(AUDIT_LEVELS as readonly unknown[]).includes(level))
    p.add(`${path}.level`, `Unsupported value: ${JSON.stringify(level)}: supported values: ${AUDIT_LEVELS.map((l) => `"${l}"`).join(', ')}`);
  const nonResourceURLs = strings(raw, 'nonResourceURLs', path, p);
  nonResourceURLs.forEach((url, i) => {
    if (url === '*') return;
    if (!url.startsWith('/'))
      p.add(`${path}.nonResourceURLs[${i}]`, `Invalid value: ${JSON.stringify(url)}: non-resource URL rules must begin with a '/' character`);
    if (url.slice(0, -1).includes('*'))
      p.add(`${path}.nonResourceURLs[${i}]`, `Invalid value: ${JSON.stringify(url)}: non-resource URL wildcards '*' must be the final character of the rule`);
  });
  const resources: GroupResources[] = [];
  const rawResources = raw.resources;
  if (rawResources !== undefined && rawResources !== null) {
    if (!Array.isArray(rawResources)) p.add(`${path}.resources`, 'must be a list');
    else
      rawResources.forEach((gr: unknown, i) => {
        const grPath = `${path}.resources[${i}]`;
        if (!isObj(gr)) {
          p.add(grPath, 'must be an object');
          return;
        }
        unknownFields(gr, ['group', 'resources', 'resourceNames'], grPath, p);
        const group = gr.group ?? '';
        if (typeof group !== 'string') p.add(`${grPath}.group`, 'must be a string');
        else if (group !== '' && (group.length > 253 || !SUBDOMAIN.test(group)))
          p.add(`${grPath}.group`, `Invalid value: ${JSON.stringify(group)}: must be a lowercase RFC 1123 subdomain`);
        const names = strings(gr, 'resources', grPath, p);
        const resourceNames = strings(gr, 'resourceNames', grPath, p);
        if (resourceNames.length > 0 && names.length === 0)
          p.add(`${grPath}.resourceNames`, 'Invalid value: using resourceNames requires at least one resource');
        resources.push({ group: typeof group === 'string' ? group : '', resources: names, resourceNames });
      });
  }
  const namespaces = strings(raw, 'namespaces', path, p);
  if (nonResourceURLs.length > 0 && (resources.length > 0 || namespaces.length > 0))
    p.add(`${path}.nonResourceURLs`, 'Invalid value: rules cannot apply to both regular resources and non-resource URLs');
  const own = stages(raw, 'omitStages', path, p);
  const omitManagedFields = optionalBool(raw, 'omitManagedFields', path, p);
  return {
    level: level as AuditLevel,
    users: strings(raw, 'users', path, p),
    userGroups: strings(raw, 'userGroups', path, p),
    verbs: strings(raw, 'verbs', path, p),
    resources,
    namespaces,
    nonResourceURLs,
    omitStages: new Set([...policyStages, ...own]),
    ...(omitManagedFields !== undefined ? { omitManagedFields } : {}),
  };
}

/** Parses and checks a policy document (YAML or JSON); throws AuditPolicyError listing every fault. */
export function parseAuditPolicy(text: string): AuditPolicy {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (e) {
    throw new AuditPolicyError(`the policy does not parse: ${(e as Error).message}`);
  }
  if (!isObj(doc)) throw new AuditPolicyError('the policy must be an audit.k8s.io/v1 Policy object');
  if (doc.apiVersion !== 'audit.k8s.io/v1' || doc.kind !== 'Policy')
    throw new AuditPolicyError(
      `the policy must be kind Policy of apiVersion audit.k8s.io/v1, not ${JSON.stringify(doc.kind ?? '')} of ${JSON.stringify(doc.apiVersion ?? '')}`,
    );
  const p = new Problems();
  unknownFields(doc, ['apiVersion', 'kind', 'metadata', 'rules', 'omitStages', 'omitManagedFields'], '', p);
  const policyStages = stages(doc, 'omitStages', '', p);
  const omitManagedFields = optionalBool(doc, 'omitManagedFields', '', p) ?? false;
  const rules: AuditPolicyRule[] = [];
  if (doc.rules !== undefined && doc.rules !== null && !Array.isArray(doc.rules)) p.add('rules', 'must be a list');
  else
    ((doc.rules as unknown[] | undefined) ?? []).forEach((r, i) => {
      const rule = parseRule(r, `rules[${i}]`, policyStages, p);
      if (rule) rules.push(rule);
    });
  if (p.list.length > 0) throw new AuditPolicyError(p.list.map((x) => x.replace(/^\./, '')).join('; '));
  if (rules.length === 0) throw new AuditPolicyError('the policy has no rules');
  return { rules, omitStages: new Set(policyStages), omitManagedFields };
}

/** Reads and parses the policy file. */
export function loadAuditPolicy(file: string): AuditPolicy {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new AuditPolicyError(`cannot read the policy: ${(e as Error).message}`);
  }
  return parseAuditPolicy(text);
}

function pathMatches(path: string, spec: string): boolean {
  if (spec === '*' || spec === path) return true;
  return spec.endsWith('*') && path.startsWith(spec.replace(/\*+$/, ''));
}

function resourceMatches(r: AuditPolicyRule, a: AuditAttributes): boolean {
  if (!a.isResourceRequest) return false;
  // Cluster-scoped resources have the empty namespace.
  if (r.namespaces.length > 0 && !r.namespaces.includes(a.namespace)) return false;
  if (r.resources.length === 0) return true;
  const combined = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  for (const gr of r.resources) {
    if (gr.group !== a.apiGroup) continue;
    if (gr.resources.length === 0) return true;
    if (gr.resourceNames.length > 0 && !gr.resourceNames.includes(a.name)) continue;
    for (const res of gr.resources) {
      if (res === '*' || res === combined) return true;
      if (a.subresource && res.startsWith('*/') && res.slice(2) === a.subresource) return true;
      if (res.endsWith('/*') && res.slice(0, -2) === a.resource) return true;
    }
  }
  return false;
}

/** Whether a rule matches a request (kube's policy checker: users, groups and verbs, then resources or URLs). */
export function ruleMatches(r: AuditPolicyRule, a: AuditAttributes): boolean {
  if (r.users.length > 0 && (!a.user || !r.users.includes(a.user.username))) return false;
  if (r.userGroups.length > 0 && (!a.user || !a.user.groups.some((g) => r.userGroups.includes(g)))) return false;
  if (r.verbs.length > 0 && !r.verbs.includes(a.verb)) return false;
  if (r.namespaces.length > 0 || r.resources.length > 0) return resourceMatches(r, a);
  if (r.nonResourceURLs.length > 0) return !a.isResourceRequest && r.nonResourceURLs.some((spec) => pathMatches(a.path, spec));
  return true;
}

/** The level, omitted stages and managed-fields setting of the first rule matching `a`; level None when none does. */
export function evaluateAuditPolicy(policy: AuditPolicy, a: AuditAttributes): AuditRequestConfig {
  for (const r of policy.rules) {
    if (ruleMatches(r, a)) return { level: r.level, omitStages: r.omitStages, omitManagedFields: r.omitManagedFields ?? policy.omitManagedFields };
  }
  return { level: 'None', omitStages: policy.omitStages, omitManagedFields: policy.omitManagedFields };
}
