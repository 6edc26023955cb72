/**
 * The authorization modes that need no policy (`--authorization-mode` AlwaysAllow and
 * AlwaysDeny) and the union that evaluates the configured modes in order: the first Allow or
 * Deny decides; when every mode has no opinion the request is denied.
 */
import type { AbacAuthorizer } from './abac.authorizer.js';
import { NodeAuthorizer, type NodeGraph } from './node.authorizer.js';
import { PRIVILEGED_GROUP } from '@app/auth';
import type { AuthorizationAttributes, AuthorizationDecision, Authorizer } from './authorizer.port.js';
import { RBACAuthorizer } from './rbac.authorizer.js';
import type { RbacPolicy } from './rbac.policy.js';

const ALLOW: AuthorizationDecision = Object.freeze({ decision: 'Allow' });
const NO_OPINION: AuthorizationDecision = Object.freeze({ decision: 'NoOpinion' });

/** Allows every request. */
export class AlwaysAllowAuthorizer implements Authorizer {
  authorize(): AuthorizationDecision {
    return ALLOW;
  }
}

/** Denies every request. */
export class AlwaysDenyAuthorizer implements Authorizer {
  authorize(): AuthorizationDecision {
    return { decision: 'Deny', reason: 'Everything is forbidden.' };
  }
}

/**
 * Allows members of `system:masters` everything, whatever the modes say: kube-apiserver puts
 * this authorizer in front of the configured modes, which is what makes the group all-powerful.
 */
export class PrivilegedGroupAuthorizer implements Authorizer {
  authorize(attrs: AuthorizationAttributes): AuthorizationDecision {
    return attrs.user.groups.includes(PRIVILEGED_GROUP) ? ALLOW : NO_OPINION;
  }
}

function isPromise<T>(v: T | Promise<T>): v is Promise<T> {
  return typeof (v as { then?: unknown }).then === 'function';
}

interface Unopinionated {
  reasons: string[];
  errors: string[];
}

function noted(seen: Unopinionated | undefined, d: AuthorizationDecision): Unopinionated | undefined {
  if (!d.reason && !d.error) return seen;
  const out = seen ?? { reasons: [], errors: [] };
  if (d.reason) out.reasons.push(d.reason);
  if (d.error) out.errors.push(d.error);
  return out;
}

/**
 * Evaluates `modes` in order (Kubernetes' union authorizer). Answers synchronously while every
 * mode does (the built-in ones all do), so a request's decision costs no promise and no await.
 */
export class AuthorizerUnion implements Authorizer {
  constructor(private readonly modes: readonly Authorizer[]) {}

  authorize(attrs: AuthorizationAttributes): AuthorizationDecision | Promise<AuthorizationDecision> {
    return this.from(0, attrs, undefined);
  }

  /** The reasons and errors of the modes without an opinion so far. */
  private from(start: number, attrs: AuthorizationAttributes, seen: Unopinionated | undefined): AuthorizationDecision | Promise<AuthorizationDecision> {
    for (let i = start; i < this.modes.length; i++) {
      const d = this.modes[i]!.authorize(attrs);
      if (isPromise(d)) return d.then((x) => this.after(x, i, attrs, seen));
      if (d.decision !== 'NoOpinion') return d;
      seen = noted(seen, d);
    }
    if (!seen) return NO_OPINION;
    return {
      decision: 'NoOpinion',
      ...(seen.reasons.length > 0 ? { reason: seen.reasons.join('\n') } : {}),
      ...(seen.errors.length > 0 ? { error: seen.errors.join('; ') } : {}),
    };
  }

  private after(
    d: AuthorizationDecision,
    i: number,
    attrs: AuthorizationAttributes,
    seen: Unopinionated | undefined,
  ): AuthorizationDecision | Promise<AuthorizationDecision> {
    if (d.decision !== 'NoOpinion') return d;
    return this.from(i + 1, attrs, noted(seen, d));
  }
}

/** What modes with a policy read: the RBAC policy the server keeps current from storage, the Webhook mode's client. */
export interface AuthorizationModeContext {
  rbac?: RbacPolicy;
  webhook?: Authorizer;
  /** The Node mode's graph: which objects the pods bound to each node need. */
  nodeGraph?: NodeGraph;
  /** The ABAC mode's policies, loaded from --authorization-policy-file. */
  abac?: AbacAuthorizer;
}

/** The authorization modes this build can run, by their `--authorization-mode` names. */
export const AUTHORIZATION_MODES: Record<string, (ctx: AuthorizationModeContext) => Authorizer> = {
  AlwaysAllow: () => new AlwaysAllowAuthorizer(),
  AlwaysDeny: () => new AlwaysDenyAuthorizer(),
  ABAC: (ctx) => {
    if (!ctx.abac) throw new Error("--authorization-mode: ABAC's authorization policy file not passed");
    return ctx.abac;
  },
  RBAC: (ctx) => {
    if (!ctx.rbac) throw new Error('--authorization-mode: RBAC needs the RBAC policy of the server');
    return new RBACAuthorizer(ctx.rbac);
  },
  Webhook: (ctx) => {
    if (!ctx.webhook) throw new Error('--authorization-mode: Webhook needs --authorization-webhook-config-file');
    return ctx.webhook;
  },
  Node: (ctx) => {
    if (!ctx.nodeGraph) throw new Error('--authorization-mode: Node needs the node graph of the server');
    return new NodeAuthorizer(ctx.nodeGraph);
  },
};

/**
 * The authorizer for an `--authorization-mode` list: system:masters first, then the modes in
 * order. Throws on a mode this build does not have.
 */
export function authorizerForModes(modes: readonly string[], ctx: AuthorizationModeContext = {}): Authorizer {
  const list = modes.map((name) => {
    const make = AUTHORIZATION_MODES[name];
    if (!make)
      throw new Error(`--authorization-mode: unsupported mode ${JSON.stringify(name)}; this build supports ${Object.keys(AUTHORIZATION_MODES).join(', ')}`);
    return make(ctx);
  });
  return new AuthorizerUnion([new PrivilegedGroupAuthorizer(), ...list]);
}
