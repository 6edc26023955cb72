/**
 * kube's CEL authorization library (`authorizer`), for admission policies and webhook match
 * conditions: checks of the requesting user's access, or a service account's, to a resource or a
 * non-resource path, answered by the server's authorizer (the `--authorization-mode` union).
 *
 *   authorizer.group('apps').resource('deployments').namespace('ns').name('web').check('update').allowed()
 *   authorizer.path('/healthz').check('get').allowed()
 *   authorizer.serviceAccount('ns', 'builder').group('').resource('secrets').check('list').reason()
 *   authorizer.requestResource.check('patch').allowed()       (the request's own resource)
 *
 * A check answers a Decision (`allowed()`, `reason()`, `errored()`, `error()`); an authorizer that
 * answers asynchronously (a webhook) makes the expression's evaluation a promise, which the
 * callers await. Field and label selectors given to a check go to the authorizer as parsed terms,
 * as a request's do (one that does not parse is left out, as in kube).
 */
import type { Environment } from '@marcbachmann/cel-js';
import { isDNS1123Label, isDNS1123Subdomain } from '@app/apimachinery';
import { serviceAccountGroups, serviceAccountUsername, type UserInfo } from '@app/auth';
import type { AdmissionAttributes } from '@app/registry';
import { nonResourceAttributes, selectorAttributes, type AuthorizationAttributes, type AuthorizationDecision, type Authorizer } from '@app/authz';

const T = 'kubernetes.authorization';

/** The `authorizer` variable: the server's authorizer for one user. */
export class CelAuthorizer {
  constructor(
    readonly authorizer: Authorizer,
    readonly user: UserInfo,
    /** `authorizer.requestResource`: a check of the request's resource (admission policies only). */
    readonly requestResource?: CelResourceCheck,
  ) {}
}

export class CelPathCheck {
  constructor(
    readonly authz: CelAuthorizer,
    readonly path: string,
  ) {}
}

export class CelGroupCheck {
  constructor(
    readonly authz: CelAuthorizer,
    readonly group: string,
  ) {}
}

export class CelResourceCheck {
  constructor(
    readonly authz: CelAuthorizer,
    readonly group: string,
    readonly resource: string,
    readonly subresource = '',
    readonly namespace = '',
    readonly name = '',
    readonly fieldSelector = '',
    readonly labelSelector = '',
  ) {}

  with(change: Partial<Pick<CelResourceCheck, 'subresource' | 'namespace' | 'name' | 'fieldSelector' | 'labelSelector'>>): CelResourceCheck {
    const n = { ...this, ...change };
    return new CelResourceCheck(this.authz, this.group, this.resource, n.subresource, n.namespace, n.name, n.fieldSelector, n.labelSelector);
  }
}

export class CelDecision {
  constructor(
    readonly decision: AuthorizationDecision['decision'],
    readonly reason: string,
    readonly error: string,
  ) {}
}

/** The `authorizer` value for a request's user; with `request`, `authorizer.requestResource` is that resource. */
export function celAuthorizer(
  authorizer: Authorizer,
  user: UserInfo,
  request?: { group: string; resource: string; subresource: string; namespace: string; name: string },
): CelAuthorizer {
  const base = new CelAuthorizer(authorizer, user);
  if (!request) return base;
  return new CelAuthorizer(authorizer, user, new CelResourceCheck(base, request.group, request.resource, request.subresource, request.namespace, request.name));
}

/** The `authorizer` of an admission request: its user, and its resource as `requestResource`. */
export function admissionAuthorizer(authorizer: Authorizer, attrs: AdmissionAttributes): CelAuthorizer {
  const { decl } = attrs;
  return celAuthorizer(authorizer, attrs.ctx.user, {
    group: decl.group,
    resource: decl.plural,
    subresource: attrs.subresource,
    namespace: attrs.namespace,
    name: attrs.name,
  });
}

