/**
 * Calls the admission webhooks a request matches (conventions.md "Outbound admission
 * webhooks"), as kube-apiserver's MutatingAdmissionWebhook and ValidatingAdmissionWebhook do:
 *
 * - Mutating webhooks one after another, in the order of their configurations' names and then
 *   their place in the configuration; each sees the object as the previous ones left it, and a
 *   JSONPatch in its answer is applied to the request's object. A webhook with
 *   `reinvocationPolicy: IfNeeded` is called once more when a webhook after it changed the
 *   object.
 * - Validating webhooks all at once; the first refusal (in the same order) fails the request.
 * - A refusal becomes the webhook's `status` (code 400 or more, the message prefixed with
 *   `admission webhook "<name>" denied the request`); a webhook that cannot be called, times
 *   out or answers wrongly fails the request with 500 when its failure policy is Fail and is
 *   passed over when it is Ignore; a dry run reaching a webhook with side effects is 400.
 * - A webhook with `matchConditions` is called only when they are all true for the request
 *   (webhook.conditions.ts); an evaluation error fails the request with 403 under Fail.
 * - Each refusal counts in `apiserver_admission_webhook_rejection_count`; an answer's warnings
 *   reach the client as `Warning` headers.
 *
 * The dependencies (configurations, namespace labels, where a webhook is, the HTTPS call) come
 * from outside, so the logic here is pure over them.
 */
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import fastJsonPatch, { type Operation } from 'fast-json-patch';
import { Errors, StatusError, type KubeObject, type StatusReason } from '@app/apimachinery';
import { convertObject, type AdmissionAttributes, type KindDeclaration } from '@app/registry';
import { namespaceSelectorMatches, needsNamespaceLabels, objectSelectorMatches, rulesMatch, type MatchRequest, type Webhook } from './webhook.matcher.js';
import { WebhookCallError, type WebhookTarget } from './webhook.client.js';
import type { Authorizer } from '@app/authz';
import { evaluateMatchConditions } from './webhook.conditions.js';
import { admissionAuthorizer } from '../../cel/cel.authz.js';

type Obj = Record<string, unknown>;

/** The AdmissionReview versions this server speaks. */
export const REVIEW_VERSIONS = ['v1', 'v1beta1'] as const;

/** Labels of a refusal, as kube's apiserver_admission_webhook_rejection_count has them. */
export interface RejectionLabels {
  name: string;
  operation: string;
  type: 'admit' | 'validating';
  error_type: 'calling_webhook_error' | 'no_error' | 'apiserver_internal_error';
  rejection_code: string;
}

/** What the dispatcher needs from the server. */
export interface DispatcherDeps {
  /** The webhooks of every configuration of one kind, in calling order. */
  webhooks(mutating: boolean): readonly Webhook[];
  /** The other served versions of the request's kind (same group and resource), for matchPolicy Equivalent. */
  equivalents(decl: KindDeclaration): readonly KindDeclaration[];
  /** Whether the configurations of one kind are known (false: not loaded in time). */
  ready(mutating: boolean): Promise<boolean>;
  /** The labels of a namespace; undefined when it does not exist. */
  namespaceLabels(namespace: string): Promise<Record<string, string> | undefined>;
  /** Where a webhook is reached; throws WebhookCallError when it cannot be resolved. */
  target(w: Webhook): Promise<WebhookTarget>;
  /** Posts a review; throws WebhookCallError. */
  post(target: WebhookTarget, review: unknown, timeoutSeconds: number): Promise<unknown>;
  /** Counts a refusal. */
  rejected(labels: RejectionLabels): void;
  /** Reports a failure passed over by failure policy Ignore. */
  ignored(w: Webhook, message: string): void;
  /** The server's authorizer, for the `authorizer` of match conditions. */
  authorizer: Authorizer;
}

/** The admission configuration kinds, never sent to webhooks nor checked by policies (kube's IsExemptAdmissionConfigurationResource). */
export const EXEMPT = new Set([
  'admissionregistration.k8s.io/mutatingwebhookconfigurations',
  'admissionregistration.k8s.io/validatingwebhookconfigurations',
  'admissionregistration.k8s.io/validatingadmissionpolicies',
  'admissionregistration.k8s.io/validatingadmissionpolicybindings',
]);

