/**
 * The ABAC authorization mode (`--authorization-mode=ABAC` with `--authorization-policy-file`),
 * as kube-apiserver's: a file of one JSON policy per line (blank lines and lines starting with
 * `#` skipped), each `abac.authorization.kubernetes.io/v1beta1` Policy or an unversioned (v0)
 * one, loaded once at start. A request is allowed when any policy matches it, and otherwise left
 * to the next mode ("No policy matched."). No policy ever denies.
 *
 * A policy matches when its subject does (`user` and `group`, each required when set; `*` is
 * every authenticated user), its verb does (a read, get, list or watch, always; anything else
 * unless `readonly`), and either a resource request's namespace, resource and API group (each
 * exact or `*`; a subresource counts as its resource) or a non-resource request's path (exact,
 * `*`, or a prefix ending in `*`).
 */
import type { UserInfo } from '@app/auth';
import type { AuthorizationAttributes, AuthorizationDecision, Authorizer } from './authorizer.port.js';
import type { ResolvedRules, RuleResolver } from './rules.resolver.js';

const ALL_AUTHENTICATED = 'system:authenticated';
const V1BETA1 = 'abac.authorization.kubernetes.io/v1beta1';
const V0 = 'abac.authorization.kubernetes.io/v0';

/** One policy in its internal form (kube's abac.PolicySpec). */
export interface AbacPolicy {
  user: string;
  group: string;
  readonly: boolean;
  apiGroup: string;
  resource: string;
  namespace: string;
  nonResourcePath: string;
}

/** A policy file that cannot be loaded; the message names the file and the line, as kube's does. */
export class AbacPolicyError extends Error {}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

const STRING_FIELDS = ['user', 'group', 'apiGroup', 'resource', 'namespace', 'nonResourcePath'] as const;

/** The fields of a policy's spec (v1beta1) or of the policy itself (v0), checked for their types. */
function fieldsOf(src: Obj, names: readonly string[]): Partial<AbacPolicy> {
  const out: Record<string, unknown> = {};
  for (const name of names) {
    const v = src[name];
    if (v === undefined || v === null) continue;
    if (name === 'readonly') {
      if (typeof v !== 'boolean') throw new Error(`${name}: expected a boolean, got ${JSON.stringify(v)}`);
    } else if (typeof v !== 'string') throw new Error(`${name}: expected a string, got ${JSON.stringify(v)}`);
    out[name] = v;
  }
  return out as Partial<AbacPolicy>;
}

/** kube's v1beta1 conversion: `*` as user or group is every authenticated user. */
function fromV1beta1(spec: Partial<AbacPolicy>): AbacPolicy {
  const p: AbacPolicy = { user: '', group: '', readonly: false, apiGroup: '', resource: '', namespace: '', nonResourcePath: '', ...spec };
  if (p.user === '*' || p.group === '*') {
    p.group = ALL_AUTHENTICATED;
    p.user = '';
  }
  return p;
}

/** kube's v0 conversion: empty fields are wildcards, and every API group matches. */
function fromV0(v0: Partial<AbacPolicy>): AbacPolicy {
  const user = v0.user ?? '';
  const group = v0.group ?? '';
  const namespace = v0.namespace ?? '';
  const resource = v0.resource ?? '';
  const p: AbacPolicy = { user, group, readonly: v0.readonly ?? false, apiGroup: '*', resource, namespace, nonResourcePath: '' };
  if (user === '' && group === '') p.group = ALL_AUTHENTICATED;
  if (user === '*' || group === '*') {
    p.group = ALL_AUTHENTICATED;
    p.user = '';
  }
  if (namespace === '') p.namespace = '*';
  if (resource === '') p.resource = '*';
  if (namespace === '' && resource === '') p.nonResourcePath = '*';
  return p;
}

