/**
 * Command-line flags -> configuration. Names follow kube-apiserver where one exists and etcd's
 * for clustering (DESIGN "Contracts others rely on"). `--flag=value` and `--flag value` both
 * work; booleans accept a bare `--flag`. Flags of capabilities not built fail closed when they
 * are security-relevant (authentication, authorization, admission, audit, TLS material: a
 * FlagError naming the flag) and are accepted with a warning otherwise (`unsupported`).
 */
import { parseClientUrls } from '../etcd/etcd.url.js';
import { parseGoDuration } from '@app/apimachinery';
import { AUTHORIZATION_MODES } from '@app/authz';
import { parseIpRange, parsePortRange } from '../groups/core/service/service.ranges.js';
import { parseRuntimeConfig, RuntimeConfigError } from './runtime-config.js';
import { AUDIT_LOG_FORMATS, AUDIT_LOG_MODES } from '../audit/audit.log.js';
import { AUDIT_WEBHOOK_MODES } from '../audit/audit.webhook.js';

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
  /**
   * The store's space quota in bytes (etcd's --quota-backend-bytes): 0 or absent the default
   * (DEFAULT_QUOTA_BACKEND_BYTES), negative none.
   */
  quotaBackendBytes?: number;
  /** Raft heartbeat interval in ms (etcd's --heartbeat-interval); default 100. */
  heartbeatIntervalMs: number;
  /** Raft election timeout in ms (etcd's --election-timeout), at least 5 heartbeat intervals; default 1000. */
  electionTimeoutMs: number;
  /** Raft peer TLS (etcd's flags): certificate, key and the CA peers must chain to; each defaults to the node's PKI (peer.crt, peer.key, ca.crt). */
  peerCertFile?: string;
  peerKeyFile?: string;
  peerTrustedCaFile?: string;
  /** Common names a peer certificate may carry (etcd's --peer-cert-allowed-cn; comma-separated here). Default: the CN of this node's peer certificate. */
  peerCertAllowedCn?: string;
  /** `--storage-backend=etcd3`: etcd client URLs, comma-separated (kube-apiserver's --etcd-servers). */
  etcdServers?: string;
  /** PEM files of the etcd client's TLS: the CA that signed etcd's certificates, the client certificate and key. */
  etcdCafile?: string;
  etcdCertfile?: string;
  etcdKeyfile?: string;
  /** etcd key prefix of every object (kube's --etcd-prefix); default /registry. */
  etcdPrefix: string;
  /** Period of the coordinated etcd compaction in ms (kube's --etcd-compaction-interval, default 5m; 0 disables). */
  etcdCompactionIntervalMs: number;
  /**
   * The API server's TLS to kubelets (kube-apiserver's flags): the client certificate and key it
   * presents, and the CA that signed the kubelets' serving certificates (unset: not verified).
   */
  kubeletClientCertificate?: string;
  kubeletClientKey?: string;
  kubeletCertificateAuthority?: string;
  /** The Node address types tried, in order, for a kubelet's address (--kubelet-preferred-address-types). */
  kubeletPreferredAddressTypes: string[];
  /**
   * The aggregation layer (kube-apiserver's flags): the client certificate and key presented to
   * the servers of remote APIServices, and whether requests go to a service's endpoints
   * (--enable-aggregator-routing, the default here) or, when false, to its cluster IP.
   */
  proxyClientCertFile?: string;
  proxyClientKeyFile?: string;
  enableAggregatorRouting?: boolean;
  /** The etcd v3 API's listeners (etcd's --listen-client-urls, https://HOST:PORT URLs, comma-separated); absent: not served. */
  listenClientUrls?: string;
  /** The client URLs the etcd API's member list gives for this node (etcd's --advertise-client-urls); default: --listen-client-urls. */
  advertiseClientUrls?: string;
  /** etcd's --listen-metrics-urls (http(s)://HOST:PORT URLs, comma-separated): /metrics and /health over HTTP/1.x only; absent: not served. */
  listenMetricsUrls?: string;
  /** The etcd API's TLS (etcd's flags): serving certificate and key (default: the node's serving pair), the CA client certificates must chain to (default: the PKI's ca.crt). */
  certFile?: string;
  keyFile?: string;
  trustedCaFile?: string;
  /** Require a client certificate of the trusted CA on the etcd API (etcd's --client-cert-auth; default false). */
  clientCertAuth?: boolean;
  /** History retention / compaction interval in seconds (0 disables). */
  compactionIntervalSeconds: number;
  /** Upper bound of watch requests in seconds. */
  minRequestTimeoutSeconds: number;
  /** Deadline of every request but watches, in milliseconds (kube's `--request-timeout`, a Go duration; default 1m0s). */
  requestTimeoutMs: number;
  /** The CIDR Service cluster IPs are allocated from (kube-apiserver's --service-cluster-ip-range; default 10.0.0.0/24). */
  serviceClusterIpRange: string;
  /** The node ports NodePort and LoadBalancer Services get (kube-apiserver's --service-node-port-range; default 30000-32767). */
  serviceNodePortRange: string;
  /** Maximum request body size in bytes. */
  maxRequestBodyBytes: number;
  /** Read-only and mutating API requests served at once (0: no limit); see http/inflight.ts. */
  maxRequestsInflight: number;
  maxMutatingRequestsInflight: number;
  /** The tolerationSeconds of the not-ready and unreachable NoExecute tolerations the DefaultTolerationSeconds plugin gives pods. */
  defaultNotReadyTolerationSeconds: number;
  defaultUnreachableTolerationSeconds: number;
  /** Flags accepted for compatibility that this build does not act on yet (not security-relevant; main.ts warns). */
  unsupported: string[];
  /** `--feature-gates`, by gate name (repeated flags merge, the last value of a gate wins); see featureEnabled. */
  featureGates: Record<string, boolean>;
  /** Everything that was passed, by flag name (for components that read their own flags); a repeated flag keeps its last value. */
  raw: Record<string, string>;
  /** Every value of every flag passed, in order (repeatable flags such as --oidc-required-claim). */
  rawAll: Record<string, string[]>;
}

