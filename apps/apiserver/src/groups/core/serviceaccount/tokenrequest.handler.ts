/**
 * `POST /api/v1/namespaces/{ns}/serviceaccounts/{name}/token`: a TokenRequest answered with a
 * bound service-account token (Kubernetes' serviceaccount TokenREST). Defaults and limits as
 * kube-apiserver's: audiences default to the API audiences; expirationSeconds defaults to 3600,
 * must be at least 600 and at most 2^32 (422 on spec.expirationSeconds), and is capped by
 * `--service-account-max-token-expiration`; a boundObjectRef names a Secret, or a Pod when Pods
 * are served (other kinds: 400), which must exist (404) with the uid given (409). A dry run
 * answers without a token, as kube's.
 */
import { formatMetaTime, Errors, type FieldError, type KubeObject } from '@app/apimachinery';
import type { BoundRef, BoundTokenRequest } from '@app/auth';
import type { RequestContext, SubresourceRestHandler } from '@app/registry';

const GROUP = 'authentication.k8s.io';
const MIN_SECONDS = 600;
const MAX_SECONDS = 2 ** 32;
const DEFAULT_SECONDS = 3600;

/** What the handler needs of the server; filled in at start by the core group's wiring. */
export interface TokenRequestDeps {
  /** The API audiences (default of spec.audiences). */
  audiences: readonly string[];
  /** `--service-account-max-token-expiration` in seconds; 0 = none. */
  maxExpirationSeconds: number;
  /** Reads an object of the core group by plural; throws the store's 404 when absent. */
  get(plural: 'serviceaccounts' | 'secrets' | 'pods', namespace: string, name: string): Promise<KubeObject>;
  /** Whether a Pod kind is served (then tokens may be bound to Pods). */
  podsServed(): boolean;
  sign(req: Omit<BoundTokenRequest, 'issuer'>): Promise<{ token: string; expiresAt: Date }>;
}

/** The wiring point (kinds are data, collected before providers exist). */
export class TokenRequestPorts {
  deps?: TokenRequestDeps;
}

/** The integer value of an int64 field (JSON number, or the string protobuf may give); undefined when not one. */
function int64(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  if (typeof v === 'string' && /^-?\d+$/.test(v)) return Number(v);
  if (typeof v === 'bigint') return Number(v);
  return undefined;
}

/** The spec of a TokenRequest body, checked and defaulted (pure). */
export function tokenRequestSpec(
  obj: KubeObject,
  deps: Pick<TokenRequestDeps, 'audiences' | 'maxExpirationSeconds'>,
): { audiences: string[]; expirationSeconds: number; boundObjectRef?: { kind: string; apiVersion?: string; name: string; uid?: string } } {
  if (obj.kind !== undefined && obj.kind !== 'TokenRequest') throw Errors.badRequest(`expected a TokenRequest, got ${String(obj.kind)}`);
  if (obj.apiVersion !== undefined && obj.apiVersion !== `${GROUP}/v1`)
    throw Errors.badRequest(`expected ${GROUP}/v1 TokenRequest, got ${String(obj.apiVersion)}`);
  const spec = ((obj as { spec?: unknown }).spec ?? {}) as Record<string, unknown>;
  if (typeof spec !== 'object' || Array.isArray(spec)) throw Errors.badRequest('TokenRequest spec must be an object');
  const errs: FieldError[] = [];
  let audiences: string[] = [...deps.audiences];
  if (spec.audiences !== undefined && spec.audiences !== null) {
    if (!Array.isArray(spec.audiences) || spec.audiences.some((a) => typeof a !== 'string'))
      throw Errors.badRequest('TokenRequest spec.audiences must be a list of strings');
    if (spec.audiences.length > 0) audiences = spec.audiences as string[];
  }
  let expirationSeconds = DEFAULT_SECONDS;
  if (spec.expirationSeconds !== undefined && spec.expirationSeconds !== null) {
    const v = int64(spec.expirationSeconds);
    if (v === undefined) throw Errors.badRequest('TokenRequest spec.expirationSeconds must be an integer');
    expirationSeconds = v;
  }
  if (expirationSeconds < MIN_SECONDS)
    errs.push({
      type: 'FieldValueInvalid',
      field: 'spec.expirationSeconds',
      value: expirationSeconds,
      detail: 'may not specify a duration less than 10 minutes',
    });
  if (expirationSeconds > MAX_SECONDS)
    errs.push({
      type: 'FieldValueTooLong',
      field: 'spec.expirationSeconds',
      value: expirationSeconds,
      detail: 'may not specify a duration larger than 2^32 seconds',
    });
  if (errs.length > 0) throw Errors.invalid(GROUP, 'TokenRequest', '', errs);
  if (deps.maxExpirationSeconds > 0 && expirationSeconds > deps.maxExpirationSeconds) expirationSeconds = deps.maxExpirationSeconds;
  const ref = spec.boundObjectRef as Record<string, unknown> | undefined | null;
  if (ref === undefined || ref === null) return { audiences, expirationSeconds };
  if (typeof ref !== 'object' || typeof ref.kind !== 'string' || typeof ref.name !== 'string' || ref.name === '')
    throw Errors.badRequest('TokenRequest spec.boundObjectRef needs a kind and a name');
  return {
    audiences,
    expirationSeconds,
    boundObjectRef: {
      kind: ref.kind,
      apiVersion: typeof ref.apiVersion === 'string' ? ref.apiVersion : undefined,
      name: ref.name,
      uid: typeof ref.uid === 'string' && ref.uid !== '' ? ref.uid : undefined,
    },
  };
}