/** The request as the matcher sees it (at `version`, by default the one it was made in). */
export function matchRequestOf(attrs: AdmissionAttributes, version = attrs.decl.version): MatchRequest {
  return {
    operation: attrs.operation,
    group: attrs.decl.group,
    version,
    resource: attrs.decl.plural,
    subresource: attrs.subresource,
    namespaced: attrs.decl.namespaced,
    namespace: attrs.namespace,
    object: attrs.object as Obj | undefined,
    oldObject: attrs.oldObject as Obj | undefined,
  };
}

const OPTIONS_KIND: Record<string, string | undefined> = { CREATE: 'CreateOptions', UPDATE: 'UpdateOptions', DELETE: 'DeleteOptions' };

/**
 * The AdmissionReview sent to a webhook. `sent` is the version the webhook registered for (the
 * request's own, or under matchPolicy Equivalent another), `object` and `oldObject` at it.
 */
export function reviewFor(
  attrs: AdmissionAttributes,
  version: string,
  uid: string,
  sent: Pick<KindDeclaration, 'group' | 'version' | 'kind' | 'plural'>,
  object: KubeObject | undefined,
  oldObject: KubeObject | undefined,
): Obj {
  const { decl, ctx } = attrs;
  // A subresource with a kind of its own (Eviction, Scale) is sent as that kind.
  const gvk = attrs.kind ?? { group: sent.group, version: sent.version, kind: sent.kind };
  const gvr = { group: sent.group, version: sent.version, resource: sent.plural };
  const optionsKind = OPTIONS_KIND[attrs.operation];
  const user: Obj = { username: ctx.user.username, groups: ctx.user.groups };
  if (ctx.user.uid) user.uid = ctx.user.uid;
  if (ctx.user.extra && Object.keys(ctx.user.extra).length) user.extra = ctx.user.extra;
  const request: Obj = {
    uid,
    kind: gvk,
    resource: gvr,
    ...(attrs.subresource ? { subResource: attrs.subresource } : {}),
    requestKind: attrs.kind ?? { group: decl.group, version: decl.version, kind: decl.kind },
    requestResource: { group: decl.group, version: decl.version, resource: decl.plural },
    ...(attrs.subresource ? { requestSubResource: attrs.subresource } : {}),
    name: attrs.name,
    ...(attrs.namespace ? { namespace: attrs.namespace } : {}),
    operation: attrs.operation,
    userInfo: user,
    object: attrs.operation === 'DELETE' ? null : (object ?? null),
    oldObject: attrs.operation === 'CREATE' ? null : (oldObject ?? null),
    dryRun: ctx.dryRun,
    options: optionsKind ? { kind: optionsKind, apiVersion: 'meta.k8s.io/v1', ...(ctx.dryRun ? { dryRun: ['All'] } : {}) } : null,
  };
  return { apiVersion: `admission.k8s.io/${version}`, kind: 'AdmissionReview', request };
}

/** A webhook to call and the version of the request's kind it is called with. */
interface Invocation {
  w: Webhook;
  /** The request's declaration, or another served version of it (matchPolicy Equivalent). */
  as: KindDeclaration;
}

/** A webhook's answer, checked (kube's VerifyAdmissionResponse). */
export interface ReviewResponse {
  allowed: boolean;
  status?: { code?: number; message?: string; reason?: string; status?: string };
  patch?: Operation[];
  warnings: string[];
  /** Annotations for the request's audit events, recorded under `<webhook name>/<key>`. */
  auditAnnotations?: Record<string, string>;
}