interface FlagSpec {
  key: keyof ServerConfig | string;
  kind: 'string' | 'int' | 'bool' | 'duration';
  /** Accepted for compatibility; not acted on in this build (a warning at start). */
  unsupported?: boolean;
  /** An int that may be negative. */
  signed?: boolean;
  /**
   * Security-relevant and not (fully) built: the reason a value cannot be honoured, which stops
   * the start (undefined: this value asks for nothing missing). Running without the
   * authentication, authorization, admission or audit an operator asked for would be worse
   * than not running.
   */
  refuse?: (value: string) => string | undefined;
}

/** Node address types, in kube-apiserver's default order of --kubelet-preferred-address-types. */
export const KUBELET_ADDRESS_TYPES: readonly string[] = ['Hostname', 'InternalDNS', 'InternalIP', 'ExternalDNS', 'ExternalIP'];

/** Authorization modes built into this server. */
export const BUILT_AUTHORIZATION_MODES: readonly string[] = Object.keys(AUTHORIZATION_MODES);
/** Storage backends built into this server (`--storage-backend`). */
export const BUILT_STORAGE_BACKENDS: readonly string[] = ['builtin', 'etcd3'];
/**
 * Admission plugins built into this server. All but SecurityContextDeny are on by default (as in
 * kube-apiserver); `--enable-admission-plugins` turns that one on, `--disable-admission-plugins`
 * turns the others off.
 */
export const BUILT_ADMISSION_PLUGINS: readonly string[] = [
  'NamespaceLifecycle',
  'CertificateApproval',
  'CertificateSigning',
  'CertificateSubjectRestriction',
  'TaintNodesByCondition',
  'LimitRanger',
  'ServiceAccount',
  'NodeRestriction',
  'Priority',
  'DefaultTolerationSeconds',
  'DefaultStorageClass',
  'StorageObjectInUseProtection',
  'PersistentVolumeClaimResize',
  'RuntimeClass',
  'SecurityContextDeny',
  'DefaultIngressClass',
  'MutatingAdmissionWebhook',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionWebhook',
  'ResourceQuota',
];

const notBuilt = (what: string) => (): string => `${what} is not built into this server`;
const listOf = (value: string): string[] =>
  value
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '');
const refuseAuthorization = (value: string): string | undefined => {
  const modes = listOf(value);
  if (modes.length === 0) return 'give at least one authorization mode';
  const missing = modes.filter((m) => !BUILT_AUTHORIZATION_MODES.includes(m));
  if (missing.length === 0) return undefined;
  return `authorization mode ${missing.map((m) => JSON.stringify(m)).join(', ')} is not built into this server (built: ${BUILT_AUTHORIZATION_MODES.join(', ')})`;
};
const refuseAdmission = (value: string): string | undefined => {
  const missing = listOf(value).filter((m) => !BUILT_ADMISSION_PLUGINS.includes(m));
  if (missing.length === 0) return undefined;
  return `admission plugin ${missing.map((m) => JSON.stringify(m)).join(', ')} is not built into this server (built: ${BUILT_ADMISSION_PLUGINS.join(', ')})`;
};
/**
 * Families of flags refused whatever their value: the settings of the built authentication
 * methods and of webhook authorization are in FLAGS, any other of their family is one this
 * build does not know; the audit webhook backend is not built.
 */
const REFUSED_PREFIXES: ReadonlyArray<[string, string]> = [
  ['oidc-', 'this OpenID Connect setting'],
  ['requestheader-', 'this request header (front proxy) setting'],
  ['authentication-token-webhook-', 'this webhook token authentication setting'],
  ['authorization-webhook-', 'this webhook authorization setting'],
  ['audit-', 'this audit setting (the log batch, throttle and truncation settings are not built)'],
];

