import { mkdtemp, rm } from 'node:fs/promises';
import { createSecureServer, type Http2SecureServer } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { createPki, loadPki } from '@app/pki';
import { widenHttp1WriteBuffer } from './http1.write-buffer.js';

/** How long the client sends requests. */
const SECONDS = 6;

describe('widenHttp1WriteBuffer (a real HTTPS server taking HTTP/1.1)', () => {
  let dir: string;
  let server: Http2SecureServer;
  let busy: NodeJS.Timeout | undefined;
  const parserErrors: string[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kapi-h1-'));
    await createPki({ outDir: dir, hosts: ['127.0.0.1'] });
    const pki = await loadPki(dir);
    server = createSecureServer({ key: pki.servingKeyPem, cert: pki.servingCertPem, allowHTTP1: true });
    widenHttp1WriteBuffer(server);
    // An echo of the body, answered a turn later, as a handler that awaits storage does.
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => setImmediate(() => res.writeHead(200, { 'content-type': 'application/json' }).end(Buffer.concat(chunks))));
    });
    server.on('clientError', (e: NodeJS.ErrnoException, socket) => {
      parserErrors.push(e.code ?? e.message);
      socket.destroy();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  });

  afterAll(async () => {
    if (busy) clearInterval(busy);
    await new Promise<void>((r) => server.close(() => r()));
    await rm(dir, { recursive: true, force: true });
  });

  it('keep-alive requests with 17 KiB bodies and answers all succeed while the event loop is busy', async () => {
    // A loop busy 3 ms of every 7, like a loaded node: without the wider buffer Node 20's parser
    // refused about one such request in 500 with HPE_PAUSED.
    busy = setInterval(() => {
      const until = Date.now() + 3;
      while (Date.now() < until);
    }, 7);
    const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/echo`;
    // The client runs in its own process, so the server's busy loop does not pace it.
    const client = `
      import { Agent, request } from 'undici7';
      const agent = new Agent({ connect: { rejectUnauthorized: false } });
      const body = JSON.stringify({ data: 'x'.repeat(17000) });
      const failures = []; let ok = 0;
      const end = Date.now() + ${SECONDS * 1000};
      await Promise.all(Array.from({ length: 6 }, async () => {
        while (Date.now() < end) {
          try {
            const r = await request(${JSON.stringify(url)}, { method: 'PUT', body, dispatcher: agent, headers: { 'content-type': 'application/json' } });
            const text = await r.body.text();
            if (r.statusCode === 200 && text.length === body.length) ok++; else failures.push('status ' + r.statusCode);
          } catch (e) { failures.push(e.code ?? String(e)); }
        }
      }));
      await agent.close();
      process.stdout.write(JSON.stringify({ ok, failures }));`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', client], { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    await new Promise((r) => child.once('close', r));
    const { ok, failures } = JSON.parse(out) as { ok: number; failures: string[] };
    clearInterval(busy);
    busy = undefined;
    expect(ok).toBeGreaterThan(1000);
    expect({ failures: failures.slice(0, 5), parserErrors: parserErrors.slice(0, 5) }).toEqual({ failures: [], parserErrors: [] });
  }, 120_000);
});
