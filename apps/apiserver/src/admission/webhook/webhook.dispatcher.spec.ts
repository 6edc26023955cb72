import { StatusError, type KubeObject } from '@app/apimachinery';
import type { AdmissionAttributes, KindDeclaration } from '@app/registry';
import { credentialsFor } from './webhook.client.js';
import { WebhookCallError } from './webhook.client.js';
import { checkResponse, refusal, WebhookDispatcher, type DispatcherDeps, type RejectionLabels } from './webhook.dispatcher.js';
import { matchRequestOf } from './webhook.dispatcher.js';
import { namespaceSelectorMatches, objectSelectorMatches, ruleMatches, webhooksOf, type Webhook } from './webhook.matcher.js';

type Obj = Record<string, unknown>;

const podDecl = { group: '', version: 'v1', kind: 'Pod', plural: 'pods', namespaced: true } as KindDeclaration;
const nsDecl = { group: '', version: 'v1', kind: 'Namespace', plural: 'namespaces', namespaced: false } as KindDeclaration;
const pvDecl = { group: '', version: 'v1', kind: 'PersistentVolume', plural: 'persistentvolumes', namespaced: false } as KindDeclaration;

function attrs(over: Partial<AdmissionAttributes> = {}): AdmissionAttributes {
  return {
    operation: 'CREATE',
    decl: podDecl,
    namespace: 'team',
    name: 'p',
    subresource: '',
    object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'team', labels: { app: 'web' } }, spec: {} },
    ctx: { user: { username: 'alice', groups: ['dev', 'system:authenticated'] }, dryRun: false, warnings: [], now: () => new Date(0) },
    ...over,
  };
}

function hook(name: string, extra: Obj = {}, mutating = true): Webhook {
  return webhooksOf(
    {
      metadata: { name: `cfg-${name}` },
      webhooks: [
        {
          name,
          rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }],
          clientConfig: { url: `https://hooks.example/${name}` },
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
          ...extra,
        },
      ],
    },
    mutating,
  )[0]!;
}

/** Deps whose webhooks answer with `answer(name, review)`; records the calls and refusals. */
function fake(
  mutating: Webhook[],
  validating: Webhook[],
  answer: (name: string, review: Obj) => Obj | Error,
  nsLabels?: Record<string, string>,
  equivalents: KindDeclaration[] = [],
) {
  const calls: string[] = [];
  const rejected: RejectionLabels[] = [];
  const ignored: string[] = [];
  const deps: DispatcherDeps = {
    webhooks: (m) => (m ? mutating : validating),
    ready: async () => true,
    equivalents: () => equivalents,
    namespaceLabels: async () => nsLabels,
    target: async (w) => ({ url: new URL(w.clientConfig.url!) }),
    post: async (t, review) => {
      const name = t.url.pathname.slice(1);
      calls.push(name);
      const r = answer(name, review as Obj);
      if (r instanceof Error) throw r;
      return r;
    },
    rejected: (l) => rejected.push(l),
    ignored: (_w, m) => ignored.push(m),
    // alice may list secrets in her namespace; a webhook-like authorizer answers later.
    authorizer: {
      authorize: (a) =>
        Promise.resolve({
          decision: a.user.username === 'alice' && a.resource === 'secrets' && a.verb === 'list' && a.namespace === 'team' ? 'Allow' : 'NoOpinion',
        }),
    },
  };
  return { deps, calls, rejected, ignored };
}

const reply = (review: Obj, response: Obj): Obj => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  response: { uid: (review.request as Obj).uid, ...response },
});
const patchOf = (ops: unknown[]): string => Buffer.from(JSON.stringify(ops)).toString('base64');

