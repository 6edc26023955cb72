/**
 * The etcd v3 gRPC endpoint of a node (docs/etcd-api.md): etcd's wire definitions
 * (proto/etcd/rpc.proto, kv.proto, auth.proto) served on --listen-client-urls with TLS from the node's PKI
 * or etcd's --cert-file/--key-file/--trusted-ca-file, and client certificates required with
 * --client-cert-auth (etcd's flags and defaults). The gRPC server is our own, down to HTTP/2
 * (GrpcH2Server of libs/grpc). HTTP/1.x clients on the same port get /health, /version and
 * /metrics (etcd.http.ts), and etcd's JSON gateway under /v3/ (etcd.gateway.ts).
 */
import { readFile } from 'node:fs/promises';
import * as http from 'node:http';
import * as https from 'node:https';
import type { X509Certificate } from 'node:crypto';
import type { TLSSocket } from 'node:tls';
import { authenticateClientCert, parseCaBundle } from '@app/auth';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { dirname } from 'node:path';
import * as protoLoader from '@grpc/proto-loader';
import { findProtoFile } from '@app/raft';
import { type ClientUrl, EtcdConfigError, hostPort, parseClientUrls } from './etcd.url.js';
import type { PkiMaterial } from '@app/pki';
import type { ServerConfig } from '../config/flags.js';
import type { ClusterNode } from '../cluster/cluster.node.js';
import { EtcdContext } from './etcd.context.js';
import { GrpcH2Server, type GrpcListenOptions, type ServiceHandlers } from '@app/grpc';
import { authService } from './etcd.auth.service.js';
import { electionService, lockService } from './etcd.concurrency.service.js';
import { healthService } from './etcd.health.service.js';
import { EtcdLoopback } from './etcd.loopback.js';
import { EtcdGateway } from './etcd.gateway.js';
import { etcdHttpHandler, type MetricsSource } from './etcd.http.js';
import { kvService } from './etcd.kv.service.js';
import { leaseService } from './etcd.lease.service.js';
import { clusterService, maintenanceService } from './etcd.maintenance.service.js';
import { watchService } from './etcd.watch.service.js';

/** What a client outside group system:masters gets from the etcd API of a cluster-CA endpoint (etcd's code and text). */
const PERMISSION_DENIED = { code: GrpcStatus.PERMISSION_DENIED, details: 'etcdserver: permission denied' };

/**
 * True when the client certificate on `socket` was not issued by one of `userCas`, or is a
 * Kubernetes user in group system:masters (its O values, read as the API's x509 method reads them).
 */
export function clusterAdminOrForeign(socket: unknown, userCas: readonly X509Certificate[]): boolean {
  const tlsSocket = socket as TLSSocket;
  const peer = tlsSocket.getPeerCertificate?.(true);
  // The TLS handshake verified the chain, so the issuer is known; without it, nothing is served.
  const issuer = peer?.raw ? peer.issuerCertificate?.raw : undefined;
  if (!issuer) return false;
  if (!userCas.some((c) => c.raw.equals(issuer))) return true;
  return authenticateClientCert(tlsSocket)?.groups.includes('system:masters') === true;
}

/** The certificates of a PEM bundle; a file without any is a configuration error naming `flag`. */
function caBundle(flag: string, pem: string): X509Certificate[] {
  try {
    return parseCaBundle(pem);
  } catch (e) {
    throw new EtcdConfigError(`--${flag}: ${(e as Error).message}`);
  }
}

/** The .proto files of the services served: etcdserverpb's, then Lock, Election and gRPC's health. */
export function etcdProtoFiles(): string[] {
  return ['etcd/rpc.proto', 'etcd/v3lock.proto', 'etcd/v3election.proto', 'etcd/health.proto'].map((f) => findProtoFile(f));
}

/** Loads etcd's service definitions (paths, encoders and decoders of every method). */
function loadEtcdProto(): protoLoader.PackageDefinition {
  const files = etcdProtoFiles();
  return protoLoader.loadSync(files, { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true, includeDirs: [dirname(files[0]!)] });
}

/** The TLS of an https listener and who may use its data (see EtcdServer.credentials). */
interface Credentials {
  tls: GrpcListenOptions['tls'];
  allowed: ((socket: unknown) => boolean) | undefined;
}

