import { execFileSync } from 'node:child_process';
import { X509Certificate, createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { PkiError, certificateCoversHost, createPki, ensurePki, issueClientCertificate, loadPki, pkiPaths, readKubeconfig, servingSans } from './pki.js';

let tmp: string;
beforeEach(async () => {
  tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'pki-spec-'));
});
afterEach(async () => {
  await fs.rm(tmp, { recursive: true, force: true });
});

describe('servingSans', () => {
  it('splits IPs from names, adds the fixed names, strips brackets, dedups', () => {
    const s = servingSans(['10.0.0.5', 'Node-1.example.com', '[fd00::1]', '10.0.0.5', 'localhost'], 'myhost');
    expect(s.ips).toEqual(['127.0.0.1', '::1', '10.0.0.5', 'fd00::1']);
    expect(s.dns).toEqual(['localhost', 'myhost', 'node-1.example.com', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc']);
  });

  it('rejects a host that is neither IP nor DNS name, but tolerates an odd machine host name', () => {
    expect(() => servingSans(['bad host'], 'h')).toThrow(PkiError);
    expect(() => servingSans(['a_b'], 'h')).toThrow(PkiError);
    expect(servingSans([], 'weird_host').dns).not.toContain('weird_host');
  });
});

describe('createPki', () => {
  it('writes a complete, consistent PKI that Node parses and verifies', async () => {
    const res = await createPki({ outDir: tmp, hosts: ['node-a', '10.1.2.3', 'fd00::7'] });
    const p = pkiPaths(tmp);
    expect([...res.created].sort()).toEqual(
      ['admin.crt', 'admin.key', 'admin.kubeconfig', 'apiserver.crt', 'apiserver.key', 'ca.crt', 'ca.key', 'peer.crt', 'peer.key', 'sa.key', 'sa.pub'].sort(),
    );

    // private material is 0600
    for (const f of [p.caKey, p.servingKey, p.adminKey, p.peerKey, p.saKey, p.adminKubeconfig]) {
      expect((await fs.stat(f)).mode & 0o777).toBe(0o600);
    }

    const ca = new X509Certificate(await fs.readFile(p.caCert));
    const serving = new X509Certificate(await fs.readFile(p.servingCert));
    const admin = new X509Certificate(await fs.readFile(p.adminCert));
    const peer = new X509Certificate(await fs.readFile(p.peerCert));

    expect(ca.ca).toBe(true);
    expect(ca.verify(ca.publicKey)).toBe(true);
    const tenYears = (Date.parse(ca.validTo) - Date.parse(ca.validFrom)) / 86_400_000;
    expect(tenYears).toBeGreaterThanOrEqual(3650);

    for (const leaf of [serving, admin, peer]) {
      expect(leaf.ca).toBe(false);
      expect(leaf.checkIssued(ca)).toBe(true);
      expect(leaf.verify(ca.publicKey)).toBe(true);
    }
    expect(serving.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
    expect(admin.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']);
    // The peer certificate is both a gRPC server and a gRPC client certificate.
    expect([...peer.keyUsage].sort()).toEqual(['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2']);
    expect(peer.subjectAltName).toBe(serving.subjectAltName);
    expect(peer.checkPrivateKey(createPrivateKey(await fs.readFile(p.peerKey)))).toBe(true);
    expect(admin.subject).toContain('CN=kubernetes-admin');
    expect(admin.subject).toContain('O=system:masters');

    // SANs: defaults + given hosts + in-cluster names + this machine
    for (const h of ['localhost', 'node-a', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc']) {
      expect(serving.checkHost(h)).toBe(h);
    }
    for (const ip of ['127.0.0.1', '::1', '10.1.2.3', 'fd00::7']) expect(serving.checkIP(ip)).toBe(ip);
    expect(serving.checkHost('other.example')).toBeUndefined();
    expect(serving.checkIP('10.9.9.9')).toBeUndefined();
    // The machine's own name is covered whenever it is a valid DNS name (servingSans decides).
    const ownName = servingSans([]).dns.includes(os.hostname().toLowerCase());
    expect(serving.checkHost(os.hostname()) !== undefined).toBe(ownName);

    // keys match their certificates
    expect(serving.checkPrivateKey(createPrivateKey(await fs.readFile(p.servingKey)))).toBe(true);
    expect(admin.checkPrivateKey(createPrivateKey(await fs.readFile(p.adminKey)))).toBe(true);
    expect(ca.checkPrivateKey(createPrivateKey(await fs.readFile(p.caKey)))).toBe(true);

    // sa.key (PKCS#8) signs what sa.pub (SPKI) verifies
    const saKeyPem = await fs.readFile(p.saKey, 'utf8');
    const saPubPem = await fs.readFile(p.saPub, 'utf8');
    expect(saKeyPem).toContain('-----BEGIN PRIVATE KEY-----');
    expect(saPubPem).toContain('-----BEGIN PUBLIC KEY-----');
    const sig = sign('sha256', Buffer.from('token'), createPrivateKey(saKeyPem));
    expect(verify('sha256', Buffer.from('token'), createPublicKey(saPubPem), sig)).toBe(true);

    // kubeconfig carries the same material
    const kc = await readKubeconfig(p.adminKubeconfig);
    expect(kc.server).toBe('https://127.0.0.1:6443');
    expect(kc.caPem).toBe(await fs.readFile(p.caCert, 'utf8'));
    expect(kc.certPem).toBe(await fs.readFile(p.adminCert, 'utf8'));
    expect(kc.keyPem).toBe(await fs.readFile(p.adminKey, 'utf8'));

    const m = await loadPki(tmp);
    expect(m.servingCertPem).toBe(await fs.readFile(p.servingCert, 'utf8'));
    expect(m.peerCertPem).toBe(await fs.readFile(p.peerCert, 'utf8'));
    expect(m.peerKeyPem).toBe(await fs.readFile(p.peerKey, 'utf8'));
    expect(certificateCoversHost(m.servingCertPem, '[fd00::7]')).toBe(true);
    expect(certificateCoversHost(m.servingCertPem, 'nope.example')).toBe(false);
  });

  it('ends every PEM file with a newline, so files joined with cat stay whole for OpenSSL', async () => {
    await createPki({ outDir: tmp, hosts: ['127.0.0.1'] });
    const other = path.join(tmp, 'other');
    await createPki({ outDir: other, hosts: ['127.0.0.1'] });
    for (const f of ['ca.crt', 'ca.key', 'apiserver.crt', 'apiserver.key', 'admin.crt', 'admin.key', 'peer.crt', 'peer.key', 'sa.key', 'sa.pub']) {
      expect({ f, last: (await fs.readFile(path.join(tmp, f), 'utf8')).slice(-1) }).toEqual({ f, last: '\n' });
    }
    const bundle = path.join(tmp, 'bundle.crt');
    await fs.writeFile(bundle, Buffer.concat([await fs.readFile(path.join(tmp, 'ca.crt')), await fs.readFile(path.join(other, 'ca.crt'))]));
    const out = execFileSync('openssl', ['storeutl', '-noout', '-certs', bundle], { encoding: 'utf8' });
    expect(out).toContain('Total found: 2');
  });

  it('serves mutual TLS: a client with the CA and admin cert talks to a server with the serving cert', async () => {
    await createPki({ outDir: tmp, hosts: [] });
    const m = await loadPki(tmp);
    const server = https.createServer(
      { cert: m.servingCertPem, key: m.servingKeyPem, ca: m.caPem, requestCert: true, rejectUnauthorized: true },
      (req, res) => {
        const peer = (req.socket as TLSSocket).getPeerCertificate();
        res.end(String(peer.subject.CN));
      },
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const port = (server.address() as AddressInfo).port;
      const body = await new Promise<string>((resolve, reject) => {
        // agent: false: no kept-alive connection (and its idle timer) outlives the test.
        const req = https.request({ host: 'localhost', port, path: '/', ca: m.caPem, cert: m.adminCertPem, key: m.adminKeyPem, agent: false }, (res) => {
          let s = '';
          res.on('data', (c: Buffer) => (s += c.toString()));
          res.on('end', () => resolve(s));
        });
        req.on('error', reject);
        req.end();
      });
      expect(body).toBe('kubernetes-admin');
    } finally {
      server.close();
    }
  });

  it('uses the given server in the kubeconfig', async () => {
    await createPki({ outDir: tmp, hosts: [], server: 'https://10.0.0.1:7443', clusterName: 'c1' });
    const kc = await readKubeconfig(pkiPaths(tmp).adminKubeconfig);
    expect(kc.server).toBe('https://10.0.0.1:7443');
    expect(kc.contextName).toBe('c1');
  });
});

describe('issueClientCertificate', () => {
  it('issues a client certificate for a user and groups, signed by the CA, writing nothing', async () => {
    await createPki({ outDir: tmp, hosts: [] });
    const before = (await fs.readdir(tmp)).sort();
    const { certPem, keyPem } = await issueClientCertificate(tmp, 'alice', ['dev', 'ops']);
    expect((await fs.readdir(tmp)).sort()).toEqual(before);
    const cert = new X509Certificate(certPem);
    const ca = new X509Certificate((await loadPki(tmp)).caPem);
    expect(cert.verify(ca.publicKey)).toBe(true);
    expect(cert.subject.split('\n').sort()).toEqual(['CN=alice', 'O=dev', 'O=ops']);
    expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']);
    expect(cert.checkPrivateKey(createPrivateKey(keyPem))).toBe(true);
    await expect(issueClientCertificate(tmp, 'bob, O=system:masters')).rejects.toThrow(PkiError);
    await expect(issueClientCertificate(path.join(tmp, 'missing'), 'bob')).rejects.toThrow();
  });
});

describe('ensurePki idempotency', () => {
  it('keeps every existing file on a second run', async () => {
    await ensurePki(tmp, { hosts: ['a'] });
    const p = pkiPaths(tmp);
    const files = [p.caCert, p.caKey, p.servingCert, p.servingKey, p.adminCert, p.adminKey, p.peerCert, p.peerKey, p.saKey, p.saPub, p.adminKubeconfig];
    const before = await Promise.all(files.map((f) => fs.readFile(f, 'utf8')));
    const again = await ensurePki(tmp, { hosts: ['b'] });
    expect(again.created).toEqual([]);
    expect(await Promise.all(files.map((f) => fs.readFile(f, 'utf8')))).toEqual(before);
  });

  it('reissues only a missing leaf, signed by the kept CA', async () => {
    await ensurePki(tmp, {});
    const p = pkiPaths(tmp);
    const caBefore = await fs.readFile(p.caCert, 'utf8');
    const adminBefore = await fs.readFile(p.adminCert, 'utf8');
    await fs.rm(p.servingCert);
    const res = await ensurePki(tmp, { hosts: ['new-host'] });
    expect([...res.created].sort()).toEqual(['apiserver.crt', 'apiserver.key']);
    expect(await fs.readFile(p.caCert, 'utf8')).toBe(caBefore);
    expect(await fs.readFile(p.adminCert, 'utf8')).toBe(adminBefore);
    const serving = new X509Certificate(await fs.readFile(p.servingCert));
    expect(serving.verify(new X509Certificate(caBefore).publicKey)).toBe(true);
    expect(serving.checkHost('new-host')).toBe('new-host');
    expect(serving.checkPrivateKey(createPrivateKey(await fs.readFile(p.servingKey)))).toBe(true);
  });

  it('adds the peer pair to a directory made before peer TLS, touching nothing else', async () => {
    await ensurePki(tmp, { hosts: ['10.4.4.4'] });
    const p = pkiPaths(tmp);
    await fs.rm(p.peerCert);
    await fs.rm(p.peerKey);
    await expect(loadPki(tmp)).rejects.toThrow(/peer\.crt.*npm run pki/);
    const others = [p.caCert, p.caKey, p.servingCert, p.servingKey, p.adminCert, p.adminKey, p.saKey, p.saPub, p.adminKubeconfig];
    const before = await Promise.all(others.map((f) => fs.readFile(f, 'utf8')));
    const res = await ensurePki(tmp, { hosts: ['10.4.4.4'] });
    expect([...res.created].sort()).toEqual(['peer.crt', 'peer.key']);
    expect(await Promise.all(others.map((f) => fs.readFile(f, 'utf8')))).toEqual(before);
    const peer = new X509Certificate((await loadPki(tmp)).peerCertPem);
    expect(peer.verify(new X509Certificate(before[0]!).publicKey)).toBe(true);
    expect(peer.checkIP('10.4.4.4')).toBe('10.4.4.4');
  });

  it('derives a missing sa.pub from sa.key and rewrites a missing kubeconfig', async () => {
    await ensurePki(tmp, {});
    const p = pkiPaths(tmp);
    const pub = await fs.readFile(p.saPub, 'utf8');
    await fs.rm(p.saPub);
    await fs.rm(p.adminKubeconfig);
    const res = await ensurePki(tmp, {});
    expect([...res.created].sort()).toEqual(['admin.kubeconfig', 'sa.pub']);
    expect(await fs.readFile(p.saPub, 'utf8')).toBe(pub);
    expect((await readKubeconfig(p.adminKubeconfig)).certPem).toBe(await fs.readFile(p.adminCert, 'utf8'));
  });

  it('refuses to replace a CA whose key is gone, and an sa.pub without sa.key', async () => {
    await ensurePki(tmp, {});
    const p = pkiPaths(tmp);
    await fs.rm(p.caKey);
    await expect(ensurePki(tmp, {})).rejects.toBeInstanceOf(PkiError);
    await fs.rm(p.caCert);
    await fs.rm(p.saKey);
    await expect(ensurePki(tmp, {})).rejects.toThrow(/sa\.pub exists without/);
  });

  it('concurrent callers on a fresh directory end up with one CA that signed everything', async () => {
    await Promise.all([ensurePki(tmp, {}), ensurePki(tmp, {}), ensurePki(tmp, {})]);
    const p = pkiPaths(tmp);
    const ca = new X509Certificate(await fs.readFile(p.caCert));
    expect(ca.checkPrivateKey(createPrivateKey(await fs.readFile(p.caKey)))).toBe(true);
    expect(new X509Certificate(await fs.readFile(p.servingCert)).verify(ca.publicKey)).toBe(true);
    expect(new X509Certificate(await fs.readFile(p.adminCert)).verify(ca.publicKey)).toBe(true);
    await expect(fs.access(path.join(tmp, '.pki.lock'))).rejects.toThrow();
  });

  it('rejects bad hosts before writing anything', async () => {
    await expect(ensurePki(tmp, { hosts: ['not a host'] })).rejects.toBeInstanceOf(PkiError);
    expect(await fs.readdir(tmp)).toEqual([]);
  });
});
