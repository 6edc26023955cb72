/**
 * The HTTP edge: tunes the HTTPS server Nest's Fastify adapter created (header size, connection
 * limits) and registers the pipeline and routes, in onApplicationBootstrap, after Nest installed
 * its own hooks, so ours take precedence. The server then listens (server.ts).
 */
import type { Http2SecureServer } from 'node:http2';
import { Inject, Injectable, Module, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { BootstrapModule } from '../bootstrap/bootstrap.module.js';
import type { ServerConfig } from '../config/flags.js';
import { envInt } from '../config/env.js';
import { NodeHealth } from '../health/node-health.js';
import { SERVER_CONFIG } from '../tokens.js';
import { ApiRoutes, PipelinePorts } from './api.routes.js';
import { DEFAULT_CONNECTION_LIMITS, guardConnections } from './connection.guard.js';
import { widenHttp1WriteBuffer } from './http1.write-buffer.js';
import { routeUpgrades, type UpgradeConnections } from './upgrade-proxy.js';

/** Largest HTTP/1.1 request header block accepted (kube-apiserver's MaxHeaderBytes). */
const MAX_HEADER_BYTES = 1 << 20;

/** Sets up the listening server and its routes. */
@Injectable()
export class HttpServerSetup implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private upgrades?: UpgradeConnections;

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly routes: ApiRoutes,
    @Inject(SERVER_CONFIG) private readonly cfg: ServerConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const fastify = this.adapterHost.httpAdapter.getInstance() as unknown as FastifyInstance;
    // Request headers over HTTP/1.1 up to kube-apiserver's 1 MiB (Go's MaxHeaderBytes) instead
    // of Node's 16 KiB, so a long label selector in the URL works as it does there. The parser of
    // a connection that did not negotiate HTTP/2 reads its limit from here. HTTP/2 keeps 64 KiB:
    // nghttp2 refuses a longer header field (the URL is one) whatever the settings say, with a
    // COMPRESSION_ERROR that ends the whole connection; announcing 64 KiB lets clients (Go's
    // too) refuse such a request themselves, with a clear error.
    (fastify.server as unknown as { maxHeaderSize?: number }).maxHeaderSize = MAX_HEADER_BYTES;
    widenHttp1WriteBuffer(fastify.server as unknown as Http2SecureServer);
    guardConnections(fastify.server as unknown as Http2SecureServer, {
      headerTimeoutMs: envInt('KAPI_READ_HEADER_TIMEOUT_MS') ?? DEFAULT_CONNECTION_LIMITS.headerTimeoutMs,
      idleTimeoutMs: envInt('KAPI_IDLE_TIMEOUT_MS') ?? DEFAULT_CONNECTION_LIMITS.idleTimeoutMs,
      bodyTimeoutMs: envInt('KAPI_BODY_TIMEOUT_MS') ?? this.cfg.requestTimeoutMs,
    });
    // Upgrade requests (exec, attach, port-forward) through the same pipeline and routes.
    this.upgrades = routeUpgrades(fastify.server, (req, res) => fastify.routing(req, res));
    await this.routes.register(fastify);
  }

  /** Open exec, attach and port-forward sessions end with the server, not after it. */
  beforeApplicationShutdown(): void {
    this.upgrades?.closeAll();
  }
}

/** The HTTP edge of a node. */
@Module({
  imports: [BootstrapModule],
  providers: [PipelinePorts, NodeHealth, ApiRoutes, HttpServerSetup],
})
export class HttpModule {}