const FLAGS: Record<string, FlagSpec> = {
  name: { key: 'name', kind: 'string' },
  'data-dir': { key: 'dataDir', kind: 'string' },
  'pki-dir': { key: 'pkiDir', kind: 'string' },
  'secure-port': { key: 'securePort', kind: 'int' },
  'bind-address': { key: 'bindAddress', kind: 'string' },
  'advertise-address': { key: 'advertiseAddress', kind: 'string' },
  'service-cluster-ip-range': { key: 'serviceClusterIpRange', kind: 'string' },
  'service-node-port-range': { key: 'serviceNodePortRange', kind: 'string' },
  'listen-peer-port': { key: 'listenPeerPort', kind: 'int' },
  'initial-cluster': { key: 'initialCluster', kind: 'string' },
  'initial-cluster-state': { key: 'initialClusterState', kind: 'string' },
  'snapshot-count': { key: 'snapshotCount', kind: 'int' },
  'snapshot-catchup-entries': { key: 'snapshotCatchupEntries', kind: 'int' },
  'quota-backend-bytes': { key: 'quotaBackendBytes', kind: 'int', signed: true },
  'heartbeat-interval': { key: 'heartbeatIntervalMs', kind: 'int' },
  'election-timeout': { key: 'electionTimeoutMs', kind: 'int' },
  'tls-cert-file': { key: 'tls-cert-file', kind: 'string' },
  'peer-cert-file': { key: 'peerCertFile', kind: 'string' },
  'listen-client-urls': { key: 'listenClientUrls', kind: 'string' },
  'advertise-client-urls': { key: 'advertiseClientUrls', kind: 'string' },
  'listen-metrics-urls': { key: 'listenMetricsUrls', kind: 'string' },
  'cert-file': { key: 'certFile', kind: 'string' },
  'key-file': { key: 'keyFile', kind: 'string' },
  'trusted-ca-file': { key: 'trustedCaFile', kind: 'string' },
  'client-cert-auth': { key: 'clientCertAuth', kind: 'bool' },
  'peer-key-file': { key: 'peerKeyFile', kind: 'string' },
  'peer-trusted-ca-file': { key: 'peerTrustedCaFile', kind: 'string' },
  'peer-cert-allowed-cn': { key: 'peerCertAllowedCn', kind: 'string' },
  'tls-private-key-file': { key: 'tls-private-key-file', kind: 'string' },
  'client-ca-file': { key: 'client-ca-file', kind: 'string' },
  'compaction-interval': { key: 'compactionIntervalSeconds', kind: 'int' },
  'min-request-timeout': { key: 'minRequestTimeoutSeconds', kind: 'int' },
  'request-timeout': { key: 'requestTimeoutMs', kind: 'duration' },
  'max-request-body-bytes': { key: 'maxRequestBodyBytes', kind: 'int' },
  'max-requests-inflight': { key: 'maxRequestsInflight', kind: 'int' },
  'max-mutating-requests-inflight': { key: 'maxMutatingRequestsInflight', kind: 'int' },
  'default-not-ready-toleration-seconds': { key: 'defaultNotReadyTolerationSeconds', kind: 'int' },
  'default-unreachable-toleration-seconds': { key: 'defaultUnreachableTolerationSeconds', kind: 'int' },
  // Test-only disk faults, honoured with KAPI_TEST_FAULTS=1 only (config/test-faults.ts).
  'test-disk-faults': { key: 'test-disk-faults', kind: 'string' },
  // Later capabilities. Security-relevant ones refuse what is not built; the rest warn.
  'enable-admission-plugins': { key: 'enable-admission-plugins', kind: 'string', refuse: refuseAdmission },
  // Parsed by config/runtime-config.ts; the registry serves only what it enables.
  'runtime-config': { key: 'runtime-config', kind: 'string' },
  'authorization-mode': { key: 'authorization-mode', kind: 'string', refuse: refuseAuthorization },
  'authorization-policy-file': { key: 'authorization-policy-file', kind: 'string' },
  // Authentication methods (pipeline/*.method.ts read their flags from `raw` / `rawAll`).
  'anonymous-auth': { key: 'anonymous-auth', kind: 'bool' },
  'token-auth-file': { key: 'token-auth-file', kind: 'string' },
  'requestheader-client-ca-file': { key: 'requestheader-client-ca-file', kind: 'string' },
  'requestheader-allowed-names': { key: 'requestheader-allowed-names', kind: 'string' },
  'requestheader-username-headers': { key: 'requestheader-username-headers', kind: 'string' },
  'requestheader-group-headers': { key: 'requestheader-group-headers', kind: 'string' },
  'requestheader-extra-headers-prefix': { key: 'requestheader-extra-headers-prefix', kind: 'string' },
  'requestheader-uid-headers': { key: 'requestheader-uid-headers', kind: 'string' },
  'oidc-issuer-url': { key: 'oidc-issuer-url', kind: 'string' },
  'oidc-client-id': { key: 'oidc-client-id', kind: 'string' },
  'oidc-username-claim': { key: 'oidc-username-claim', kind: 'string' },
  'oidc-username-prefix': { key: 'oidc-username-prefix', kind: 'string' },
  'oidc-groups-claim': { key: 'oidc-groups-claim', kind: 'string' },
  'oidc-groups-prefix': { key: 'oidc-groups-prefix', kind: 'string' },
  'oidc-required-claim': { key: 'oidc-required-claim', kind: 'string' },
  'oidc-ca-file': { key: 'oidc-ca-file', kind: 'string' },
  'oidc-signing-algs': { key: 'oidc-signing-algs', kind: 'string' },
  'authentication-token-webhook-config-file': { key: 'authentication-token-webhook-config-file', kind: 'string' },
  'authentication-token-webhook-cache-ttl': { key: 'authentication-token-webhook-cache-ttl', kind: 'string' },
  'authentication-token-webhook-version': { key: 'authentication-token-webhook-version', kind: 'string' },
  // Service-account tokens (pipeline/serviceaccount.config.ts reads the files and lists).
  'service-account-key-file': { key: 'service-account-key-file', kind: 'string' },
  'service-account-signing-key-file': { key: 'service-account-signing-key-file', kind: 'string' },
  'service-account-issuer': { key: 'service-account-issuer', kind: 'string' },
  'api-audiences': { key: 'api-audiences', kind: 'string' },
  'service-account-max-token-expiration': { key: 'service-account-max-token-expiration', kind: 'string' },
  'service-account-lookup': { key: 'service-account-lookup', kind: 'bool' },
  'enable-bootstrap-token-auth': { key: 'enable-bootstrap-token-auth', kind: 'bool' },
  'disable-admission-plugins': { key: 'disable-admission-plugins', kind: 'string', refuse: refuseAdmission },
  'storage-backend': {
    key: 'storage-backend',
    kind: 'string',
    refuse: (v) =>
      BUILT_STORAGE_BACKENDS.includes(v)
        ? undefined
        : `storage backend ${JSON.stringify(v)} is not built into this server (built: ${BUILT_STORAGE_BACKENDS.join(', ')})`,
  },
  'etcd-servers': { key: 'etcdServers', kind: 'string' },
  'kubelet-client-certificate': { key: 'kubeletClientCertificate', kind: 'string' },
  'kubelet-client-key': { key: 'kubeletClientKey', kind: 'string' },
  'kubelet-certificate-authority': { key: 'kubeletCertificateAuthority', kind: 'string' },
  'kubelet-preferred-address-types': { key: 'kubelet-preferred-address-types', kind: 'string' },
  'proxy-client-cert-file': { key: 'proxyClientCertFile', kind: 'string' },
  'proxy-client-key-file': { key: 'proxyClientKeyFile', kind: 'string' },
  'enable-aggregator-routing': { key: 'enableAggregatorRouting', kind: 'bool' },
  'etcd-cafile': { key: 'etcdCafile', kind: 'string' },
  'etcd-certfile': { key: 'etcdCertfile', kind: 'string' },
  'etcd-keyfile': { key: 'etcdKeyfile', kind: 'string' },
  'etcd-prefix': { key: 'etcdPrefix', kind: 'string' },
  'etcd-compaction-interval': { key: 'etcd-compaction-interval', kind: 'string' },
  'admission-control-config-file': { key: 'admission-control-config-file', kind: 'string' },
  // The CSR signing controller (controllers/csr.controllers.ts, docs/certificates.md).
  'cluster-signing-duration': { key: 'cluster-signing-duration', kind: 'string' },
  'cluster-signing-cert-file': { key: 'cluster-signing-cert-file', kind: 'string' },
  'cluster-signing-key-file': { key: 'cluster-signing-key-file', kind: 'string' },
  // The Webhook authorization mode (pipeline/authorization-webhook.ts reads them from `raw`).
  'authorization-webhook-config-file': { key: 'authorization-webhook-config-file', kind: 'string' },
  'authorization-webhook-version': { key: 'authorization-webhook-version', kind: 'string' },
  'authorization-webhook-cache-authorized-ttl': { key: 'authorization-webhook-cache-authorized-ttl', kind: 'string' },
  'authorization-webhook-cache-unauthorized-ttl': { key: 'authorization-webhook-cache-unauthorized-ttl', kind: 'string' },
  // Audit logging (audit/audit.sink.ts reads them from `raw`).
  'audit-policy-file': { key: 'audit-policy-file', kind: 'string' },
  'audit-log-path': { key: 'audit-log-path', kind: 'string' },
  'audit-log-format': { key: 'audit-log-format', kind: 'string' },
  'audit-log-mode': { key: 'audit-log-mode', kind: 'string' },
  'audit-log-version': { key: 'audit-log-version', kind: 'string' },
  'audit-log-maxage': { key: 'audit-log-maxage', kind: 'int' },
  'audit-log-maxbackup': { key: 'audit-log-maxbackup', kind: 'int' },
  'audit-log-maxsize': { key: 'audit-log-maxsize', kind: 'int' },
  'audit-log-compress': { key: 'audit-log-compress', kind: 'bool' },
  'audit-webhook-config-file': { key: 'audit-webhook-config-file', kind: 'string' },
  'audit-webhook-mode': { key: 'audit-webhook-mode', kind: 'string' },
  'audit-webhook-version': { key: 'audit-webhook-version', kind: 'string' },
  'audit-webhook-initial-backoff': { key: 'audit-webhook-initial-backoff', kind: 'string' },
  'audit-webhook-batch-max-size': { key: 'audit-webhook-batch-max-size', kind: 'int' },
  'audit-webhook-batch-max-wait': { key: 'audit-webhook-batch-max-wait', kind: 'string' },
  'audit-webhook-batch-buffer-size': { key: 'audit-webhook-batch-buffer-size', kind: 'int' },
  'feature-gates': { key: 'feature-gates', kind: 'string' },
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
    etcdPrefix: '/registry',
    etcdCompactionIntervalMs: 300_000,
    minRequestTimeoutSeconds: 1800,
    requestTimeoutMs: 60_000,
    maxRequestBodyBytes: 3 * 1024 * 1024,
    serviceClusterIpRange: '10.0.0.0/24',
    serviceNodePortRange: '30000-32767',
    // kube-apiserver's defaults.
    maxRequestsInflight: 400,
    maxMutatingRequestsInflight: 200,
    defaultNotReadyTolerationSeconds: 300,
    defaultUnreachableTolerationSeconds: 300,
    kubeletPreferredAddressTypes: [...KUBELET_ADDRESS_TYPES],
    unsupported: [],
    featureGates: {},
    raw: {},
    rawAll: {},
  };
  const out = cfg as unknown as Record<string, unknown>;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('--')) throw new FlagError(`unexpected argument ${JSON.stringify(a)}`);
    const eq = a.indexOf('=');
    const name = eq >= 0 ? a.slice(2, eq) : a.slice(2);
    const family = REFUSED_PREFIXES.find(([prefix]) => name.startsWith(prefix));
    const spec: FlagSpec | undefined = FLAGS[name] ?? (family ? { key: name, kind: 'string', refuse: notBuilt(family[1]) } : undefined);
    if (!spec) throw new FlagError(`unknown flag: --${name}`);
    let value: string;
    if (eq >= 0) value = a.slice(eq + 1);
    else if (spec.kind === 'bool' && (i + 1 >= argv.length || argv[i + 1].startsWith('--'))) value = 'true';
    else {
      if (i + 1 >= argv.length) throw new FlagError(`flag needs an argument: --${name}`);
      value = argv[++i];
    }
    cfg.raw[name] = value;
    (cfg.rawAll[name] ??= []).push(value);
    if (spec.kind === 'bool' && value !== 'true' && value !== 'false')
      throw new FlagError(`invalid value ${JSON.stringify(value)} for --${name}: must be true or false`);
    const refused = spec.refuse?.(value);
    if (refused !== undefined) throw new FlagError(`--${name}=${value}: ${refused}; refusing to start rather than run without it`);
    if (spec.refuse) continue;
    if (spec.unsupported) {
      cfg.unsupported.push(name);
      continue;
    }
    if (spec.kind === 'int') {
      if (spec.signed ? !/^-?\d+$/.test(value) : !/^\d+$/.test(value))
        throw new FlagError(`invalid value ${JSON.stringify(value)} for --${name}: must be ${spec.signed ? 'an' : 'a non-negative'} integer`);
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
  for (const [flag, value] of [
    ['listen-client-urls', cfg.listenClientUrls],
    ['listen-metrics-urls', cfg.listenMetricsUrls],
    ['advertise-client-urls', cfg.advertiseClientUrls],
  ] as const) {
    if (value === undefined) continue;
    try {
      parseClientUrls(value, flag);
    } catch (e) {
      throw new FlagError((e as Error).message);
    }
  }
  if ((cfg.kubeletClientCertificate === undefined) !== (cfg.kubeletClientKey === undefined)) {
    throw new FlagError('--kubelet-client-certificate and --kubelet-client-key must be given together');
  }
  if ((cfg.proxyClientCertFile === undefined) !== (cfg.proxyClientKeyFile === undefined)) {
    throw new FlagError('--proxy-client-cert-file and --proxy-client-key-file must be given together');
  }
  const addressTypes = cfg.raw['kubelet-preferred-address-types'];
  if (addressTypes !== undefined) {
    const types = listOf(addressTypes);
    if (types.length === 0) throw new FlagError('--kubelet-preferred-address-types must be specified');
    const unknown = types.filter((t) => !KUBELET_ADDRESS_TYPES.includes(t));
    if (unknown.length)
      throw new FlagError(
        `--kubelet-preferred-address-types: unknown address type ${unknown.map((t) => JSON.stringify(t)).join(', ')} (known: ${KUBELET_ADDRESS_TYPES.join(', ')})`,
      );
    cfg.kubeletPreferredAddressTypes = types;
  }
  if (cfg.advertiseClientUrls !== undefined && cfg.listenClientUrls === undefined)
    throw new FlagError('--advertise-client-urls names where the etcd API of --listen-client-urls is reached; give --listen-client-urls too');
  checkServiceRanges(cfg);
  for (const v of cfg.rawAll['feature-gates'] ?? []) Object.assign(cfg.featureGates, parseFeatureGates(v));
  for (const gate of Object.keys(cfg.featureGates)) if (!Object.hasOwn(FEATURE_GATES, gate)) cfg.unsupported.push(`feature-gates (${gate})`);
  checkAuthenticationFlags(cfg.raw);
  if (cfg.raw['requestheader-uid-headers'] !== undefined && !featureEnabled(cfg, 'RemoteRequestHeaderUID'))
    throw new FlagError('--requestheader-uid-headers requires the RemoteRequestHeaderUID feature gate (--feature-gates=RemoteRequestHeaderUID=true)');
  try {
    parseRuntimeConfig(cfg.raw['runtime-config']);
  } catch (e) {
    if (e instanceof RuntimeConfigError) throw new FlagError(`--runtime-config: ${e.message}`);
    throw e;
  }
  checkSigningFlags(cfg.raw);
  checkAuditFlags(cfg.raw);
  checkAuthorizationWebhookFlags(cfg.raw);
  checkAbacFlags(cfg.raw);
  checkEtcdFlags(cfg);
  // etcd's rule: an election timeout of fewer than 5 heartbeats elects on a late heartbeat.
  if (cfg.heartbeatIntervalMs < 1 || cfg.electionTimeoutMs < 5 * cfg.heartbeatIntervalMs)
    throw new FlagError(`--election-timeout must be at least 5 times --heartbeat-interval (at least 1)`);
  return cfg;
}

