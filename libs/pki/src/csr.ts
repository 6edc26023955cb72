/**
 * PKCS#10 certificate requests and the CSR signer's certificate issuance (Kubernetes'
 * certificates API): parsing and signature verification of a request, the mapping of a CSR's
 * `spec.usages` strings to X.509 key usages and extended key usages (Kubernetes'
 * KeyUsageFromStrings), and signing a request with a CA. Every X.509 structure goes through
 * @peculiar/x509; nothing here encodes ASN.1 by hand.
 */
import { createPrivateKey, randomBytes, webcrypto } from 'node:crypto';
// @peculiar/x509 uses tsyringe, which needs the Reflect metadata polyfill loaded first.
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { certificatePem } from './pem.js';

type X509Crypto = NonNullable<Parameters<typeof x509.X509CertificateGenerator.create>[1]>;
const xc = webcrypto as unknown as X509Crypto;
type CryptoKey = webcrypto.CryptoKey;

/** A request that does not parse or whose signature does not verify; the message says why. */
export class CsrError extends Error {
  override readonly name = 'CsrError';
}

/** OIDs of the extensions the signer reads from a request. */
const OID_SAN = '2.5.29.17';
const OID_BASIC_CONSTRAINTS = '2.5.29.19';

/** What the signers need to know of a verified request. */
export interface ParsedCertificateRequest {
  /** Subject common name ('' when absent). */
  readonly commonName: string;
  /** Subject organizations, in order. */
  readonly organizations: readonly string[];
  readonly dnsNames: readonly string[];
  readonly ipAddresses: readonly string[];
  readonly emailAddresses: readonly string[];
  readonly uris: readonly string[];
  /** The request asks for basicConstraints CA:TRUE. */
  readonly requestsCa: boolean;
  /** The parsed request itself (subject and public key for issuance). */
  readonly request: x509.Pkcs10CertificateRequest;
}

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)-----END \1-----/;

/**
 * Parses the first PEM block of `pem`, which must be a `CERTIFICATE REQUEST`, and verifies its
 * self-signature (Kubernetes' ParseCSR + CheckSignature). Throws CsrError with Kubernetes'
 * wording when the block is missing or of another type.
 */
export async function parseCertificateRequest(pem: string): Promise<ParsedCertificateRequest> {
  const m = PEM_BLOCK.exec(pem);
  if (!m || m[1] !== 'CERTIFICATE REQUEST') throw new CsrError('PEM block type must be CERTIFICATE REQUEST');
  let req: x509.Pkcs10CertificateRequest;
  try {
    req = new x509.Pkcs10CertificateRequest(m[0]);
  } catch (e) {
    throw new CsrError(`x509: malformed certificate request: ${(e as Error).message}`);
  }
  let ok: boolean;
  try {
    ok = await req.verify(xc);
  } catch (e) {
    throw new CsrError(`x509: cannot verify signature: ${(e as Error).message}`);
  }
  if (!ok) throw new CsrError('x509: signature of the certificate request does not verify');
  const names = { dns: [] as string[], ip: [] as string[], email: [] as string[], url: [] as string[] };
  const san = req.getExtension(OID_SAN);
  if (san) {
    const ext = san instanceof x509.SubjectAlternativeNameExtension ? san : new x509.SubjectAlternativeNameExtension(san.rawData);
    for (const n of ext.names.toJSON()) {
      if (n.type === 'dns' || n.type === 'ip' || n.type === 'email' || n.type === 'url') names[n.type].push(n.value);
    }
  }
  const bc = req.getExtension(OID_BASIC_CONSTRAINTS);
  const bcExt = bc ? (bc instanceof x509.BasicConstraintsExtension ? bc : new x509.BasicConstraintsExtension(bc.rawData)) : undefined;
  return {
    commonName: req.subjectName.getField('CN')[0] ?? '',
    organizations: req.subjectName.getField('O'),
    dnsNames: names.dns,
    ipAddresses: names.ip,
    emailAddresses: names.email,
    uris: names.url,
    requestsCa: bcExt?.ca === true,
    request: req,
  };
}

