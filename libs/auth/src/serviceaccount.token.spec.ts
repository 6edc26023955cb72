import { createHmac, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { StatusError } from '@app/apimachinery';
import {
  algorithmsForKey,
  LEGACY_SA_ISSUER,
  parsePublicKeys,
  parseSigningKey,
  ServiceAccountAuthenticator,
  signBoundToken,
  signLegacyToken,
  tokenHash,
  type ServiceAccountLookup,
} from './serviceaccount.token.js';

const ISS = 'https://kubernetes.default.svc.cluster.local';
const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const NOW = Date.parse('2026-01-01T00:00:00Z');

function objects(over: Partial<Record<string, string | undefined>> = {}): ServiceAccountLookup & { m: Record<string, string | undefined> } {
  const m: Record<string, string | undefined> = { 'sa/ns/app': 'sa-uid', 'secret/ns/s1': 'secret-uid', 'pod/ns/p1': 'pod-uid', ...over };
  return {
    m,
    serviceAccountUid: (ns, n) => m[`sa/${ns}/${n}`],
    secretUid: (ns, n) => m[`secret/${ns}/${n}`],
    secretTokenHash: (ns, n) => m[`hash/${ns}/${n}`],
    podUid: (ns, n) => m[`pod/${ns}/${n}`],
  };
}

function auth(o = objects(), keys: KeyObject[] = [ec.publicKey], now = () => NOW) {
  return new ServiceAccountAuthenticator({ keys, issuers: [ISS, 'https://other'], audiences: [ISS, 'api'], lookup: true, objects: o, now });
}

const bound = (extra: Partial<Parameters<typeof signBoundToken>[1]> = {}, key: KeyObject = ec.privateKey) =>
  signBoundToken(key, {
    issuer: ISS,
    audiences: [ISS],
    expirationSeconds: 3600,
    namespace: 'ns',
    serviceAccount: { name: 'app', uid: 'sa-uid' },
    now: new Date(NOW),
    ...extra,
  }).then((t) => t.token);

const req = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

/** `p`: an authenticate answer (a refusal verified now is a rejected promise). */
async function expect401(answer: unknown): Promise<void> {
  const p = Promise.resolve(answer);
  await expect(p).rejects.toBeInstanceOf(StatusError);
  await expect(p).rejects.toMatchObject({ code: 401 });
}

describe('service-account keys', () => {
  it('reads public keys, private keys and certificates, and allows only their asymmetric algorithms', () => {
    const pem = ec.publicKey.export({ type: 'spki', format: 'pem' }) + String(rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }));
    const keys = parsePublicKeys(pem);
    expect(keys.map((k) => k.type)).toEqual(['public', 'public']);
    expect(algorithmsForKey(keys[0])).toEqual(['ES256']);
    expect(algorithmsForKey(keys[1])).toContain('RS256');
    expect(algorithmsForKey(keys[1]).some((a) => a.startsWith('HS') || a === 'none')).toBe(false);
  });

  it('refuses text without a key and Ed25519 keys', () => {
    expect(() => parsePublicKeys('hello')).toThrow(/no PEM/);
    const ed = generateKeyPairSync('ed25519');
    expect(() => parsePublicKeys(String(ed.publicKey.export({ type: 'spki', format: 'pem' })))).toThrow(/RSA or ECDSA/);
    expect(() => parseSigningKey(String(ec.publicKey.export({ type: 'spki', format: 'pem' })))).toThrow(/no PEM private key/);
  });
});