/** The ABAC mode and its policy file come together (kube-apiserver's messages). */
function checkAbacFlags(raw: Record<string, string>): void {
  const abac = listOf(raw['authorization-mode'] ?? '').includes('ABAC');
  const file = raw['authorization-policy-file'];
  if (abac && !file) throw new FlagError(`--authorization-mode=${raw['authorization-mode']}: authorization-mode ABAC's authorization policy file not passed`);
  if (!abac && file !== undefined) throw new FlagError(`--authorization-policy-file=${file}: cannot specify --authorization-policy-file without mode ABAC`);
}

/** The Webhook mode and its configuration file come together; its TTLs are Go durations (0: no cache). */
function checkAuthorizationWebhookFlags(raw: Record<string, string>): void {
  const webhook = listOf(raw['authorization-mode'] ?? '').includes('Webhook');
  const file = raw['authorization-webhook-config-file'];
  if (webhook && !file) throw new FlagError('--authorization-mode=Webhook needs --authorization-webhook-config-file');
  if (!webhook && file !== undefined) throw new FlagError('--authorization-webhook-config-file is only used with Webhook in --authorization-mode');
  const version = raw['authorization-webhook-version'];
  if (version !== undefined && version !== 'v1' && version !== 'v1beta1')
    throw new FlagError(`--authorization-webhook-version=${version}: must be v1 or v1beta1`);
  for (const flag of ['authorization-webhook-cache-authorized-ttl', 'authorization-webhook-cache-unauthorized-ttl']) {
    const v = raw[flag];
    if (v === undefined) continue;
    try {
      if (parseGoDuration(v) < 0) throw new Error('must not be negative');
    } catch (e) {
      throw new FlagError(`--${flag}=${v}: ${(e as Error).message}`);
    }
  }
}

