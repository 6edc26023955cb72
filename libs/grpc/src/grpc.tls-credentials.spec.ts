import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type PeerCertificate, type TLSSocket, checkServerIdentity } from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { createPki, loadPki, type PkiMaterial } from '@app/pki';
import { GrpcH2Server, type Msg, type UnaryCall } from './grpc.h2-server.js';
import { serverNameFor, targetHost, tlsChannelCredentials } from './grpc.tls-credentials.js';

const PROTO = `syntax = "proto3";
package t.v1;
message Item { string name = 1; }
service Echo { rpc Say(Item) returns (Item); }
`;

type Client = grpc.Client & { Say(req: Msg, opts: grpc.CallOptions, cb: (e: grpc.ServiceError | null, r?: Msg) => void): void };

describe('targetHost and serverNameFor', () => {
  it('take the host of a channel target and send no ServerName for an IP address', () => {
    const uri = (path: string, scheme = 'dns'): grpc.experimental.GrpcUri => ({ scheme, path });
    expect(targetHost(uri('127.0.0.1:2379'))).toBe('127.0.0.1');
    expect(targetHost(uri('/etcd-0.etcd:2379'))).toBe('etcd-0.etcd');
    expect(targetHost(uri('[::1]:2379'))).toBe('::1');
    expect(targetHost(uri('::1'))).toBe('::1');
    expect(targetHost(uri('node-a'))).toBe('node-a');
    expect(targetHost(uri('/tmp/s.sock', 'unix'))).toBe('localhost');
    expect(serverNameFor('127.0.0.1')).toBeUndefined();
    expect(serverNameFor('::1')).toBeUndefined();
    expect(serverNameFor('')).toBeUndefined();
    expect(serverNameFor('etcd-0.etcd')).toBe('etcd-0.etcd');
  });
});

describe('tlsChannelCredentials', () => {
  let dir: string;
  let pki: PkiMaterial;
  let server: GrpcH2Server;
  let port: number;
  /** The TLS ServerName of each connection the server accepted (false: none sent). */
  const seen: (string | false)[] = [];
  const clients: Client[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'grpc-tls-'));
    await writeFile(join(dir, 't.proto'), PROTO);
    await createPki({ outDir: join(dir, 'pki') });
    pki = await loadPki(join(dir, 'pki'));
    const def = protoLoader.loadSync(join(dir, 't.proto'), { defaults: true });
    const echo = { 't.v1.Echo': { Say: (call: UnaryCall) => call.respond({ name: `hello ${call.request.name}` }) } };
    server = new GrpcH2Server(def, echo, {
      authorize: (socket: Socket) => {
        seen.push((socket as TLSSocket).servername ?? false);
        return undefined;
      },
    });
    port = await server.listen({
      host: '127.0.0.1',
      port: 0,
      tls: { cert: Buffer.from(pki.servingCertPem), key: Buffer.from(pki.servingKeyPem), clientCa: Buffer.from(pki.caPem) },
    });
    clientCtor = grpc.makeGenericClientConstructor(def['t.v1.Echo'] as grpc.ServiceDefinition, 'Echo');
  });
  let clientCtor: grpc.ServiceClientConstructor;
  afterAll(async () => {
    for (const c of clients) c.close();
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const dial = (target: string, creds: grpc.ChannelCredentials, options: grpc.ChannelOptions = {}): Client => {
    const c = new clientCtor(target, creds, { 'grpc.enable_retries': 0, 'grpc.use_local_subchannel_pool': 1, ...options }) as unknown as Client;
    clients.push(c);
    return c;
  };
  const say = (c: Client, name: string): Promise<Msg> =>
    new Promise((resolve, reject) => c.Say({ name }, { deadline: Date.now() + 5_000 }, (e, r) => (e ? reject(e) : resolve(r!))));

  it('dials an IP address without a ServerName, checking the certificate against the address', async () => {
    const hosts: string[] = [];
    const creds = tlsChannelCredentials({
      ca: pki.caPem,
      cert: pki.adminCertPem,
      key: pki.adminKeyPem,
      checkServerIdentity: (host: string, cert: PeerCertificate) => {
        hosts.push(host);
        return checkServerIdentity(host, cert);
      },
    });
    seen.length = 0;
    expect(await say(dial(`127.0.0.1:${port}`, creds), 'ip')).toEqual({ name: 'hello ip' });
    expect(seen).toEqual([false]);
    expect(hosts).toEqual(['127.0.0.1']);
  });

  it('sends a DNS name as the ServerName, and the name override in its place', async () => {
    const creds = tlsChannelCredentials({ ca: pki.caPem, cert: pki.adminCertPem, key: pki.adminKeyPem });
    seen.length = 0;
    expect(await say(dial(`localhost:${port}`, creds), 'dns')).toEqual({ name: 'hello dns' });
    expect(await say(dial(`127.0.0.1:${port}`, creds, { 'grpc.ssl_target_name_override': 'localhost' }), 'override')).toEqual({
      name: 'hello override',
    });
    expect(seen).toEqual(['localhost', 'localhost']);
  });

  it('refuses a server whose certificate does not pass the check or does not chain to the CA', async () => {
    const refusing = tlsChannelCredentials({
      ca: pki.caPem,
      cert: pki.adminCertPem,
      key: pki.adminKeyPem,
      checkServerIdentity: () => new Error('not the server we meant'),
    });
    await expect(say(dial(`127.0.0.1:${port}`, refusing), 'x')).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE });
    const otherDir = join(dir, 'other');
    await createPki({ outDir: otherDir });
    const other = await loadPki(otherDir);
    const wrongCa = tlsChannelCredentials({ ca: other.caPem, cert: pki.adminCertPem, key: pki.adminKeyPem });
    await expect(say(dial(`127.0.0.1:${port}`, wrongCa), 'y')).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE });
    // The name override is what the certificate is checked against: the serving certificate
    // does not name this one.
    const good = tlsChannelCredentials({ ca: pki.caPem, cert: pki.adminCertPem, key: pki.adminKeyPem });
    await expect(say(dial(`127.0.0.1:${port}`, good, { 'grpc.ssl_target_name_override': 'elsewhere.example' }), 'z')).rejects.toMatchObject({
      code: grpc.status.UNAVAILABLE,
    });
  });

  it('refuses unusable material when the credentials are made', () => {
    expect(() => tlsChannelCredentials({ ca: pki.caPem, cert: pki.adminCertPem, key: 'not a key' })).toThrow();
  });
});