/** `spec.usages` strings that are X.509 key usages (Kubernetes' keyUsageDict). */
export const KEY_USAGES: Readonly<Record<string, x509.KeyUsageFlags>> = {
  signing: x509.KeyUsageFlags.digitalSignature,
  'digital signature': x509.KeyUsageFlags.digitalSignature,
  'content commitment': x509.KeyUsageFlags.nonRepudiation,
  'key encipherment': x509.KeyUsageFlags.keyEncipherment,
  'key agreement': x509.KeyUsageFlags.keyAgreement,
  'data encipherment': x509.KeyUsageFlags.dataEncipherment,
  'cert sign': x509.KeyUsageFlags.keyCertSign,
  'crl sign': x509.KeyUsageFlags.cRLSign,
  'encipher only': x509.KeyUsageFlags.encipherOnly,
  'decipher only': x509.KeyUsageFlags.decipherOnly,
};

/** `spec.usages` strings that are extended key usages, by OID (Kubernetes' extKeyUsageDict). */
export const EXTENDED_KEY_USAGES: Readonly<Record<string, string>> = {
  any: '2.5.29.37.0',
  'server auth': '1.3.6.1.5.5.7.3.1',
  'client auth': '1.3.6.1.5.5.7.3.2',
  'code signing': '1.3.6.1.5.5.7.3.3',
  'email protection': '1.3.6.1.5.5.7.3.4',
  's/mime': '1.3.6.1.5.5.7.3.4',
  'ipsec end system': '1.3.6.1.5.5.7.3.5',
  'ipsec tunnel': '1.3.6.1.5.5.7.3.6',
  'ipsec user': '1.3.6.1.5.5.7.3.7',
  timestamping: '1.3.6.1.5.5.7.3.8',
  'ocsp signing': '1.3.6.1.5.5.7.3.9',
  'microsoft sgc': '1.3.6.1.4.1.311.10.3.3',
  'netscape sgc': '2.16.840.1.113730.4.1',
};

/** Every usage string the API accepts, in the order of the certificates API documentation. */
export const ALL_USAGES: readonly string[] = [...Object.keys(KEY_USAGES), ...Object.keys(EXTENDED_KEY_USAGES)];

/** The key usage flags and extended usage OIDs of `usages` (unknown strings are ignored). */
export function usagesToX509(usages: readonly string[]): { keyUsages: number; extKeyUsages: string[] } {
  let keyUsages = 0;
  const ext: string[] = [];
  for (const u of usages) {
    if (KEY_USAGES[u] !== undefined) keyUsages |= KEY_USAGES[u]!;
    const oid = EXTENDED_KEY_USAGES[u];
    if (oid !== undefined && !ext.includes(oid)) ext.push(oid);
  }
  return { keyUsages, extKeyUsages: ext };
}

/** A CA able to sign: its certificate and imported private key. */
export interface SigningAuthority {
  readonly cert: x509.X509Certificate;
  readonly certPem: string;
  readonly key: CryptoKey;
  readonly alg: webcrypto.Algorithm | webcrypto.EcdsaParams;
}

/**
 * Loads a CA certificate and its private key (ECDSA P-256/P-384 or RSA, PEM in any format Node
 * reads) for {@link signCertificateRequest}. Throws CsrError when either does not load.
 */
export async function loadSigningAuthority(certPem: string, keyPem: string): Promise<SigningAuthority> {
  let cert: x509.X509Certificate;
  try {
    cert = new x509.X509Certificate(certPem);
  } catch (e) {
    throw new CsrError(`signing certificate does not parse: ${(e as Error).message}`);
  }
  let der: Buffer;
  let type: string | undefined;
  let curve: string | undefined;
  try {
    const ko = createPrivateKey(keyPem);
    der = ko.export({ type: 'pkcs8', format: 'der' });
    type = ko.asymmetricKeyType;
    curve = ko.asymmetricKeyDetails?.namedCurve;
  } catch (e) {
    throw new CsrError(`signing key does not parse: ${(e as Error).message}`);
  }
  if (type === 'ec' && (curve === 'prime256v1' || curve === 'secp384r1')) {
    const namedCurve = curve === 'prime256v1' ? 'P-256' : 'P-384';
    const key = await webcrypto.subtle.importKey('pkcs8', der, { name: 'ECDSA', namedCurve }, false, ['sign']);
    return { cert, certPem: certificatePem(cert), key, alg: { name: 'ECDSA', hash: namedCurve === 'P-256' ? 'SHA-256' : 'SHA-384' } as webcrypto.EcdsaParams };
  }
  if (type === 'rsa') {
    const alg = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
    const key = await webcrypto.subtle.importKey('pkcs8', der, alg, false, ['sign']);
    return { cert, certPem: certificatePem(cert), key, alg };
  }
  throw new CsrError(`signing key type ${String(type)}${curve ? ` (${curve})` : ''} is not supported`);
}

