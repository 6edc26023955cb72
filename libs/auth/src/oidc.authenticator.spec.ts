import { base64url, exportJWK, exportSPKI, generateKeyPair, SignJWT, type JWTPayload } from 'jose';
import { OidcAuthenticator, oidcUserFromClaims, oidcUsernamePrefix, parseRequiredClaims, type OidcOptions } from './oidc.authenticator.js';

const ISSUER = 'https://idp.example';
const JWKS_URI = 'https://idp.example/keys';

async function provider() {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  const fetched: string[] = [];
  const fetchJson = (url: string): Promise<unknown> => {
    fetched.push(url);
    if (url === `${ISSUER}/.well-known/openid-configuration`) return Promise.resolve({ issuer: ISSUER, jwks_uri: JWKS_URI });
    if (url === JWKS_URI) return Promise.resolve({ keys: [jwk] });
    return Promise.reject(new Error('not found'));
  };
  const now = Math.floor(Date.now() / 1000);
  const sign = (
    claims: JWTPayload,
    header: { kid?: string } = { kid: 'k1' },
    times: { iat: number; exp: number } = { iat: now, exp: now + 300 },
  ): Promise<string> =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', ...header })
      .setIssuedAt(times.iat)
      .setExpirationTime(times.exp)
      .sign(privateKey);
  return { fetchJson, fetched, sign, publicKey };
}

const bearer = (t: string) => ({ headers: { authorization: `Bearer ${t}` } });