/** The audit log's format, mode and event version are among those built. */
function checkAuditFlags(raw: Record<string, string>): void {
  const oneOf = (flag: string, allowed: readonly string[]) => {
    const v = raw[flag];
    if (v !== undefined && !allowed.includes(v)) throw new FlagError(`--${flag}=${v}: must be one of ${allowed.join(', ')}`);
  };
  oneOf('audit-log-format', AUDIT_LOG_FORMATS);
  oneOf('audit-log-mode', AUDIT_LOG_MODES);
  oneOf('audit-log-version', ['audit.k8s.io/v1']);
  oneOf('audit-webhook-version', ['audit.k8s.io/v1']);
  oneOf('audit-webhook-mode', AUDIT_WEBHOOK_MODES);
  for (const flag of ['audit-webhook-initial-backoff', 'audit-webhook-batch-max-wait']) {
    const v = raw[flag];
    if (v === undefined) continue;
    let ns: number;
    try {
      ns = parseGoDuration(v);
    } catch (e) {
      throw new FlagError(`--${flag}=${v}: ${(e as Error).message}`);
    }
    if (!(ns > 0)) throw new FlagError(`--${flag}=${v}: must be a positive duration`);
  }
  for (const flag of ['audit-webhook-batch-max-size', 'audit-webhook-batch-buffer-size'])
    if (raw[flag] !== undefined && Number(raw[flag]) < 1) throw new FlagError(`--${flag} must be at least 1`);
}

