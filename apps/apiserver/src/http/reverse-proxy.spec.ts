import { isWithheldHeader, proxiedRequestHeaders, rewriteLocation } from './reverse-proxy.js';

describe('reverse proxy', () => {
  it('withholds credentials, impersonation, one-connection and pseudo headers', () => {
    for (const h of [
      'Authorization',
      'impersonate-user',
      'Impersonate-Extra-scopes',
      'X-Remote-User',
      'Connection',
      'Keep-Alive',
      'Transfer-Encoding',
      'TE',
      'Upgrade',
      'Host',
      'Content-Length',
      ':authority',
    ]) {
      expect([h, isWithheldHeader(h)]).toEqual([h, true]);
    }
    for (const h of ['Accept', 'Content-Type', 'Cookie', 'User-Agent', 'X-Custom']) expect([h, isWithheldHeader(h)]).toEqual([h, false]);
  });

  it('passes the other headers on, every value, and says where the client was', () => {
    const h = proxiedRequestHeaders(
      ['Accept', 'text/html', 'X-Multi', 'a', 'x-multi', 'b', 'Authorization', 'Bearer secret', 'Host', 'api:6443', 'X-Forwarded-For', 'spoofed'],
      new URL('http://10.0.0.1:8080/p'),
      { uri: '/api/v1/namespaces/a/pods/p/proxy/p', host: 'api:6443', proto: 'https', for: '10.9.9.9' },
      4,
    );
    expect(h).toEqual({
      accept: 'text/html',
      'x-multi': ['a', 'b'],
      host: '10.0.0.1:8080',
      'content-length': '4',
      'x-forwarded-uri': '/api/v1/namespaces/a/pods/p/proxy/p',
      'x-forwarded-host': 'api:6443',
      'x-forwarded-proto': 'https',
      'x-forwarded-for': '10.9.9.9',
    });
  });

  it('rewrites a redirect to the backend to go through the proxy, and leaves others as they are', () => {
    const target = new URL('http://10.0.0.1:8080/app/page');
    const from = { host: 'api:6443', proto: 'https' };
    const prefix = '/api/v1/namespaces/a/pods/p/proxy';
    expect(rewriteLocation('/login?next=%2F', target, from, prefix)).toBe(`https://api:6443${prefix}/login?next=%2F`);
    expect(rewriteLocation('http://10.0.0.1:8080/dir/', target, from, prefix)).toBe(`https://api:6443${prefix}/dir/`);
    expect(rewriteLocation('https://api:6443/x', target, from, prefix)).toBe(`https://api:6443${prefix}/x`);
    expect(rewriteLocation(`${prefix}/already`, target, from, prefix)).toBe(`https://api:6443${prefix}/already`);
    expect(rewriteLocation('https://example.com/away', target, from, prefix)).toBe('https://example.com/away');
    expect(rewriteLocation('relative/path', target, from, prefix)).toBe('relative/path');
  });
});
