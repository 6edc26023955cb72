import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { KubeObject } from '@app/apimachinery';
import { certificateNotAfter, ensurePki, loadSigningAuthority, type SigningAuthority } from '@app/pki';
import { cleanupReason, decideSigning, nodeClientApprovalNeeds, type SigningDecision } from './csr.logic.js';

let tmp: string;
let ca: SigningAuthority;
beforeAll(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'csr-logic-'));
  const pki = await ensurePki(path.join(tmp, 'pki'));
  ca = await loadSigningAuthority(await fs.readFile(pki.caCert, 'utf8'), await fs.readFile(pki.caKey, 'utf8'));
});
afterAll(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

let n = 0;
function request(subj: string, extra: string[] = []): string {
  const key = path.join(tmp, `k${n++}.key`);
  execFileSync('openssl', ['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', key]);
  return Buffer.from(execFileSync('openssl', ['req', '-new', '-key', key, '-subj', subj, ...extra], { encoding: 'utf8' })).toString('base64');
}

function csr(spec: Record<string, unknown>, conditions: Array<Record<string, string>> = [], extra: Partial<KubeObject> = {}): KubeObject {
  return { metadata: { name: 'c', creationTimestamp: '2026-01-01T00:00:00Z' }, spec, status: { conditions }, ...extra };
}

const approved = [{ type: 'Approved', status: 'True', lastUpdateTime: '2026-01-01T00:00:00Z' }];
const YEAR = 8760 * 3_600_000;
const now = new Date('2026-01-01T00:10:00Z');

describe('decideSigning', () => {
  it('issues for min(signing duration, expirationSeconds), at least 600 s', async () => {
    const c = csr(
      { signerName: 'kubernetes.io/kube-apiserver-client', request: request('/CN=alice'), usages: ['client auth'], expirationSeconds: 600 },
      approved,
    );
    const notAfter = (d: SigningDecision): number | undefined => (d.action === 'issue' ? certificateNotAfter(d.certificatePem)?.getTime() : undefined);
    const d = await decideSigning(c, ca, YEAR, now);
    expect(notAfter(d)).toBe(Math.min(now.getTime() + 600_000, ca.cert.notAfter.getTime()));
    const short = await decideSigning({ ...c, spec: { ...(c.spec as object), expirationSeconds: undefined } }, ca, 3_600_000, now);
    expect(notAfter(short)).toBe(now.getTime() + 3_600_000);
  });

  it('skips pending, denied, issued and foreign-signer requests', async () => {
    const spec = { signerName: 'kubernetes.io/kube-apiserver-client', request: request('/CN=a'), usages: ['client auth'] };
    expect(await decideSigning(csr(spec), ca, YEAR, now)).toEqual({ action: 'skip' });
    expect(await decideSigning(csr(spec, [{ type: 'Denied', status: 'True' }]), ca, YEAR, now)).toEqual({ action: 'skip' });
    expect(await decideSigning(csr({ ...spec, signerName: 'example.com/mine' }, approved), ca, YEAR, now)).toEqual({ action: 'skip' });
    expect(await decideSigning(csr(spec, approved, { status: { conditions: approved, certificate: 'eA==' } }), ca, YEAR, now)).toEqual({ action: 'skip' });
  });

  it.each([
    ['kubernetes.io/kube-apiserver-client', '/CN=a', [], ['client auth', 'server auth'], 'invalid usage for client certificate: server auth'],
    ['kubernetes.io/kube-apiserver-client', '/CN=a', [], ['digital signature'], 'invalid usage for client certificate: missing client auth'],
    ['kubernetes.io/kube-apiserver-client', '/CN=a', ['-addext', 'basicConstraints=critical,CA:TRUE'], ['client auth'], 'asks for a CA certificate'],
    [
      'kubernetes.io/kube-apiserver-client-kubelet',
      '/O=dev/CN=system:node:n1',
      [],
      ['digital signature', 'client auth'],
      'subject organization is not system:nodes',
    ],
    [
      'kubernetes.io/kube-apiserver-client-kubelet',
      '/O=system:nodes/CN=n1',
      [],
      ['digital signature', 'client auth'],
      'subject common name does not begin with system:node:',
    ],
    [
      'kubernetes.io/kube-apiserver-client-kubelet',
      '/O=system:nodes/CN=system:node:n1',
      ['-addext', 'subjectAltName=DNS:n1'],
      ['digital signature', 'client auth'],
      'DNS subjectAltNames are not allowed',
    ],
    [
      'kubernetes.io/kube-apiserver-client-kubelet',
      '/O=system:nodes/CN=system:node:n1',
      [],
      ['client auth'],
      'usages did not match [client auth digital signature key encipherment]',
    ],
    ['kubernetes.io/kubelet-serving', '/O=system:nodes/CN=system:node:n1', [], ['digital signature', 'server auth'], 'DNS or IP subjectAltName is required'],
    [
      'kubernetes.io/kubelet-serving',
      '/O=system:nodes/CN=system:node:n1',
      ['-addext', 'subjectAltName=DNS:n1,email:a@b.c'],
      ['digital signature', 'server auth'],
      'Email subjectAltNames are not allowed',
    ],
    [
      'kubernetes.io/kubelet-serving',
      '/O=system:nodes/CN=system:node:n1',
      ['-addext', 'subjectAltName=IP:10.0.0.1'],
      ['digital signature', 'client auth'],
      'usages did not match [digital signature key encipherment server auth]',
    ],
  ])('%s %s %j %j fails: %s', async (signerName, subj, extra, usages, message) => {
    const d = await decideSigning(csr({ signerName, request: request(subj, extra), usages }, approved), ca, YEAR, now);
    expect(d).toEqual({ action: 'fail', message: expect.stringContaining(message) });
  });
});

describe('nodeClientApprovalNeeds', () => {
  it('asks selfnodeclient for a node asking for its own name, nodeclient for another requestor, nothing otherwise', async () => {
    const spec = {
      signerName: 'kubernetes.io/kube-apiserver-client-kubelet',
      request: request('/O=system:nodes/CN=system:node:n1'),
      usages: ['digital signature', 'client auth'],
    };
    expect(await nodeClientApprovalNeeds(csr({ ...spec, username: 'system:node:n1' }))).toBe('selfnodeclient');
    expect(await nodeClientApprovalNeeds(csr({ ...spec, username: 'system:bootstrap:abc' }))).toBe('nodeclient');
    expect(await nodeClientApprovalNeeds(csr({ ...spec, username: 'x' }, approved))).toBeUndefined();
    expect(await nodeClientApprovalNeeds(csr({ ...spec, signerName: 'kubernetes.io/kube-apiserver-client' }))).toBeUndefined();
    expect(await nodeClientApprovalNeeds(csr({ ...spec, usages: ['client auth', 'server auth'] }))).toBeUndefined();
  });
});

describe('cleanupReason (an injected clock)', () => {
  const at = (iso: string): Date => new Date(iso);
  it('keeps a pending request 24 h, finished ones 1 h after their condition', () => {
    const pending = csr({});
    expect(cleanupReason(pending, at('2026-01-01T23:59:59Z'))).toBeUndefined();
    expect(cleanupReason(pending, at('2026-01-02T00:00:00Z'))).toBe('pending for more than 24h');
    for (const type of ['Approved', 'Denied', 'Failed']) {
      const c = csr({}, [{ type, status: 'True', lastUpdateTime: '2026-01-01T05:00:00Z' }]);
      expect(cleanupReason(c, at('2026-01-01T05:59:59Z'))).toBeUndefined();
      expect(cleanupReason(c, at('2026-01-01T06:00:00Z'))).toBe(`${type} for more than 1h`);
    }
  });

  it('deletes a request whose issued certificate has expired', async () => {
    const c = csr({ signerName: 'kubernetes.io/kube-apiserver-client', request: request('/CN=a'), usages: ['client auth'] }, approved);
    const d = await decideSigning(c, ca, 600_000, now);
    if (d.action !== 'issue') throw new Error('not issued');
    const issued = {
      ...c,
      status: { conditions: [{ ...approved[0], lastUpdateTime: now.toISOString() }], certificate: Buffer.from(d.certificatePem).toString('base64') },
    };
    expect(cleanupReason(issued, new Date(now.getTime() + 599_000))).toBeUndefined();
    expect(cleanupReason(issued, new Date(now.getTime() + 601_000))).toBe('the issued certificate has expired');
  });
});
