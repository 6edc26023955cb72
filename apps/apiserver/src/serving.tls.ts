/**
 * What the HTTPS port presents and trusts. By default it serves the PKI's serving certificate
 * and accepts client certificates of the cluster CA. `--tls-cert-file` and
 * `--tls-private-key-file` (kube-apiserver's flags, given together) serve a certificate of the
 * operator's instead: the file holds the certificate, then any intermediates (and the root, if
 * the admin kubeconfig is to verify it), PEM-encoded; both files are read again when they change,
 * so a renewed certificate is served without a restart. `--client-ca-file` adds CAs whose client
 * certificates authenticate users (x509), beside the cluster CA that signs the admin's.
 * `--requestheader-client-ca-file` adds the front proxy's CA to what the TLS layer accepts; the
 * authentication methods tell the two apart.
 */
import { readFileSync, unwatchFile, watchFile } from 'node:fs';
import { createSecureContext, type SecureContextOptions, type Server as TlsServer } from 'node:tls';
import type { PkiMaterial } from '@app/pki';
import type { ServerConfig } from './config/flags.js';

/** The certificates of one PEM bundle, each with its markers. */
export function pemCertificates(pem: string): string[] {
  return pem.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
}

/** The serving certificate and key, and where they came from. */
export interface ServingMaterial {
  certPem: string;
  keyPem: string;
  /** The files, when they came from `--tls-cert-file` and `--tls-private-key-file`. */
  files?: { cert: string; key: string };
}

function readFlagFile(flag: string, file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    throw new Error(`--${flag}=${file}: ${(e as Error).message}`, { cause: e });
  }
}

/** Reads the serving certificate and key of the flags (checking that they belong together), or the PKI's. */
export function servingMaterial(cfg: ServerConfig, pki: PkiMaterial): ServingMaterial {
  const cert = cfg.raw['tls-cert-file'];
  const key = cfg.raw['tls-private-key-file'];
  if (cert === undefined || key === undefined) return { certPem: pki.servingCertPem, keyPem: pki.servingKeyPem };
  const m = { certPem: readFlagFile('tls-cert-file', cert), keyPem: readFlagFile('tls-private-key-file', key), files: { cert, key } };
  if (pemCertificates(m.certPem).length === 0) throw new Error(`--tls-cert-file=${cert}: no PEM certificate in the file`);
  try {
    createSecureContext({ cert: m.certPem, key: m.keyPem });
  } catch (e) {
    throw new Error(`--tls-cert-file=${cert}, --tls-private-key-file=${key}: ${(e as Error).message}`, { cause: e });
  }
  return m;
}

/** The CA bundles of `--client-ca-file` (users' client certificates), read at start. */
export function clientCaBundles(cfg: ServerConfig): string[] {
  const file = cfg.raw['client-ca-file'];
  if (file === undefined) return [];
  const pem = readFlagFile('client-ca-file', file);
  if (pemCertificates(pem).length === 0) throw new Error(`--client-ca-file=${file}: no PEM certificate in the file`);
  return [pem];
}

/** The CA bundle of `--requestheader-client-ca-file` (the front proxy's), read at start. */
export function requestHeaderCaBundles(cfg: ServerConfig): string[] {
  const file = cfg.raw['requestheader-client-ca-file'];
  return file === undefined ? [] : [readFlagFile('requestheader-client-ca-file', file)];
}

/**
 * What the admin kubeconfig trusts for this server: the cluster CA, and with a serving
 * certificate from `--tls-cert-file` the certificates that follow it in that file.
 */
export function servingTrustPem(cfg: ServerConfig, pki: PkiMaterial): string {
  const file = cfg.raw['tls-cert-file'];
  if (file === undefined) return pki.caPem;
  const chain = pemCertificates(readFlagFile('tls-cert-file', file)).slice(1);
  return [pki.caPem.trim(), ...chain].join('\n') + '\n';
}

/**
 * Serves the files' certificate anew whenever either file changes (polled every `intervalMs`);
 * a pair that does not load is reported on stderr and the one in use kept. Returns the stop.
 */
export function reloadServingCertificate(
  server: TlsServer,
  material: ServingMaterial,
  context: Omit<SecureContextOptions, 'cert' | 'key'>,
  intervalMs = 2_000,
  log: (line: string) => void = (l) => process.stderr.write(`${l}\n`),
): () => void {
  const files = material.files;
  if (!files) return () => undefined;
  let current = material.certPem + material.keyPem;
  const reload = (): void => {
    let certPem: string;
    let keyPem: string;
    try {
      certPem = readFileSync(files.cert, 'utf8');
      keyPem = readFileSync(files.key, 'utf8');
    } catch (e) {
      log(`serving certificate: cannot read ${files.cert} or ${files.key}: ${(e as Error).message}; keeping the one in use`);
      return;
    }
    if (certPem + keyPem === current) return;
    try {
      createSecureContext({ ...context, cert: certPem, key: keyPem });
    } catch (e) {
      // Often the first of the two files written: the other follows within the next polls.
      log(`serving certificate: ${files.cert} and ${files.key} do not load together (${(e as Error).message}); keeping the one in use`);
      return;
    }
    server.setSecureContext({ ...context, cert: certPem, key: keyPem });
    current = certPem + keyPem;
    log(`serving certificate: reloaded from ${files.cert}`);
  };
  const opts = { interval: intervalMs, persistent: false };
  watchFile(files.cert, opts, reload);
  watchFile(files.key, opts, reload);
  return () => {
    unwatchFile(files.cert, reload);
    unwatchFile(files.key, reload);
  };
}