describe('OIDC', () => {
  it('default user name prefix: issuer# for claims but email; "-" disables', () => {
    expect(oidcUsernamePrefix(ISSUER, 'sub', undefined)).toBe(`${ISSUER}#`);
    expect(oidcUsernamePrefix(ISSUER, 'email', undefined)).toBe('');
    expect(oidcUsernamePrefix(ISSUER, 'sub', '-')).toBe('');
    expect(oidcUsernamePrefix(ISSUER, 'email', 'oidc:')).toBe('oidc:');
  });

  it('required claims are key=value pairs', () => {
    expect(parseRequiredClaims(['a=1', 'b=x=y'])).toEqual({ a: '1', b: 'x=y' });
    expect(() => parseRequiredClaims(['a'])).toThrow('"a" is not key=value');
  });

  it('reads user and groups from claims, with prefixes, required claims and email_verified', () => {
    const base = { issuerUrl: ISSUER, clientId: 'kapi' };
    expect(oidcUserFromClaims({ sub: 's1', groups: ['a', 'b'] }, { ...base, groupsClaim: 'groups', groupsPrefix: 'oidc:' })).toEqual({
      username: `${ISSUER}#s1`,
      groups: ['oidc:a', 'oidc:b'],
    });
    expect(oidcUserFromClaims({ email: 'e@x', email_verified: true }, { ...base, usernameClaim: 'email' })).toEqual({ username: 'e@x', groups: [] });
    expect(() => oidcUserFromClaims({ email: 'e@x', email_verified: false }, { ...base, usernameClaim: 'email' })).toThrow(
      expect.objectContaining({ code: 401 }),
    );
    expect(() => oidcUserFromClaims({ sub: 's1', groups: 5 }, { ...base, groupsClaim: 'groups' })).toThrow(expect.objectContaining({ code: 401 }));
    expect(() => oidcUserFromClaims({ sub: 's1', hd: 'other' }, { ...base, requiredClaims: { hd: 'example.com' } })).toThrow(
      expect.objectContaining({ code: 401 }),
    );
    expect(() => oidcUserFromClaims({}, base)).toThrow(expect.objectContaining({ code: 401 }));
  });

  it('verifies tokens locally with the fetched keys; another issuer or no JWT is not its token', async () => {
    const p = await provider();
    const opts: OidcOptions = { issuerUrl: ISSUER, clientId: 'kapi', usernamePrefix: '-', fetchJson: p.fetchJson };
    const a = new OidcAuthenticator(opts);
    expect(await a.authenticate(bearer(await p.sign({ iss: ISSUER, aud: 'kapi', sub: 'alice' })))).toEqual({ username: 'alice', groups: [] });
    expect(await a.authenticate(bearer(await p.sign({ iss: ISSUER, aud: 'kapi', sub: 'bob' })))).toEqual({ username: 'bob', groups: [] });
    // Discovery and keys are fetched once.
    expect(p.fetched).toEqual([`${ISSUER}/.well-known/openid-configuration`, JWKS_URI]);
    expect(await a.authenticate(bearer(await p.sign({ iss: 'https://other', aud: 'kapi', sub: 'x' })))).toBeUndefined();
    expect(await a.authenticate(bearer('opaque-token'))).toBeUndefined();
    expect(await a.authenticate({ headers: {} })).toBeUndefined();
  });

  it('refuses wrong audience, expired, tampered, alg none and HS256 signed with the public key', async () => {
    const p = await provider();
    const a = new OidcAuthenticator({ issuerUrl: ISSUER, clientId: 'kapi', fetchJson: p.fetchJson, minRefetchMs: 60_000 });
    const rejects = async (token: string): Promise<void> => {
      await expect(a.authenticate(bearer(token))).rejects.toMatchObject({ code: 401, message: 'Unauthorized' });
    };
    await rejects(await p.sign({ iss: ISSUER, aud: 'other', sub: 'alice' }));
    const now = Math.floor(Date.now() / 1000);
    await rejects(await p.sign({ iss: ISSUER, aud: 'kapi', sub: 'alice' }, { kid: 'k1' }, { iat: now - 3600, exp: now - 1800 }));
    const good = await p.sign({ iss: ISSUER, aud: 'kapi', sub: 'alice' });
    const [h, , s] = good.split('.');
    await rejects(`${h}.${base64url.encode(JSON.stringify({ iss: ISSUER, aud: 'kapi', sub: 'admin', exp: 4e9 }))}.${s}`);
    const none = `${base64url.encode(JSON.stringify({ alg: 'none', typ: 'JWT' }))}.${base64url.encode(JSON.stringify({ iss: ISSUER, aud: 'kapi', sub: 'alice', exp: 4e9 }))}.`;
    await rejects(none);
    const publicPem = await exportSPKI(p.publicKey);
    const hs = await new SignJWT({ iss: ISSUER, aud: 'kapi', sub: 'alice' })
      .setProtectedHeader({ alg: 'HS256', kid: 'k1' })
      .setExpirationTime('5m')
      .sign(Buffer.from(publicPem));
    await rejects(hs);
    // Unknown key ID within the refetch interval: refused without asking the provider again.
    await rejects(await p.sign({ iss: ISSUER, aud: 'kapi', sub: 'alice' }, { kid: 'k2' }));
    expect(p.fetched.filter((u) => u === JWKS_URI)).toHaveLength(1);
  });

  it('fetches the key set again for a key ID it does not know (a rotated key)', async () => {
    const p = await provider();
    const rotated = await generateKeyPair('RS256', { extractable: true });
    let keys: object[] = [{ ...(await exportJWK((await generateKeyPair('RS256', { extractable: true })).publicKey)), kid: 'old', alg: 'RS256' }];
    const fetchJson = (url: string): Promise<unknown> => (url === JWKS_URI ? Promise.resolve({ keys }) : p.fetchJson(url));
    const a = new OidcAuthenticator({ issuerUrl: ISSUER, clientId: 'kapi', usernamePrefix: '-', fetchJson, minRefetchMs: 0 });
    const token = await new SignJWT({ iss: ISSUER, aud: 'kapi', sub: 'alice' })
      .setProtectedHeader({ alg: 'RS256', kid: 'new' })
      .setExpirationTime('5m')
      .sign(rotated.privateKey);
    await expect(a.authenticate(bearer(token))).rejects.toMatchObject({ code: 401 });
    keys = [{ ...(await exportJWK(rotated.publicKey)), kid: 'new', alg: 'RS256' }];
    expect(await a.authenticate(bearer(token))).toEqual({ username: 'alice', groups: [] });
  });
});
