/**
 * Command-line flags -> configuration. Names follow kube-apiserver where one exists and etcd's
 * for clustering (DESIGN "Contracts others rely on"). `--flag=value` and `--flag value` both
 * work; booleans accept a bare `--flag`.
 */
import { parseGoDuration } from '@app/apimachinery';

/** The server configuration. Paths are absolute after `resolveConfig`. */
export interface ServerConfig {
  name: string;
  dataDir: string;
  /** Shared PKI directory of a cluster; absent = own PKI in `<dataDir>/pki`. */
  pkiDir?: string;
  securePort: number;
  bindAddress: string;
  advertiseAddress?: string;
  listenPeerPort: number;
  /** `name=host:port,...` of the initial Raft members. */
  initialCluster?: string;
  /** `new` (founding a cluster, default) or `existing` (joining a running one), as etcd's flag. */
  initialClusterState?: 'new' | 'existing';
  /** Applied Raft entries between snapshots (etcd's --snapshot-count); default 10000. */
  snapshotCount?: number;
  /** Raft entries kept behind a snapshot for slow followers; default min(5000, snapshot count). */
  snapshotCatchupEntries?: number;
  /** Raft heartbeat interval in ms (etcd's --heartbeat-interval); default 100. */
  heartbeatIntervalMs: number;
  /** Raft election timeout in ms (etcd's --election-timeout), at least 5 heartbeat intervals; default 1000. */
  electionTimeoutMs: number;
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  /** Raft peer TLS (etcd's flags): certificate, key and the CA peers must chain to; each defaults to the node's PKI (peer.crt, peer.key, ca.crt). */
  peerCertFile?: string;
  peerKeyFile?: string;
  peerTrustedCaFile?: string;
  /** Common names a peer certificate may carry (etcd's --peer-cert-allowed-cn; comma-separated here). Default: the CN of this node's peer certificate. */
  peerCertAllowedCn?: string;
  clientCaFile?: string;
  /** History retention / compaction interval in seconds (0 disables). */
  compactionIntervalSeconds: number;
  /** Upper bound of watch requests in seconds. */
  minRequestTimeoutSeconds: number;
  /** Deadline of every request but watches, in milliseconds (kube's `--request-timeout`, a Go duration; default 1m0s). */
  requestTimeoutMs: number;
  /** Maximum request body size in bytes. */
  maxRequestBodyBytes: number;
  /** Read-only and mutating API requests served at once (0: no limit); see http/inflight.ts. */
  maxRequestsInflight: number;
  maxMutatingRequestsInflight: number;
  /** Flags accepted for compatibility that this build does not act on yet. */
  unsupported: string[];
  /** Everything that was passed, by flag name (for components that read their own flags). */
  raw: Record<string, string>;
}

interface FlagSpec {
  key: keyof ServerConfig | string;
  kind: 'string' | 'int' | 'bool' | 'duration';
  /** Accepted for compatibility; not acted on in this build. */
  unsupported?: boolean;
}

const FLAGS: Record<string, FlagSpec> = {
  name: { key: 'name', kind: 'string' },
  'data-dir': { key: 'dataDir', kind: 'string' },
  'pki-dir': { key: 'pkiDir', kind: 'string' },
  'secure-port': { key: 'securePort', kind: 'int' },
  'bind-address': { key: 'bindAddress', kind: 'string' },
  'advertise-address': { key: 'advertiseAddress', kind: 'string' },
  'listen-peer-port': { key: 'listenPeerPort', kind: 'int' },
  'initial-cluster': { key: 'initialCluster', kind: 'string' },
  'initial-cluster-state': { key: 'initialClusterState', kind: 'string' },
  'snapshot-count': { key: 'snapshotCount', kind: 'int' },
  'snapshot-catchup-entries': { key: 'snapshotCatchupEntries', kind: 'int' },
  'heartbeat-interval': { key: 'heartbeatIntervalMs', kind: 'int' },
  'election-timeout': { key: 'electionTimeoutMs', kind: 'int' },
  'tls-cert-file': { key: 'tlsCertFile', kind: 'string' },
  'peer-cert-file': { key: 'peerCertFile', kind: 'string' },
  'peer-key-file': { key: 'peerKeyFile', kind: 'string' },
  'peer-trusted-ca-file': { key: 'peerTrustedCaFile', kind: 'string' },
  'peer-cert-allowed-cn': { key: 'peerCertAllowedCn', kind: 'string' },
  'tls-private-key-file': { key: 'tlsPrivateKeyFile', kind: 'string' },
  'client-ca-file': { key: 'clientCaFile', kind: 'string' },
  'compaction-interval': { key: 'compactionIntervalSeconds', kind: 'int' },
  'min-request-timeout': { key: 'minRequestTimeoutSeconds', kind: 'int' },
  'request-timeout': { key: 'requestTimeoutMs', kind: 'duration' },
  'max-request-body-bytes': { key: 'maxRequestBodyBytes', kind: 'int' },
  'max-requests-inflight': { key: 'maxRequestsInflight', kind: 'int' },
  'max-mutating-requests-inflight': { key: 'maxMutatingRequestsInflight', kind: 'int' },
  // Later capabilities (authentication, authorization, admission, audit): accepted, reported.
  'enable-admission-plugins': { key: 'enable-admission-plugins', kind: 'string', unsupported: true },
  'runtime-config': { key: 'runtime-config', kind: 'string', unsupported: true },
  'authorization-mode': { key: 'authorization-mode', kind: 'string', unsupported: true },
  'anonymous-auth': { key: 'anonymous-auth', kind: 'bool', unsupported: true },
  'token-auth-file': { key: 'token-auth-file', kind: 'string', unsupported: true },
  'service-account-key-file': { key: 'service-account-key-file', kind: 'string', unsupported: true },
  'service-account-signing-key-file': { key: 'service-account-signing-key-file', kind: 'string', unsupported: true },
  'service-account-issuer': { key: 'service-account-issuer', kind: 'string', unsupported: true },
  'enable-bootstrap-token-auth': { key: 'enable-bootstrap-token-auth', kind: 'bool', unsupported: true },
  'admission-control-config-file': { key: 'admission-control-config-file', kind: 'string', unsupported: true },
  'audit-policy-file': { key: 'audit-policy-file', kind: 'string', unsupported: true },
  'audit-log-path': { key: 'audit-log-path', kind: 'string', unsupported: true },
  'cluster-signing-duration': { key: 'cluster-signing-duration', kind: 'string', unsupported: true },
  'feature-gates': { key: 'feature-gates', kind: 'string', unsupported: true },
};