/** Checks an answer; throws WebhookCallError for one that breaks the protocol. */
export function checkResponse(body: unknown, version: string, uid: string, mutating: boolean): ReviewResponse {
  const review = body && typeof body === 'object' ? (body as Obj) : {};
  const want = `admission.k8s.io/${version}`;
  if (review.apiVersion !== want || review.kind !== 'AdmissionReview') {
    throw new WebhookCallError(
      `expected webhook response of ${want}, Kind=AdmissionReview, got ${String(review.apiVersion ?? '')}, Kind=${String(review.kind ?? '')}`,
    );
  }
  const r = review.response && typeof review.response === 'object' ? (review.response as Obj) : undefined;
  if (!r) throw new WebhookCallError('webhook response was absent');
  if (r.uid !== uid) throw new WebhookCallError(`expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(r.uid ?? '')}`);
  const out: ReviewResponse = {
    allowed: r.allowed === true,
    warnings: Array.isArray(r.warnings) ? r.warnings.filter((w): w is string => typeof w === 'string') : [],
  };
  if (r.status && typeof r.status === 'object') out.status = r.status as ReviewResponse['status'];
  if (r.auditAnnotations && typeof r.auditAnnotations === 'object' && !Array.isArray(r.auditAnnotations)) {
    const entries = Object.entries(r.auditAnnotations as Obj).filter((e): e is [string, string] => typeof e[1] === 'string');
    if (entries.length > 0) out.auditAnnotations = Object.fromEntries(entries);
  }
  const patch = typeof r.patch === 'string' && r.patch !== '' ? r.patch : undefined;
  if (patch !== undefined) {
    if (!mutating) throw new WebhookCallError('validating webhook may not return response.patch');
    if (r.patchType === undefined || r.patchType === '') throw new WebhookCallError('webhook returned response.patch but not response.patchType');
    if (r.patchType !== 'JSONPatch') throw new WebhookCallError(`webhook returned invalid response.patchType of ${JSON.stringify(r.patchType)}`);
    let ops: unknown;
    try {
      ops = JSON.parse(Buffer.from(patch, 'base64').toString('utf8'));
    } catch (e) {
      throw new WebhookCallError(`webhook returned an undecodable patch: ${(e as Error).message}`);
    }
    if (!Array.isArray(ops)) throw new WebhookCallError('webhook returned a patch that is not a list of operations');
    out.patch = ops as Operation[];
  } else if (r.patchType !== undefined && r.patchType !== '' && !mutating) {
    throw new WebhookCallError('validating webhook may not return response.patchType');
  }
  return out;
}

/** kube's webhookerrors.ToStatusErr: the refusal of webhook `name`. */
export function refusal(name: string, status: ReviewResponse['status']): StatusError {
  const s = status ?? {};
  const code = typeof s.code === 'number' && s.code >= 400 ? s.code : 400;
  const denied = `admission webhook ${JSON.stringify(name)} denied the request`;
  const message = s.message ? `${denied}: ${s.message}` : s.reason ? `${denied}: ${s.reason}` : `${denied} without explanation`;
  return new StatusError(code, (s.reason ?? '') as StatusReason, message);
}

/** Runs the webhooks of a request. */
export class WebhookDispatcher {
  constructor(private readonly deps: DispatcherDeps) {}

  /**
   * The webhooks of one kind that the request matches, in calling order, each with the version
   * it is called at: the request's own when a rule matches it, else (matchPolicy Equivalent)
   * the first other served version of the same resource a rule matches.
   */
  private async matching(mutating: boolean, attrs: AdmissionAttributes): Promise<Invocation[]> {
    if (EXEMPT.has(`${attrs.decl.group}/${attrs.decl.plural}`)) return [];
    if (!(await this.deps.ready(mutating))) {
      throw Errors.forbidden({ group: attrs.decl.group, resource: attrs.decl.plural }, attrs.name, 'not yet ready to handle request');
    }
    const all = this.deps.webhooks(mutating);
    if (all.length === 0) return [];
    const req = matchRequestOf(attrs);
    let labels: Record<string, string> | undefined;
    let looked = false;
    const out: Invocation[] = [];
    for (const w of all) {
      let as: KindDeclaration | undefined = rulesMatch(w, req) ? attrs.decl : undefined;
      if (!as && w.matchPolicy === 'Equivalent' && !attrs.kind)
        as = this.deps.equivalents(attrs.decl).find((d) => rulesMatch(w, matchRequestOf(attrs, d.version)));
      if (!as || !objectSelectorMatches(w, req)) continue;
      if (needsNamespaceLabels(w, req) && !looked) {
        labels = await this.deps.namespaceLabels(req.namespace);
        looked = true;
      }
      if (namespaceSelectorMatches(w, req, labels)) out.push({ w, as });
    }
    return out;
  }