/** One node's etcd endpoint; start() binds, stop() closes every stream. */
export class EtcdServer {
  /** One server per URL of --listen-client-urls. */
  private readonly servers: GrpcH2Server[] = [];
  /** The port bound for the first URL of --listen-client-urls (after start). */
  port = 0;
  /** The metrics listeners (--listen-metrics-urls). */
  private readonly metricsServers: http.Server[] = [];
  /** The https listeners' credentials, read once per start. */
  private tlsCredentials: Promise<Credentials> | undefined;
  /** Open watch streams and watchers (zero before start). */
  watchCounts: { readonly streams: number; readonly watchers: number; readonly slow: number } = { streams: 0, watchers: 0, slow: 0 };

  constructor(
    private readonly cfg: ServerConfig,
    private readonly pki: PkiMaterial,
    private readonly node: ClusterNode,
    private readonly dataDir: string,
    /** What /metrics serves (the node's registry); without it /metrics is not served. */
    private readonly metrics?: MetricsSource,
  ) {}

  /**
   * The TLS of a listener (etcd's flags, defaulting to the node's PKI), and who may use its data
   * (undefined: every client the TLS lets in). The cluster CA (and the CSR signer's, when it has
   * its own) also signs client certificates of Kubernetes users (kubelets, users approved
   * through the CSR API), and the etcd API bypasses RBAC: with --client-cert-auth, a client
   * whose certificate such a CA issued must be in group system:masters. Certificates of another
   * CA in --trusted-ca-file are taken as etcd takes them.
   */
  private credentials(secure: boolean): Promise<Credentials> {
    if (!secure) return Promise.resolve({ tls: undefined, allowed: undefined });
    // Every https listener of a start shares one reading of the files.
    this.tlsCredentials ??= this.readCredentials();
    return this.tlsCredentials;
  }

  private async readCredentials(): Promise<Credentials> {
    const read = async (flag: string, file: string | undefined, fallback: string): Promise<Buffer> => {
      if (!file) return Buffer.from(fallback);
      try {
        return await readFile(file);
      } catch (e) {
        throw new EtcdConfigError(`--${flag}: cannot read ${file}: ${(e as Error).message}`);
      }
    };
    const cert = await read('cert-file', this.cfg.certFile, this.pki.servingCertPem);
    const key = await read('key-file', this.cfg.keyFile, this.pki.servingKeyPem);
    const ca = await read('trusted-ca-file', this.cfg.trustedCaFile, this.pki.caPem);
    // etcd: client certificates are verified against the trusted CA only with --client-cert-auth.
    if (this.cfg.clientCertAuth !== true) return { tls: { cert, key }, allowed: undefined };
    // The CAs that issue Kubernetes users' certificates: the PKI's, and the CSR signer's when it has its own.
    const signing = this.cfg.raw['cluster-signing-cert-file'];
    const userCas = [
      ...caBundle('pki-dir', this.pki.caPem),
      ...(signing ? caBundle('cluster-signing-cert-file', (await read('cluster-signing-cert-file', signing, '')).toString('utf8')) : []),
    ];
    const trusted = caBundle('trusted-ca-file', ca.toString('utf8'));
    const allowed = trusted.some((c) => userCas.some((u) => u.raw.equals(c.raw))) ? (socket: unknown) => clusterAdminOrForeign(socket, userCas) : undefined;
    return { tls: { cert, key, clientCa: ca }, allowed };
  }

  /**
   * Binds each URL of --listen-client-urls and serves KV, Watch, Lease, Cluster, Maintenance,
   * Lock, Election and gRPC's Health (and HTTP/1.x, above) on it; binds each URL of
   * --listen-metrics-urls and serves /health, /version and /metrics there. When one cannot be
   * bound, those already bound are closed and the start fails naming the flag and address.
   */
  async start(): Promise<void> {
    this.tlsCredentials = undefined;
    const ctx = new EtcdContext(this.node, this.cfg.listenClientUrls ?? '', Math.ceil((1.5 * this.cfg.electionTimeoutMs) / 1000));
    this.watchCounts = ctx.watchCounts;
    try {
      if (this.cfg.listenClientUrls) await this.serveClients(ctx, parseClientUrls(this.cfg.listenClientUrls));
      if (this.cfg.listenMetricsUrls) for (const u of parseClientUrls(this.cfg.listenMetricsUrls, 'listen-metrics-urls')) await this.serveMetrics(ctx, u);
    } catch (e) {
      await this.stop();
      throw e;
    }
  }

