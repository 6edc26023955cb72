/**
 * The cluster PKI: a self-signed CA, the API server's serving certificate, the admin client
 * certificate, the Raft peer certificate (mutual TLS between nodes, docs/cluster.md "Peer
 * TLS"), the service-account signing key pair and the admin kubeconfig, all in one directory.
 *
 * Layout and subjects follow kubeadm's (`ca.crt`/`ca.key`, `apiserver.crt`, `sa.key`/`sa.pub`,
 * admin user `CN=kubernetes-admin, O=system:masters`, serving SANs `kubernetes`,
 * `kubernetes.default`, `kubernetes.default.svc`), with ECDSA P-256 / SHA-256 keys instead of
 * RSA because they are generated in milliseconds.
 *
 * Idempotent: every call creates only the files that are missing and never replaces the CA, so a
 * restart keeps every client's trust. Concurrent callers on one directory (several nodes starting
 * at once on a shared `--pki-dir`) are serialised by a lock directory.
 */
import { KeyObject, X509Certificate as NodeX509Certificate, createPrivateKey, createPublicKey, randomBytes, webcrypto } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
// @peculiar/x509 uses tsyringe, which needs the Reflect metadata polyfill loaded first.
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { writeKubeconfig } from './pki.kubeconfig.js';
import { certificatePem } from './pem.js';

export * from './pki.kubeconfig.js';

/** Node's WebCrypto, passed explicitly to @peculiar/x509 so no global provider is mutated. */
const wc = webcrypto;
/** The same object typed as the WebCrypto type @peculiar/x509 declares (DOM's `Crypto`). */
type X509Crypto = NonNullable<Parameters<typeof x509.X509CertificateGenerator.create>[1]>;
const xc = webcrypto as unknown as X509Crypto;
type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;
type EcdsaParams = webcrypto.EcdsaParams;
type SigningAlgorithm = webcrypto.Algorithm | webcrypto.EcdsaParams | webcrypto.RsaHashedImportParams;

const EC_KEYGEN: webcrypto.EcKeyGenParams = { name: 'ECDSA', namedCurve: 'P-256' };
const ECDSA_SHA256: EcdsaParams = { name: 'ECDSA', hash: 'SHA-256' };
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** CA lifetime: 10 years, as kubeadm's CA. */
export const CA_VALIDITY_DAYS = 3650;
/** Leaf certificate lifetime: 1 year, as kubeadm's serving and client certificates. */
export const LEAF_VALIDITY_DAYS = 365;
/**
 * Certificates start one hour in the past so that nodes whose clocks lag a little still accept
 * them (client-go's `GenerateSelfSignedCertKey` backdates by an hour for the same reason).
 */
const BACKDATE_MS = HOUR_MS;
/** Default server of the admin kubeconfig (DESIGN.md: HTTPS on 127.0.0.1:6443). */
export const DEFAULT_SERVER = 'https://127.0.0.1:6443';
/** In-cluster names every kube-apiserver serving certificate carries (kubeadm's list). */
export const KUBERNETES_SERVICE_NAMES: readonly string[] = ['kubernetes', 'kubernetes.default', 'kubernetes.default.svc'];

/** A PKI directory that cannot be completed (e.g. a CA certificate without its key), or bad input. */
export class PkiError extends Error {
  override readonly name = 'PkiError';
}

/** Absolute paths of every file of a PKI directory. */
export interface PkiPaths {
  readonly dir: string;
  readonly caCert: string;
  readonly caKey: string;
  readonly servingCert: string;
  readonly servingKey: string;
  readonly adminCert: string;
  readonly adminKey: string;
  /** Raft peer certificate (serverAuth + clientAuth, the serving SANs), like etcd's peer.crt. */
  readonly peerCert: string;
  readonly peerKey: string;
  /** Service-account token signing key, PEM PKCS#8. */
  readonly saKey: string;
  /** Service-account token verification key, PEM SPKI. */
  readonly saPub: string;
  readonly adminKubeconfig: string;
}

