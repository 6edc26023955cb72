import { createHmac } from 'node:crypto';
import type { KubeObject } from '@app/apimachinery';
import { BootstrapTokenAuthenticator } from './bootstrap-token.authenticator.js';
import {
  authenticateWithSecret,
  bootstrapGroups,
  isExpired,
  parseBootstrapToken,
  parseRfc3339,
  signingToken,
  timeToExpiry,
  tokenIdOfSecretName,
} from './bootstrap-token.rules.js';
import { detachedSignature } from './bootstrap-token.signature.js';

const NOW = Date.parse('2026-06-01T12:00:00Z');
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

/** A token Secret as stored (data base64), `bootstrap-token-abcdef` with secret 0123456789abcdef. */
function secret(data: Record<string, string> = {}, extra: Partial<KubeObject> = {}): KubeObject {
  const all: Record<string, string> = { 'token-id': 'abcdef', 'token-secret': '0123456789abcdef', 'usage-bootstrap-authentication': 'true', ...data };
  for (const k of Object.keys(all)) if (all[k] === '<absent>') delete all[k];
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'bootstrap-token-abcdef', namespace: 'kube-system' },
    type: 'bootstrap.kubernetes.io/token',
    data: Object.fromEntries(Object.entries(all).map(([k, v]) => [k, b64(v)])),
    ...extra,
  };
}
const TOKEN = { id: 'abcdef', secret: '0123456789abcdef' };

describe('bootstrap token format', () => {
  it('is [a-z0-9]{6}.[a-z0-9]{16} and nothing else', () => {
    expect(parseBootstrapToken('abcdef.0123456789abcdef')).toEqual(TOKEN);
    for (const bad of [
      'ABCDEF.0123456789abcdef',
      'abcde.0123456789abcdef',
      'abcdef.0123456789abcdeF',
      'abcdef.0123456789abcdefg',
      'abcdef0123456789abcdef',
      ' abcdef.0123456789abcdef',
      'abcdef.0123456789abcde\n',
    ]) {
      expect(parseBootstrapToken(bad)).toBeUndefined();
    }
  });

  it('names the Secret bootstrap-token-<id>', () => {
    expect(tokenIdOfSecretName('bootstrap-token-abc123')).toBe('abc123');
    expect(tokenIdOfSecretName('bootstrap-token-abc12')).toBeUndefined();
    expect(tokenIdOfSecretName('token-abc123')).toBeUndefined();
  });
});

describe('expiration', () => {
  it('is RFC 3339; none means never, past or unparsable means expired', () => {
    expect(timeToExpiry(secret(), NOW)).toBeUndefined();
    expect(timeToExpiry(secret({ expiration: '2026-06-01T12:00:10Z' }), NOW)).toBe(10_000);
    expect(timeToExpiry(secret({ expiration: '2026-06-01T14:00:10+02:00' }), NOW)).toBe(10_000);
    expect(isExpired(secret({ expiration: '2026-06-01T12:00:00Z' }), NOW)).toBe(true);
    expect(isExpired(secret({ expiration: '2026-06-01T11:59:59.5Z' }), NOW)).toBe(true);
    for (const bad of ['tomorrow', '2026-06-02', '2026-06-02 12:00:00Z', '2027-02-30T00:00:00Z', '2027-01-01T24:00:00Z', '1795636800']) {
      expect(isExpired(secret({ expiration: bad }), NOW)).toBe(true);
    }
    expect(parseRfc3339('2028-02-29T00:00:00.123456789Z')).toBe(Date.parse('2028-02-29T00:00:00.123Z'));
  });
});

describe('extra groups', () => {
  it('adds system:bootstrappers and the comma list, deduplicated and sorted', () => {
    expect(bootstrapGroups(secret())).toEqual(['system:bootstrappers']);
    expect(bootstrapGroups(secret({ 'auth-extra-groups': 'system:bootstrappers:b,system:bootstrappers:a:x-1,system:bootstrappers:b' }))).toEqual([
      'system:bootstrappers',
      'system:bootstrappers:a:x-1',
      'system:bootstrappers:b',
    ]);
  });

  it('refuses the token when any group lacks the prefix or breaks the character rule', () => {
    for (const bad of [
      'system:masters',
      'system:bootstrappers:',
      'system:bootstrappers:a,system:masters',
      'system:bootstrappers:UPPER',
      'system:bootstrappers:ends-',
      'system:bootstrappers:a, system:bootstrappers:b',
      'system:bootstrappers:a,',
      `system:bootstrappers:${'a'.repeat(257)}`,
    ]) {
      expect(bootstrapGroups(secret({ 'auth-extra-groups': bad }))).toBeUndefined();
    }
    expect(bootstrapGroups(secret({ 'auth-extra-groups': `system:bootstrappers:${'a'.repeat(256)}` }))).toHaveLength(2);
  });
});