  /** `obj` at the version `as` of the request's kind. */
  private static async at(attrs: AdmissionAttributes, as: KindDeclaration, obj: KubeObject | undefined): Promise<KubeObject | undefined> {
    if (!obj || as === attrs.decl || !attrs.decl.conversion) return obj;
    return convertObject(attrs.decl.conversion, obj, as.version);
  }

  /**
   * One call: the review, the answer checked. Returns undefined when failure policy Ignore passes
   * over a failure; throws the request's error otherwise.
   */
  private async call(inv: Invocation, attrs: AdmissionAttributes, object: KubeObject | undefined, mutating: boolean): Promise<ReviewResponse | undefined> {
    const { w, as } = inv;
    const type = mutating ? 'admit' : 'validating';
    const oldObject = await WebhookDispatcher.at(attrs, as, attrs.oldObject);
    if (w.matchConditions.length > 0) {
      // The conditions see the request and objects as the webhook would be sent them.
      const { request } = reviewFor(attrs, 'v1', '', as, object, oldObject) as { request: Obj };
      const { object: o, oldObject: old, uid: _uid, ...rest } = request;
      const outcome = await evaluateMatchConditions(w.matchConditions, rest, o, old, admissionAuthorizer(this.deps.authorizer, attrs));
      if ('error' in outcome) {
        if (w.failurePolicy === 'Ignore') return undefined;
        throw Errors.forbidden({ group: attrs.decl.group, resource: attrs.decl.plural }, attrs.name, outcome.error);
      }
      if (!outcome.matches) return undefined;
    }
    if (attrs.ctx.dryRun && w.sideEffects !== 'None' && w.sideEffects !== 'NoneOnDryRun') {
      throw Errors.badRequest(`admission webhook ${JSON.stringify(w.name)} does not support dry run`);
    }
    try {
      // The first version the webhook lists that this server speaks.
      const version = w.admissionReviewVersions.find((v) => (REVIEW_VERSIONS as readonly string[]).includes(v));
      if (!version) {
        throw new WebhookCallError(
          `webhook does not accept known AdmissionReview versions (${REVIEW_VERSIONS.join(', ')}), it accepts ${w.admissionReviewVersions.join(', ')}`,
        );
      }
      const uid = randomUUID();
      const target = await this.deps.target(w);
      const review = reviewFor(attrs, version, uid, as, object, oldObject);
      const body = await this.deps.post(target, review, w.timeoutSeconds);
      return checkResponse(body, version, uid, mutating);
    } catch (e) {
      if (!(e instanceof WebhookCallError)) throw e;
      const message = `failed calling webhook ${JSON.stringify(w.name)}: ${e.message}`;
      if (w.failurePolicy === 'Ignore') {
        this.deps.ignored(w, message);
        return undefined;
      }
      this.deps.rejected({ name: w.name, operation: attrs.operation, type, error_type: 'calling_webhook_error', rejection_code: '0' });
      throw Errors.internal(message);
    }
  }

  private refuse(w: Webhook, attrs: AdmissionAttributes, res: ReviewResponse, mutating: boolean): never {
    const err = refusal(w.name, res.status);
    const code = typeof res.status?.code === 'number' ? Math.min(res.status.code, 600) : 0;
    this.deps.rejected({
      name: w.name,
      operation: attrs.operation,
      type: mutating ? 'admit' : 'validating',
      error_type: 'no_error',
      rejection_code: String(code),
    });
    throw err;
  }

