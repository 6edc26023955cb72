import { decodeAttribute, rewriteHtml } from './html-rewrite.js';

const toProxy = (u: string): string => (u.startsWith('/') ? `/P${u}` : u.startsWith('http://backend:80/') ? `/P/${u.slice('http://backend:80/'.length)}` : u);

describe('HTML link rewriting', () => {
  it('rewrites the URL attributes of the elements kube rewrites, in place, and nothing else', () => {
    const html = [
      '<!doctype html><html><head><link href="/style.css" rel=stylesheet>',
      "<script src='/app.js?a=1&amp;b=2'></script>",
      '<script>var s = \'<a href="/inside-script">\';</script></head>',
      '<body><!-- <a href="/in-comment"> --><a href=/unquoted>x</a><a href="rel/path">r</a>',
      '<A HREF="http://backend:80/abs">a</A><img src="https://other.example/x.png" alt="/not-a-link">',
      '<p title="/nope">/text</p><form action="/submit"></form><a href>empty</a><a href="/q?x=&quot;">q</a></body></html>',
    ].join('\n');
    expect(rewriteHtml(html, toProxy)).toBe(
      [
        '<!doctype html><html><head><link href="/P/style.css" rel=stylesheet>',
        "<script src='/P/app.js?a=1&amp;b=2'></script>",
        '<script>var s = \'<a href="/inside-script">\';</script></head>',
        '<body><!-- <a href="/in-comment"> --><a href="/P/unquoted">x</a><a href="rel/path">r</a>',
        '<A HREF="/P/abs">a</A><img src="https://other.example/x.png" alt="/not-a-link">',
        '<p title="/nope">/text</p><form action="/P/submit"></form><a href>empty</a><a href="/P/q?x=&#34;">q</a></body></html>',
      ].join('\n'),
    );
  });

  it('leaves a page without such links as it is, and decodes character references in values', () => {
    const page = '<p>nothing to see</p>';
    expect(rewriteHtml(page, toProxy)).toBe(page);
    expect(decodeAttribute('/a?x=1&amp;y=&#x32;&#51;&quot;&unknown;')).toBe('/a?x=1&y=23"&unknown;');
  });
});
