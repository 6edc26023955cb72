import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensurePki } from '@app/pki';
import { closeWebhookConnections, MAX_RESPONSE_BYTES, postReview, WebhookCallError, type WebhookTarget } from './webhook.client.js';

/**
 * postReview against a real HTTPS server with a CA of its own: the bound on the answer's size
 * (admission's 3 MiB and a caller's own), and the failures a webhook call reports.
 */
describe('postReview', () => {
  let dir: string;
  let server: https.Server;
  let target: (path: string) => WebhookTarget;
  /** What the server answers at each path. */
  const answers: Record<string, (res: import('node:http').ServerResponse) => void> = {
    '/ok': (res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"response":{"allowed":true}}'),
    // A JSON document one byte over the bound: a string of padding inside an object.
    '/large': (res) => {
      const head = '{"pad":"';
      const tail = '"}';
      res.writeHead(200, { 'content-type': 'application/json' }).end(head + 'x'.repeat(MAX_RESPONSE_BYTES + 1 - head.length - tail.length) + tail);
    },
    '/at-bound': (res) => {
      const head = '{"pad":"';
      const tail = '"}';
      res.writeHead(200, { 'content-type': 'application/json' }).end(head + 'x'.repeat(MAX_RESPONSE_BYTES - head.length - tail.length) + tail);
    },
    '/refuses': (res) => res.writeHead(500).end('policy store down'),
    '/garbled': (res) => res.writeHead(200).end('{"response":'),
    '/silent': () => undefined,
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kapi-webhook-client-'));
    const pki = await ensurePki(join(dir, 'pki'), { hosts: ['127.0.0.1'] });
    server = https.createServer({ cert: await readFile(pki.servingCert, 'utf8'), key: await readFile(pki.servingKey, 'utf8') }, (req, res) => {
      req.resume();
      req.on('end', () => answers[new URL(req.url ?? '/', 'https://x').pathname]?.(res));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const caPem = await readFile(pki.caCert, 'utf8');
    target = (path) => ({ url: new URL(`https://127.0.0.1:${(server.address() as AddressInfo).port}${path}`), caPem });
  });

  afterAll(async () => {
    closeWebhookConnections();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(dir, { recursive: true, force: true });
  });

  const failure = (p: Promise<unknown>) =>
    p.then(
      () => 'answered',
      (e: unknown) => (e instanceof WebhookCallError ? e.message : `not a WebhookCallError: ${String(e)}`),
    );

  it('returns the parsed answer, up to the bound', async () => {
    expect(await postReview(target('/ok'), { kind: 'AdmissionReview' }, 5)).toEqual({ response: { allowed: true } });
    const atBound = (await postReview(target('/at-bound'), {}, 10)) as { pad: string };
    expect(atBound.pad.length).toBe(MAX_RESPONSE_BYTES - 10);
  });

  it('refuses an answer larger than the bound, the default (3 MiB) or the caller’s', async () => {
    expect(MAX_RESPONSE_BYTES).toBe(3 * 1024 * 1024);
    expect(await failure(postReview(target('/large'), {}, 10))).toMatch(
      /^failed to call webhook: Post "https:\/\/127\.0\.0\.1:\d+\/large\?timeout=10s": the answer is larger than 3145728 bytes$/,
    );
    expect(await failure(postReview(target('/ok'), {}, 5, 16))).toContain('the answer is larger than 16 bytes');
    // A larger bound (a conversion webhook's) takes what the default refuses.
    expect(((await postReview(target('/large'), {}, 10, 64 * 1024 * 1024)) as { pad: string }).pad.length).toBe(MAX_RESPONSE_BYTES + 1 - 10);
  });

  it('reports an error status, an answer that is not JSON, and a time-out', async () => {
    expect(await failure(postReview(target('/refuses'), {}, 5))).toBe(
      'failed to call webhook: an error on the server ("policy store down") has prevented the request from succeeding',
    );
    expect(await failure(postReview(target('/garbled'), {}, 5))).toMatch(/^received invalid webhook response: /);
    expect(await failure(postReview(target('/silent'), {}, 1))).toMatch(/^failed to call webhook: Post ".*\/silent\?timeout=1s": context deadline exceeded$/);
  });
});
