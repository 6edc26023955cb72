import { promises as fs } from 'node:fs';
import * as https from 'node:https';
import { type AddressInfo, createServer } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { ensurePki, loadPki, type PkiMaterial } from '@app/pki';
import { LeanPool, decodeChunked, parseHead } from './lean.client.js';

describe('parseHead', () => {
  it('reads the status, Content-Length and Connection', () => {
    expect(parseHead('HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 42', 'POST')).toEqual({
      status: 201,
      length: 42,
      close: false,
    });
    expect(parseHead('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\nconnection: close', 'GET')).toEqual({ status: 200, length: -1, close: true });
    expect(parseHead('HTTP/1.0 200 OK\r\ncontent-length: 0', 'GET').close).toBe(true);
    expect(parseHead('HTTP/1.1 200 OK\r\nKeep-Alive: timeout=5\r\ncontent-length: 0', 'GET').keepAliveMs).toBe(5000);
  });
  it('knows the responses that have no body', () => {
    expect(parseHead('HTTP/1.1 204 No Content', 'DELETE').length).toBe(0);
    expect(parseHead('HTTP/1.1 200 OK\r\ncontent-length: 10', 'HEAD').length).toBe(0);
  });
  it('refuses what it cannot frame', () => {
    expect(() => parseHead('HTTP/1.1 200 OK', 'GET')).toThrow(/Content-Length or chunked/);
    expect(() => parseHead('HTTP/1.1 200 OK\r\ncontent-length: -1', 'GET')).toThrow(/content-length/);
    expect(() => parseHead('SSH-2.0-OpenSSH', 'GET')).toThrow(/status line/);
  });
});

describe('decodeChunked', () => {
  const wire = Buffer.from('5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nx-trailer: 1\r\n\r\nNEXT');
  it('joins the chunks and skips extensions and trailers', () => {
    const r = decodeChunked(wire, 0)!;
    expect(r.body.toString()).toBe('hello, world');
    expect(wire.subarray(r.end).toString()).toBe('NEXT');
  });
  it('waits for more bytes at every cut', () => {
    const full = wire.length - 'NEXT'.length;
    for (let cut = 0; cut < full; cut++) expect(decodeChunked(wire.subarray(0, cut), 0)).toBeUndefined();
  });
});

