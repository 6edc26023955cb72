/**
 * The etcd v3 gRPC endpoint of a node (docs/etcd-api.md): etcd's wire definitions
 * (proto/etcd/rpc.proto, kv.proto) served on --listen-client-urls with TLS from the node's PKI
 * or etcd's --cert-file/--key-file/--trusted-ca-file, and client certificates required with
 * --client-cert-auth (etcd's flags and defaults).
 */
import { readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { findProtoFile } from '@app/raft';
import type { PkiMaterial } from '@app/pki';
import type { ServerConfig } from '../config/flags.js';
import type { ClusterNode } from '../cluster/cluster.node.js';
import { EtcdContext } from './etcd.context.js';
import { kvService } from './etcd.kv.service.js';
import { leaseService } from './etcd.lease.service.js';
import { clusterService, maintenanceService } from './etcd.maintenance.service.js';
import { watchService } from './etcd.watch.service.js';

/** A bad --listen-client-urls or TLS file: the node does not start. */
export class EtcdConfigError extends Error {}

/** Parses etcd's --listen-client-urls (one URL here): scheme, host and port. */
export function parseClientUrl(raw: string): { secure: boolean; host: string; port: number } {
  const first = raw.split(',')[0]!.trim();
  let u: URL;
  try {
    u = new URL(first);
  } catch {
    throw new EtcdConfigError(`--listen-client-urls: ${JSON.stringify(first)} is not a URL such as https://127.0.0.1:2379`);
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new EtcdConfigError('--listen-client-urls: the scheme must be https (or http without TLS)');
  const port = Number(u.port || (u.protocol === 'https:' ? 2379 : 2379));
  return { secure: u.protocol === 'https:', host: u.hostname.replace(/^\[|\]$/g, ''), port };
}

/** Loads etcd's service definitions. */
function loadEtcdProto(): grpc.GrpcObject {
  const rpc = findProtoFile('etcd/rpc.proto');
  const def = protoLoader.loadSync(rpc, { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true, includeDirs: [dirname(rpc)] });
  return grpc.loadPackageDefinition(def);
}

/** One node's etcd endpoint; start() binds, stop() closes every stream. */
export class EtcdServer {
  private server: grpc.Server | undefined;
  /** The bound port (after start). */
  port = 0;

  constructor(
    private readonly cfg: ServerConfig,
    private readonly pki: PkiMaterial,
    private readonly node: ClusterNode,
    private readonly dataDir: string,
  ) {}

  private async credentials(secure: boolean): Promise<grpc.ServerCredentials> {
    if (!secure) return grpc.ServerCredentials.createInsecure();
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
    const mutual = this.cfg.clientCertAuth === true;
    return grpc.ServerCredentials.createSsl(mutual ? ca : null, [{ cert_chain: cert, private_key: key }], mutual);
  }

  /** Binds --listen-client-urls and serves KV, Watch, Lease, Cluster and Maintenance. */
  async start(): Promise<void> {
    const { secure, host, port } = parseClientUrl(this.cfg.listenClientUrls!);
    const creds = await this.credentials(secure);
    const pkg = loadEtcdProto() as unknown as { etcdserverpb: Record<string, grpc.ServiceClientConstructor> };
    const s = pkg.etcdserverpb;
    const ctx = new EtcdContext(this.node, this.cfg.listenClientUrls!);
    const server = new grpc.Server({ 'grpc.max_receive_message_length': 2 * 1024 * 1024 + 4096, 'grpc.max_send_message_length': 2 ** 31 - 1 });
    server.addService(s.KV!.service, kvService(ctx));
    server.addService(s.Watch!.service, watchService(ctx));
    server.addService(s.Lease!.service, leaseService(ctx));
    server.addService(s.Cluster!.service, clusterService(ctx));
    server.addService(s.Maintenance!.service, maintenanceService(ctx, this.dataDir));
    const addr = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
    this.port = await new Promise<number>((resolve, reject) =>
      server.bindAsync(addr, creds, (err, p) =>
        err ? reject(new EtcdConfigError(`--listen-client-urls: cannot listen on ${addr}: ${err.message}`)) : resolve(p),
      ),
    );
    this.server = server;
  }

  /** Stops serving: open streams end (clients reconnect to another member). */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    await new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        server.forceShutdown();
        resolve();
      }, 2000);
      server.tryShutdown(() => {
        clearTimeout(t);
        resolve();
      });
    });
  }
}