  /**
   * The mutating webhooks: changes `attrs.object` in place. For DELETE (no object) they are
   * called to allow or refuse only.
   */
  async admit(attrs: AdmissionAttributes): Promise<void> {
    const hooks = await this.matching(true, attrs);
    if (hooks.length === 0) return;
    const after = new Map<Invocation, unknown>();
    const run = async (inv: Invocation, round: number, index: number): Promise<void> => {
      const { w, as } = inv;
      const res = await this.call(inv, attrs, await WebhookDispatcher.at(attrs, as, attrs.object), true);
      if (!res) return;
      attrs.ctx.warnings.push(...res.warnings);
      WebhookDispatcher.auditAnnotations(attrs, w, res);
      if (!res.allowed) this.refuse(w, attrs, res, true);
      const before = attrs.ctx.audit && res.patch?.length ? structuredClone(attrs.object) : undefined;
      if (res.patch && res.patch.length && attrs.object) await this.applyPatch(inv, attrs, res.patch);
      const audit = attrs.ctx.audit;
      if (audit) {
        // kube's mutation annotations: every call at Metadata, the patch of one that changed the object at Request.
        const mutated = before !== undefined && !isDeepStrictEqual(before, attrs.object);
        const key = `round_${round}_index_${index}`;
        audit.annotate(`mutation.webhook.admission.k8s.io/${key}`, JSON.stringify({ configuration: w.configuration, webhook: w.name, mutated }), 'Metadata');
        if (mutated)
          audit.annotate(
            `patch.webhook.admission.k8s.io/${key}`,
            JSON.stringify({ configuration: w.configuration, webhook: w.name, patch: res.patch, patchType: 'JSONPatch' }),
            'Request',
          );
      }
      if (w.reinvocationPolicy === 'IfNeeded') after.set(inv, structuredClone(attrs.object));
    };
    for (const [i, inv] of hooks.entries()) await run(inv, 0, i);
    // Reinvocation: a webhook asking for it is called once more if a later one changed the object.
    for (const [inv, seen] of [...after]) if (!isDeepStrictEqual(seen, attrs.object)) await run(inv, 1, hooks.indexOf(inv));
  }

  /** A webhook's own audit annotations, under `<webhook name>/<key>`. */
  private static auditAnnotations(attrs: AdmissionAttributes, w: Webhook, res: ReviewResponse): void {
    if (!attrs.ctx.audit || !res.auditAnnotations) return;
    for (const [k, v] of Object.entries(res.auditAnnotations)) attrs.ctx.audit.annotate(`${w.name}/${k}`, v, 'Metadata');
  }

  /** The validating webhooks, all at once; the first refusal or failure in calling order wins. */
  async validate(attrs: AdmissionAttributes): Promise<void> {
    const hooks = await this.matching(false, attrs);
    if (hooks.length === 0) return;
    const results = await Promise.allSettled(hooks.map(async (inv) => this.call(inv, attrs, await WebhookDispatcher.at(attrs, inv.as, attrs.object), false)));
    let first: unknown;
    results.forEach((r, i) => {
      if (first !== undefined) return;
      if (r.status === 'rejected') {
        first = r.reason;
        return;
      }
      const res = r.value;
      if (!res) return;
      attrs.ctx.warnings.push(...res.warnings);
      WebhookDispatcher.auditAnnotations(attrs, hooks[i]!.w, res);
      if (!res.allowed) {
        try {
          this.refuse(hooks[i]!.w, attrs, res, false);
        } catch (e) {
          first = e;
        }
      }
    });
    if (first !== undefined) throw first;
  }

  /**
   * Applies a webhook's JSON patch to the request's object in place, at the version the webhook
   * was called with (converted back after); a patch that does not apply is 500.
   */
  private async applyPatch(inv: Invocation, attrs: AdmissionAttributes, ops: Operation[]): Promise<void> {
    const object = attrs.object!;
    const name = JSON.stringify(inv.w.name);
    const sent = (await WebhookDispatcher.at(attrs, inv.as, object))!;
    let patched: KubeObject;
    try {
      patched = fastJsonPatch.applyPatch(structuredClone(sent), ops, true, false).newDocument;
    } catch (e) {
      throw Errors.internal(`admission webhook ${name} returned a patch that does not apply: ${(e as Error).message}`);
    }
    const meta = (patched as Obj | null)?.metadata;
    if (!patched || typeof patched !== 'object' || Array.isArray(patched) || !meta || typeof meta !== 'object' || Array.isArray(meta)) {
      throw Errors.internal(`admission webhook ${name} returned a patch that does not leave an object with metadata`);
    }
    if (inv.as !== attrs.decl && attrs.decl.conversion) patched = await convertObject(attrs.decl.conversion, patched, attrs.decl.version);
    for (const k of Object.keys(object)) delete (object as Obj)[k];
    Object.assign(object, patched);
  }
}
