/**
 * The ValidatingAdmissionPolicy admission plugin (on by default, as in kube-apiserver 1.30+;
 * between the mutating and the validating webhooks). It keeps watch-fed copies of the stored
 * policies and bindings on every node, compiled (policy.model.ts), and for each request that is
 * not itself an admission configuration checks every binding (in name order) whose policy
 * exists and whose policy's matchConstraints and own matchResources admit the request: its
 * parameters are read (paramRef by name, or every object its selector matches; none found is
 * Allow or Deny as the binding says), the policy's match conditions, validations and audit
 * annotations are evaluated, and each failure acts as the binding's validationActions say:
 * Deny refuses the request (the first refusal, with the validation's reason and its code),
 * Warn adds a `Warning` header, Audit adds a `validation.policy.admission.k8s.io/validation_failure`
 * audit annotation. Under matchPolicy Equivalent (the default) a request at a version the rules
 * do not name is checked at another served version of its resource that they do, its objects
 * converted to it (as the webhooks are called).
 */
import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { AUTHORIZER, type Authorizer } from '@app/authz';
import { StatusError, type KubeObject, type StatusReason } from '@app/apimachinery';
import { collectionPrefix, convertObject, KindRegistry, objectKey, type Admission, type AdmissionAttributes, type KindDeclaration } from '@app/registry';
import type { Storage } from '@app/storage';
import { WatchedCollection } from '../../pipeline/watched-collection.js';
import { NAMESPACE_NAME_LABEL } from '../../groups/core/namespace/namespace.strategy.js';
import { STORAGE } from '../../tokens.js';
import { admissionAuthorizer } from '../../cel/cel.authz.js';
import { AdmissionPlugin } from '../admission.plugin.js';
import { EXEMPT, matchRequestOf, reviewFor } from '../webhook/webhook.dispatcher.js';
import {
  namespaceSelectorMatches,
  needsNamespaceLabels,
  objectSelectorMatches,
  ruleMatches,
  type MatchRequest,
  type Webhook,
} from '../webhook/webhook.matcher.js';
import { bindingOf, evaluatePolicy, policyOf, reasonCode, resourceNamesMatch, type Binding, type MatchSpec, type Policy } from './policy.model.js';

type Obj = Record<string, unknown>;
const GROUP = 'admissionregistration.k8s.io';
const NAMESPACES = { group: '', plural: 'namespaces', namespaced: false };
/** Longest wait of a request for the first list of policies and bindings. */
const READY_WAIT_MS = 10_000;

/**
 * Whether a match spec admits the request (rules with names, excludes, selectors). A binding's
 * matchResources without resourceRules leaves the resources to the policy's constraints.
 */
function specMatches(spec: MatchSpec, req: MatchRequest, name: string, namespaceLabels: Record<string, string> | undefined, binding = false): boolean {
  if (!(binding && spec.rules.length === 0) && !spec.rules.some((r) => ruleMatches(r, req) && resourceNamesMatch(r, name))) return false;
  if (spec.excludes.some((r) => ruleMatches(r, req) && resourceNamesMatch(r, name))) return false;
  const asHook = spec as unknown as Webhook;
  return objectSelectorMatches(asHook, req) && namespaceSelectorMatches(asHook, req, namespaceLabels);
}

/** The stored policies and bindings, watched and compiled. */
@Injectable()
export class AdmissionPolicies implements OnApplicationBootstrap, OnApplicationShutdown {
  readonly policies: WatchedCollection<Policy>;
  readonly bindings: WatchedCollection<Binding>;
  private sortedBindings: Binding[] | undefined;
  private started = false;

  constructor(@Inject(STORAGE) readonly storage: Storage) {
    this.policies = new WatchedCollection<Policy>(
      storage,
      collectionPrefix({ group: GROUP, plural: 'validatingadmissionpolicies', namespaced: false }, ''),
      (o) => policyOf(o as unknown as Obj),
      'validatingadmissionpolicies for admission',
    );
    this.bindings = new WatchedCollection<Binding>(
      storage,
      collectionPrefix({ group: GROUP, plural: 'validatingadmissionpolicybindings', namespaced: false }, ''),
      (o) => bindingOf(o as unknown as Obj),
      'validatingadmissionpolicybindings for admission',
    );
    this.bindings.onChange(() => (this.sortedBindings = undefined));
  }