/** One line of a policy file. */
function parseLine(line: string): { policy: AbacPolicy; unversioned: boolean } {
  const doc: unknown = JSON.parse(line);
  if (!isObj(doc)) throw new Error('a policy must be a JSON object');
  const { apiVersion, kind } = doc;
  if (apiVersion === undefined || apiVersion === '' || kind === undefined || kind === '')
    return { policy: fromV0(fieldsOf(doc, ['user', 'group', 'readonly', 'resource', 'namespace'])), unversioned: true };
  if (kind !== 'Policy' || (apiVersion !== V1BETA1 && apiVersion !== V0))
    throw new Error(`no kind ${JSON.stringify(kind)} is registered for version ${JSON.stringify(apiVersion)}`);
  if (apiVersion === V0) return { policy: fromV0(fieldsOf(doc, ['user', 'group', 'readonly', 'resource', 'namespace'])), unversioned: false };
  const spec = doc.spec ?? {};
  if (!isObj(spec)) throw new Error('spec: expected an object');
  return { policy: fromV1beta1(fieldsOf(spec, [...STRING_FIELDS, 'readonly'])), unversioned: false };
}

/**
 * Parses the text of a policy file at `path` (named in errors). `unversioned` counts the v0
 * lines, which kube-apiserver warns about.
 */
export function parseAbacPolicyFile(path: string, text: string): { policies: AbacPolicy[]; unversioned: number } {
  const policies: AbacPolicy[] = [];
  let unversioned = 0;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!.replace(/\r$/, '');
    const trimmed = raw.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    try {
      const { policy, unversioned: v0 } = parseLine(raw);
      policies.push(policy);
      if (v0) unversioned++;
    } catch (e) {
      throw new AbacPolicyError(`error reading policy file ${path}, line ${i + 1}: ${raw}: ${(e as Error).message}`);
    }
  }
  return { policies, unversioned };
}

function subjectMatches(p: AbacPolicy, user: UserInfo): boolean {
  let matched = false;
  if (p.user !== '') {
    if (p.user === '*') matched = true;
    else if (p.user === user.username) matched = true;
    else return false;
  }
  if (p.group !== '') {
    if (p.group === '*') matched = true;
    else if (user.groups.includes(p.group)) matched = true;
    else return false;
  }
  return matched;
}

const READ_VERBS = new Set(['get', 'list', 'watch']);

function matches(p: AbacPolicy, a: AuthorizationAttributes): boolean {
  if (!subjectMatches(p, a.user)) return false;
  // Reads pass every policy; a readonly policy allows nothing else.
  if (!READ_VERBS.has(a.verb) && p.readonly) return false;
  if (a.isResourceRequest) {
    return (
      (p.namespace === '*' || p.namespace === a.namespace) &&
      (p.resource === '*' || p.resource === a.resource) &&
      (p.apiGroup === '*' || p.apiGroup === a.apiGroup)
    );
  }
  const path = p.nonResourcePath;
  return path === '*' || path === a.path || (path.endsWith('*') && a.path.startsWith(path.replace(/\*+$/, '')));
}

const ALLOW: AuthorizationDecision = Object.freeze({ decision: 'Allow' });
const NO_POLICY: AuthorizationDecision = Object.freeze({ decision: 'NoOpinion', reason: 'No policy matched.' });

/** The ABAC mode over a loaded policy list; also its rule resolver (SelfSubjectRulesReview). */
export class AbacAuthorizer implements Authorizer, RuleResolver {
  constructor(private readonly policies: readonly AbacPolicy[]) {}

  authorize(attrs: AuthorizationAttributes): AuthorizationDecision {
    for (const p of this.policies) if (matches(p, attrs)) return ALLOW;
    return NO_POLICY;
  }

  /** kube's PolicyList.RulesFor: the policies of the user's subject that apply in `namespace`. */
  rulesFor(user: UserInfo, namespace: string): ResolvedRules {
    const out: ResolvedRules = { resourceRules: [], nonResourceRules: [], incomplete: false, errors: [] };
    for (const p of this.policies) {
      if (!subjectMatches(p, user) || (p.namespace !== '*' && p.namespace !== namespace)) continue;
      const verbs = p.readonly ? ['get', 'list', 'watch'] : ['*'];
      if (p.resource !== '') out.resourceRules.push({ verbs, apiGroups: [p.apiGroup], resources: [p.resource] });
      if (p.nonResourcePath !== '') out.nonResourceRules.push({ verbs: [...verbs], nonResourceURLs: [p.nonResourcePath] });
    }
    return out;
  }
}