/** A flag error: printed with usage, exit code 2. */
export class FlagError extends Error {}

/** Parses argv (without node and script) into a configuration with defaults. */
export function parseFlags(argv: string[]): ServerConfig {
  const cfg: ServerConfig = {
    name: 'default',
    dataDir: './data',
    securePort: 6443,
    bindAddress: '127.0.0.1',
    listenPeerPort: 2380,
    heartbeatIntervalMs: 100,
    electionTimeoutMs: 1000,
    compactionIntervalSeconds: 300,
    minRequestTimeoutSeconds: 1800,
    requestTimeoutMs: 60_000,
    maxRequestBodyBytes: 3 * 1024 * 1024,
    // kube-apiserver's defaults.
    maxRequestsInflight: 400,
    maxMutatingRequestsInflight: 200,
    unsupported: [],
    raw: {},
  };
  const out = cfg as unknown as Record<string, unknown>;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('--')) throw new FlagError(`unexpected argument ${JSON.stringify(a)}`);
    const eq = a.indexOf('=');
    const name = eq >= 0 ? a.slice(2, eq) : a.slice(2);
    const spec = FLAGS[name] ?? (name.startsWith('oidc-') || name.startsWith('requestheader-') || name.startsWith('authentication-token-webhook-') ? { key: name, kind: 'string' as const, unsupported: true } : undefined);
    if (!spec) throw new FlagError(`unknown flag: --${name}`);
    let value: string;
    if (eq >= 0) value = a.slice(eq + 1);
    else if (spec.kind === 'bool' && (i + 1 >= argv.length || argv[i + 1].startsWith('--'))) value = 'true';
    else {
      if (i + 1 >= argv.length) throw new FlagError(`flag needs an argument: --${name}`);
      value = argv[++i];
    }
    cfg.raw[name] = value;
    if (spec.unsupported) {
      cfg.unsupported.push(name);
      continue;
    }
    if (spec.kind === 'int') {
      if (!/^\d+$/.test(value)) throw new FlagError(`invalid value ${JSON.stringify(value)} for --${name}: must be a non-negative integer`);
      out[spec.key] = Number(value);
    } else if (spec.kind === 'duration') {
      let ms: number;
      try {
        ms = parseGoDuration(value) / 1e6;
      } catch (e) {
        throw new FlagError(`invalid value ${JSON.stringify(value)} for --${name}: ${(e as Error).message}`);
      }
      // Timers take at most 2^31-1 ms (about 24.8 days).
      if (!(ms > 0) || ms > 2 ** 31 - 1) throw new FlagError(`--${name} must be a positive duration of at most 596h31m23s, such as 1m0s`);
      out[spec.key] = ms;
    } else if (spec.kind === 'bool') {
      if (value !== 'true' && value !== 'false') throw new FlagError(`invalid value ${JSON.stringify(value)} for --${name}: must be true or false`);
      out[spec.key] = value === 'true';
    } else {
      out[spec.key] = value;
    }
  }
  if (cfg.securePort < 1 || cfg.securePort > 65535) throw new FlagError(`--secure-port must be 1-65535`);
  if (cfg.listenPeerPort < 1 || cfg.listenPeerPort > 65535) throw new FlagError(`--listen-peer-port must be 1-65535`);
  if (cfg.initialClusterState !== undefined && cfg.initialClusterState !== 'new' && cfg.initialClusterState !== 'existing') {
    throw new FlagError(`--initial-cluster-state must be new or existing`);
  }
  if (cfg.maxRequestBodyBytes < 1024) throw new FlagError(`--max-request-body-bytes must be at least 1024`);
  // etcd's rule: an election timeout of fewer than 5 heartbeats elects on a late heartbeat.
  if (cfg.heartbeatIntervalMs < 1 || cfg.electionTimeoutMs < 5 * cfg.heartbeatIntervalMs) throw new FlagError(`--election-timeout must be at least 5 times --heartbeat-interval (at least 1)`);
  return cfg;
}
