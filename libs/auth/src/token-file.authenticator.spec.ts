import { bearerToken } from './bearer.token.js';
import { parseTokenFile, TokenFileAuthenticator, TokenFileError, UnrecognizedBearerTokenAuthenticator } from './token-file.authenticator.js';

describe('bearer token', () => {
  it('reads `Authorization: Bearer <token>` with any case of the scheme', () => {
    expect(bearerToken({ authorization: 'Bearer abc' })).toBe('abc');
    expect(bearerToken({ authorization: 'bearer  abc ' })).toBe('abc');
    expect(bearerToken({ authorization: 'Basic abc' })).toBeUndefined();
    expect(bearerToken({ authorization: 'Bearer ' })).toBeUndefined();
    expect(bearerToken({})).toBeUndefined();
  });
});

describe('token file', () => {
  it('parses token,user,uid,"group1,group2" lines as kube-apiserver does', () => {
    const users = parseTokenFile('t1,alice,u1,"dev,ops"\n\nt2, bob ,u2\nt3,carol,u3,solo,ignored\r\n');
    expect(users.get('t1')).toEqual({ username: 'alice', uid: 'u1', groups: ['dev', 'ops'] });
    expect(users.get('t2')).toEqual({ username: 'bob ', uid: 'u2', groups: [] });
    expect(users.get('t3')).toEqual({ username: 'carol', uid: 'u3', groups: ['solo'] });
    expect(users.size).toBe(3);
  });

  it('names the line of a malformed record and never the token', () => {
    expect(() => parseTokenFile('t1,alice,u1\nsecret,bob')).toThrow(
      new TokenFileError('line 2: must have at least 3 columns (token, user name, user uid), found 2'),
    );
    expect(() => parseTokenFile('secret,bob,u,"dev')).toThrow('line 1: unterminated quoted field');
    expect(() => parseTokenFile(',bob,u')).toThrow('line 1: empty token');
    expect(() => parseTokenFile('secret,,u')).toThrow('line 1: empty user name');
    expect(() => parseTokenFile('sec"ret,bob,u')).toThrow('line 1: bare "');
    let message = '';
    try {
      parseTokenFile('supersecret,bob');
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).not.toContain('supersecret');
  });

  it('authenticates a known bearer token and leaves others to the next method', () => {
    const a = new TokenFileAuthenticator(parseTokenFile('t1,alice,u1,dev'));
    expect(a.authenticate({ headers: { authorization: 'Bearer t1' } })).toEqual({ username: 'alice', uid: 'u1', groups: ['dev'] });
    // The same frozen user for every request with the token: nothing copied per request, nothing to mutate.
    const user = a.authenticate({ headers: { authorization: 'Bearer t1' } })!;
    expect(a.authenticate({ headers: { authorization: 'Bearer t1' } })).toBe(user);
    expect(Object.isFrozen(user) && Object.isFrozen(user.groups)).toBe(true);
    expect(a.authenticate({ headers: { authorization: 'Bearer nope' } })).toBeUndefined();
    expect(a.authenticate({ headers: {} })).toBeUndefined();
  });

  it('an unaccepted bearer token is a 401 at the end of the token methods', () => {
    const last = new UnrecognizedBearerTokenAuthenticator();
    expect(() => last.authenticate({ headers: { authorization: 'Bearer nope' } })).toThrow(expect.objectContaining({ code: 401 }));
    expect(last.authenticate({ headers: {} })).toBeUndefined();
  });
});
