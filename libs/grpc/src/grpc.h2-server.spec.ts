import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import * as http from 'node:http';
import * as http2 from 'node:http2';
import * as https from 'node:https';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { createPki, loadPki } from '@app/pki';
import { type DuplexCall, GrpcH2Server, type GrpcServiceDefinition, type Msg, type UnaryCall } from './grpc.h2-server.js';
import { SerializedMessage, encodeMessage } from './grpc.h2-framing.js';
import { tlsChannelCredentials } from './grpc.tls-credentials.js';

const PROTO = `syntax = "proto3";
package t.v1;
message Item { string name = 1; }
message Count { uint32 n = 1; }
message List { repeated Item items = 1; uint32 total = 2; }
service Echo {
  rpc Say(Item) returns (Item);
  rpc Many(Item) returns (List);
  rpc Collect(stream Item) returns (Count);
}
service Other {
  rpc Ping(Item) returns (Item);
}
`;

type Client = grpc.Client & {
  Say(req: Msg, cb: (e: grpc.ServiceError | null, r?: Msg) => void): void;
  Many(req: Msg, cb: (e: grpc.ServiceError | null, r?: Msg) => void): void;
  Collect(cb: (e: grpc.ServiceError | null, r?: Msg) => void): grpc.ClientWritableStream<Msg>;
  Ping(req: Msg, cb: (e: grpc.ServiceError | null, r?: Msg) => void): void;
};

let dir: string;
let def: protoLoader.PackageDefinition;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'grpc-h2-'));
  await writeFile(join(dir, 't.proto'), PROTO);
  def = protoLoader.loadSync(join(dir, 't.proto'), { defaults: true });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function client(port: number, service: 'Echo' | 'Other'): Client {
  const ctor = grpc.makeGenericClientConstructor(def[`t.v1.${service}`] as grpc.ServiceDefinition, service);
  return new ctor(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), {
    'grpc.enable_retries': 0,
    // A connection of its own per client (grpc-js shares them by default).
    'grpc.use_local_subchannel_pool': 1,
  }) as unknown as Client;
}

const say = (c: Client, name: string): Promise<Msg> => new Promise((resolve, reject) => c.Say({ name }, (e, r) => (e ? reject(e) : resolve(r!))));