  onApplicationBootstrap(): void {
    this.start();
  }

  private start(): void {
    if (this.started) return;
    this.started = true;
    this.policies.start();
    this.bindings.start();
  }

  onApplicationShutdown(): void {
    this.policies.stop();
    this.bindings.stop();
  }

  /** Waits up to READY_WAIT_MS for the first lists; a request before them is refused. */
  async ready(): Promise<boolean> {
    if (this.policies.isSynced() && this.bindings.isSynced()) return true;
    this.start();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all([this.policies.whenSynced(), this.bindings.whenSynced()]),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, READY_WAIT_MS))),
    ]);
    clearTimeout(timer);
    return this.policies.isSynced() && this.bindings.isSynced();
  }

  /** The bindings in name order. */
  allBindings(): readonly Binding[] {
    this.sortedBindings ??= [...this.bindings.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return this.sortedBindings;
  }
}

/** ValidatingAdmissionPolicy. */
@AdmissionPlugin({ name: 'ValidatingAdmissionPolicy', order: 3050 })
@Injectable()
export class ValidatingAdmissionPolicyPlugin implements Admission {
  constructor(
    private readonly policies: AdmissionPolicies,
    private readonly registry: KindRegistry,
    @Inject(AUTHORIZER) private readonly authorizer: Authorizer,
  ) {}

  admit(): Promise<void> {
    return Promise.resolve();
  }

  async validate(attrs: AdmissionAttributes): Promise<void> {
    const { decl } = attrs;
    if (EXEMPT.has(`${decl.group}/${decl.plural}`)) return;
    if (!(await this.policies.ready())) throw forbidden(attrs, 'not yet ready to handle request');
    const bindings = this.policies.allBindings();
    if (bindings.length === 0) return;
    const req = matchRequestOf(attrs);
    const name = attrs.name;
    let nsLoaded = false;
    let namespace: KubeObject | undefined;
    const namespaceObject = async (): Promise<KubeObject | undefined> => {
      if (!nsLoaded && attrs.namespace) namespace = await this.policies.storage.get(objectKey(NAMESPACES, '', attrs.namespace), { mode: 'Any' });
      nsLoaded = true;
      return namespace;
    };
    const labels = async () => {
      const ns = await namespaceObject();
      return ns ? { ...((ns.metadata.labels as Record<string, string> | undefined) ?? {}), [NAMESPACE_NAME_LABEL]: ns.metadata.name ?? '' } : undefined;
    };
    const requests = new Map<string, Obj>();
    const authorizer = admissionAuthorizer(this.authorizer, attrs);
    const denials: StatusError[] = [];
    for (const binding of bindings) {
      const policy = this.policies.policies.get('', binding.policyName);
      if (!policy) continue;
      const needsLabels = (s: MatchSpec) => needsNamespaceLabels(s as unknown as Webhook, req);
      const nsLabels = needsLabels(policy.match) || (binding.match && needsLabels(binding.match)) ? await labels() : undefined;
      // The version the policy sees: the request's when its rules name it, else (matchPolicy
      // Equivalent) the first other served version of the resource that they name.
      const matchAt = (spec: MatchSpec, ofBinding = false): KindDeclaration | undefined => {
        if (specMatches(spec, req, name, nsLabels, ofBinding)) return decl;
        if (spec.matchPolicy !== 'Equivalent' || attrs.kind) return undefined;
        return this.registry.otherVersions(decl).find((d) => specMatches(spec, matchRequestOf(attrs, d.version), name, nsLabels, ofBinding));
      };
      const as = matchAt(policy.match);
      if (!as) continue;
      if (binding.match && !matchAt(binding.match, true)) continue;
      const at = async (o: KubeObject | undefined) => (o && as !== decl && decl.conversion ? convertObject(decl.conversion, o, as.version) : o);
      let request = requests.get(as.version);
      if (!request) {
        const { object: _o, oldObject: _old, uid: _uid, ...rest } = (reviewFor(attrs, 'v1', '', as, attrs.object, attrs.oldObject) as { request: Obj }).request;
        request = rest;
        requests.set(as.version, rest);
      }
      const deny = (message: string, reason = 'Invalid') => {
        const full = `ValidatingAdmissionPolicy '${policy.name}' with binding '${binding.name}' denied request: ${message}`;
        denials.push(refusal(attrs, full, reason));
      };
      let params: Array<KubeObject | null>;
      try {
        params = await this.params(policy, binding, attrs);
      } catch (e) {
        if (policy.failurePolicy === 'Fail') deny(`failed to configure binding: ${(e as Error).message}`);
        continue;
      }
      if (params.length === 0) {
        if (binding.paramRef?.notFound === 'Deny') deny('failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction');
        continue;
      }
      const nsObject = (await namespaceObject()) ?? null;
      const object = (await at(attrs.object)) ?? null;
      const oldObject = (await at(attrs.oldObject)) ?? null;
      for (const p of params) {
        const outcome = await evaluatePolicy(policy, {
          object,
          oldObject,
          request,
          params: p,
          namespaceObject: nsObject,
          authorizer,
        });
        if (!outcome.matched) continue;
        for (const [k, v] of Object.entries(outcome.annotations)) attrs.ctx.audit?.annotate(k, v, 'Metadata');
        for (const f of outcome.failures) {
          if (binding.actions.includes('Deny')) deny(f.message, f.reason);
          if (binding.actions.includes('Warn'))
            attrs.ctx.warnings.push(`Validation failed for ValidatingAdmissionPolicy '${policy.name}' with binding '${binding.name}': ${f.message}`);
          if (binding.actions.includes('Audit'))
            attrs.ctx.audit?.annotate(
              'validation.policy.admission.k8s.io/validation_failure',
              JSON.stringify([
                { message: f.message, policy: policy.name, binding: binding.name, expressionIndex: f.index, validationActions: binding.actions },
              ]),
              'Metadata',
            );
        }
      }
    }
    if (denials.length) throw denials[0]!;
  }