/** The Service ranges parse (one CIDR: dual-stack clusters are not built). */
function checkServiceRanges(cfg: ServerConfig): void {
  if (cfg.serviceClusterIpRange.includes(',')) {
    throw new FlagError(`--service-cluster-ip-range=${cfg.serviceClusterIpRange}: dual-stack Services are not built; give one CIDR`);
  }
  try {
    parseIpRange(cfg.serviceClusterIpRange);
  } catch (e) {
    throw new FlagError(`--service-cluster-ip-range: ${(e as Error).message}`);
  }
  try {
    parsePortRange(cfg.serviceNodePortRange);
  } catch (e) {
    throw new FlagError(`--service-node-port-range: ${(e as Error).message}`);
  }
}

/**
 * The external etcd flags (kube-apiserver's): --etcd-servers is required with
 * --storage-backend=etcd3 and meaningless without it, as are the built-in store's Raft flags
 * with it; --etcd-compaction-interval is a Go duration (0 disables).
 */
function checkEtcdFlags(cfg: ServerConfig): void {
  const raw = cfg.raw;
  const etcd = raw['storage-backend'] === 'etcd3';
  const etcdFlags = Object.keys(raw).filter((k) => k.startsWith('etcd-'));
  if (!etcd) {
    if (etcdFlags.length > 0) throw new FlagError(`--${etcdFlags[0]} needs --storage-backend=etcd3`);
    return;
  }
  if (!cfg.etcdServers) throw new FlagError('--etcd-servers is required with --storage-backend=etcd3');
  for (const u of cfg.etcdServers.split(',').map((x) => x.trim())) {
    if (u === '') continue;
    let url: URL | undefined;
    try {
      url = new URL(u);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.port === '') {
      throw new FlagError(`--etcd-servers: ${JSON.stringify(u)} is not an http(s)://host:port URL`);
    }
  }
  for (const f of ['initial-cluster', 'initial-cluster-state', 'listen-peer-port']) {
    if (raw[f] !== undefined) throw new FlagError(`--${f} belongs to the built-in store; with --storage-backend=etcd3 the etcd cluster replicates`);
  }
  if (raw['listen-client-urls'] !== undefined) {
    throw new FlagError('--listen-client-urls serves the built-in store through the etcd v3 API; with --storage-backend=etcd3 clients talk to etcd itself');
  }
  if (raw['listen-metrics-urls'] !== undefined) {
    throw new FlagError(
      "--listen-metrics-urls serves the built-in store's etcd health and metrics; with --storage-backend=etcd3 ask etcd itself (the API's /metrics and /readyz stay served)",
    );
  }
  const interval = raw['etcd-compaction-interval'];
  if (interval !== undefined) {
    let ns: number;
    try {
      ns = interval === '0' ? 0 : parseGoDuration(interval);
    } catch (e) {
      throw new FlagError(`invalid value ${JSON.stringify(interval)} for --etcd-compaction-interval: ${(e as Error).message}`);
    }
    if (ns < 0 || ns / 1e6 > 2 ** 31 - 1) throw new FlagError('--etcd-compaction-interval must be 0 (off) or a positive duration such as 5m0s');
    cfg.etcdCompactionIntervalMs = ns / 1e6;
  }
}