describe('GrpcH2Server', () => {
  it('answers unary calls, and a client stream whose headers it sends before any request', async () => {
    const seen: string[] = [];
    const server = new GrpcH2Server(def, {
      't.v1.Echo': {
        Say: (call: UnaryCall) => call.respond({ name: `hello ${call.request.name}` }),
        Collect: (call: DuplexCall) => {
          call.sendHeaders();
          let n = 0;
          call.on('data', (m) => {
            n++;
            seen.push(m.name);
          });
          call.on('end', () => {
            call.write({ n });
            call.end();
          });
        },
      },
    });
    const port = await server.listen({ host: '127.0.0.1', port: 0 });
    const c = client(port, 'Echo');
    try {
      for (let i = 0; i < 3; i++) expect(await say(c, `n${i}`)).toEqual({ name: `hello n${i}` });
      let count: Msg | undefined;
      const done = new Promise<void>((resolve, reject) => {
        const s = c.Collect((e, r) => {
          count = r;
          if (e) reject(e);
          else resolve();
        });
        // Nothing written yet: the headers come anyway.
        s.once('metadata', () => {
          s.write({ name: 'a' });
          s.write({ name: 'b' });
          s.end();
        });
      });
      await done;
      expect(count).toEqual({ n: 2 });
      expect(seen).toEqual(['a', 'b']);
    } finally {
      c.close();
      await server.stop();
    }
  });

  it('sends a response a handler serialized itself in pieces, as the message they make together', async () => {
    const serialize = (def['t.v1.Echo'] as Record<string, protoLoader.MethodDefinition<Msg, Msg>>).Many!.responseSerialize;
    const server = new GrpcH2Server(def, {
      't.v1.Echo': {
        Many: (call: UnaryCall) =>
          call.respond(
            new SerializedMessage([
              serialize({ total: 3 }),
              serialize({ items: [{ name: call.request.name }] }),
              serialize({ items: [{ name: 'b' }, { name: 'c' }] }),
            ]),
          ),
      },
    });
    const port = await server.listen({ host: '127.0.0.1', port: 0 });
    const c = client(port, 'Echo');
    try {
      const r = await new Promise<Msg>((resolve, reject) => c.Many({ name: 'a' }, (e, m) => (e ? reject(e) : resolve(m!))));
      expect(r).toEqual({ items: [{ name: 'a' }, { name: 'b' }, { name: 'c' }], total: 3 });
    } finally {
      c.close();
      await server.stop();
    }
  });

  it('serves a service added after listen(), and refuses every call of a connection authorize() turns down', async () => {
    let allow = false;
    const server = new GrpcH2Server(
      def,
      { 't.v1.Echo': { Say: (call: UnaryCall) => call.respond({ name: call.request.name }) } },
      { authorize: () => (allow ? undefined : { code: grpc.status.PERMISSION_DENIED, details: 'no' }) },
    );
    const port = await server.listen({ host: '127.0.0.1', port: 0 });
    server.addService(def['t.v1.Other'] as unknown as GrpcServiceDefinition, { Ping: (call: UnaryCall) => call.respond({ name: 'pong' }) });
    const denied = client(port, 'Echo');
    try {
      await expect(say(denied, 'x')).rejects.toMatchObject({ code: grpc.status.PERMISSION_DENIED, details: 'no' });
      // Decided once per connection: the refused one stays refused, a new one is asked again.
      allow = true;
      await expect(say(denied, 'x')).rejects.toMatchObject({ code: grpc.status.PERMISSION_DENIED });
      const [ok, other] = [client(port, 'Echo'), client(port, 'Other')];
      expect(await say(ok, 'y')).toEqual({ name: 'y' });
      expect(await new Promise((resolve) => other.Ping({ name: '' }, (e, r) => resolve(e ?? r)))).toEqual({ name: 'pong' });
      ok.close();
      other.close();
    } finally {
      denied.close();
      await server.stop();
    }
  });

  it('cancels a client stream whose connection is cut, rather than ending it', async () => {
    const events: string[] = [];
    const server = new GrpcH2Server(def, {
      't.v1.Echo': {
        Collect: (call: DuplexCall) => {
          call.sendHeaders();
          call.on('data', () => events.push('data'));
          call.on('end', () => events.push('end'));
          call.on('cancelled', () => events.push('cancelled'));
        },
      },
    });
    const port = await server.listen({ host: '127.0.0.1', port: 0 });
    const session = http2.connect(`http://127.0.0.1:${port}`);
    session.on('error', () => undefined);
    try {
      const s = session.request({ ':method': 'POST', ':path': '/t.v1.Echo/Collect', 'content-type': 'application/grpc', te: 'trailers' });
      s.on('error', () => undefined);
      s.write(encodeMessage(Buffer.from([0x0a, 0x01, 0x61])));
      await new Promise<void>((resolve) => s.once('response', () => resolve()));
      for (let i = 0; i < 100 && events.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
      session.destroy();
      for (let i = 0; i < 100 && events.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
      expect(events).toEqual(['data', 'cancelled']);
    } finally {
      await server.stop();
    }
  });

  describe('HTTP/1.x beside gRPC on one port', () => {
    const echo = { 't.v1.Echo': { Say: (call: UnaryCall) => call.respond({ name: `hello ${call.request.name}` }) } };
    const h1: http.RequestListener = (req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(`h1 ${req.method} ${req.url}`);
    };
    /** An HTTP/1.1 request (GET unless `opts.method` says otherwise). */
    const http1 = (
      url: string,
      opts: https.RequestOptions & { ALPNProtocols?: string[] } = {},
    ): Promise<{ status: number; body: string; alpn: string | false | undefined }> =>
      new Promise((resolve, reject) => {
        const req = (url.startsWith('https:') ? https : http).request(url, { ...opts, agent: false }, (res) => {
          let body = '';
          res.on('data', (d: Buffer) => (body += d.toString()));
          res.on('end', () => resolve({ status: res.statusCode!, body, alpn: (res.socket as { alpnProtocol?: string | false }).alpnProtocol }));
        });
        req.on('error', reject);
        req.end();
      });

    it('in cleartext, routes a connection by its first bytes, also when they arrive one at a time: the HTTP/2 preface to gRPC, anything else to the handler', async () => {
      const server = new GrpcH2Server(def, echo);
      const port = await server.listen({ host: '127.0.0.1', port: 0, http1: h1 });
      const c = client(port, 'Echo');
      const relays: net.Server[] = [];
      try {
        expect(await say(c, 'a')).toEqual({ name: 'hello a' });
        expect(await http1(`http://127.0.0.1:${port}/metrics?x=1`)).toMatchObject({ status: 200, body: 'h1 GET /metrics?x=1' });
        // A client whose preface arrives a byte at a time still reaches the gRPC server: a relay
        // in between sends the connection's first bytes one by one.
        const relay = net.createServer((inbound) => {
          const out = net.connect(port, '127.0.0.1');
          out.setNoDelay(true);
          out.pipe(inbound);
          let first = true;
          inbound.on('data', (chunk: Buffer) => {
            if (!first) return void out.write(chunk);
            first = false;
            inbound.pause();
            void (async () => {
              for (const b of chunk.subarray(0, 3)) {
                out.write(Buffer.from([b]));
                await new Promise((r) => setTimeout(r, 20));
              }
              out.write(chunk.subarray(3));
              inbound.resume();
            })();
          });
          inbound.on('close', () => out.destroy());
          out.on('close', () => inbound.destroy());
        });
        await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', () => resolve()));
        relays.push(relay);
        const session = http2.connect(`http://127.0.0.1:${(relay.address() as net.AddressInfo).port}`);
        session.on('error', () => undefined);
        const answer = await new Promise<string>((resolve, reject) => {
          const s = session.request({ ':method': 'POST', ':path': '/t.v1.Echo/Say', 'content-type': 'application/grpc', te: 'trailers' });
          s.on('error', reject);
          const chunks: Buffer[] = [];
          s.on('data', (d: Buffer) => chunks.push(d));
          s.on('end', () => resolve(Buffer.concat(chunks).subarray(5).toString('latin1')));
          s.end(encodeMessage(Buffer.from([0x0a, 0x01, 0x62])));
        });
        session.destroy();
        expect(answer).toContain('hello b');
        // So does an HTTP/1.1 request whose method starts as the preface does.
        const put = await http1(`http://127.0.0.1:${(relay.address() as net.AddressInfo).port}/x`, { method: 'PUT' });
        expect(put).toMatchObject({ status: 200, body: 'h1 PUT /x' });
      } finally {
        for (const r of relays) r.close();
        c.close();
        await server.stop();
      }
    });

    it('drops connections that stall at their start, in cleartext and over TLS, and keeps connections that started', async () => {
      const pkiDir = join(dir, 'pki-stall');
      await createPki({ outDir: pkiDir, hosts: ['127.0.0.1'] });
      const pki = await loadPki(pkiDir);
      const plain = new GrpcH2Server(def, echo, { handshakeTimeoutMs: 300 });
      const secure = new GrpcH2Server(def, echo, { handshakeTimeoutMs: 300 });
      const plainPort = await plain.listen({ host: '127.0.0.1', port: 0, http1: h1 });
      const securePort = await secure.listen({
        host: '127.0.0.1',
        port: 0,
        tls: { cert: Buffer.from(pki.servingCertPem), key: Buffer.from(pki.servingKeyPem) },
      });
      const c = client(plainPort, 'Echo');
      /** A client that connects and sends `first` (or nothing), then only waits: resolves when the server drops it. */
      const stall = (port: number, first?: Buffer): Promise<void> =>
        new Promise((resolve) => {
          const s = net.connect(port, '127.0.0.1', () => first && s.write(first));
          s.on('error', () => undefined);
          s.resume();
          s.on('close', () => resolve());
        });
      try {
        expect(await say(c, 'a')).toEqual({ name: 'hello a' });
        await Promise.all([
          stall(plainPort),
          // The HTTP/2 preface's start, then nothing.
          stall(plainPort, Buffer.from('PRI * HTTP/2.0\r\n')),
          // A TCP connection to the TLS port that never starts its handshake.
          stall(securePort),
        ]);
        // The gRPC client's connection, older than the timeout, still serves.
        expect(await say(c, 'b')).toEqual({ name: 'hello b' });
      } finally {
        c.close();
        await plain.stop();
        await secure.stop();
      }
    });

    it('over TLS, serves gRPC to clients that negotiate h2 and the handler to HTTP/1.1 clients and to clients that negotiate nothing', async () => {
      const pkiDir = join(dir, 'pki');
      await createPki({ outDir: pkiDir, hosts: ['127.0.0.1'] });
      const pki = await loadPki(pkiDir);
      const server = new GrpcH2Server(def, echo);
      const tls = { cert: Buffer.from(pki.servingCertPem), key: Buffer.from(pki.servingKeyPem), clientCa: Buffer.from(pki.caPem) };
      const port = await server.listen({ host: '127.0.0.1', port: 0, tls, http1: h1 });
      const creds = tlsChannelCredentials({ ca: pki.caPem, key: pki.adminKeyPem, cert: pki.adminCertPem });
      const ctor = grpc.makeGenericClientConstructor(def['t.v1.Echo'] as grpc.ServiceDefinition, 'Echo');
      const c = new ctor(`127.0.0.1:${port}`, creds, { 'grpc.enable_retries': 0 }) as unknown as Client;
      const mtls = { ca: pki.caPem, cert: pki.adminCertPem, key: pki.adminKeyPem };
      try {
        expect(await say(c, 'c')).toEqual({ name: 'hello c' });
        expect(await http1(`https://127.0.0.1:${port}/health`, { ...mtls, ALPNProtocols: ['http/1.1'] })).toEqual({
          status: 200,
          body: 'h1 GET /health',
          alpn: 'http/1.1',
        });
        expect(await http1(`https://127.0.0.1:${port}/version`, mtls)).toEqual({ status: 200, body: 'h1 GET /version', alpn: false });
        // The client certificate is required of HTTP/1.x clients too.
        await expect(http1(`https://127.0.0.1:${port}/health`, { ca: pki.caPem })).rejects.toThrow();
      } finally {
        c.close();
        await server.stop();
      }
    });
  });
});