describe('admission webhook matching', () => {
  const req = (over: Partial<AdmissionAttributes> = {}) => matchRequestOf(attrs(over));
  it('matches operations, groups, versions, resources with subresources and scope as kube does', () => {
    const rule = { operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: '*' };
    expect(ruleMatches(rule, req())).toBe(true);
    expect(ruleMatches(rule, req({ operation: 'UPDATE' }))).toBe(false);
    expect(ruleMatches(rule, req({ subresource: 'status' }))).toBe(false);
    expect(ruleMatches({ ...rule, resources: ['pods/status'] }, req({ subresource: 'status' }))).toBe(true);
    expect(ruleMatches({ ...rule, resources: ['pods/*'] }, req({ subresource: 'status' }))).toBe(true);
    expect(ruleMatches({ ...rule, resources: ['pods/*'] }, req())).toBe(true);
    expect(ruleMatches({ ...rule, resources: ['*'] }, req({ subresource: 'status' }))).toBe(false);
    expect(ruleMatches({ ...rule, resources: ['*/status'] }, req({ subresource: 'status' }))).toBe(true);
    expect(ruleMatches({ ...rule, resources: ['*/*'] }, req({ subresource: 'eviction' }))).toBe(true);
    expect(ruleMatches({ ...rule, operations: ['*'], apiGroups: ['*'], apiVersions: ['*'] }, req({ operation: 'DELETE' }))).toBe(true);
    expect(ruleMatches({ ...rule, apiGroups: ['apps'] }, req())).toBe(false);
    expect(ruleMatches({ ...rule, scope: 'Cluster' }, req())).toBe(false);
    expect(ruleMatches({ ...rule, scope: 'Namespaced' }, req())).toBe(true);
    expect(ruleMatches({ ...rule, resources: ['persistentvolumes'], scope: 'Cluster' }, req({ decl: pvDecl, namespace: '' }))).toBe(true);
  });

  it('judges the object selector on the new or the old object, and never matches unlabelled objects', () => {
    const w = hook('a', { objectSelector: { matchLabels: { app: 'web' } } });
    expect(objectSelectorMatches(w, req())).toBe(true);
    const unlabelled = { metadata: { name: 'p' } } as KubeObject;
    expect(objectSelectorMatches(w, req({ object: unlabelled }))).toBe(false);
    expect(objectSelectorMatches(w, req({ object: unlabelled, oldObject: { metadata: { name: 'p', labels: { app: 'web' } } } as KubeObject }))).toBe(true);
    expect(objectSelectorMatches(hook('b'), req({ object: unlabelled }))).toBe(true);
  });

  it("judges the namespace selector on the namespace's labels, a Namespace on its own, and not cluster-scoped kinds", () => {
    const w = hook('a', { namespaceSelector: { matchExpressions: [{ key: 'env', operator: 'In', values: ['prod'] }] } });
    expect(namespaceSelectorMatches(w, req(), { env: 'prod' })).toBe(true);
    expect(namespaceSelectorMatches(w, req(), { env: 'dev' })).toBe(false);
    expect(namespaceSelectorMatches(w, req(), undefined)).toBe(false);
    const ns = { metadata: { name: 'x', labels: { env: 'prod' } } } as KubeObject;
    expect(namespaceSelectorMatches(w, req({ decl: nsDecl, namespace: '', object: ns }), undefined)).toBe(true);
    expect(namespaceSelectorMatches(w, req({ decl: pvDecl, namespace: '', object: { metadata: { name: 'v' } } as KubeObject }), undefined)).toBe(true);
  });

  it('fills in the v1 defaults of a stored webhook', () => {
    const [w] = webhooksOf({ metadata: { name: 'c' }, webhooks: [{ name: 'a.b.c', clientConfig: { service: { namespace: 'n', name: 's' } } }] }, false);
    expect(w).toMatchObject({
      failurePolicy: 'Fail',
      matchPolicy: 'Equivalent',
      timeoutSeconds: 10,
      reinvocationPolicy: 'Never',
      clientConfig: { service: { port: 443 } },
    });
  });

  it('picks webhook credentials by exact host, then a wildcard, then *', () => {
    const users = new Map([
      ['hook.ns.svc', { token: 'exact' }],
      ['*.ns.svc', { token: 'wild' }],
      ['*', { token: 'any' }],
    ]);
    expect(credentialsFor(users, 'hook.ns.svc')?.token).toBe('exact');
    expect(credentialsFor(users, 'other.ns.svc')?.token).toBe('wild');
    expect(credentialsFor(users, 'example.com:8443')?.token).toBe('any');
    expect(credentialsFor(new Map(), 'x')).toBeUndefined();
  });
});

