import 'reflect-metadata';
import { webcrypto, X509Certificate } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { chainVerifies, commonName, parseCaBundle } from './cert.chain.js';
import { userFromHeaders } from './request-header.authenticator.js';

type CryptoKey = webcrypto.CryptoKey;
const crypto = webcrypto as unknown as Parameters<typeof x509.X509CertificateGenerator.create>[1];
const subtle = webcrypto.subtle;
const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
const DAY = 86_400_000;

async function ca(name: string): Promise<{ cert: x509.X509Certificate; key: CryptoKey }> {
  const keys = (await subtle.generateKey(alg, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.createSelfSigned(
    {
      serialNumber: '01',
      name: `CN=${name}`,
      notBefore: new Date(Date.now() - DAY),
      notAfter: new Date(Date.now() + DAY),
      keys,
      signingAlgorithm: alg,
      extensions: [new x509.BasicConstraintsExtension(true, undefined, true), new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true)],
    },
    crypto,
  );
  return { cert, key: keys.privateKey };
}

async function leaf(
  issuer: { cert: x509.X509Certificate; key: CryptoKey },
  cn: string,
  opts: { usage?: string; notAfter?: Date } = {},
): Promise<X509Certificate> {
  const keys = (await subtle.generateKey(alg, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.create(
    {
      serialNumber: '02',
      subject: `CN=${cn}`,
      issuer: issuer.cert.subjectName,
      notBefore: new Date(Date.now() - DAY),
      notAfter: opts.notAfter ?? new Date(Date.now() + DAY),
      publicKey: keys.publicKey,
      signingKey: issuer.key,
      signingAlgorithm: alg,
      extensions: [new x509.ExtendedKeyUsageExtension([opts.usage ?? x509.ExtendedKeyUsage.clientAuth])],
    },
    crypto,
  );
  return new X509Certificate(cert.toString('pem'));
}

describe('peer chain verification', () => {
  it("accepts a client certificate of the CA only: not another CA's, not an expired one, not a serving-only one", async () => {
    const proxyCa = await ca('front-proxy-ca');
    const otherCa = await ca('cluster-ca');
    const roots = parseCaBundle(proxyCa.cert.toString('pem'));
    const good = await leaf(proxyCa, 'front-proxy');
    expect(commonName(good)).toBe('front-proxy');
    expect(chainVerifies(good, [], roots)).toBe(true);
    expect(chainVerifies(await leaf(otherCa, 'front-proxy'), [], roots)).toBe(false);
    expect(chainVerifies(await leaf(proxyCa, 'x', { notAfter: new Date(Date.now() - 1000) }), [], roots)).toBe(false);
    expect(chainVerifies(await leaf(proxyCa, 'x', { usage: x509.ExtendedKeyUsage.serverAuth }), [], roots)).toBe(false);
  });

  it('a CA bundle without certificates is an error', () => {
    expect(() => parseCaBundle('nothing here')).toThrow('no PEM certificate');
  });
});

describe('identity from proxy headers', () => {
  const opts = { usernameHeaders: ['X-Remote-User', 'X-Other-User'], groupHeaders: ['X-Remote-Group'], extraHeaderPrefixes: ['X-Remote-Extra-'] };

  it('takes the first user-name header with a value, all groups, extras with percent-decoded lower-case keys', () => {
    const user = userFromHeaders(
      {
        'x-other-user': 'bob',
        'x-remote-group': ['dev', 'ops, qa'],
        'x-remote-extra-scopes': 'a, b',
        'x-remote-extra-acme.com%2fproject': 'p1',
        'x-remote-extra-': 'none',
      },
      opts,
    );
    expect(user).toEqual({ username: 'bob', groups: ['dev', 'ops', 'qa'], extra: { scopes: ['a', 'b'], 'acme.com/project': ['p1'] } });
    expect(userFromHeaders({ 'x-remote-user': 'alice', 'x-other-user': 'bob' }, opts)).toEqual({ username: 'alice', groups: [] });
  });

  it('takes the UID from the first UID header with a value, only when UID headers are configured', () => {
    const withUid = { ...opts, uidHeaders: ['X-Remote-Uid', 'X-Other-Uid'] };
    expect(userFromHeaders({ 'x-remote-user': 'alice', 'x-remote-uid': ' ', 'x-other-uid': 'u-7' }, withUid)).toEqual({
      username: 'alice',
      uid: 'u-7',
      groups: [],
    });
    expect(userFromHeaders({ 'x-remote-user': 'alice' }, withUid)).toEqual({ username: 'alice', groups: [] });
    expect(userFromHeaders({ 'x-remote-user': 'alice', 'x-remote-uid': 'u-1' }, opts)).toEqual({ username: 'alice', groups: [] });
  });

  it('no user-name header with a value: no identity', () => {
    expect(userFromHeaders({ 'x-remote-user': '', 'x-remote-group': 'dev' }, opts)).toBeUndefined();
  });
});
