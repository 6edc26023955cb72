import { Readable } from 'node:stream';
import { deflateSync, gunzipSync, gzipSync, inflateSync } from 'node:zlib';
import { isWithheldHeader, proxiedRequestHeaders, rewriteLink, rewrittenHtml } from './reverse-proxy.js';

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

  it('rewrites a link to the backend to go through the proxy, as a path, and leaves others as they are', () => {
    const target = new URL('http://10.0.0.1:8080/app/page');
    const from = { host: 'api:6443' };
    const prefix = '/api/v1/namespaces/a/pods/p/proxy';
    const link = (l: string) => rewriteLink(l, target, from, prefix);
    expect(link('/login?next=%2F')).toBe(`${prefix}/login?next=%2F`);
    expect(link('http://10.0.0.1:8080/dir/')).toBe(`${prefix}/dir/`);
    expect(link('http://10.0.0.1:8080')).toBe(`${prefix}/`);
    expect(link('http://10.0.0.1:8080?q=1')).toBe(`${prefix}/?q=1`);
    expect(link('//10.0.0.1:8080/x#top')).toBe(`${prefix}/x#top`);
    expect(link('https://api:6443/x')).toBe(`${prefix}/x`);
    expect(link(`${prefix}/already`)).toBe(`${prefix}/already`);
    expect(link('/caf\u00e9/%20x')).toBe(`${prefix}/caf\u00e9/%20x`);
    for (const kept of ['https://example.com/away', 'relative/path', '?q', '#frag', 'mailto:a@b.example', 'data:text/plain,x', 'http://[bad/x']) {
      expect([kept, link(kept)]).toEqual([kept, kept]);
    }
  });

  it('rewrites a page whole, gzip or deflate included, and passes one past the limit on as it came', async () => {
    const page = '<a href="/x">x</a>';
    const answer = (body: Buffer, encoding?: string) =>
      Object.assign(Readable.from([body.subarray(0, 5), body.subarray(5)]), { headers: encoding ? { 'content-encoding': encoding } : {} });
    const link = (u: string) => `/P${u}`;
    const plain = await rewrittenHtml(answer(Buffer.from(page)), link);
    expect(plain.encoded).toBe(true);
    expect(String(plain.body)).toBe('<a href="/P/x">x</a>');
    const gz = await rewrittenHtml(answer(gzipSync(page), 'gzip'), link);
    expect(gunzipSync(gz.body as Buffer).toString()).toBe('<a href="/P/x">x</a>');
    const df = await rewrittenHtml(answer(deflateSync(page), 'deflate'), link);
    expect(inflateSync(df.body as Buffer).toString()).toBe('<a href="/P/x">x</a>');
    // Past the limit once inflated, or not inflating at all: as it came.
    const bomb = gzipSync(`${page}${'a'.repeat(4096)}`);
    expect(await rewrittenHtml(answer(bomb, 'gzip'), link, 1024)).toEqual({ body: bomb, encoded: true });
    const broken = Buffer.from('not gzip at all');
    expect(await rewrittenHtml(answer(broken, 'gzip'), link)).toEqual({ body: broken, encoded: true });
    const big = await rewrittenHtml(answer(Buffer.from(page)), link, 4);
    expect(big.encoded).toBe(false);
    const chunks: Buffer[] = [];
    for await (const c of big.body as Readable) chunks.push(c as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe(page);
  });
});