describe('admission webhook answers', () => {
  it('refuses with the webhook status, at least 400, prefixed as kube does', () => {
    const e = refusal('deny.example.com', { code: 403, message: 'no way', reason: 'Forbidden' });
    expect([e.code, e.reason, e.message]).toEqual([403, 'Forbidden', 'admission webhook "deny.example.com" denied the request: no way']);
    expect(refusal('d', { code: 200 }).code).toBe(400);
    expect(refusal('d', undefined).message).toBe('admission webhook "d" denied the request without explanation');
  });

  it('rejects answers that break the protocol', () => {
    const ok = { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'u', allowed: true } };
    expect(checkResponse(ok, 'v1', 'u', true).allowed).toBe(true);
    expect(() => checkResponse(ok, 'v1', 'other', true)).toThrow('expected response.uid="other", got "u"');
    expect(() => checkResponse({ ...ok, apiVersion: 'admission.k8s.io/v1beta1' }, 'v1', 'u', true)).toThrow(WebhookCallError);
    expect(() => checkResponse({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }, 'v1', 'u', true)).toThrow('webhook response was absent');
    const patched = { ...ok, response: { uid: 'u', allowed: true, patch: patchOf([]) } };
    expect(() => checkResponse(patched, 'v1', 'u', true)).toThrow('webhook returned response.patch but not response.patchType');
    expect(() => checkResponse({ ...ok, response: { ...patched.response, patchType: 'JSONPatch' } }, 'v1', 'u', false)).toThrow(
      'validating webhook may not return response.patch',
    );
  });
});

