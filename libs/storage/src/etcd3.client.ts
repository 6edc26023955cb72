/**
 * A small etcd v3 client on @grpc/grpc-js over proto/etcd/rpc.proto (docs/storage-backends.md):
 * one channel per endpoint, calls go to a connected one. Failover follows etcd clientv3's retry
 * rule: a call that may have reached a member is retried elsewhere only when it is a read;
 * a write whose outcome is unknown fails with Etcd3Unavailable and the caller reports it.
 */
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { tlsChannelCredentials } from '@app/grpc';
import { findProtoFile } from '@app/raft';

/** TLS material of the client (PEM contents). Any absent part is not used. */
export interface Etcd3Tls {
  ca?: string;
  cert?: string;
  key?: string;
}

/** Options of Etcd3Client. */
export interface Etcd3ClientOptions {
  /** `https://host:port` or `http://host:port` URLs (kube-apiserver's --etcd-servers). */
  endpoints: readonly string[];
  tls?: Etcd3Tls;
  /** Deadline of one unary call (ms). Default 10000. */
  callTimeoutMs?: number;
  /** How long a call waits for some endpoint to be connected (ms). Default 5000. */
  connectTimeoutMs?: number;
  /** Called after each unary call with its method and duration in seconds (metrics). */
  onCall?: (method: string, seconds: number, ok: boolean) => void;
}

/** etcd's mvccpb.KeyValue as loaded (int64 as decimal strings). */
export interface EtcdKeyValue {
  key: Buffer;
  create_revision: string;
  mod_revision: string;
  version: string;
  value: Buffer;
  lease: string;
}

/** etcdserverpb.ResponseHeader as loaded. */
export interface EtcdHeader {
  cluster_id: string;
  member_id: string;
  revision: string;
  raft_term: string;
}

/** A RangeResponse. */
export interface EtcdRangeResponse {
  header: EtcdHeader;
  kvs: EtcdKeyValue[];
  more: boolean;
  count: string;
}

/** A TxnResponse with the response ops this storage uses. */
export interface Etcd3TxnResponse {
  header: EtcdHeader;
  succeeded: boolean;
  responses: Array<{
    response_range?: EtcdRangeResponse;
    response_put?: { prev_kv?: EtcdKeyValue | null };
    response_delete_range?: { prev_kvs: EtcdKeyValue[] };
  }>;
}

/** mvccpb.Event as loaded. */
export interface EtcdEvent {
  type: 'PUT' | 'DELETE';
  kv: EtcdKeyValue;
  prev_kv?: EtcdKeyValue | null;
}

/** etcdserverpb.WatchResponse as loaded. */
export interface EtcdWatchResponse {
  header: EtcdHeader;
  watch_id: string;
  created: boolean;
  canceled: boolean;
  compact_revision: string;
  cancel_reason: string;
  fragment: boolean;
  events: EtcdEvent[];
}

/** The first key after every key starting with `prefix` (etcd's range_end of a prefix). */
export function etcdPrefixEnd(prefix: Buffer): Buffer {
  const end = Buffer.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i]! < 0xff) {
      end[i]! += 1;
      return end.subarray(0, i + 1);
    }
  }
  return Buffer.from([0]);
}

/** The revision of a response header. */
export const rev = (s: string | number | undefined): number => Number(s ?? 0);

/** A call failed. `unknownOutcome`: a write may or may not have been applied. */
export class Etcd3Error extends Error {
  constructor(
    message: string,
    readonly grpcCode: number,
    readonly unavailable: boolean,
  ) {
    super(message);
    this.name = 'Etcd3Error';
  }
}

type Unary = (req: object, meta: grpc.Metadata, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res: unknown) => void) => void;
type ServiceClient = grpc.Client & Record<string, Unary>;
type WatchClient = grpc.Client & { Watch(meta: grpc.Metadata, opts?: grpc.CallOptions): grpc.ClientDuplexStream<object, EtcdWatchResponse> };

interface Member {
  url: string;
  kv: ServiceClient;
  watch: WatchClient;
  maintenance: ServiceClient;
}

