/**
 * The detached JWS the bootstrap signer writes into `cluster-info` (conventions.md "ConfigMap
 * signing"; Kubernetes' cluster-bootstrap token/jws ComputeDetachedSignature): the JWS compact
 * serialization (RFC 7515 section 7.1) of the `kubeconfig` value with protected header
 * `{"alg":"HS256","kid":"<token-id>"}`, keyed with the full token `<id>.<secret>`, with the
 * payload part removed (RFC 7515 appendix F): `<header>..<signature>`. A client verifies it by
 * putting the base64url of the content back between the dots.
 */
import { CompactSign } from 'jose';

/** Key prefix of the signatures in cluster-info's data: `jws-kubeconfig-<token-id>`. */
export const JWS_SIGNATURE_KEY_PREFIX = 'jws-kubeconfig-';
/** The cluster-info key holding the signed kubeconfig. */
export const CLUSTER_INFO_KUBECONFIG_KEY = 'kubeconfig';

/** The detached HS256 JWS of `content` keyed with the token `<id>.<secret>`. */
export async function detachedSignature(content: string, tokenId: string, tokenSecret: string): Promise<string> {
  const enc = new TextEncoder();
  const jws = await new CompactSign(enc.encode(content)).setProtectedHeader({ alg: 'HS256', kid: tokenId }).sign(enc.encode(`${tokenId}.${tokenSecret}`));
  const [header, , signature] = jws.split('.');
  return `${header}..${signature}`;
}
