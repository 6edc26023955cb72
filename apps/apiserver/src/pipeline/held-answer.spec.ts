import { once } from 'node:events';
import { createServer, get, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from '@jest/globals';
import type { FastifyReply } from 'fastify';
import { holdAnswer } from './held-answer.js';

type Raw = FastifyReply['raw'];

/** An HTTP server on loopback answering every request with `onRequest`. */
async function heldServer(onRequest: (res: ServerResponse) => void): Promise<{ server: Server; url: string }> {
  const server = createServer((_req, res) => onRequest(res));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` };
}

describe('holdAnswer', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
  });

  it.each([
    ['resolves', (settle: { resolve: () => void; reject: () => void }) => settle.resolve()],
    ['fails', (settle: { resolve: () => void; reject: () => void }) => settle.reject()],
  ])('sends nothing until the promise settles, then the headers and every write in order (the promise %s)', async (_how, finish) => {
    const settle = { resolve: () => {}, reject: () => {} };
    let held = false;
    const s = await heldServer((res) => {
      const until = new Promise<void>((resolve, reject) => Object.assign(settle, { resolve, reject: () => reject(new Error('not taken')) }));
      holdAnswer(res as unknown as Raw, until, () => res.writeHead(200, { 'content-type': 'text/plain' }));
      expect(res.write('a')).toBe(true);
      res.write('b');
      res.end('c');
      held = true;
    });
    server = s.server;
    let answered = false;
    const response = new Promise<IncomingMessage>((resolve) => get(s.url, (r) => ((answered = true), resolve(r))));
    await waitUntil(() => held);
    await new Promise((r) => setTimeout(r, 200));
    expect(answered).toBe(false);
    finish(settle);
    const r = await response;
    const chunks: Buffer[] = [];
    for await (const c of r) chunks.push(c as Buffer);
    expect([r.statusCode, r.headers['content-type'], Buffer.concat(chunks).toString()]).toEqual([200, 'text/plain', 'abc']);
  });

  it('writes nothing when the client went away meanwhile', async () => {
    let release: (() => void) | undefined;
    let closed = false;
    let wrote = false;
    const s = await heldServer((res) => {
      res.once('close', () => (closed = true));
      holdAnswer(res as unknown as Raw, new Promise<void>((r) => (release = r)), () => {
        wrote = true;
        res.writeHead(200);
      });
      res.end('late');
    });
    server = s.server;
    const req = get(s.url, () => {});
    req.on('error', () => {});
    await waitUntil(() => release !== undefined);
    req.destroy();
    await waitUntil(() => closed);
    release!();
    await new Promise((r) => setTimeout(r, 50));
    expect(wrote).toBe(false);
  });
});

async function waitUntil(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(cond()).toBe(true);
}