describe('ServiceAccountAuthenticator', () => {
  it('accepts a bound token: identity, groups and the credential id', async () => {
    const user = await auth().authenticate(req(await bound()));
    expect(user?.username).toBe('system:serviceaccount:ns:app');
    expect(user?.uid).toBe('sa-uid');
    expect(user?.groups).toEqual(['system:serviceaccounts', 'system:serviceaccounts:ns']);
    expect(user?.extra?.['authentication.kubernetes.io/credential-id']?.[0]).toMatch(/^JTI=/);
  });

  it('leaves tokens of other issuers and non-JWTs to other methods', async () => {
    expect(await auth().authenticate(req('abc.def'))).toBeUndefined();
    expect(await auth().authenticate(req(`${b64({ alg: 'RS256' })}.${b64({ iss: 'https://idp' })}.x`))).toBeUndefined();
    expect(await auth().authenticate({ headers: {} })).toBeUndefined();
  });

  it('refuses a tampered payload, alg none and HS256 keyed with the public key', async () => {
    const t = await bound();
    const [h, , s] = t.split('.');
    const payload = JSON.parse(Buffer.from(t.split('.')[1], 'base64url').toString());
    await expect401(auth().authenticate(req(`${h}.${b64({ ...payload, sub: 'system:serviceaccount:ns:admin' })}.${s}`)));
    await expect401(auth().authenticate(req(`${b64({ alg: 'none' })}.${b64(payload)}.`)));
    const hs = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64(payload)}`;
    const pub = ec.publicKey.export({ type: 'spki', format: 'pem' });
    await expect401(auth().authenticate(req(`${hs}.${createHmac('sha256', pub).update(hs).digest('base64url')}`)));
  });

  it('answers a token verified before from the cache, synchronously, and still checks the account and audience', async () => {
    const o = objects();
    const a = auth(o);
    const t = await bound();
    expect((await a.authenticate(req(t)))?.username).toBe('system:serviceaccount:ns:app');
    const again = a.authenticate(req(t));
    expect(again).not.toBeInstanceOf(Promise);
    expect((again as { username: string }).username).toBe('system:serviceaccount:ns:app');
    // A TokenReview for other audiences is refused even from the cache.
    await expect401(a.authenticate({ ...req(t), audiences: ['vault'] }));
    o.m['sa/ns/app'] = 'another-uid';
    await expect401(a.authenticate(req(t)));
  });

  it('refuses another key, an expired token, a token not yet valid and a wrong audience', async () => {
    const other = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    await expect401(auth().authenticate(req(await bound({}, other.privateKey))));
    await expect401(auth(objects(), [ec.publicKey], () => NOW + 3601_000).authenticate(req(await bound())));
    await expect401(auth().authenticate(req(await bound({ now: new Date(NOW + 600_000) }))));
    await expect401(auth().authenticate(req(await bound({ audiences: ['vault'] }))));
    expect((await auth().authenticate(req(await bound({ audiences: ['vault', 'api'] }))))?.username).toBe('system:serviceaccount:ns:app');
    // A TokenReview names its own audiences.
    const vault = await bound({ audiences: ['vault'] });
    expect(await auth().authenticate({ ...req(vault), audiences: ['vault'] })).toBeDefined();
    await expect401(auth().authenticate({ ...req(await bound()), audiences: ['vault'] }));
  });

  it('verifies with any of several keys and accepts each issuer', async () => {
    const a = auth(objects(), [rsa.publicKey, ec.publicKey]);
    expect(await a.authenticate(req(await bound({ issuer: 'https://other' })))).toBeDefined();
    expect(await a.authenticate(req(await bound({}, rsa.privateKey)))).toBeDefined();
  });

  it('refuses a bound token once its service account or bound object is gone or has another uid, on every request', async () => {
    const o = objects();
    const a = auth(o);
    const t = await bound({ secret: { name: 's1', uid: 'secret-uid' } });
    expect(await a.authenticate(req(t))).toBeDefined();
    o.m['secret/ns/s1'] = 'recreated';
    await expect401(a.authenticate(req(t)));
    o.m['secret/ns/s1'] = 'secret-uid';
    o.m['sa/ns/app'] = undefined;
    await expect401(a.authenticate(req(t)));
  });

  it('names the pod of a pod-bound token in extra', async () => {
    const o = objects();
    const t = await bound({ pod: { name: 'p1', uid: 'pod-uid' } });
    const user = await auth(o).authenticate(req(t));
    expect(user?.extra?.['authentication.kubernetes.io/pod-name']).toEqual(['p1']);
    expect(user?.extra?.['authentication.kubernetes.io/pod-uid']).toEqual(['pod-uid']);
    o.m['pod/ns/p1'] = undefined;
    await expect401(auth(o).authenticate(req(t)));
  });

  it('accepts a legacy token while its Secret holds it and its service account exists', async () => {
    const t = await signLegacyToken(ec.privateKey, { namespace: 'ns', serviceAccount: { name: 'app', uid: 'sa-uid' }, secretName: 's1' });
    expect(JSON.parse(Buffer.from(t.split('.')[1], 'base64url').toString()).iss).toBe(LEGACY_SA_ISSUER);
    const o = objects({ 'hash/ns/s1': tokenHash(t) });
    expect((await auth(o).authenticate(req(t)))?.username).toBe('system:serviceaccount:ns:app');
    o.m['hash/ns/s1'] = undefined;
    await expect401(auth(o).authenticate(req(t)));
    const noLookup = new ServiceAccountAuthenticator({ keys: [ec.publicKey], issuers: [ISS], audiences: [ISS], lookup: false, objects: objects() });
    expect(await noLookup.authenticate(req(t))).toBeDefined();
  });
});
