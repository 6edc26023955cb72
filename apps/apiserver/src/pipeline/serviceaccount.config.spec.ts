import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { algorithmsForKey } from '@app/auth';
import { parseFlags } from '../config/flags.js';
import { serviceAccountSettings } from './serviceaccount.config.js';

const dir = mkdtempSync(join(tmpdir(), 'kapi-sa-config-'));
const pem = (k: { export(o: object): string | Buffer }, type: string) => String(k.export({ type, format: 'pem' }));
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const pki = { saKeyPem: pem(ec.privateKey, 'pkcs8') };

describe('service-account settings', () => {
  it('defaults: the PKI key signs and verifies, the in-cluster issuer, audiences = issuers, lookup on, no maximum', () => {
    const s = serviceAccountSettings(parseFlags([]), pki);
    expect(s.issuers).toEqual(['https://kubernetes.default.svc.cluster.local']);
    expect(s.audiences).toEqual(s.issuers);
    expect(s.lookup).toBe(true);
    expect(s.maxExpirationSeconds).toBe(0);
    expect(s.keys.map(algorithmsForKey)).toEqual([['ES256']]);
    expect(algorithmsForKey(s.signingKey)).toEqual(['ES256']);
  });

  it('reads the flags: issuers in order, audiences, a signing key file, extra verification keys, lookup off, the maximum', () => {
    const signing = join(dir, 'signing.key');
    writeFileSync(signing, pem(rsa.privateKey, 'pkcs8'));
    const extra = join(dir, 'extra.pub');
    writeFileSync(extra, pem(ec.publicKey, 'spki'));
    const cfg = parseFlags([
      '--service-account-issuer=https://a.example',
      '--service-account-issuer',
      'https://b.example',
      '--api-audiences=api,vault',
      `--service-account-signing-key-file=${signing}`,
      `--service-account-key-file=${extra}`,
      '--service-account-lookup=false',
      '--service-account-max-token-expiration=48h',
    ]);
    const s = serviceAccountSettings(cfg, pki);
    expect(s.issuers).toEqual(['https://a.example', 'https://b.example']);
    expect(s.audiences).toEqual(['api', 'vault']);
    expect(s.lookup).toBe(false);
    expect(s.maxExpirationSeconds).toBe(48 * 3600);
    expect(s.signingKey.asymmetricKeyType).toBe('rsa');
    expect(s.keys.map((k) => k.asymmetricKeyType)).toEqual(['ec', 'rsa']);
  });

  it('fails closed, naming the flag: unreadable or keyless files, a public key to sign with, an issuer with a colon that is no URL', () => {
    const notKey = join(dir, 'not-a-key');
    writeFileSync(notKey, 'hello');
    expect(() => serviceAccountSettings(parseFlags([`--service-account-key-file=${join(dir, 'missing')}`]), pki)).toThrow('--service-account-key-file=');
    expect(() => serviceAccountSettings(parseFlags([`--service-account-key-file=${notKey}`]), pki)).toThrow('no PEM public key');
    const pub = join(dir, 'pub.pem');
    writeFileSync(pub, pem(ec.publicKey, 'spki'));
    expect(() => serviceAccountSettings(parseFlags([`--service-account-signing-key-file=${pub}`]), pki)).toThrow(
      `--service-account-signing-key-file=${pub}: no PEM private key found`,
    );
    expect(() => serviceAccountSettings(parseFlags(['--service-account-issuer=::bad']), pki)).toThrow('must be a valid URL');
  });
});