describe('WebhookDispatcher', () => {
  it('sends the request in an AdmissionReview and applies the patches of mutating webhooks in order', async () => {
    const seen: Obj[] = [];
    const f = fake([hook('first'), hook('second')], [], (name, review) => {
      seen.push(structuredClone(review));
      const op = name === 'first' ? { op: 'add', path: '/metadata/labels/first', value: 'yes' } : { op: 'add', path: '/metadata/labels/second', value: 'yes' };
      return reply(review, { allowed: true, patchType: 'JSONPatch', patch: patchOf([op]), warnings: [`from ${name}`] });
    });
    const a = attrs();
    await new WebhookDispatcher(f.deps).admit(a);
    expect(f.calls).toEqual(['first', 'second']);
    expect(a.object!.metadata.labels).toEqual({ app: 'web', first: 'yes', second: 'yes' });
    expect(a.ctx.warnings).toEqual(['from first', 'from second']);
    const r = seen[0]!.request as Obj;
    expect(seen[0]).toMatchObject({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' });
    expect(r).toMatchObject({
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      name: 'p',
      namespace: 'team',
      operation: 'CREATE',
      userInfo: { username: 'alice', groups: ['dev', 'system:authenticated'] },
      oldObject: null,
      dryRun: false,
      options: { kind: 'CreateOptions', apiVersion: 'meta.k8s.io/v1' },
    });
    // The second webhook saw the first one's change.
    expect(((seen[1]!.request as Obj).object as KubeObject).metadata.labels).toEqual({ app: 'web', first: 'yes' });
  });

  it('reinvokes an IfNeeded webhook once when a later webhook changed the object', async () => {
    const f = fake([hook('again', { reinvocationPolicy: 'IfNeeded' }), hook('later')], [], (name, review) =>
      reply(
        review,
        name === 'later' ? { allowed: true, patchType: 'JSONPatch', patch: patchOf([{ op: 'add', path: '/spec/x', value: 1 }]) } : { allowed: true },
      ),
    );
    await new WebhookDispatcher(f.deps).admit(attrs());
    expect(f.calls).toEqual(['again', 'later', 'again']);
  });

  it('turns a refusal into its status and counts it', async () => {
    const f = fake([], [hook('ok', {}, false), hook('no', {}, false)], (name, review) =>
      reply(review, name === 'no' ? { allowed: false, status: { code: 422, message: 'bad pod' } } : { allowed: true }),
    );
    const err = await new WebhookDispatcher(f.deps).validate(attrs()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StatusError);
    expect([(err as StatusError).code, (err as StatusError).message]).toEqual([422, 'admission webhook "no" denied the request: bad pod']);
    expect(f.calls.sort()).toEqual(['no', 'ok']);
    expect(f.rejected).toEqual([{ name: 'no', operation: 'CREATE', type: 'validating', error_type: 'no_error', rejection_code: '422' }]);
  });

  it('fails the request with 500 when a Fail webhook cannot be called, and passes over an Ignore one', async () => {
    const down = () => new WebhookCallError('failed to call webhook: Post "https://hooks.example/x": connect ECONNREFUSED');
    const fail = fake([hook('x')], [], down);
    const err = (await new WebhookDispatcher(fail.deps).admit(attrs()).catch((e: unknown) => e)) as StatusError;
    expect([err.code, err.reason]).toEqual([500, 'InternalError']);
    expect(err.message).toBe(
      'Internal error occurred: failed calling webhook "x": failed to call webhook: Post "https://hooks.example/x": connect ECONNREFUSED',
    );
    expect(fail.rejected[0]).toMatchObject({ error_type: 'calling_webhook_error', rejection_code: '0', type: 'admit' });
    const ignore = fake([hook('x', { failurePolicy: 'Ignore' })], [], down);
    await expect(new WebhookDispatcher(ignore.deps).admit(attrs())).resolves.toBeUndefined();
    expect(ignore.ignored).toHaveLength(1);
  });

  it('calls a webhook only when its match conditions are all true, and applies the failure policy to their errors', async () => {
    const allow = () => ({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: '', allowed: true } });
    const answer = (_n: string, review: Obj) => {
      const out = allow();
      out.response.uid = String((review.request as Obj).uid);
      return out;
    };
    const conditions = (...exprs: string[]) => ({ matchConditions: exprs.map((expression, i) => ({ name: `c${i}`, expression })) });
    const run = async (extra: Obj, a: AdmissionAttributes = attrs()) => {
      const f = fake([], [hook('cel', extra, false)], answer);
      const out = await new WebhookDispatcher(f.deps).validate(a).catch((e: unknown) => e);
      return { calls: f.calls.length, err: out as StatusError | undefined };
    };
    // Over the object, the request and its user.
    expect((await run(conditions("object.metadata.labels.app == 'web'", "request.userInfo.username == 'alice'", "request.operation == 'CREATE'"))).calls).toBe(
      1,
    );
    expect((await run(conditions("object.metadata.labels.app == 'db'"))).calls).toBe(0);
    expect((await run(conditions('oldObject == null', "request.resource.resource == 'pods' && request.namespace == 'team'"))).calls).toBe(1);
    // A false condition wins over an error; an error alone follows the failure policy.
    expect((await run(conditions('object.metadata.labels.missing == "x"', 'false'))).calls).toBe(0);
    const failed = await run(conditions('object.metadata.labels.missing == "x"'));
    expect(failed.calls).toBe(0);
    expect([failed.err?.code, failed.err?.message]).toEqual([
      403,
      `pods "p" is forbidden: expression 'object.metadata.labels.missing == "x"' resulted in error: no such key: missing`,
    ]);
    const ignored = await run({ ...conditions('object.metadata.labels.missing == "x"'), failurePolicy: 'Ignore' });
    expect([ignored.calls, ignored.err]).toEqual([0, undefined]);
    // The requesting user's access, from the server's authorizer.
    expect((await run(conditions("authorizer.group('').resource('secrets').namespace(request.namespace).check('list').allowed()"))).calls).toBe(1);
    expect((await run(conditions("authorizer.requestResource.subresource('status').check('list').allowed()"))).calls).toBe(0);
    // A dry run skips a webhook with side effects that its conditions exclude, instead of failing.
    const dry = attrs({ ctx: { ...attrs().ctx, dryRun: true } });
    expect((await run({ ...conditions('false'), sideEffects: 'Some' }, dry)).err).toBeUndefined();
  });

  it('under matchPolicy Equivalent calls a webhook registered for another version with the object converted, and converts its patch back', async () => {
    // A kind served as v1 (field `size`) and v2 (field `replicas`), stored at v2.
    const conversion = {
      storageVersion: 'v2',
      convert(o: KubeObject, to: string): KubeObject {
        const { size, replicas, ...rest } = o as Obj;
        return to === 'v2'
          ? ({ ...rest, apiVersion: 'example.com/v2', replicas: replicas ?? size } as unknown as KubeObject)
          : ({ ...rest, apiVersion: 'example.com/v1', size: size ?? replicas } as unknown as KubeObject);
      },
    };
    const v1 = { group: 'example.com', version: 'v1', kind: 'Thing', plural: 'things', namespaced: true, conversion } as unknown as KindDeclaration;
    const v2 = { ...v1, version: 'v2' } as KindDeclaration;
    const rules = [{ operations: ['CREATE'], apiGroups: ['example.com'], apiVersions: ['v2'], resources: ['things'] }];
    const seen: Obj[] = [];
    const f = fake(
      [hook('equiv', { rules }), hook('exact', { rules, matchPolicy: 'Exact' })],
      [],
      (_n, review) => {
        seen.push(structuredClone(review));
        return reply(review, { allowed: true, patchType: 'JSONPatch', patch: patchOf([{ op: 'replace', path: '/replicas', value: 5 }]) });
      },
      undefined,
      [v2],
    );
    const a = attrs({ decl: v1, object: { apiVersion: 'example.com/v1', kind: 'Thing', metadata: { name: 't', namespace: 'team' }, size: 2 } as KubeObject });
    await new WebhookDispatcher(f.deps).admit(a);
    expect(f.calls).toEqual(['equiv']);
    expect(seen[0]!.request).toMatchObject({
      kind: { group: 'example.com', version: 'v2', kind: 'Thing' },
      requestKind: { group: 'example.com', version: 'v1', kind: 'Thing' },
      resource: { version: 'v2', resource: 'things' },
      requestResource: { version: 'v1', resource: 'things' },
      object: { apiVersion: 'example.com/v2', replicas: 2 },
    });
    expect(a.object).toMatchObject({ apiVersion: 'example.com/v1', size: 5 });
    expect((a.object as Obj).replicas).toBeUndefined();
  });

  it('refuses requests while the configurations are not yet known', async () => {
    const f = fake([], [], () => new Error('not called'));
    f.deps.ready = async () => false;
    const err = (await new WebhookDispatcher(f.deps).validate(attrs()).catch((e: unknown) => e)) as StatusError;
    expect([err.code, err.message]).toEqual([403, 'pods "p" is forbidden: not yet ready to handle request']);
  });

  it('refuses a dry run that would reach a webhook with side effects, without calling it', async () => {
    const f = fake([], [hook('fx', { sideEffects: 'Some' }, false)], (_n, review) => reply(review, { allowed: true }));
    const a = attrs();
    a.ctx.dryRun = true;
    const err = (await new WebhookDispatcher(f.deps).validate(a).catch((e: unknown) => e)) as StatusError;
    expect([err.code, err.message]).toEqual([400, 'admission webhook "fx" does not support dry run']);
    expect(f.calls).toEqual([]);
  });

  it('skips webhooks whose rules or selectors do not match, and never sends webhook configurations', async () => {
    const f = fake(
      [hook('sel', { objectSelector: { matchLabels: { app: 'db' } } }), hook('ns', { namespaceSelector: { matchLabels: { env: 'prod' } } })],
      [],
      (_n, review) => reply(review, { allowed: false }),
      { env: 'dev' },
    );
    await new WebhookDispatcher(f.deps).admit(attrs());
    const cfgDecl = {
      group: 'admissionregistration.k8s.io',
      version: 'v1',
      kind: 'X',
      plural: 'validatingwebhookconfigurations',
      namespaced: false,
    } as KindDeclaration;
    const all = fake([hook('all', { rules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'] }] })], [], (_n, review) =>
      reply(review, { allowed: false }),
    );
    await new WebhookDispatcher(all.deps).admit(attrs({ decl: cfgDecl, namespace: '' }));
    expect([...f.calls, ...all.calls]).toEqual([]);
  });
});
