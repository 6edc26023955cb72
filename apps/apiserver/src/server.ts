/**
 * Starts one node: its PKI, then the NestJS application (app.module.ts) on Fastify over HTTPS
 * with HTTP/2 and HTTP/1.1, then the post-start hooks. Everything else is a provider; this file
 * is the composition's entry and the transport settings of the listening socket.
 */
import 'reflect-metadata';
import { mkdir } from 'node:fs/promises';
import type { Server as TlsServer } from 'node:tls';
import * as path from 'node:path';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { KindRegistry } from '@app/registry';
import type { Storage } from '@app/storage';
import { ensurePki, loadPki, type PkiMaterial } from '@app/pki';
import { AppModule } from './app.module.js';
import { AdminKubeconfig } from './bootstrap/bootstrap.module.js';
import { PostStartHooks } from './bootstrap/post-start-hook.js';
import type { ServerConfig } from './config/flags.js';
import { handleClientError } from './http/client-error.js';
import { DEFAULT_CONNECTION_LIMITS } from './http/connection.guard.js';
import { notFoundError, sendStatus, toStatusError } from './http/status.js';
import { clientCaBundles, reloadServingCertificate, requestHeaderCaBundles, servingMaterial, type ServingMaterial } from './serving.tls.js';
import type { StorageBackend } from './storage/storage.backend.js';
import { STORAGE_BACKEND, type ServerEndpoint } from './tokens.js';

export { KUBE_VERSION } from './http/version.js';

/** A running node. */
export interface RunningServer {
  config: ServerConfig;
  url: string;
  kubeconfigPath: string;
  registry: KindRegistry;
  storage: Storage;
  fastify: FastifyInstance;
  /**
   * Calls `listener` once a storage failure (with the built-in store, a failed write of the
   * Raft log or of the store: a full disk, an I/O error) stopped this node's Raft for good. The node then serves nothing
   * but failing health checks; the program exits so that a supervisor restarts it from its
   * durable state (main.ts), as etcd exits on a failed WAL write.
   */
  onFatal(listener: (e: Error) => void): void;
  /** Stops serving and closes everything, in the order of Nest's lifecycle hooks. */
  close(): Promise<void>;
}

/** Where a node serves, from its bind address and port (a wildcard bind is reached on loopback). */
export function serverEndpoint(cfg: Pick<ServerConfig, 'bindAddress' | 'securePort'>): ServerEndpoint {
  const host = cfg.bindAddress === '0.0.0.0' || cfg.bindAddress === '::' ? '127.0.0.1' : cfg.bindAddress;
  return { host, url: `https://${host.includes(':') ? `[${host}]` : host}:${cfg.securePort}` };
}

/** The node's PKI: the shared one of a cluster (--pki-dir), or its own in `<data-dir>/pki`, created on first start. */
async function nodePki(cfg: ServerConfig, dataDir: string, endpoint: ServerEndpoint): Promise<PkiMaterial> {
  if (cfg.pkiDir) return loadPki(cfg.pkiDir);
  const own = path.join(dataDir, 'pki');
  await ensurePki(own, { hosts: [endpoint.host, ...(cfg.advertiseAddress ? [cfg.advertiseAddress] : [])], server: endpoint.url });
  return loadPki(own);
}

/** The TLS context settings besides the serving certificate: the client CAs, the lowest version. */
type TlsContext = { ca: string[]; minVersion: 'TLSv1.2' };

/** The Fastify adapter: HTTPS with HTTP/2 and HTTP/1.1, client certificates requested, kube's limits. */
function httpsAdapter(cfg: ServerConfig, serving: ServingMaterial, context: TlsContext): FastifyAdapter {
  const adapter = new FastifyAdapter({
    http2: true,
    https: {
      allowHTTP1: true,
      key: serving.keyPem,
      cert: serving.certPem,
      ...context,
      requestCert: true,
      rejectUnauthorized: false,
      // A client that connects and never completes the handshake is cut off (see guardConnections).
      handshakeTimeout: DEFAULT_CONNECTION_LIMITS.headerTimeoutMs,
      // Streams one HTTP/2 connection may have open at once: Go's default, which kube-apiserver
      // keeps (--http2-max-streams-per-connection); Node's would be unlimited.
      settings: { maxConcurrentStreams: 250 },
    },
    bodyLimit: cfg.maxRequestBodyBytes,
    logger: false,
    return503OnClosing: true,
    // Requests Node's HTTP/1.1 parser refuses (headers over 1 MiB, garbage) get a Status too.
    clientErrorHandler: handleClientError,
    // Requests the router refuses before any hook runs (a malformed percent-escape in the path)
    // get a Status too, not Fastify's own error body.
    frameworkErrors: (err: unknown, _req: unknown, reply: FastifyReply) => sendStatus(reply, toStatusError(err)),
    // Fastify's own HTTP/2 session timer (72 s without frames) would send GOAWAY to a session
    // whose only stream is a quiet watch; guardConnections closes sessions with no stream instead.
    http2SessionTimeout: 0,
    // Watches are long-lived; the watch handler bounds them itself.
    requestTimeout: 0,
  } as never);
  // Nest installs its own root not-found and error handlers through these, which answer in
  // Nest's format; what reaches the root (a method the router does not know, which HTTP/2 lets
  // through, ends in Fastify's fallback 404 error) gets a Status instead.
  const root = (): FastifyInstance => adapter.getInstance() as unknown as FastifyInstance;
  adapter.setNotFoundHandler = (() => root().setNotFoundHandler((_req, reply) => sendStatus(reply, notFoundError()))) as typeof adapter.setNotFoundHandler;
  adapter.setErrorHandler = (() =>
    root().setErrorHandler((err, _req, reply) =>
      sendStatus(reply, (err as { code?: string }).code === 'FST_ERR_NOT_FOUND' ? notFoundError() : toStatusError(err)),
    )) as typeof adapter.setErrorHandler;
  return adapter;
}

/** Starts a node from its configuration. Resolves once it serves and is ready. */
export async function startApiServer(cfg: ServerConfig): Promise<RunningServer> {
  const dataDir = path.resolve(cfg.dataDir);
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const endpoint = serverEndpoint(cfg);
  const pki = await nodePki(cfg, dataDir, endpoint);

  // The TLS layer accepts the cluster CA's client certificates, those of --client-ca-file and the
  // front proxy's (pipeline/x509.method.ts and request-header.method.ts tell them apart).
  const serving = servingMaterial(cfg, pki);
  const context: TlsContext = { ca: [pki.caPem, ...clientCaBundles(cfg), ...requestHeaderCaBundles(cfg)], minVersion: 'TLSv1.2' };
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(cfg, pki, endpoint), httpsAdapter(cfg, serving, context), {
    logger: ['error', 'warn'],
    abortOnError: false,
  });
  await app.init();
  await app.listen(cfg.securePort, cfg.bindAddress);
  const stopReloading = reloadServingCertificate(app.getHttpServer() as unknown as TlsServer, serving, context);
  await app.get(PostStartHooks).runAll();

  const backend = app.get<StorageBackend>(STORAGE_BACKEND);
  let closing: Promise<void> | undefined;
  return {
    config: cfg,
    url: endpoint.url,
    kubeconfigPath: app.get(AdminKubeconfig).path,
    registry: app.get(KindRegistry),
    storage: backend.storage,
    fastify: app.getHttpAdapter().getInstance() as unknown as FastifyInstance,
    onFatal: (listener) => backend.onFatal(listener),
    close: () => {
      stopReloading();
      return (closing ??= app.close());
    },
  };
}
