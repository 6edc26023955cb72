/**
 * The built-in signers of the certificates API and the rules each applies to a request before
 * it signs (resources doc, CertificateSigningRequest signer table; Kubernetes'
 * pkg/apis/certificates helpers.go and the csrsigning controller). Pure functions over a parsed
 * request and the CSR's usages, shared by the signing controller and its specs.
 */
import type { ParsedCertificateRequest } from '@app/pki';

/** Client certificates for the API server; never approved automatically. */
export const KUBE_APISERVER_CLIENT = 'kubernetes.io/kube-apiserver-client';
/** Client certificates of node agents (kubelets); may be approved automatically. */
export const KUBE_APISERVER_CLIENT_KUBELET = 'kubernetes.io/kube-apiserver-client-kubelet';
/** Serving certificates of node agents; never approved automatically. */
export const KUBELET_SERVING = 'kubernetes.io/kubelet-serving';
/** The pre-v1 signer; served, but not accepted as a signerName by certificates.k8s.io/v1. */
export const LEGACY_UNKNOWN = 'kubernetes.io/legacy-unknown';

/** The four signers the signing controller serves. */
export const BUILT_IN_SIGNERS: readonly string[] = [KUBE_APISERVER_CLIENT, KUBE_APISERVER_CLIENT_KUBELET, KUBELET_SERVING, LEGACY_UNKNOWN];

/** The organization of node agents' certificates. */
export const NODES_GROUP = 'system:nodes';
/** The common name prefix of node agents' certificates (`system:node:<node name>`). */
export const NODE_USER_PREFIX = 'system:node:';

const sameSet = (a: readonly string[], b: readonly string[]): boolean => {
  const sa = new Set(a);
  const sb = new Set(b);
  return sa.size === sb.size && [...sa].every((x) => sb.has(x));
};

/** Kubernetes' kubeletClientRequiredUsages (and its variant without key encipherment for non-RSA keys). */
const KUBELET_CLIENT_USAGES = ['digital signature', 'key encipherment', 'client auth'];
const KUBELET_CLIENT_USAGES_NO_RSA = ['digital signature', 'client auth'];
/** Kubernetes' kubeletServingRequiredUsages (and its non-RSA variant). */
const KUBELET_SERVING_USAGES = ['digital signature', 'key encipherment', 'server auth'];
const KUBELET_SERVING_USAGES_NO_RSA = ['digital signature', 'server auth'];

/** The node identity rules both node-agent signers share. */
function nodeSubjectError(req: ParsedCertificateRequest): string | undefined {
  if (req.organizations.length !== 1 || req.organizations[0] !== NODES_GROUP) return 'subject organization is not system:nodes';
  if (!req.commonName.startsWith(NODE_USER_PREFIX)) return 'subject common name does not begin with system:node:';
  return undefined;
}

/**
 * ValidateKubeletClientCSR: organization exactly system:nodes, common name system:node:<name>,
 * no subject alternative names, usages exactly digital signature, key encipherment (optional
 * for non-RSA keys) and client auth.
 */
export function kubeletClientError(req: ParsedCertificateRequest, usages: readonly string[]): string | undefined {
  const subject = nodeSubjectError(req);
  if (subject) return subject;
  if (req.dnsNames.length > 0) return 'DNS subjectAltNames are not allowed';
  if (req.emailAddresses.length > 0) return 'Email subjectAltNames are not allowed';
  if (req.ipAddresses.length > 0) return 'IP subjectAltNames are not allowed';
  if (req.uris.length > 0) return 'URI subjectAltNames are not allowed';
  if (!sameSet(usages, KUBELET_CLIENT_USAGES) && !sameSet(usages, KUBELET_CLIENT_USAGES_NO_RSA)) {
    return `usages did not match [${[...KUBELET_CLIENT_USAGES].sort().join(' ')}]`;
  }
  return undefined;
}

/**
 * ValidateKubeletServingCSR: the node identity, at least one DNS or IP name, no e-mail or URI
 * names, usages exactly digital signature, key encipherment (optional for non-RSA keys) and
 * server auth.
 */
export function kubeletServingError(req: ParsedCertificateRequest, usages: readonly string[]): string | undefined {
  const subject = nodeSubjectError(req);
  if (subject) return subject;
  if (req.dnsNames.length === 0 && req.ipAddresses.length === 0) return 'DNS or IP subjectAltName is required';
  if (req.emailAddresses.length > 0) return 'Email subjectAltNames are not allowed';
  if (req.uris.length > 0) return 'URI subjectAltNames are not allowed';
  if (!sameSet(usages, KUBELET_SERVING_USAGES) && !sameSet(usages, KUBELET_SERVING_USAGES_NO_RSA)) {
    return `usages did not match [${[...KUBELET_SERVING_USAGES].sort().join(' ')}]`;
  }
  return undefined;
}

/** kube-apiserver-client: any subject; usages include client auth and stay within digital signature, key encipherment, client auth. */
export function apiserverClientError(usages: readonly string[]): string | undefined {
  for (const u of usages) {
    if (u !== 'digital signature' && u !== 'key encipherment' && u !== 'client auth') return `invalid usage for client certificate: ${u}`;
  }
  if (!usages.includes('client auth')) return 'invalid usage for client certificate: missing client auth';
  return undefined;
}

/**
 * Why `signerName` refuses to sign this request, or undefined when it signs it. Every built-in
 * signer refuses a request for a CA certificate. Undefined for a signer not built in as well:
 * the caller checks {@link BUILT_IN_SIGNERS} first.
 */
export function signerRuleError(signerName: string, req: ParsedCertificateRequest, usages: readonly string[]): string | undefined {
  if (req.requestsCa) return 'the request asks for a CA certificate (basicConstraints CA:TRUE), which the signer does not issue';
  switch (signerName) {
    case KUBE_APISERVER_CLIENT:
      return apiserverClientError(usages);
    case KUBE_APISERVER_CLIENT_KUBELET:
      return kubeletClientError(req, usages);
    case KUBELET_SERVING:
      return kubeletServingError(req, usages);
    default:
      return undefined;
  }
}

/**
 * The certificate lifetime in ms (Kubernetes' csrsigning duration()): the configured signing
 * duration, or the request's expirationSeconds when that is shorter, never below 600 s.
 */
export function signingDurationMs(clusterSigningDurationMs: number, expirationSeconds: number | undefined): number {
  if (expirationSeconds === undefined || expirationSeconds === null) return clusterSigningDurationMs;
  const requested = Math.max(expirationSeconds, 600) * 1000;
  return Math.min(requested, clusterSigningDurationMs);
}