/** What {@link ensurePki} did: the paths plus the base names of the files it wrote this call. */
export interface PkiResult extends PkiPaths {
  readonly created: readonly string[];
}

/** Options of {@link ensurePki}. */
export interface PkiOptions {
  /** Extra names/addresses the serving certificate must cover (IPs become IP SANs, names DNS SANs). */
  readonly hosts?: readonly string[];
  /** Used for the CA subject and the kubeconfig cluster/context name. Default `kapi`. */
  readonly clusterName?: string;
  /** Server URL written in admin.kubeconfig. Default {@link DEFAULT_SERVER}. */
  readonly server?: string;
  /** Clock for validity periods; injectable for tests. Default `new Date()`. */
  readonly now?: Date;
}

/** Options of {@link createPki}. */
export interface CreatePkiOptions extends PkiOptions {
  readonly outDir: string;
}

/** The PEM contents of a complete PKI directory, for the server to load. */
export interface PkiMaterial {
  readonly caPem: string;
  readonly servingCertPem: string;
  readonly servingKeyPem: string;
  readonly adminCertPem: string;
  readonly adminKeyPem: string;
  /** Raft peer certificate and key: presented both as gRPC server and as gRPC client. */
  readonly peerCertPem: string;
  readonly peerKeyPem: string;
  readonly saKeyPem: string;
  readonly saPubPem: string;
}

/** Paths of the PKI files in `dir` (resolved to an absolute path). Pure. */
export function pkiPaths(dir: string): PkiPaths {
  const d = path.resolve(dir);
  const p = (f: string): string => path.join(d, f);
  return {
    dir: d,
    caCert: p('ca.crt'),
    caKey: p('ca.key'),
    servingCert: p('apiserver.crt'),
    servingKey: p('apiserver.key'),
    adminCert: p('admin.crt'),
    adminKey: p('admin.key'),
    peerCert: p('peer.crt'),
    peerKey: p('peer.key'),
    saKey: p('sa.key'),
    saPub: p('sa.pub'),
    adminKubeconfig: p('admin.kubeconfig'),
  };
}

/** DNS and IP subject alternative names of a serving certificate. */
export interface ServingSans {
  readonly dns: readonly string[];
  readonly ips: readonly string[];
}

/** RFC 1123 host name, optionally with a leading `*.` wildcard label (RFC 6125 section 6.4.3). */
const DNS_NAME = /^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

/**
 * The SANs of the serving certificate: 127.0.0.1, ::1, localhost, this machine's host name, the
 * Kubernetes service names and every given host. A host is an IP (brackets allowed for IPv6) or
 * a DNS name (lower-cased); anything else is a {@link PkiError}. Duplicates are dropped, order
 * kept. `hostname` is injectable for tests.
 */
export function servingSans(hosts: readonly string[], hostname: string = os.hostname()): ServingSans {
  const dns: string[] = [];
  const ips: string[] = [];
  const add = (raw: string, strict: boolean): void => {
    let h = raw.trim();
    if (h === '') return;
    if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
    if (net.isIP(h) !== 0) {
      if (!ips.includes(h)) ips.push(h);
      return;
    }
    const name = h.toLowerCase().replace(/\.$/, '');
    if (name.length > 253 || !DNS_NAME.test(name)) {
      // The machine's own host name may be odd (e.g. contain '_'); it is a convenience SAN, so
      // skip it rather than refuse to start. A host the operator asked for must be valid.
      if (strict) throw new PkiError(`host ${JSON.stringify(raw)} is neither an IP address nor a valid DNS name`);
      return;
    }
    if (!dns.includes(name)) dns.push(name);
  };
  for (const h of ['127.0.0.1', '::1', 'localhost']) add(h, true);
  add(hostname, false);
  for (const h of hosts) add(h, true);
  for (const h of KUBERNETES_SERVICE_NAMES) add(h, true);
  return { dns, ips };
}