  /** The parameter objects of a binding ([null] for a policy without paramKind). */
  private async params(policy: Policy, binding: Binding, attrs: AdmissionAttributes): Promise<Array<KubeObject | null>> {
    if (!policy.paramKind) return [null];
    const ref = binding.paramRef;
    if (!ref) throw new Error('no paramRef in binding for a policy with paramKind');
    const [group, version] = policy.paramKind.apiVersion.includes('/') ? policy.paramKind.apiVersion.split('/') : ['', policy.paramKind.apiVersion];
    const decl = this.registry.all().find((d) => d.group === group && d.version === version && d.kind === policy.paramKind!.kind);
    if (!decl) throw new Error(`paramKind ${policy.paramKind.apiVersion}, Kind=${policy.paramKind.kind} is not served`);
    const ns = decl.namespaced ? (ref.namespace ?? attrs.namespace) : '';
    if (decl.namespaced && !ns) throw new Error('cannot use a namespaced paramRef in a policy binding that matches a cluster-scoped resource');
    const storage = this.policies.storage;
    const at = async (o: KubeObject) =>
      decl.conversion && o.apiVersion !== `${group ? `${group}/` : ''}${version}` ? convertObject(decl.conversion, o, version!) : o;
    if (ref.name) {
      const o = await storage.get(objectKey(decl, ns, ref.name), { mode: 'Any' });
      return o ? [await at(o)] : [];
    }
    const sel = ref.selector;
    const listed = await storage.list(collectionPrefix(decl as KindDeclaration, ns), {
      consistency: { mode: 'Any' },
      predicate: (o) => !sel || sel.matches((o.metadata.labels as Record<string, string> | undefined) ?? {}),
    });
    return Promise.all(listed.items.map(at));
  }
}

function forbidden(attrs: AdmissionAttributes, detail: string): StatusError {
  return refusal(attrs, detail, 'Forbidden');
}

/** kube's admission.NewForbidden with the decision's reason and its code, the message as a cause. */
function refusal(attrs: AdmissionAttributes, message: string, reason: string): StatusError {
  const { decl } = attrs;
  const resource = decl.group ? `${decl.plural}.${decl.group}` : decl.plural;
  const what = attrs.name ? `${resource} "${attrs.name}"` : resource;
  return new StatusError(reasonCode(reason), reason as StatusReason, `${what} is forbidden: ${message}`, {
    ...(attrs.name ? { name: attrs.name } : {}),
    ...(decl.group ? { group: decl.group } : {}),
    kind: decl.plural,
    causes: [{ message }],
  });
}