/**
 * The authentication flags that must go together or have a fixed form (what kube-apiserver
 * checks before it starts). Files are read later, by the methods (pipeline/*.method.ts).
 */
/** Default of --cluster-signing-duration: one year, as kube-controller-manager's. */
export const DEFAULT_CLUSTER_SIGNING_DURATION_MS = 8760 * 3_600_000;

/** --cluster-signing-duration in ms (a Go duration, positive), or the one-year default. */
export function clusterSigningDurationMs(raw: Record<string, string>): number {
  const v = raw['cluster-signing-duration'];
  if (v === undefined) return DEFAULT_CLUSTER_SIGNING_DURATION_MS;
  let ms: number;
  try {
    ms = parseGoDuration(v) / 1e6;
  } catch (e) {
    throw new FlagError(`invalid value ${JSON.stringify(v)} for --cluster-signing-duration: ${(e as Error).message}`);
  }
  if (!(ms > 0)) throw new FlagError('--cluster-signing-duration must be a positive duration, such as 8760h0m0s');
  return ms;
}

/**
 * The feature gates this build acts on, with their default at the Kubernetes version it serves
 * (1.32). Other gates are accepted with a warning, as settings this build does not act on.
 */
export const FEATURE_GATES = {
  /** Request header authentication reads a UID (--requestheader-uid-headers), and the aggregation proxy sends X-Remote-Uid. Alpha in 1.32. */
  RemoteRequestHeaderUID: false,
} as const satisfies Record<string, boolean>;