/** The REST handler of `serviceaccounts/token`. */
export function tokenRequestHandler(ports: TokenRequestPorts): SubresourceRestHandler {
  return {
    create: async (ns: string, name: string, obj: KubeObject, ctx: RequestContext): Promise<KubeObject> => {
      const deps = ports.deps;
      if (!deps) throw Errors.internal('TokenRequest: not wired');
      const spec = tokenRequestSpec(obj, deps);
      const sa = await deps.get('serviceaccounts', ns, name);
      const serviceAccount: BoundRef = { name, uid: sa.metadata?.uid ?? '' };
      let secret: BoundRef | undefined;
      let pod: BoundRef | undefined;
      const ref = spec.boundObjectRef;
      if (ref) {
        const group = (ref.apiVersion ?? 'v1').includes('/') ? ref.apiVersion!.split('/')[0] : '';
        const supported = deps.podsServed() ? ['Pod', 'Secret'] : ['Secret'];
        if (group !== '' || !supported.includes(ref.kind)) {
          throw Errors.badRequest(
            `cannot bind token to object of type ${ref.apiVersion ?? 'v1'}, Kind=${ref.kind}: supported kinds are ${supported.join(', ')}`,
          );
        }
        const plural = ref.kind === 'Pod' ? 'pods' : 'secrets';
        const target = await deps.get(plural, ns, ref.name);
        const uid = target.metadata?.uid ?? '';
        if (ref.uid !== undefined && ref.uid !== uid) {
          throw Errors.conflict(
            { group: '', resource: plural },
            ref.name,
            `the UID in the bound object reference (${ref.uid}) does not match the UID in record (${uid}). The object might have been deleted and then recreated`,
          );
        }
        ref.uid = uid;
        if (ref.kind === 'Pod') pod = { name: ref.name, uid };
        else secret = { name: ref.name, uid };
      }
      const out: KubeObject = {
        apiVersion: `${GROUP}/v1`,
        kind: 'TokenRequest',
        metadata: { name, namespace: ns, creationTimestamp: null } as KubeObject['metadata'],
        spec: {
          audiences: spec.audiences,
          expirationSeconds: spec.expirationSeconds,
          boundObjectRef: ref ? { ...ref, apiVersion: ref.apiVersion ?? 'v1' } : null,
        },
        status: { token: '', expirationTimestamp: null },
      };
      if (ctx.dryRun) return out;
      const now = ctx.now();
      const signed = await deps.sign({ audiences: spec.audiences, expirationSeconds: spec.expirationSeconds, namespace: ns, serviceAccount, secret, pod, now });
      out.status = { token: signed.token, expirationTimestamp: formatMetaTime(signed.expiresAt) };
      return out;
    },
  };
}