describe('authenticating with the Secret', () => {
  it('gives system:bootstrap:<id> in system:bootstrappers and the extra groups', () => {
    expect(authenticateWithSecret(TOKEN, secret({ 'auth-extra-groups': 'system:bootstrappers:kubeadm:default-node-token' }), NOW)).toEqual({
      user: { username: 'system:bootstrap:abcdef', groups: ['system:bootstrappers', 'system:bootstrappers:kubeadm:default-node-token'] },
    });
    expect(authenticateWithSecret(TOKEN, secret({ expiration: '2026-06-01T12:00:01Z' }), NOW)).toHaveProperty('user');
  });

  it('checks every key rule', () => {
    const cases: Array<[KubeObject, string]> = [
      [secret({ 'token-secret': '0123456789abcdeX' }), 'secret'],
      [secret({ 'token-secret': '0123456789abcde' }), 'secret'],
      [secret({ 'token-secret': '<absent>' }), 'secret'],
      [secret({ 'token-id': 'abcdeg' }), 'id'],
      [secret({ 'token-id': '<absent>' }), 'id'],
      [secret({ expiration: '2026-06-01T11:00:00Z' }), 'expired'],
      [secret({ expiration: 'never' }), 'expired'],
      [secret({ 'usage-bootstrap-authentication': 'false' }), 'usage'],
      [secret({ 'usage-bootstrap-authentication': 'True' }), 'usage'],
      [secret({ 'usage-bootstrap-authentication': '<absent>' }), 'usage'],
      [secret({ 'auth-extra-groups': 'system:masters' }), 'groups'],
      [secret({}, { type: 'Opaque' }), 'type'],
      [secret({}, { metadata: { name: 'bootstrap-token-abcdef', namespace: 'kube-system', deletionTimestamp: '2026-06-01T11:00:00Z' } }), 'deleted'],
    ];
    for (const [s, reason] of cases) expect(authenticateWithSecret(TOKEN, s, NOW)).toEqual({ refused: reason });
  });
});

describe('BootstrapTokenAuthenticator', () => {
  const auth = (secrets: KubeObject[], refusals: string[] = []) =>
    new BootstrapTokenAuthenticator({
      secret: (name) => secrets.find((s) => s.metadata.name === name),
      now: () => NOW,
      onRefused: (id, why) => refusals.push(`${id}:${why}`),
    });
  const bearer = (t: string) => ({ headers: { authorization: `Bearer ${t}` } });

  it('authenticates a good token and leaves everything else to the next method', async () => {
    const refusals: string[] = [];
    const a = auth(
      [secret(), secret({ 'token-id': 'zzzzzz', 'token-secret': 'zzzzzzzzzzzzzzzz' }, { metadata: { name: 'bootstrap-token-zzzzzz' }, type: 'Opaque' })],
      refusals,
    );
    expect(await a.authenticate(bearer('abcdef.0123456789abcdef'))).toEqual({ username: 'system:bootstrap:abcdef', groups: ['system:bootstrappers'] });
    expect(await a.authenticate(bearer('abcdef.0123456789abcdee'))).toBeUndefined();
    expect(await a.authenticate(bearer('qqqqqq.0123456789abcdef'))).toBeUndefined();
    expect(await a.authenticate(bearer('not-a-bootstrap-token'))).toBeUndefined();
    expect(await a.authenticate({ headers: {} })).toBeUndefined();
    expect(await a.authenticate(bearer('zzzzzz.zzzzzzzzzzzzzzzz'))).toBeUndefined();
    expect(refusals).toEqual(['abcdef:secret', 'zzzzzz:type']);
  });
});

describe('signing', () => {
  it('offers only well-formed, unexpired bootstrap Secrets with usage-bootstrap-signing "true"', () => {
    const signing = { 'usage-bootstrap-signing': 'true' };
    expect(signingToken(secret(signing), NOW)).toEqual(TOKEN);
    expect(signingToken(secret(), NOW)).toBeUndefined();
    expect(signingToken(secret({ ...signing, expiration: '2026-06-01T11:00:00Z' }), NOW)).toBeUndefined();
    expect(signingToken(secret({ ...signing, 'token-id': 'zzzzzz' }), NOW)).toBeUndefined();
    expect(signingToken(secret({ ...signing, 'token-secret': 'short' }), NOW)).toBeUndefined();
    expect(signingToken(secret(signing, { type: 'Opaque' }), NOW)).toBeUndefined();
    expect(signingToken(secret(signing, { metadata: { name: 'other-abcdef', namespace: 'kube-system' } }), NOW)).toBeUndefined();
  });

  it('is the RFC 7515 compact serialization with the payload left out', async () => {
    const content = 'apiVersion: v1\nkind: Config\n';
    const sig = await detachedSignature(content, 'abcdef', '0123456789abcdef');
    const [header, payload, mac] = sig.split('.');
    expect(payload).toBe('');
    expect(JSON.parse(Buffer.from(header!, 'base64url').toString('utf8'))).toEqual({ alg: 'HS256', kid: 'abcdef' });
    const input = `${header}.${Buffer.from(content).toString('base64url')}`;
    expect(mac).toBe(createHmac('sha256', 'abcdef.0123456789abcdef').update(input).digest('base64url'));
  });
});