/** A positive 128-bit serial (RFC 5280 section 4.1.2.2: positive, at most 20 octets, unique). */
function serial(): string {
  const b = randomBytes(16);
  b[0] = (b[0]! & 0x7f) | 0x01; // clear the sign bit and avoid a leading zero octet
  return b.toString('hex');
}

async function generateKeys(): Promise<CryptoKeyPair> {
  return wc.subtle.generateKey(EC_KEYGEN, true, ['sign', 'verify']);
}

function privatePem(key: CryptoKey): string {
  return KeyObject.from(key).export({ type: 'pkcs8', format: 'pem' }).toString();
}

function publicPem(key: CryptoKey): string {
  return KeyObject.from(key).export({ type: 'spki', format: 'pem' }).toString();
}

interface Signer {
  readonly cert: x509.X509Certificate;
  readonly key: CryptoKey;
  readonly alg: SigningAlgorithm;
}

/**
 * Imports an existing CA key (PEM, any format Node reads) for signing. ECDSA P-256/P-384 and RSA
 * keys are accepted so an operator-supplied CA works too.
 */
async function importSigningKey(pem: string): Promise<{ key: CryptoKey; alg: SigningAlgorithm }> {
  let ko: KeyObject;
  try {
    ko = createPrivateKey(pem);
  } catch (e) {
    throw new PkiError(`CA key is not a readable private key: ${(e as Error).message}`);
  }
  const der = ko.export({ type: 'pkcs8', format: 'der' });
  if (ko.asymmetricKeyType === 'ec') {
    const curve = ko.asymmetricKeyDetails?.namedCurve;
    const namedCurve = curve === 'prime256v1' ? 'P-256' : curve === 'secp384r1' ? 'P-384' : undefined;
    if (namedCurve === undefined) throw new PkiError(`CA key curve ${String(curve)} is not supported`);
    const key = await wc.subtle.importKey('pkcs8', der, { name: 'ECDSA', namedCurve }, false, ['sign']);
    return { key, alg: { name: 'ECDSA', hash: namedCurve === 'P-256' ? 'SHA-256' : 'SHA-384' } as EcdsaParams };
  }
  if (ko.asymmetricKeyType === 'rsa') {
    const alg = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
    const key = await wc.subtle.importKey('pkcs8', der, alg, false, ['sign']);
    return { key, alg };
  }
  throw new PkiError(`CA key type ${String(ko.asymmetricKeyType)} is not supported`);
}

async function exists(file: string): Promise<boolean> {
  try {
    await fs.access(file);
    return true;
  } catch {
    return false;
  }
}

/** Writes `file` atomically (temp file + rename) so a crash never leaves a truncated file that
 * a later run would "keep". Keys get mode 0600. */
async function writeAtomic(file: string, text: string, mode: number): Promise<void> {
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await fs.writeFile(tmp, text, { mode });
  await fs.chmod(tmp, mode); // writeFile's mode is filtered by the umask; be exact
  await fs.rename(tmp, file);
}

const LOCK_STALE_MS = 30_000;
const LOCK_WAIT_MS = 15_000;

/** Runs `fn` holding `<dir>/.pki.lock` (a directory: mkdir is atomic). A lock older than 30 s
 * is taken to belong to a crashed process and is broken. */
