import { randomBytes } from 'node:crypto';
import { ContinueTokenError, decodeContinueToken, encodeContinueToken, setContinueTokenKey } from './continue.token.js';

describe('continue tokens', () => {
  it('round-trips the revision and start key; the payload is Kubernetes-shaped', () => {
    const t = encodeContinueToken(42, 'ns1/name-3');
    expect(decodeContinueToken(t)).toEqual({ rv: 42, start: 'ns1/name-3' });
    const payload = JSON.parse(Buffer.from(t.split('.')[0]!, 'base64url').toString()) as unknown;
    expect(payload).toEqual({ v: 'meta.k8s.io/v1', rv: 42, start: 'ns1/name-3' });
    // rv -1: "continue at the latest revision" (the 410 token).
    expect(decodeContinueToken(encodeContinueToken(-1, 'a')).rv).toBe(-1);
  });

  it('rejects edited, forged and malformed tokens with ContinueTokenError', () => {
    const t = encodeContinueToken(7, 'a');
    const [payload, tag] = t.split('.') as [string, string];
    const edited = Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: 7, start: 'z' })).toString('base64url');
    for (const bad of [`${edited}.${tag}`, edited, `${payload}.`, `.${tag}`, 'x.y.z', '', 'not-base64!', `${payload}.${tag.slice(1)}`]) {
      expect(() => decodeContinueToken(bad)).toThrow(ContinueTokenError);
    }
  });

  it('checks the fields of a genuinely signed payload like Kubernetes DecodeContinue', () => {
    // Encode refuses bad revisions; a start key escaping the prefix is refused on decode.
    expect(() => encodeContinueToken(0, 'a')).toThrow(ContinueTokenError);
    expect(() => encodeContinueToken(1.5, 'a')).toThrow(ContinueTokenError);
    for (const start of ['', '/abs', '../x', 'a/../../b', 'a\0b', './a']) {
      expect(() => decodeContinueToken(encodeContinueToken(3, start))).toThrow(/continue key is not valid/);
    }
  });

  it('tokens signed with another key do not verify', () => {
    const t = encodeContinueToken(5, 'a');
    setContinueTokenKey(randomBytes(32));
    expect(() => decodeContinueToken(t)).toThrow(/not issued by this server/);
    expect(() => setContinueTokenKey(new Uint8Array(4))).toThrow(ContinueTokenError);
  });
});