  private async serveClients(ctx: EtcdContext, urls: readonly ClientUrl[]): Promise<void> {
    const def = loadEtcdProto();
    const responseOf = (service: string, method: string) =>
      (def[`etcdserverpb.${service}`] as Record<string, protoLoader.MethodDefinition<object, object>>)[method]!.responseSerialize;
    const rangeResponse = responseOf('KV', 'Range');
    const deleteRangeResponse = responseOf('KV', 'DeleteRange');
    const txnResponse = responseOf('KV', 'Txn');
    const watchResponse = responseOf('Watch', 'Watch');
    const services: Record<string, ServiceHandlers> = {
      'etcdserverpb.KV': kvService(ctx, { range: (m) => rangeResponse(m), deleteRange: (m) => deleteRangeResponse(m), txn: (m) => txnResponse(m) }),
      'etcdserverpb.Watch': watchService(ctx, (m) => watchResponse(m)),
      'etcdserverpb.Lease': leaseService(ctx),
      'etcdserverpb.Cluster': clusterService(ctx),
      'etcdserverpb.Maintenance': maintenanceService(ctx, this.dataDir),
      'etcdserverpb.Auth': authService(ctx),
    };
    // Lock and Election are recipes over the services above, called in-process as etcd calls its own.
    const loopback = new EtcdLoopback(def, services);
    services['v3lockpb.Lock'] = lockService(loopback);
    services['v3electionpb.Election'] = electionService(loopback);
    services['grpc.health.v1.Health'] = healthService(ctx);
    const gateway = new EtcdGateway(def, etcdProtoFiles(), services);
    // One server per URL (each with its own TLS), all serving the same services.
    for (const { url, secure, host, port } of urls) {
      const { tls, allowed } = await this.credentials(secure);
      if (!tls?.clientCa) {
        process.stderr.write(
          `etcd API on ${url}: clients are not verified (no --client-cert-auth${secure ? '' : ', no TLS'}): whoever reaches the port can read and change everything in the store, Secrets included\n`,
        );
      }
      const server = new GrpcH2Server(def, services, {
        stopDetails: 'etcdserver: server stopped',
        ...(allowed ? { authorize: (socket) => (allowed(socket) ? undefined : PERMISSION_DENIED) } : {}),
      });
      let bound: number;
      try {
        bound = await server.listen({ host, port, tls, http1: etcdHttpHandler(ctx, this.metrics, gateway, allowed) });
      } catch (e) {
        throw new EtcdConfigError(`--listen-client-urls: cannot listen on ${hostPort({ host, port })}: ${(e as Error).message}`);
      }
      if (this.servers.length === 0) this.port = bound;
      this.servers.push(server);
    }
  }

  /** etcd's metrics listener: HTTP/1.x only, with the client URL's TLS when https. */
  private async serveMetrics(ctx: EtcdContext, { secure, host, port }: ClientUrl): Promise<void> {
    const { tls } = await this.credentials(secure);
    const handler = etcdHttpHandler(ctx, this.metrics);
    const server = tls
      ? https.createServer(
          { cert: tls.cert, key: tls.key, ...(tls.clientCa ? { ca: tls.clientCa, requestCert: true, rejectUnauthorized: true } : {}) },
          handler,
        )
      : http.createServer(handler);
    // With a listener here, Node leaves a failed handshake's socket open (a timed-out one too).
    server.on('tlsClientError', (_e: Error, socket: TLSSocket) => socket.destroy());
    await new Promise<void>((resolve, reject) => {
      server.once('error', (e) => reject(new EtcdConfigError(`--listen-metrics-urls: cannot listen on ${hostPort({ host, port })}: ${e.message}`)));
      server.listen(port, host, () => resolve());
    });
    this.metricsServers.push(server);
  }

  /** Stops serving: open streams end (clients reconnect to another member); connections close within 2 s. */
  async stop(): Promise<void> {
    const servers = this.servers.splice(0);
    const metrics = this.metricsServers.splice(0);
    await Promise.all(
      metrics.map((m) => {
        const closed = new Promise<void>((resolve) => m.close(() => resolve()));
        m.closeAllConnections();
        return closed;
      }),
    );
    await Promise.all(servers.map((s) => s.stop()));
  }
}
