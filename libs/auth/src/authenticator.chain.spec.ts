import { Errors } from '@app/apimachinery';
import { AuthenticatorChain } from './authenticator.chain.js';
import type { Authenticator } from './authenticator.port.js';

const byHeader = (header: string, name: string): Authenticator => ({
  authenticate: (req) => (req.headers[header] ? { username: name, groups: ['g'] } : undefined),
});

describe('authenticator chain', () => {
  it('asks methods in order; the first that recognizes the credential decides and adds system:authenticated', async () => {
    const chain = new AuthenticatorChain([byHeader('x-a', 'a'), byHeader('x-b', 'b')]);
    expect(await chain.authenticate({ headers: { 'x-b': '1', 'x-a': '1' } })).toEqual({ username: 'a', groups: ['g', 'system:authenticated'] });
    expect(await chain.authenticate({ headers: { 'x-b': '1' } })).toEqual({ username: 'b', groups: ['g', 'system:authenticated'] });
    expect(await chain.authenticate({ headers: {} })).toBeUndefined();
  });

  it('stops at a method that rejects its credential, even if a later one would accept the request', async () => {
    const rejecting: Authenticator = { authenticate: () => Promise.reject(Errors.unauthorized()) };
    const chain = new AuthenticatorChain([rejecting, byHeader('x-a', 'a')]);
    await expect(chain.authenticate({ headers: { 'x-a': '1' } })).rejects.toMatchObject({ code: 401 });
  });

  it('answers synchronously while the methods do, and asks the next method after one that answers undefined asynchronously', async () => {
    const chain = new AuthenticatorChain([byHeader('x-a', 'a'), { authenticate: () => Promise.resolve(undefined) }, byHeader('x-b', 'b')]);
    expect(chain.authenticate({ headers: { 'x-a': '1' } })).toEqual({ username: 'a', groups: ['g', 'system:authenticated'] });
    const later = chain.authenticate({ headers: { 'x-b': '1' } });
    expect(later).toBeInstanceOf(Promise);
    expect(await later).toEqual({ username: 'b', groups: ['g', 'system:authenticated'] });
    expect(await chain.authenticate({ headers: {} })).toBeUndefined();
  });

  it('adds system:authenticated to a frozen user once and hands out the same frozen answer after', async () => {
    const stored = Object.freeze({ username: 'carol', groups: Object.freeze(['qa']) as string[] });
    const chain = new AuthenticatorChain([{ authenticate: () => stored }]);
    const first = chain.authenticate({ headers: {} });
    expect(first).toEqual({ username: 'carol', groups: ['qa', 'system:authenticated'] });
    expect(chain.authenticate({ headers: {} })).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(stored.groups).toEqual(['qa']);
  });
});