let loaded: grpc.GrpcObject | undefined;
function etcdPackage(): { KV: grpc.ServiceClientConstructor; Watch: grpc.ServiceClientConstructor; Maintenance: grpc.ServiceClientConstructor } {
  if (!loaded) {
    const file = findProtoFile('etcd/rpc.proto');
    const def = protoLoader.loadSync(file, { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true, includeDirs: [dirname(file)] });
    loaded = grpc.loadPackageDefinition(def);
  }
  return loaded.etcdserverpb as never;
}

/** Codes after which the member cannot have served the call (the request never left us). */
const UNREACHED = /No connection established|Connection refused|connect ECONNREFUSED|Name resolution failed|no address available/i;

/**
 * Parses `--etcd-servers`: comma-separated http(s) URLs with host and port. Throws with a
 * message naming the bad entry.
 */
export function parseEtcdServers(value: string): { urls: string[]; secure: boolean } {
  const urls = value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (urls.length === 0) throw new Error('give at least one URL, such as https://127.0.0.1:2379');
  let secure: boolean | undefined;
  for (const u of urls) {
    let url: URL;
    try {
      url = new URL(u);
    } catch {
      throw new Error(`${JSON.stringify(u)} is not a URL`);
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error(`${u}: the scheme must be https or http`);
    if (url.port === '' || (url.pathname !== '/' && url.pathname !== '')) throw new Error(`${u}: give host and port only, such as https://127.0.0.1:2379`);
    const s = url.protocol === 'https:';
    if (secure !== undefined && s !== secure) throw new Error('use either https or http for every URL');
    secure = s;
  }
  return { urls, secure: secure! };
}

/** Reads the PEM files of --etcd-cafile/--etcd-certfile/--etcd-keyfile (absent ones skipped). */
export function readEtcdTls(files: { cafile?: string; certfile?: string; keyfile?: string }): Etcd3Tls {
  const read = (f: string | undefined): string | undefined => (f ? readFileSync(f, 'utf8') : undefined);
  return { ca: read(files.cafile), cert: read(files.certfile), key: read(files.keyfile) };
}

/** Client of an etcd cluster: unary KV/Maintenance calls with failover, and Watch streams. */
export class Etcd3Client {
  private readonly members: Member[];
  private current = 0;
  private closed = false;
  private readonly callTimeoutMs: number;
  private readonly connectTimeoutMs: number;
  private readonly onCall: Etcd3ClientOptions['onCall'];

  constructor(opts: Etcd3ClientOptions) {
    const { urls, secure } = parseEtcdServers(opts.endpoints.join(','));
    const pkg = etcdPackage();
    const creds = secure
      ? // An endpoint named by IP address gets no TLS ServerName (grpc.tls-credentials.ts).
        tlsChannelCredentials({ ca: opts.tls?.ca, key: opts.tls?.key, cert: opts.tls?.cert })
      : grpc.credentials.createInsecure();
    // Each endpoint its own channel (the option makes grpc-js not share one between clients of
    // the same address), so a dead member affects only calls routed to it.
    const channelOptions = { 'grpc.max_receive_message_length': 64 * 1024 * 1024, 'grpc.keepalive_time_ms': 10_000, 'grpc.keepalive_timeout_ms': 5_000 };
    this.members = urls.map((url, i) => {
      const target = new URL(url).host;
      const o = { ...channelOptions, 'kapi.etcd.endpoint': i };
      const kv = new pkg.KV(target, creds, o) as unknown as ServiceClient;
      const shared = { channelOverride: kv.getChannel() };
      return {
        url,
        kv,
        watch: new pkg.Watch(target, creds, { ...o, ...shared }) as unknown as WatchClient,
        maintenance: new pkg.Maintenance(target, creds, { ...o, ...shared }) as unknown as ServiceClient,
      };
    });
    this.callTimeoutMs = opts.callTimeoutMs ?? 10_000;
    this.connectTimeoutMs = opts.connectTimeoutMs ?? 5_000;
    this.onCall = opts.onCall;
  }

  /** The endpoint URLs. */
  get endpoints(): string[] {
    return this.members.map((m) => m.url);
  }

  /**
   * A member with a connected channel, preferring the one used last; waits (bounded) for any to
   * connect. Throws Etcd3Error(unavailable) when none connects in time.
   */
  private async pick(): Promise<Member> {
    if (this.closed) throw new Etcd3Error('etcd client is closed', grpc.status.UNAVAILABLE, true);
    const n = this.members.length;
    for (let i = 0; i < n; i++) {
      const idx = (this.current + i) % n;
      if (this.members[idx]!.kv.getChannel().getConnectivityState(true) === grpc.connectivityState.READY) {
        this.current = idx;
        return this.members[idx]!;
      }
    }
    const deadline = Date.now() + this.connectTimeoutMs;
    return new Promise<Member>((resolve, reject) => {
      let pending = n;
      let done = false;
      const failed = (why: string): void => {
        if (--pending > 0) return;
        done = true;
        reject(new Etcd3Error(`no etcd endpoint reachable (${this.endpoints.join(', ')}): ${why}`, grpc.status.UNAVAILABLE, true));
      };
      // Each channel's connectivity is watched until it is READY, the deadline passes or the
      // client is closed. Not grpc-js's waitForReady: once its channel is closed, that goes on
      // asking the channel to connect, which leaves a timer of the closed channel behind.
      this.members.forEach((m, idx) => {
        const channel = m.kv.getChannel();
        const check = (err?: Error): void => {
          if (done) return;
          if (this.closed) {
            done = true;
            reject(new Etcd3Error('etcd client is closed', grpc.status.UNAVAILABLE, true));
            return;
          }
          if (err) return failed(err.message);
          const state = channel.getConnectivityState(true);
          if (state === grpc.connectivityState.READY) {
            done = true;
            this.current = idx;
            resolve(m);
            return;
          }
          try {
            channel.watchConnectivityState(state, deadline, check);
          } catch (e) {
            failed((e as Error).message);
          }
        };
        check();
      });
    });
  }

  private invoke<T>(m: Member, service: 'kv' | 'maintenance', method: string, req: object, timeoutMs: number): Promise<T> {
    const started = process.hrtime.bigint();
    return new Promise<T>((resolve, reject) => {
      m[service][method]!(req, new grpc.Metadata(), { deadline: Date.now() + timeoutMs }, (err, res) => {
        this.onCall?.(method, Number(process.hrtime.bigint() - started) / 1e9, !err);
        if (err) reject(err);
        else resolve(res as T);
      });
    });
  }

  /**
   * One unary call. `idempotent` calls (reads) are retried on another member after a failure
   * that leaves the cluster state as it was (Unavailable: the member is down, has no leader or
   * timed out); other calls are retried only when the request cannot have reached a member.
   */
  async call<T>(service: 'kv' | 'maintenance', method: string, req: object, idempotent: boolean, timeoutMs = this.callTimeoutMs): Promise<T> {
    let lastErr: unknown;
    for (let attempt = 0; attempt < Math.max(2, this.members.length + 1); attempt++) {
      const m = await this.pick();
      try {
        return await this.invoke<T>(m, service, method, req, timeoutMs);
      } catch (e) {
        lastErr = e;
        const se = e as grpc.ServiceError;
        const transient = se.code === grpc.status.UNAVAILABLE || (idempotent && se.code === grpc.status.DEADLINE_EXCEEDED);
        if (!transient) throw new Etcd3Error(se.details || se.message, se.code ?? grpc.status.UNKNOWN, false);
        // Another member next time.
        this.current = (this.members.indexOf(m) + 1) % this.members.length;
        if (!idempotent && !UNREACHED.test(se.details ?? se.message)) {
          throw new Etcd3Error(`etcd ${m.url}: ${se.details || se.message} (the outcome of the write is unknown)`, se.code, true);
        }
      }
    }
    const se = lastErr as grpc.ServiceError;
    throw new Etcd3Error(`etcd: ${se?.details || se?.message || 'unavailable'}`, se?.code ?? grpc.status.UNAVAILABLE, true);
  }

  /** Opens a Watch stream on a connected member (the caller sends the create request). */
  async watchStream(): Promise<grpc.ClientDuplexStream<object, EtcdWatchResponse>> {
    const m = await this.pick();
    // etcd refuses watches on a member without a leader only when asked to (metadata
    // hasleader=true); ask, so a partitioned member does not hold a watch that sees nothing.
    const meta = new grpc.Metadata();
    meta.set('hasleader', 'true');
    return m.watch.Watch(meta);
  }

  /** Closes every channel; calls after this fail Unavailable. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const m of this.members) {
      m.watch.close();
      m.maintenance.close();
      m.kv.close();
    }
  }
}
