/**
 * The decisions of the CSR controllers (kube-controller-manager's csrapproving, csrsigning and
 * csrcleaner), as pure functions of a CertificateSigningRequest, the clock and the signing
 * authority, so their rules are specified without a server (csr.logic.spec.ts).
 */
import type { KubeObject } from '@app/apimachinery';
import { CsrError, certificateNotAfter, parseCertificateRequest, signCertificateRequest, type SigningAuthority } from '@app/pki';
import {
  BUILT_IN_SIGNERS,
  KUBE_APISERVER_CLIENT_KUBELET,
  kubeletClientError,
  signerRuleError,
  signingDurationMs,
} from '../groups/certificates/certificatesigningrequest/certificatesigningrequest.signers.js';
import { conditionsOf, pemOf, trueCondition } from '../groups/certificates/certificatesigningrequest/certificatesigningrequest.strategy.js';

const asMap = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

/** Reason of the Failed condition the signer sets (Kubernetes' csrsigning). */
export const SIGNER_VALIDATION_FAILURE = 'SignerValidationFailure';

/** What the signing controller does with a request. */
export type SigningDecision = { action: 'skip' } | { action: 'fail'; message: string } | { action: 'issue'; certificatePem: string };

/** Whether the request has an issued certificate. */
export function isIssued(csr: KubeObject): boolean {
  const c = asMap(csr.status).certificate;
  return typeof c === 'string' && c !== '';
}

/**
 * The signing decision: only approved, not denied, not failed, not yet issued requests of a
 * built-in signer are handled; a request breaking its signer's rules fails with the rule's
 * message; the rest is issued for min(signing duration, expirationSeconds >= 600 s).
 */
export async function decideSigning(csr: KubeObject, ca: SigningAuthority, clusterSigningDurationMs: number, now: Date): Promise<SigningDecision> {
  const spec = asMap(csr.spec);
  const signer = String(spec.signerName ?? '');
  if (!BUILT_IN_SIGNERS.includes(signer)) return { action: 'skip' };
  if (!trueCondition(csr, 'Approved') || trueCondition(csr, 'Denied') || trueCondition(csr, 'Failed') || isIssued(csr)) return { action: 'skip' };
  const usages = Array.isArray(spec.usages) ? (spec.usages as string[]) : [];
  let req;
  try {
    req = await parseCertificateRequest(pemOf(spec.request));
  } catch (e) {
    if (e instanceof CsrError) return { action: 'fail', message: `unable to parse csr: ${e.message}` };
    throw e;
  }
  const broken = signerRuleError(signer, req, usages);
  if (broken !== undefined) return { action: 'fail', message: broken };
  const expiration = typeof spec.expirationSeconds === 'number' ? spec.expirationSeconds : undefined;
  const ttlMs = signingDurationMs(clusterSigningDurationMs, expiration);
  return { action: 'issue', certificatePem: await signCertificateRequest(req, ca, { now, ttlMs, usages }) };
}

/** The SubjectAccessReview subresource that lets a requestor's node client CSR be approved automatically. */
export type NodeClientPermission = 'selfnodeclient' | 'nodeclient';

/**
 * Which permission auto-approval needs for this request, or undefined when it is not a pending
 * node-agent client request that the approver handles (csrapproving's recognizers): a request
 * of the kube-apiserver-client-kubelet signer that passes the node client rules. A requestor
 * asking for its own name (CN equal to its user name) needs `create` on
 * `certificatesigningrequests/selfnodeclient`, anyone else on `.../nodeclient`.
 */
export async function nodeClientApprovalNeeds(csr: KubeObject): Promise<NodeClientPermission | undefined> {
  const spec = asMap(csr.spec);
  if (spec.signerName !== KUBE_APISERVER_CLIENT_KUBELET) return undefined;
  if (conditionsOf(csr).some((c) => c.type === 'Approved' || c.type === 'Denied')) return undefined;
  let req;
  try {
    req = await parseCertificateRequest(pemOf(spec.request));
  } catch {
    return undefined;
  }
  const usages = Array.isArray(spec.usages) ? (spec.usages as string[]) : [];
  if (kubeletClientError(req, usages) !== undefined) return undefined;
  return req.commonName === spec.username ? 'selfnodeclient' : 'nodeclient';
}

/** How long an Approved, Denied or Failed request is kept after that condition (csrcleaner: 1 hour). */
export const CSR_FINISHED_TTL_MS = 3_600_000;
/** How long a pending request is kept after its creation (csrcleaner: 24 hours). */
export const CSR_PENDING_TTL_MS = 24 * 3_600_000;

function conditionTime(csr: KubeObject, type: string): number {
  const c = trueCondition(csr, type);
  const t = Date.parse(c?.lastUpdateTime ?? c?.lastTransitionTime ?? String(csr.metadata.creationTimestamp ?? ''));
  return Number.isNaN(t) ? 0 : t;
}

/**
 * Why the cleaner deletes this request now, or undefined to keep it (conventions.md, CSR
 * lifecycle): the issued certificate has expired; Approved, Denied or Failed for an hour (since
 * the condition's last update); pending (none of those) for 24 hours since creation.
 */
export function cleanupReason(csr: KubeObject, now: Date): string | undefined {
  const t = now.getTime();
  if (isIssued(csr)) {
    const notAfter = certificateNotAfter(pemOf(asMap(csr.status).certificate));
    if (notAfter !== undefined && notAfter.getTime() < t) return 'the issued certificate has expired';
  }
  for (const type of ['Denied', 'Failed', 'Approved']) {
    if (trueCondition(csr, type)) return t - conditionTime(csr, type) >= CSR_FINISHED_TTL_MS ? `${type} for more than 1h` : undefined;
  }
  const created = Date.parse(String(csr.metadata.creationTimestamp ?? ''));
  if (!Number.isNaN(created) && t - created >= CSR_PENDING_TTL_MS) return 'pending for more than 24h';
  return undefined;
}
