/**
 * Verifying a TLS peer's certificate chain against a chosen CA bundle. The TLS layer verifies
 * client certificates against every CA the server trusts at once; a method that trusts only its
 * own CA (the front proxy's, or the cluster CA when the server trusts more than it) checks the
 * chain again here.
 */
import { X509Certificate } from 'node:crypto';
import type { DetailedPeerCertificate, TLSSocket } from 'node:tls';

/** OID of the clientAuth extended key usage. */
const CLIENT_AUTH_OID = '1.3.6.1.5.5.7.3.2';
/** Longest chain (intermediates) accepted. */
const MAX_DEPTH = 8;

/** The CA certificates of a PEM bundle; throws when there is none or one does not parse. */
export function parseCaBundle(pem: string): X509Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) throw new Error('no PEM certificate in the CA bundle');
  return blocks.map((b) => new X509Certificate(b));
}

function validAt(c: X509Certificate, now: number): boolean {
  return Date.parse(c.validFrom) <= now && now <= Date.parse(c.validTo);
}

function issues(issuer: X509Certificate, child: X509Certificate): boolean {
  try {
    return issuer.ca && child.checkIssued(issuer) && child.verify(issuer.publicKey);
  } catch {
    return false;
  }
}

/**
 * Whether `leaf`, with the intermediates the peer presented, chains to one of `roots`: each link
 * signed by its issuer, which is a CA, every certificate valid at `now`, and the leaf allowed for
 * client authentication (when it states extended key usages at all).
 */
export function chainVerifies(leaf: X509Certificate, intermediates: readonly X509Certificate[], roots: readonly X509Certificate[], now = Date.now()): boolean {
  if (!validAt(leaf, now)) return false;
  const usages = leaf.keyUsage as string[] | undefined;
  if (usages && usages.length > 0 && !usages.includes(CLIENT_AUTH_OID)) return false;
  let current = leaf;
  for (let depth = 0; depth <= MAX_DEPTH; depth++) {
    if (roots.some((r) => validAt(r, now) && issues(r, current))) return true;
    const next = intermediates.find((c) => c !== current && validAt(c, now) && issues(c, current));
    if (!next) return false;
    current = next;
  }
  return false;
}

/** The peer's certificate and the intermediates it sent, or undefined when it sent none. */
export function peerChain(socket: TLSSocket | undefined): { leaf: X509Certificate; intermediates: X509Certificate[] } | undefined {
  if (!socket || typeof socket.getPeerCertificate !== 'function') return undefined;
  const peer = socket.getPeerCertificate(true) as DetailedPeerCertificate | undefined;
  if (!peer?.raw) return undefined;
  const leaf = new X509Certificate(peer.raw);
  const intermediates: X509Certificate[] = [];
  let c: DetailedPeerCertificate | undefined = peer.issuerCertificate;
  let prev: DetailedPeerCertificate = peer;
  while (c?.raw && c !== prev && c.fingerprint256 !== prev.fingerprint256 && intermediates.length < MAX_DEPTH) {
    intermediates.push(new X509Certificate(c.raw));
    prev = c;
    c = c.issuerCertificate;
  }
  return { leaf, intermediates };
}

/** The CN of a certificate's subject ('' when it has none). */
export function commonName(cert: X509Certificate): string {
  const line = cert.subject.split('\n').find((l) => l.startsWith('CN='));
  return line ? line.slice(3) : '';
}