describe('LeanPool against a real TLS server', () => {
  let dir: string;
  let pki: PkiMaterial;
  let server: https.Server;
  let origin: string;
  const sockets = new Set<unknown>();

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'lean-client-'));
    await ensurePki(dir, { hosts: ['127.0.0.1'] });
    pki = await loadPki(dir);
    server = https.createServer(
      { ca: pki.caPem, cert: pki.servingCertPem, key: pki.servingKeyPem, requestCert: true, rejectUnauthorized: true },
      (req, res) => {
        sockets.add(req.socket);
        let body = '';
        req.setEncoding('utf8');
        req.on('data', (d: string) => (body += d));
        req.on('end', () => {
          const cn = (req.socket as import('node:tls').TLSSocket).getPeerCertificate().subject?.CN;
          if (req.url === '/echo') {
            res.writeHead(201, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ method: req.method, body, cn, type: req.headers['content-type'] }));
          } else if (req.url === '/chunked') {
            res.writeHead(200, { 'transfer-encoding': 'chunked' });
            res.write('a'.repeat(70_000));
            setTimeout(() => res.end('tail'), 10);
          } else if (req.url === '/close') {
            res.writeHead(200, { 'content-length': 2, connection: 'close' });
            res.end('ok');
          } else if (req.url === '/hang') {
            // never answers
          } else {
            res.writeHead(404, { 'content-length': 0 });
            res.end();
          }
        });
      },
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await fs.rm(dir, { recursive: true, force: true });
  });

  const tls = () => ({ ca: pki.caPem, cert: pki.adminCertPem, key: pki.adminKeyPem });

  it('sends the method, headers and body with the client certificate, over kept-alive connections', async () => {
    const pool = new LeanPool(origin, { connections: 2, tls: tls() });
    sockets.clear();
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        pool.request({ method: 'POST', path: '/echo', headers: { 'content-type': 'application/json' }, body: `{"i":${i},"s":"é"}` }),
      ),
    );
    for (const [i, a] of answers.entries()) {
      expect(a.statusCode).toBe(201);
      expect(JSON.parse(await a.body.text())).toEqual({ method: 'POST', body: `{"i":${i},"s":"é"}`, cn: 'kubernetes-admin', type: 'application/json' });
    }
    // 20 requests over two kept-alive connections.
    expect(sockets.size).toBe(2);
    await pool.close();
  });

  it('replaces a connection that was idle too long instead of writing into it', async () => {
    const pool = new LeanPool(origin, { connections: 1, tls: tls(), maxIdleMs: 100 });
    sockets.clear();
    expect((await pool.request({ method: 'POST', path: '/echo', body: 'a' })).statusCode).toBe(201);
    expect((await pool.request({ method: 'POST', path: '/echo', body: 'b' })).statusCode).toBe(201);
    expect(sockets.size).toBe(1);
    await new Promise((r) => setTimeout(r, 250));
    expect((await pool.request({ method: 'POST', path: '/echo', body: 'c' })).statusCode).toBe(201);
    expect(sockets.size).toBe(2);
    await pool.close();
  });

  it('reads chunked bodies that arrive in several reads', async () => {
    const pool = new LeanPool(origin, { connections: 1, tls: tls() });
    const r = await pool.request({ method: 'GET', path: '/chunked' });
    expect(r.statusCode).toBe(200);
    const text = await r.body.text();
    expect(text.length).toBe(70_004);
    expect(text.endsWith('atail')).toBe(true);
    // The connection is still usable after a chunked body.
    expect((await pool.request({ method: 'GET', path: '/missing' })).statusCode).toBe(404);
    await pool.close();
  });

  it('reconnects after the server closed the connection', async () => {
    const pool = new LeanPool(origin, { connections: 1, tls: tls() });
    for (let i = 0; i < 3; i++) {
      const r = await pool.request({ method: 'GET', path: '/close' });
      expect(await r.body.text()).toBe('ok');
    }
    expect((await pool.request({ method: 'POST', path: '/echo', body: 'x' })).statusCode).toBe(201);
    await pool.close();
  });

  it('fails a request that gets no answer in time, and the connection recovers', async () => {
    const pool = new LeanPool(origin, { connections: 1, tls: tls(), timeoutMs: 200 });
    await expect(pool.request({ method: 'GET', path: '/hang' })).rejects.toThrow(/no response within 200 ms/);
    expect((await pool.request({ method: 'POST', path: '/echo', body: 'y' })).statusCode).toBe(201);
    await pool.close();
  });

  it('fails without a client certificate the server accepts', async () => {
    const other = await fs.mkdtemp(path.join(os.tmpdir(), 'lean-client-other-'));
    try {
      await ensurePki(other, { hosts: ['127.0.0.1'] });
      const foreign = await loadPki(other);
      const pool = new LeanPool(origin, { connections: 1, tls: { ca: pki.caPem, cert: foreign.adminCertPem, key: foreign.adminKeyPem }, timeoutMs: 2000 });
      await expect(pool.request({ method: 'GET', path: '/echo' })).rejects.toThrow();
      await pool.close();
    } finally {
      await fs.rm(other, { recursive: true, force: true });
    }
  });

  it('fails, without hanging, when the server drops the connection during the handshake', async () => {
    const dropper = createServer((sock) => sock.destroy());
    await new Promise<void>((r) => dropper.listen(0, '127.0.0.1', r));
    try {
      const pool = new LeanPool(`https://127.0.0.1:${(dropper.address() as AddressInfo).port}`, { connections: 1, tls: tls() });
      await expect(pool.request({ method: 'GET', path: '/' })).rejects.toThrow();
      await pool.close();
    } finally {
      await new Promise((r) => dropper.close(r));
    }
  });

  it('refuses plain http origins', () => {
    expect(() => new LeanPool('http://127.0.0.1:1', { connections: 1, tls: tls() })).toThrow(/HTTPS only/);
  });
});