function decide(authorizer: Authorizer, attrs: AuthorizationAttributes): CelDecision | Promise<CelDecision> {
  const of = (d: AuthorizationDecision) => new CelDecision(d.decision, d.reason ?? '', d.error ?? '');
  const failed = (e: unknown) => new CelDecision('NoOpinion', '', e instanceof Error ? e.message : String(e));
  try {
    const d = authorizer.authorize(attrs);
    return d instanceof Promise ? d.then(of, failed) : of(d);
  } catch (e) {
    return failed(e);
  }
}

/** Declares the `authorizer` variable and its library in `env` (a clone of the shared environment). */
export function registerCelAuthz(env: Environment): Environment {
  env
    .registerType(`${T}.ResourceCheck`, CelResourceCheck)
    .registerType(`${T}.Authorizer`, { ctor: CelAuthorizer, fields: { requestResource: `${T}.ResourceCheck` } })
    .registerType(`${T}.PathCheck`, CelPathCheck)
    .registerType(`${T}.GroupCheck`, CelGroupCheck)
    .registerType(`${T}.Decision`, CelDecision);
  env.registerFunction(`${T}.Authorizer.path(string): ${T}.PathCheck`, (a: CelAuthorizer, path: string) => {
    if (path.trim() === '') throw new Error('path must not be empty');
    return new CelPathCheck(a, path);
  });
  env.registerFunction(`${T}.Authorizer.group(string): ${T}.GroupCheck`, (a: CelAuthorizer, group: string) => new CelGroupCheck(a, group));
  env.registerFunction(`${T}.Authorizer.serviceAccount(string, string): ${T}.Authorizer`, (a: CelAuthorizer, namespace: string, name: string) => {
    if (isDNS1123Subdomain(name).length > 0) throw new Error('Invalid service account name');
    if (isDNS1123Label(namespace).length > 0) throw new Error('Invalid service account namespace');
    return new CelAuthorizer(a.authorizer, { username: serviceAccountUsername(namespace, name), groups: serviceAccountGroups(namespace) });
  });
  env.registerFunction(`${T}.GroupCheck.resource(string): ${T}.ResourceCheck`, (g: CelGroupCheck, resource: string) => {
    if (resource.trim() === '') throw new Error('resource must not be empty');
    return new CelResourceCheck(g.authz, g.group, resource);
  });
  const set = (field: 'subresource' | 'namespace' | 'name' | 'fieldSelector' | 'labelSelector') =>
    env.registerFunction(`${T}.ResourceCheck.${field}(string): ${T}.ResourceCheck`, (r: CelResourceCheck, v: string) => r.with({ [field]: v }));
  for (const field of ['subresource', 'namespace', 'name', 'fieldSelector', 'labelSelector'] as const) set(field);
  env.registerFunction(`${T}.PathCheck.check(string): ${T}.Decision`, (p: CelPathCheck, verb: string) =>
    decide(p.authz.authorizer, nonResourceAttributes(p.authz.user, verb, p.path)),
  );
  env.registerFunction(`${T}.ResourceCheck.check(string): ${T}.Decision`, (r: CelResourceCheck, verb: string) =>
    decide(r.authz.authorizer, {
      user: r.authz.user,
      verb,
      isResourceRequest: true,
      path: '',
      apiGroup: r.group,
      apiVersion: '*',
      resource: r.resource,
      subresource: r.subresource,
      namespace: r.namespace,
      name: r.name,
      ...selectorAttributes(r.fieldSelector, r.labelSelector),
    }),
  );
  env.registerFunction(`${T}.Decision.allowed(): bool`, (d: CelDecision) => d.decision === 'Allow');
  env.registerFunction(`${T}.Decision.reason(): string`, (d: CelDecision) => d.reason);
  env.registerFunction(`${T}.Decision.errored(): bool`, (d: CelDecision) => d.error !== '');
  env.registerFunction(`${T}.Decision.error(): string`, (d: CelDecision) => d.error);
  env.registerVariable('authorizer', `${T}.Authorizer`);
  return env;
}
