/**
 * The service-account token settings of this server, from kube-apiserver's flags and the PKI:
 * - `--service-account-signing-key-file`: the private key tokens are signed with (default: the
 *   PKI's service-account key, which every node of a cluster shares);
 * - `--service-account-key-file` (repeatable, comma-separated): PEM public keys, private keys or
 *   certificates tokens may be verified with; the signing key's public half always counts;
 * - `--service-account-issuer` (repeatable): the first names the issuer of new tokens, every one
 *   is accepted (default https://kubernetes.default.svc.cluster.local);
 * - `--api-audiences` (comma-separated): what a bound token must be for (default: the issuers);
 * - `--service-account-max-token-expiration` (Go duration; 0, the default, is no maximum);
 * - `--service-account-lookup` (default true): legacy tokens need their Secret and account.
 * A file that cannot be read or holds no usable key stops the start, naming the flag.
 */
import { readFileSync } from 'node:fs';
import type { KeyObject } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { parseGoDuration } from '@app/apimachinery';
import { DEFAULT_SA_ISSUER, parsePublicKeys, parseSigningKey, signBoundToken, signLegacyToken, type BoundTokenRequest } from '@app/auth';
import type { PkiMaterial } from '@app/pki';
import type { ServerConfig } from '../config/flags.js';
import { PKI, SERVER_CONFIG } from '../tokens.js';
import { flagStartError, listFlag } from './authentication-method.js';

/** The parsed settings (pure data; see {@link serviceAccountSettings}). */
export interface ServiceAccountSettings {
  signingKey: KeyObject;
  keys: KeyObject[];
  issuers: string[];
  audiences: string[];
  /** 0: no maximum. */
  maxExpirationSeconds: number;
  lookup: boolean;
}

function readFlagFile(cfg: ServerConfig, flag: string, path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw flagStartError(cfg, flag, e);
  }
}

/** The settings of `cfg`, with the PKI's key as the default signing key. Throws a start error naming the flag. */
export function serviceAccountSettings(cfg: ServerConfig, pki: Pick<PkiMaterial, 'saKeyPem'>): ServiceAccountSettings {
  const signingFile = cfg.raw['service-account-signing-key-file'];
  let signingKey: KeyObject;
  try {
    signingKey = parseSigningKey(signingFile === undefined ? pki.saKeyPem : readFlagFile(cfg, 'service-account-signing-key-file', signingFile));
  } catch (e) {
    throw flagStartError(cfg, 'service-account-signing-key-file', e);
  }
  const keys: KeyObject[] = [];
  for (const file of listFlag(cfg, 'service-account-key-file')) {
    try {
      keys.push(...parsePublicKeys(readFlagFile(cfg, 'service-account-key-file', file)));
    } catch (e) {
      throw new Error(`--service-account-key-file=${file}: ${(e as Error).message}`, { cause: e });
    }
  }
  keys.push(parsePublicKeys(signingKey.export({ type: 'pkcs8', format: 'pem' }).toString())[0]);
  const issuers = listFlag(cfg, 'service-account-issuer');
  for (const iss of issuers) {
    // kube-apiserver: an issuer with a colon must be a URL (a plain name such as `api` is allowed).
    if (iss.includes(':')) {
      try {
        new URL(iss);
      } catch {
        throw new Error(`--service-account-issuer=${iss}: an issuer containing a colon must be a valid URL`);
      }
    }
  }
  if (issuers.length === 0) issuers.push(DEFAULT_SA_ISSUER);
  const audiences = listFlag(cfg, 'api-audiences');
  const maxExp = cfg.raw['service-account-max-token-expiration'];
  return {
    signingKey,
    keys,
    issuers,
    audiences: audiences.length > 0 ? audiences : [...issuers],
    maxExpirationSeconds: maxExp === undefined ? 0 : Math.floor(parseGoDuration(maxExp) / 1e9),
    lookup: cfg.raw['service-account-lookup'] !== 'false',
  };
}

/** The settings as a provider, and token signing for TokenRequest and the legacy token controller. */
@Injectable()
export class ServiceAccountTokens {
  readonly settings: ServiceAccountSettings;

  constructor(@Inject(SERVER_CONFIG) cfg: ServerConfig, @Inject(PKI) pki: PkiMaterial) {
    this.settings = serviceAccountSettings(cfg, pki);
  }

  /** Signs a bound token with the first issuer. */
  signBound(req: Omit<BoundTokenRequest, 'issuer'>): Promise<{ token: string; expiresAt: Date }> {
    return signBoundToken(this.settings.signingKey, { ...req, issuer: this.settings.issuers[0] });
  }

  /** Signs a legacy Secret token. */
  signLegacy(req: Parameters<typeof signLegacyToken>[1]): Promise<string> {
    return signLegacyToken(this.settings.signingKey, req);
  }
}
