import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  CsrError,
  loadSigningAuthority,
  parseCertificateRequest,
  signCertificateRequest,
  usagesToX509,
  certificateNotAfter,
  isCertificateBundle,
} from './csr.js';
import { ensurePki } from './pki.js';

let tmp: string;
beforeAll(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'csr-spec-'));
});
afterAll(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

/** A request made by openssl (the way a user makes one), with extra `req` arguments. */
function opensslCsr(name: string, subj: string, extra: string[] = [], keyType = 'ec'): string {
  const key = path.join(tmp, `${name}.key`);
  if (keyType === 'ec') execFileSync('openssl', ['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', key]);
  else execFileSync('openssl', ['genrsa', '-out', key, '2048'], { stdio: 'ignore' });
  return execFileSync('openssl', ['req', '-new', '-key', key, '-subj', subj, ...extra], { encoding: 'utf8' });
}

describe('parseCertificateRequest', () => {
  it('reads the subject, SANs and CA flag of an openssl request', async () => {
    const pem = opensslCsr('a', '/O=system:nodes/CN=system:node:n1', [
      '-addext',
      'subjectAltName=DNS:n1.example,IP:10.0.0.1',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
    ]);
    const r = await parseCertificateRequest(pem);
    expect(r.commonName).toBe('system:node:n1');
    expect(r.organizations).toEqual(['system:nodes']);
    expect(r.dnsNames).toEqual(['n1.example']);
    expect(r.ipAddresses).toEqual(['10.0.0.1']);
    expect(r.requestsCa).toBe(true);
  });

  it('refuses another PEM block type and a request whose signature does not verify', async () => {
    await expect(parseCertificateRequest('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n')).rejects.toThrow(
      'PEM block type must be CERTIFICATE REQUEST',
    );
    await expect(parseCertificateRequest('nothing')).rejects.toThrow(CsrError);
    const pem = opensslCsr('b', '/CN=alice', [], 'rsa');
    const body = pem.split('\n').slice(1, -2).join('');
    const der = Buffer.from(body, 'base64');
    der[der.length - 5] ^= 0xff; // inside the signature
    const broken = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`;
    await expect(parseCertificateRequest(broken)).rejects.toThrow(CsrError);
  });
});

describe('signCertificateRequest', () => {
  it('issues a certificate openssl verifies against the CA, with the usages asked and no CA flag', async () => {
    const pki = await ensurePki(path.join(tmp, 'pki'));
    const ca = await loadSigningAuthority(await fs.readFile(pki.caCert, 'utf8'), await fs.readFile(pki.caKey, 'utf8'));
    const csr = await parseCertificateRequest(opensslCsr('c', '/O=dev/CN=alice', ['-addext', 'basicConstraints=critical,CA:TRUE'], 'rsa'));
    const now = new Date();
    const pem = await signCertificateRequest(csr, ca, { now, ttlMs: 3_600_000, usages: ['digital signature', 'key encipherment', 'client auth'] });
    const file = path.join(tmp, 'c.crt');
    await fs.writeFile(file, pem);
    expect(execFileSync('openssl', ['verify', '-CAfile', pki.caCert, file], { encoding: 'utf8' })).toContain(': OK');
    const text = execFileSync('openssl', ['x509', '-in', file, '-noout', '-text'], { encoding: 'utf8' });
    expect(text).toMatch(/Subject: O\s*=\s*dev, CN\s*=\s*alice/);
    expect(text).toContain('CA:FALSE');
    expect(text).toContain('TLS Web Client Authentication');
    expect(text).toMatch(/Digital Signature, Key Encipherment/);
    expect(certificateNotAfter(pem)!.getTime()).toBeLessThanOrEqual(now.getTime() + 3_600_000);
    expect(certificateNotAfter(pem)!.getTime()).toBeGreaterThan(now.getTime() + 3_500_000);
    expect(isCertificateBundle(pem)).toBe(true);
    expect(isCertificateBundle('junk')).toBe(false);
  });

  it('maps usage strings to key usages and extended key usages', () => {
    const u = usagesToX509(['signing', 'server auth', 's/mime', 'email protection']);
    expect(u.keyUsages).toBe(1);
    expect(u.extKeyUsages).toEqual(['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.4']);
  });
});