async function withLock<T>(dir: string, fn: () => Promise<T>): Promise<T> {
  const lock = path.join(dir, '.pki.lock');
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      await fs.mkdir(lock);
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const st = await fs.stat(lock).catch(() => undefined);
      if (st !== undefined && Date.now() - st.mtimeMs > LOCK_STALE_MS) {
        await fs.rm(lock, { recursive: true, force: true });
        continue;
      }
      if (Date.now() > deadline) throw new PkiError(`timed out waiting for PKI lock ${lock}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  try {
    return await fn();
  } finally {
    await fs.rm(lock, { recursive: true, force: true });
  }
}

/**
 * A key pair and a leaf certificate for it signed by `ca`: valid from an hour before `now` for
 * LEAF_VALIDITY_DAYS (not beyond the CA), not a CA, `extensions` added to the common ones.
 */
async function signLeaf(ca: Signer, subject: string, extensions: x509.Extension[], now: Date): Promise<{ certPem: string; keyPem: string }> {
  const keys = await generateKeys();
  const notAfter = new Date(Math.min(now.getTime() + LEAF_VALIDITY_DAYS * DAY_MS, ca.cert.notAfter.getTime()));
  const cert = await x509.X509CertificateGenerator.create(
    {
      serialNumber: serial(),
      subject,
      issuer: ca.cert.subjectName,
      notBefore: new Date(now.getTime() - BACKDATE_MS),
      notAfter,
      publicKey: keys.publicKey,
      signingKey: ca.key,
      signingAlgorithm: ca.alg,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
        ...extensions,
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey, false, xc),
        await x509.AuthorityKeyIdentifierExtension.create(ca.cert, false, xc),
      ],
    },
    xc,
  );
  return { certPem: certificatePem(cert), keyPem: privatePem(keys.privateKey) };
}

/** A user or group name that can go into a certificate subject as it is. */
const SUBJECT_NAME = /^[A-Za-z0-9:._@-]{1,253}$/;

/**
 * Issues a client certificate for `user` in `groups` (CN=user, one O= per group: how the server
 * reads an identity from a certificate) signed by the CA of the PKI in `dir`, as
 * `kubeadm kubeconfig user` does. Nothing is written. Names outside [A-Za-z0-9:._@-] are a
 * PkiError.
 */
export async function issueClientCertificate(
  dir: string,
  user: string,
  groups: readonly string[] = [],
  now = new Date(),
): Promise<{ certPem: string; keyPem: string }> {
  for (const n of [user, ...groups]) if (!SUBJECT_NAME.test(n)) throw new PkiError(`invalid user or group name ${JSON.stringify(n)}`);
  const paths = pkiPaths(dir);
  const caPem = await fs.readFile(paths.caCert, 'utf8');
  const { key, alg } = await importSigningKey(await fs.readFile(paths.caKey, 'utf8'));
  const subject = [...groups.map((g) => `O=${g}`), `CN=${user}`].join(', ');
  return signLeaf({ cert: new x509.X509Certificate(caPem), key, alg }, subject, [new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth])], now);
}

/**
 * Makes `dir` a complete PKI directory, creating only what is missing (see the module comment).
 * Rules, pair by pair:
 * - CA: both files present -> kept. Both missing -> created. One without the other -> PkiError
 *   (replacing a CA would silently invalidate every issued certificate and kubeconfig).
 * - Serving / admin / peer pairs: kept when both present, otherwise (re)issued by the CA (so a
 *   PKI directory made before peer TLS existed gets its peer pair on the next run, untouched
 *   otherwise).
 * - Service-account pair: a missing `sa.pub` is derived from `sa.key`; `sa.pub` without
 *   `sa.key` is a PkiError (tokens already issued could not be verified after a new key).
 * - admin.kubeconfig: written from the CA and admin pair when missing.
 * Existing files are never checked against `hosts`: an existing serving certificate is kept even
 * if a new host was added (delete apiserver.crt to reissue it).
 */
export async function ensurePki(dir: string, opts: PkiOptions = {}): Promise<PkiResult> {
  const paths = pkiPaths(dir);
  const sans = servingSans(opts.hosts ?? []); // validate input before touching the disk
  await fs.mkdir(paths.dir, { recursive: true, mode: 0o700 });
  return withLock(paths.dir, async () => {
    const created: string[] = [];
    const now = opts.now ?? new Date();
    const notBefore = new Date(now.getTime() - BACKDATE_MS);
    const clusterName = opts.clusterName ?? 'kapi';
    const put = async (file: string, text: string, mode: number): Promise<void> => {
      await writeAtomic(file, text, mode);
      created.push(path.basename(file));
    };

    // --- CA ---
    const [hasCaCert, hasCaKey] = await Promise.all([exists(paths.caCert), exists(paths.caKey)]);
    if (hasCaCert !== hasCaKey) {
      throw new PkiError(`${hasCaCert ? paths.caCert : paths.caKey} exists without its ${hasCaCert ? 'key' : 'certificate'}; refusing to replace the CA`);
    }
    let signerCache: Signer | undefined;
    let caPem: string;
    if (!hasCaCert) {
      const keys = await generateKeys();
      const cert = await x509.X509CertificateGenerator.createSelfSigned(
        {
          serialNumber: serial(),
          name: `CN=${clusterName}-ca`,
          notBefore,
          notAfter: new Date(now.getTime() + CA_VALIDITY_DAYS * DAY_MS),
          keys,
          signingAlgorithm: ECDSA_SHA256,
          extensions: [
            new x509.BasicConstraintsExtension(true, undefined, true),
            new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
            await x509.SubjectKeyIdentifierExtension.create(keys.publicKey, false, xc),
          ],
        },
        xc,
      );
      caPem = certificatePem(cert);
      // Key first: a crash between the two writes leaves a lone key, which the next run reports
      // instead of a lone certificate that every client may already trust.
      await put(paths.caKey, privatePem(keys.privateKey), 0o600);
      await put(paths.caCert, caPem, 0o644);
      signerCache = { cert, key: keys.privateKey, alg: ECDSA_SHA256 };
    } else {
      caPem = await fs.readFile(paths.caCert, 'utf8');
    }
    const signer = async (): Promise<Signer> => {
      if (signerCache !== undefined) return signerCache;
      let cert: x509.X509Certificate;
      try {
        cert = new x509.X509Certificate(caPem);
      } catch (e) {
        throw new PkiError(`${paths.caCert} is not a certificate: ${(e as Error).message}`);
      }
      const { key, alg } = await importSigningKey(await fs.readFile(paths.caKey, 'utf8'));
      signerCache = { cert, key, alg };
      return signerCache;
    };

    const issue = async (certFile: string, keyFile: string, subject: string, extensions: x509.Extension[]): Promise<{ certPem: string; keyPem: string }> => {
      const { certPem, keyPem } = await signLeaf(await signer(), subject, extensions, now);
      await put(keyFile, keyPem, 0o600);
      await put(certFile, certPem, 0o644);
      return { certPem, keyPem };
    };

    // --- serving certificate ---
    if (!((await exists(paths.servingCert)) && (await exists(paths.servingKey)))) {
      const names: x509.JsonGeneralName[] = [
        ...sans.dns.map((value) => ({ type: 'dns' as const, value })),
        ...sans.ips.map((value) => ({ type: 'ip' as const, value })),
      ];
      await issue(paths.servingCert, paths.servingKey, 'CN=kube-apiserver', [
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
        new x509.SubjectAlternativeNameExtension(names),
      ]);
    }

    // --- admin client certificate: O=system:masters is bound to cluster-admin by RBAC ---
    let admin: { certPem: string; keyPem: string } | undefined;
    if (!((await exists(paths.adminCert)) && (await exists(paths.adminKey)))) {
      admin = await issue(paths.adminCert, paths.adminKey, 'O=system:masters, CN=kubernetes-admin', [
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth]),
      ]);
    }

    // --- Raft peer certificate: one pair shared by the nodes of the PKI, used as gRPC server AND
    // client (etcd's peer certificates carry both usages for the same reason). Its SANs are the
    // serving certificate's, so a client can check the host it dialled (the peer address). ---
    if (!((await exists(paths.peerCert)) && (await exists(paths.peerKey)))) {
      const names: x509.JsonGeneralName[] = [
        ...sans.dns.map((value) => ({ type: 'dns' as const, value })),
        ...sans.ips.map((value) => ({ type: 'ip' as const, value })),
      ];
      await issue(paths.peerCert, paths.peerKey, `CN=${clusterName}-peer`, [
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth]),
        new x509.SubjectAlternativeNameExtension(names),
      ]);
    }

    // --- service-account signing key pair ---
    const [hasSaKey, hasSaPub] = await Promise.all([exists(paths.saKey), exists(paths.saPub)]);
    if (!hasSaKey) {
      if (hasSaPub) throw new PkiError(`${paths.saPub} exists without ${paths.saKey}; refusing to replace the service-account key`);
      const keys = await generateKeys();
      await put(paths.saKey, privatePem(keys.privateKey), 0o600);
      await put(paths.saPub, publicPem(keys.publicKey), 0o644);
    } else if (!hasSaPub) {
      let pub: string;
      try {
        pub = createPublicKey(await fs.readFile(paths.saKey, 'utf8'))
          .export({ type: 'spki', format: 'pem' })
          .toString();
      } catch (e) {
        throw new PkiError(`${paths.saKey} is not a readable private key: ${(e as Error).message}`);
      }
      await put(paths.saPub, pub, 0o644);
    }

    // --- admin kubeconfig ---
    if (!(await exists(paths.adminKubeconfig))) {
      admin ??= {
        certPem: await fs.readFile(paths.adminCert, 'utf8'),
        keyPem: await fs.readFile(paths.adminKey, 'utf8'),
      };
      await writeKubeconfig(paths.adminKubeconfig, {
        server: opts.server ?? DEFAULT_SERVER,
        caPem,
        certPem: admin.certPem,
        keyPem: admin.keyPem,
        clusterName,
      });
      created.push(path.basename(paths.adminKubeconfig));
    }
    return { ...paths, created };
  });
}

/** `ensurePki(opts.outDir, opts)`: the entry point of `npm run pki`. Idempotent. */
export async function createPki(opts: CreatePkiOptions): Promise<PkiResult> {
  return ensurePki(opts.outDir, opts);
}

/** Reads the PEM files of a complete PKI directory (the CA key is not read: the server does not
 * need it). A missing file is a PkiError naming it (a directory made before peer TLS lacks
 * `peer.crt`: `npm run pki -- --out DIR` adds it and keeps everything else). */
export async function loadPki(dir: string): Promise<PkiMaterial> {
  const p = pkiPaths(dir);
  const read = async (file: string): Promise<string> => {
    try {
      return await fs.readFile(file, 'utf8');
    } catch (e) {
      const hint = file === p.peerCert || file === p.peerKey ? ` (run \`npm run pki -- --out ${p.dir}\` to add the peer certificate)` : '';
      throw new PkiError(`cannot read ${file}: ${(e as Error).message}${hint}`);
    }
  };
  // Read at once, but a failure is reported for the first missing file in this order, whichever
  // read failed first (so the message does not depend on timing).
  const settled = await Promise.allSettled([p.caCert, p.servingCert, p.servingKey, p.adminCert, p.adminKey, p.peerCert, p.peerKey, p.saKey, p.saPub].map(read));
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  const [caPem, servingCertPem, servingKeyPem, adminCertPem, adminKeyPem, peerCertPem, peerKeyPem, saKeyPem, saPubPem] = settled.map(
    (r) => (r as PromiseFulfilledResult<string>).value,
  );
  return {
    caPem: caPem!,
    servingCertPem: servingCertPem!,
    servingKeyPem: servingKeyPem!,
    adminCertPem: adminCertPem!,
    adminKeyPem: adminKeyPem!,
    peerCertPem: peerCertPem!,
    peerKeyPem: peerKeyPem!,
    saKeyPem: saKeyPem!,
    saPubPem: saPubPem!,
  };
}

/** True when the PEM certificate `certPem` names `host` (an IP or DNS name) in its SANs, checked
 * by Node's own matching rules. Useful to decide whether a serving certificate must be reissued. */
export function certificateCoversHost(certPem: string, host: string): boolean {
  const c = new NodeX509Certificate(certPem);
  const h = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  return net.isIP(h) !== 0 ? c.checkIP(h) !== undefined : c.checkHost(h) !== undefined;
}