/** How {@link signCertificateRequest} issues a certificate. */
export interface IssueOptions {
  readonly now: Date;
  /** Lifetime from `now`, in ms; the certificate never outlives the CA. */
  readonly ttlMs: number;
  /** Start of validity before `now`, for clocks that lag (Kubernetes' signer: 5 minutes). */
  readonly backdateMs?: number;
  /** The CSR's `spec.usages`. */
  readonly usages: readonly string[];
}

/**
 * Issues a certificate for `csr` signed by `ca`, as Kubernetes' CSR signer does: the request's
 * subject and subject alternative names, the public key of the request, key usages and extended
 * key usages from `usages` only (any other requested extension is dropped), never a CA, valid
 * from `now - backdate` to `min(now + ttl, CA notAfter)`. Returns the PEM certificate.
 */
export async function signCertificateRequest(csr: ParsedCertificateRequest, ca: SigningAuthority, opts: IssueOptions): Promise<string> {
  const { keyUsages, extKeyUsages } = usagesToX509(opts.usages);
  const serialBytes = randomBytes(16);
  serialBytes[0] = (serialBytes[0]! & 0x7f) | 0x01;
  const extensions: x509.Extension[] = [new x509.BasicConstraintsExtension(false, undefined, true)];
  if (keyUsages !== 0) extensions.push(new x509.KeyUsagesExtension(keyUsages, true));
  if (extKeyUsages.length > 0) extensions.push(new x509.ExtendedKeyUsageExtension(extKeyUsages));
  const names: x509.JsonGeneralName[] = [
    ...csr.dnsNames.map((value) => ({ type: 'dns' as const, value })),
    ...csr.ipAddresses.map((value) => ({ type: 'ip' as const, value })),
    ...csr.emailAddresses.map((value) => ({ type: 'email' as const, value })),
    ...csr.uris.map((value) => ({ type: 'url' as const, value })),
  ];
  if (names.length > 0) extensions.push(new x509.SubjectAlternativeNameExtension(names));
  extensions.push(await x509.AuthorityKeyIdentifierExtension.create(ca.cert, false, xc));
  const notAfter = new Date(Math.min(opts.now.getTime() + opts.ttlMs, ca.cert.notAfter.getTime()));
  const cert = await x509.X509CertificateGenerator.create(
    {
      serialNumber: serialBytes.toString('hex'),
      subject: csr.request.subjectName,
      issuer: ca.cert.subjectName,
      notBefore: new Date(opts.now.getTime() - (opts.backdateMs ?? 5 * 60_000)),
      notAfter,
      publicKey: csr.request.publicKey,
      signingKey: ca.key,
      signingAlgorithm: ca.alg,
      extensions,
    },
    xc,
  );
  return certificatePem(cert);
}

/** The notAfter of the first certificate of a PEM bundle, or undefined when none parses. */
export function certificateNotAfter(pem: string): Date | undefined {
  const m = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/.exec(pem);
  if (!m) return undefined;
  try {
    return new x509.X509Certificate(m[0]).notAfter;
  } catch {
    return undefined;
  }
}

/** True when `pem` holds at least one CERTIFICATE block and every block parses. */
export function isCertificateBundle(pem: string): boolean {
  const blocks = pem.match(/-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g) ?? [];
  if (blocks.length === 0) return false;
  try {
    for (const b of blocks) {
      if (!b.startsWith('-----BEGIN CERTIFICATE-----')) return false;
      new x509.X509Certificate(b);
    }
    return true;
  } catch {
    return false;
  }
}