/** Whether `gate` is on: as set by --feature-gates, else its default. */
export function featureEnabled(cfg: Pick<ServerConfig, 'featureGates'>, gate: keyof typeof FEATURE_GATES): boolean {
  return cfg.featureGates[gate] ?? FEATURE_GATES[gate];
}

const GO_TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const GO_FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

/** One --feature-gates value: `Name=true|false` pairs separated by commas (kube's format). */
export function parseFeatureGates(value: string): Record<string, boolean> {
  const out: Record<string, boolean> = {};
  for (const part of value.split(',')) {
    const item = part.trim();
    if (item === '') continue;
    const eq = item.indexOf('=');
    if (eq < 0) throw new FlagError(`--feature-gates=${value}: missing bool value for ${item}`);
    const name = item.slice(0, eq).trim();
    const v = item.slice(eq + 1).trim();
    // The spellings Go's strconv.ParseBool takes, as kube does.
    if (GO_TRUE.has(v)) out[name] = true;
    else if (GO_FALSE.has(v)) out[name] = false;
    else throw new FlagError(`--feature-gates=${value}: invalid value of ${name}=${v}: must be true or false`);
  }
  return out;
}

/** The signing flags: a valid duration, and the certificate and key files given together. */
function checkSigningFlags(raw: Record<string, string>): void {
  clusterSigningDurationMs(raw);
  if ((raw['cluster-signing-cert-file'] === undefined) !== (raw['cluster-signing-key-file'] === undefined)) {
    throw new FlagError('--cluster-signing-cert-file and --cluster-signing-key-file must be given together');
  }
}

function checkAuthenticationFlags(raw: Record<string, string>): void {
  const issuer = raw['oidc-issuer-url'];
  const oidcGiven = Object.keys(raw).some((k) => k.startsWith('oidc-'));
  if (oidcGiven && !issuer) throw new FlagError('--oidc-issuer-url is required when any --oidc-* flag is given');
  if (issuer !== undefined) {
    let url: URL | undefined;
    try {
      url = new URL(issuer);
    } catch {
      url = undefined;
    }
    if (url?.protocol !== 'https:') throw new FlagError(`--oidc-issuer-url=${issuer}: must be an https:// URL`);
    if (!raw['oidc-client-id']) throw new FlagError('--oidc-client-id is required with --oidc-issuer-url');
  }
  if ((raw['tls-cert-file'] === undefined) !== (raw['tls-private-key-file'] === undefined)) {
    throw new FlagError('--tls-cert-file and --tls-private-key-file are given together (the serving certificate and its key)');
  }
  const rh = Object.keys(raw).filter((k) => k.startsWith('requestheader-'));
  if (rh.length > 0) {
    if (!raw['requestheader-client-ca-file']) throw new FlagError('--requestheader-client-ca-file is required when any --requestheader-* flag is given');
    if (!raw['requestheader-username-headers']?.trim()) throw new FlagError('--requestheader-username-headers is required with --requestheader-client-ca-file');
  }
  const maxExp = raw['service-account-max-token-expiration'];
  if (maxExp !== undefined) {
    let ns: number;
    try {
      ns = parseGoDuration(maxExp);
    } catch (e) {
      throw new FlagError(`--service-account-max-token-expiration=${maxExp}: ${(e as Error).message}`);
    }
    // kube-apiserver's bounds; 0 means no maximum.
    if (ns !== 0 && (ns < 3600e9 || ns > 2 ** 32 * 1e9))
      throw new FlagError(`--service-account-max-token-expiration=${maxExp}: must be between 1 hour and 2^32 seconds (or 0 for no maximum)`);
  }
  const webhookGiven = Object.keys(raw).some((k) => k.startsWith('authentication-token-webhook-'));
  if (webhookGiven && !raw['authentication-token-webhook-config-file']) {
    throw new FlagError('--authentication-token-webhook-config-file is required when any --authentication-token-webhook-* flag is given');
  }
  const version = raw['authentication-token-webhook-version'];
  if (version !== undefined && version !== 'v1' && version !== 'v1beta1')
    throw new FlagError(`--authentication-token-webhook-version=${version}: must be v1 or v1beta1`);
  const ttl = raw['authentication-token-webhook-cache-ttl'];
  if (ttl !== undefined) {
    try {
      if (parseGoDuration(ttl) < 0) throw new Error('must not be negative');
    } catch (e) {
      throw new FlagError(`--authentication-token-webhook-cache-ttl=${ttl}: ${(e as Error).message}`);
    }
  }
}
