/**
 * The HTTP fuzzer (bench/http.fuzz.ts, `npm run fuzz`) in a short run: FUZZ_CASES (default 2000)
 * generated requests over HTTP/1.1 and HTTP/2 against one node, with its pass conditions (no
 * crash, no 5xx but 503/504, every error a Status, open fds within 10% of the warm-up's; RSS is
 * reported, and judged by the full `npm run fuzz`). The cases come from a fixed seed (FUZZ_SEED
 * picks another), so a failure here replays exactly.
 * Then the answers the fuzzer found wrong, each pinned on its own.
 */
import * as http2 from 'node:http2';
import * as tls from 'node:tls';
import { formatReport, type FuzzOptions, runFuzz, SERVER_NODE_ARGS } from '../bench/http.fuzz.js';
import { request, type ServerHandle, startServer } from './support/server.js';

describe('HTTP fuzzing', () => {
  let server: ServerHandle;

  beforeAll(async () => {
    server = await startServer({ nodeArgs: SERVER_NODE_ARGS });
  });

  afterAll(async () => {
    await server?.cleanup();
  });

  it('survives generated requests with Status answers and steady file descriptors', async () => {
    const opts: FuzzOptions = {
      cases: Number(process.env.FUZZ_CASES) || 2000,
      concurrency: 32,
      seconds: 120,
      seed: Number(process.env.FUZZ_SEED) || 1,
      judgeRss: false,
    };
    const report = await runFuzz(server, opts, (line) => process.stderr.write(`${line}\n`));
    // The violations carry their reproducers; the report (histogram, RSS, fds) goes to stderr.
    process.stderr.write(`${formatReport(opts, report)}\n`);
    expect(report.violations).toEqual([]);
    expect(report.sent).toBe(opts.cases);
    expect(server.pid).toBeDefined();
  });

  /** One HTTP/2 request; resolves with the status, content type and body. */
  function h2(method: string, path: string): Promise<{ status: number; type: string | undefined; body: string }> {
    return new Promise((resolve, reject) => {
      const session = http2.connect(server.url, { ca: server.caPem, cert: server.adminCertPem, key: server.adminKeyPem });
      session.on('error', reject);
      const stream = session.request({ ':method': method, ':path': path });
      let body = '';
      let status = 0;
      let type: string | undefined;
      stream.on('response', (h) => {
        status = Number(h[':status']);
        type = h['content-type'];
      });
      stream.setEncoding('utf8').on('data', (d: string) => (body += d));
      stream.on('end', () => {
        session.close();
        resolve({ status, type, body });
      });
      stream.on('error', reject);
    });
  }

  it('answers a path with a malformed percent-escape with a 400 Status', async () => {
    const res = await request(server, 'GET', '/api/v1/namespaces/%zz/configmaps');
    expect(res.status).toBe(400);
    expect(res.json()).toMatchObject({ kind: 'Status', apiVersion: 'v1', code: 400, reason: 'BadRequest' });
    const viaH2 = await h2('GET', '/%zz');
    expect(viaH2.status).toBe(400);
    expect(JSON.parse(viaH2.body)).toMatchObject({ kind: 'Status', code: 400 });
  });

  it('answers an HTTP/2 request with a method no route knows with a 404 Status', async () => {
    const res = await h2('FUZZ', '/api/v1/namespaces/default/configmaps');
    expect(res.status).toBe(404);
    expect(res.type).toMatch(/^application\/json/);
    expect(JSON.parse(res.body)).toMatchObject({ kind: 'Status', apiVersion: 'v1', code: 404, reason: 'NotFound' });
  });

  it('delivers the 400 Status of a request Node cannot parse before it closes the connection, every time', async () => {
    const once = (): Promise<string> =>
      new Promise((resolve, reject) => {
        const s = tls.connect(
          { host: '127.0.0.1', port: server.port, ca: server.caPem, cert: server.adminCertPem, key: server.adminKeyPem, servername: 'localhost' },
          () => {
            s.write('FUZZ /api/v1 HTTP/1.1\r\nHost: x\r\n\r\n');
          },
        );
        let got = '';
        s.setEncoding('utf8').on('data', (d: string) => (got += d));
        s.on('close', () => resolve(got));
        s.on('error', reject);
      });
    const answers = await Promise.all(Array.from({ length: 40 }, once));
    for (const a of answers) {
      expect(a).toMatch(/^HTTP\/1\.1 400 /);
      expect(JSON.parse(a.slice(a.indexOf('\r\n\r\n') + 4))).toMatchObject({ kind: 'Status', code: 400 });
    }
  });

  it('takes a YAML body whose plain scalar has no digit (`.`) as a string', async () => {
    const body = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fuzz-dot\ndata:\n  a: .\n  b: -.\n';
    const res = await request(server, 'POST', '/api/v1/namespaces/default/configmaps', { body, headers: { 'content-type': 'application/yaml' } });
    expect(res.status).toBe(201);
    expect(res.json()).toMatchObject({ data: { a: '.', b: '-.' } });
  });
});
