import { clusterSigningDurationMs, featureEnabled, FlagError, parseFlags } from './flags.js';

describe('parseFlags', () => {
  it('has the documented defaults', () => {
    const c = parseFlags([]);
    expect(c).toMatchObject({ dataDir: './data', securePort: 6443, bindAddress: '127.0.0.1', compactionIntervalSeconds: 300 });
  });
  it('takes --flag=value and --flag value, kube-apiserver and etcd names', () => {
    const c = parseFlags(['--name', 'n1', '--data-dir=/d', '--secure-port', '6444', '--listen-peer-port=2381', '--initial-cluster', 'n1=127.0.0.1:2381']);
    expect(c).toMatchObject({ name: 'n1', dataDir: '/d', securePort: 6444, listenPeerPort: 2381, initialCluster: 'n1=127.0.0.1:2381' });
  });
  it('records flags of later capabilities that grant or protect nothing as unsupported (a warning)', () => {
    const c = parseFlags(['--runtime-config', 'api/all=true', '--feature-gates=X=true', '--anonymous-auth=false', '--cluster-signing-duration', '8760h']);
    expect(c.unsupported).toEqual(['feature-gates (X)']);
    expect(c.raw['runtime-config']).toBe('api/all=true');
    expect(c.raw['anonymous-auth']).toBe('false');
  });
  it('parses --feature-gates: the gates this build acts on, their 1.32 defaults, Go bool spellings, errors naming the flag', () => {
    expect(featureEnabled(parseFlags([]), 'RemoteRequestHeaderUID')).toBe(false);
    const c = parseFlags(['--feature-gates=RemoteRequestHeaderUID=true, SomeOtherGate=false', '--feature-gates', 'Third=T']);
    expect(c.featureGates).toEqual({ RemoteRequestHeaderUID: true, SomeOtherGate: false, Third: true });
    expect(featureEnabled(c, 'RemoteRequestHeaderUID')).toBe(true);
    expect(c.unsupported).toEqual(['feature-gates (SomeOtherGate)', 'feature-gates (Third)']);
    expect(
      featureEnabled(parseFlags(['--feature-gates=RemoteRequestHeaderUID=true', '--feature-gates=RemoteRequestHeaderUID=0']), 'RemoteRequestHeaderUID'),
    ).toBe(false);
    expect(() => parseFlags(['--feature-gates=RemoteRequestHeaderUID'])).toThrow(
      '--feature-gates=RemoteRequestHeaderUID: missing bool value for RemoteRequestHeaderUID',
    );
    expect(() => parseFlags(['--feature-gates=A=yes'])).toThrow('--feature-gates=A=yes: invalid value of A=yes: must be true or false');
  });
  it('takes --requestheader-uid-headers only with the RemoteRequestHeaderUID gate on', () => {
    const rh = ['--requestheader-client-ca-file=/ca.crt', '--requestheader-username-headers=X-Remote-User', '--requestheader-uid-headers=X-Remote-Uid'];
    expect(() => parseFlags(rh)).toThrow(
      '--requestheader-uid-headers requires the RemoteRequestHeaderUID feature gate (--feature-gates=RemoteRequestHeaderUID=true)',
    );
    expect(parseFlags([...rh, '--feature-gates=RemoteRequestHeaderUID=true']).raw['requestheader-uid-headers']).toBe('X-Remote-Uid');
  });
  it('takes the CSR signing flags: a positive duration (default a year), certificate and key together', () => {
    expect(clusterSigningDurationMs(parseFlags(['--cluster-signing-duration', '2h']).raw)).toBe(7_200_000);
    expect(clusterSigningDurationMs(parseFlags([]).raw)).toBe(8760 * 3_600_000);
    expect(() => parseFlags(['--cluster-signing-duration=soon'])).toThrow('invalid value "soon" for --cluster-signing-duration');
    expect(() => parseFlags(['--cluster-signing-cert-file=/c'])).toThrow('--cluster-signing-cert-file and --cluster-signing-key-file must be given together');
  });

  it('takes --quota-backend-bytes, negative too (no quota, as etcd)', () => {
    expect(parseFlags([]).quotaBackendBytes).toBeUndefined();
    expect(parseFlags(['--quota-backend-bytes', '4096']).quotaBackendBytes).toBe(4096);
    expect(parseFlags(['--quota-backend-bytes=-1']).quotaBackendBytes).toBe(-1);
    expect(() => parseFlags(['--quota-backend-bytes', '2GB'])).toThrow('invalid value "2GB" for --quota-backend-bytes: must be an integer');
    expect(() => parseFlags(['--snapshot-count', '-1'])).toThrow('must be a non-negative integer');
  });

  it('takes lists of etcd client, advertised and metrics URLs, and refuses a bad one before anything starts', () => {
    expect(parseFlags(['--listen-client-urls', 'https://0.0.0.0:2379']).listenClientUrls).toBe('https://0.0.0.0:2379');
    const both = parseFlags(['--listen-client-urls', 'https://127.0.0.1:2379,https://10.0.0.1:2379', '--advertise-client-urls', 'https://n1.example:2379']);
    expect(both).toMatchObject({ listenClientUrls: 'https://127.0.0.1:2379,https://10.0.0.1:2379', advertiseClientUrls: 'https://n1.example:2379' });
    expect(() => parseFlags(['--listen-client-urls', 'https://127.0.0.1:2379,https://127.0.0.1:2379'])).toThrow(FlagError);
    expect(() => parseFlags(['--listen-client-urls', 'https://127.0.0.1:2379,https://127.0.0.1:2379'])).toThrow(
      '--listen-client-urls: 127.0.0.1:2379 is named twice',
    );
    expect(() => parseFlags(['--listen-metrics-urls', 'ftp://x:1'])).toThrow('--listen-metrics-urls: the scheme must be https (or http without TLS)');
    expect(() => parseFlags(['--listen-client-urls', 'https://127.0.0.1:2379', '--advertise-client-urls', '10.0.0.1:2379'])).toThrow(
      '--advertise-client-urls: "10.0.0.1:2379" is not a URL',
    );
    expect(() => parseFlags(['--advertise-client-urls', 'https://n1:2379'])).toThrow('give --listen-client-urls too');
  });

  it('refuses a --runtime-config it cannot parse', () => {
    expect(() => parseFlags(['--runtime-config=apps/v1=maybe'])).toThrow(FlagError);
    expect(() => parseFlags(['--runtime-config=apps/notaversion'])).toThrow(/is not an API version/);
  });

  describe('authentication flags', () => {
    it('are parsed; repeatable ones keep every value', () => {
      const c = parseFlags([
        '--token-auth-file=/t.csv',
        '--oidc-issuer-url=https://idp.example',
        '--oidc-client-id=kapi',
        '--oidc-required-claim=a=1',
        '--oidc-required-claim',
        'b=2',
        '--requestheader-client-ca-file=/ca',
        '--requestheader-username-headers=X-Remote-User',
        '--authentication-token-webhook-config-file=/w',
        '--authentication-token-webhook-cache-ttl=30s',
        '--authentication-token-webhook-version=v1beta1',
        '--anonymous-auth',
      ]);
      expect(c.rawAll['oidc-required-claim']).toEqual(['a=1', 'b=2']);
      expect(c.raw).toMatchObject({ 'token-auth-file': '/t.csv', 'anonymous-auth': 'true', 'authentication-token-webhook-version': 'v1beta1' });
      expect(c.unsupported).toEqual([]);
    });
    it('refuses settings that cannot work together or have the wrong form', () => {
      expect(() => parseFlags(['--oidc-issuer-url=http://idp', '--oidc-client-id=k'])).toThrow('--oidc-issuer-url=http://idp: must be an https:// URL');
      expect(() => parseFlags(['--oidc-issuer-url=https://idp'])).toThrow('--oidc-client-id is required');
      expect(() => parseFlags(['--oidc-client-id=k'])).toThrow('--oidc-issuer-url is required');
      expect(() => parseFlags(['--requestheader-client-ca-file=/ca'])).toThrow('--requestheader-username-headers is required');
      expect(() => parseFlags(['--requestheader-username-headers=X-Remote-User'])).toThrow('--requestheader-client-ca-file is required');
      expect(() => parseFlags(['--authentication-token-webhook-cache-ttl=1m'])).toThrow('--authentication-token-webhook-config-file is required');
      expect(() => parseFlags(['--authentication-token-webhook-config-file=/w', '--authentication-token-webhook-version=v2'])).toThrow('must be v1 or v1beta1');
      expect(() => parseFlags(['--authentication-token-webhook-config-file=/w', '--authentication-token-webhook-cache-ttl=soon'])).toThrow(FlagError);
      expect(() => parseFlags(['--anonymous-auth=maybe'])).toThrow('must be true or false');
    });
  });

  describe('security-relevant flags fail closed, naming the flag', () => {
    /** Asserts that parsing `argv` refuses to start with a FlagError naming `--flag`. */
    const expectRefused = (argv: string[], flag: string): void => {
      let err: unknown;
      try {
        parseFlags(argv);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(FlagError);
      expect((err as Error).message).toMatch(new RegExp(`^--${flag}=.*not built into this server.*refusing to start`));
    };
    it('--authorization-mode naming a mode that is not built', () => {
      expectRefused(['--authorization-mode=Keystone'], 'authorization-mode');
      expectRefused(['--authorization-mode', 'Keystone,RBAC'], 'authorization-mode');
      expect(() => parseFlags(['--authorization-mode='])).toThrow('--authorization-mode=: give at least one authorization mode');
      expect(() => parseFlags(['--authorization-mode=Keystone,RBAC'])).toThrow(
        'authorization mode "Keystone" is not built into this server (built: AlwaysAllow, AlwaysDeny, ABAC, RBAC, Webhook, Node)',
      );
      expect(parseFlags(['--authorization-mode=Node,RBAC']).raw['authorization-mode']).toBe('Node,RBAC');
    });
    it('--authorization-mode=ABAC comes with --authorization-policy-file, and the file with the mode', () => {
      expect(parseFlags(['--authorization-mode=ABAC,RBAC', '--authorization-policy-file=/p.jsonl']).raw['authorization-policy-file']).toBe('/p.jsonl');
      expect(() => parseFlags(['--authorization-mode=ABAC'])).toThrow("authorization-mode ABAC's authorization policy file not passed");
      expect(() => parseFlags(['--authorization-policy-file=/p.jsonl'])).toThrow('cannot specify --authorization-policy-file without mode ABAC');
    });
    it('--authorization-mode=AlwaysDeny, AlwaysAllow and RBAC are accepted', () => {
      expect(parseFlags(['--authorization-mode=AlwaysDeny,AlwaysAllow']).raw['authorization-mode']).toBe('AlwaysDeny,AlwaysAllow');
      expect(parseFlags(['--authorization-mode=RBAC']).raw['authorization-mode']).toBe('RBAC');
      expect(parseFlags(['--authorization-mode=RBAC,AlwaysDeny']).raw['authorization-mode']).toBe('RBAC,AlwaysDeny');
    });
    it('--authorization-mode=Webhook needs its configuration file, which needs the mode; version and TTLs are checked', () => {
      const c = parseFlags([
        '--authorization-mode=RBAC,Webhook',
        '--authorization-webhook-config-file=/w.kubeconfig',
        '--authorization-webhook-version=v1beta1',
        '--authorization-webhook-cache-authorized-ttl=1m',
        '--authorization-webhook-cache-unauthorized-ttl=0s',
      ]);
      expect(c.raw['authorization-webhook-config-file']).toBe('/w.kubeconfig');
      expect(() => parseFlags(['--authorization-mode=Webhook'])).toThrow('--authorization-mode=Webhook needs --authorization-webhook-config-file');
      expect(() => parseFlags(['--authorization-webhook-config-file=/w'])).toThrow('only used with Webhook in --authorization-mode');
      expect(() => parseFlags(['--authorization-mode=Webhook', '--authorization-webhook-config-file=/w', '--authorization-webhook-version=v2'])).toThrow(
        'must be v1 or v1beta1',
      );
      expect(() =>
        parseFlags(['--authorization-mode=Webhook', '--authorization-webhook-config-file=/w', '--authorization-webhook-cache-authorized-ttl=soon']),
      ).toThrow('--authorization-webhook-cache-authorized-ttl=soon');
      expectRefused(['--authorization-webhook-retry-backoff=1s'], 'authorization-webhook-retry-backoff');
    });
    it('--authorization-mode=AlwaysAllow is accepted', () => {
      const c = parseFlags(['--authorization-mode=AlwaysAllow']);
      expect(c.unsupported).toEqual([]);
      expect(c.raw['authorization-mode']).toBe('AlwaysAllow');
    });
    it('authentication methods not built', () => {
      expectRefused(['--oidc-unknown-setting=x'], 'oidc-unknown-setting');
      expectRefused(['--requestheader-unknown-setting=x'], 'requestheader-unknown-setting');
      expectRefused(['--authentication-token-webhook-unknown=x'], 'authentication-token-webhook-unknown');
    });
    it('serving certificate files come in pairs; a client CA file is accepted', () => {
      expect(parseFlags(['--tls-cert-file=/s.crt', '--tls-private-key-file=/s.key', '--client-ca-file=/ca.crt']).unsupported).toEqual([]);
      expect(() => parseFlags(['--tls-cert-file=/s.crt'])).toThrow('--tls-cert-file and --tls-private-key-file are given together');
      expect(() => parseFlags(['--tls-private-key-file=/s.key'])).toThrow('--tls-cert-file and --tls-private-key-file are given together');
    });
    it('--enable-bootstrap-token-auth is a boolean, off unless given', () => {
      expect(parseFlags([]).raw['enable-bootstrap-token-auth']).toBeUndefined();
      expect(parseFlags(['--enable-bootstrap-token-auth']).raw['enable-bootstrap-token-auth']).toBe('true');
      expect(parseFlags(['--enable-bootstrap-token-auth=true']).unsupported).toEqual([]);
      expect(parseFlags(['--enable-bootstrap-token-auth=false']).raw['enable-bootstrap-token-auth']).toBe('false');
    });
    it('service-account token flags are taken; a bad maximum expiration fails closed', () => {
      const c = parseFlags(['--service-account-issuer=https://a', '--service-account-issuer', 'https://b', '--service-account-lookup=false']);
      expect(c.rawAll['service-account-issuer']).toEqual(['https://a', 'https://b']);
      expect(c.raw['service-account-lookup']).toBe('false');
      expect(parseFlags(['--service-account-max-token-expiration=24h']).raw['service-account-max-token-expiration']).toBe('24h');
      expect(() => parseFlags(['--service-account-max-token-expiration=10m'])).toThrow('must be between 1 hour and 2^32 seconds');
      expect(() => parseFlags(['--service-account-max-token-expiration=soon'])).toThrow(FlagError);
      expect(() => parseFlags(['--service-account-lookup=maybe'])).toThrow('must be true or false');
    });
    it('auditing: the policy and log flags are taken and checked; the webhook backend and tuning are refused', () => {
      const c = parseFlags([
        '--audit-policy-file',
        '/p.yaml',
        '--audit-log-path=/var/log/audit.log',
        '--audit-log-format=legacy',
        '--audit-log-mode=batch',
        '--audit-log-maxage=7',
        '--audit-log-maxbackup=3',
        '--audit-log-maxsize=50',
        '--audit-log-compress',
        '--audit-log-version=audit.k8s.io/v1',
      ]);
      expect(c.raw).toMatchObject({ 'audit-policy-file': '/p.yaml', 'audit-log-format': 'legacy', 'audit-log-mode': 'batch', 'audit-log-compress': 'true' });
      expect(c.unsupported).toEqual([]);
      expect(() => parseFlags(['--audit-log-format=xml'])).toThrow('--audit-log-format=xml: must be one of json, legacy');
      expect(() => parseFlags(['--audit-log-mode=async'])).toThrow('--audit-log-mode=async: must be one of blocking, blocking-strict, batch');
      expect(() => parseFlags(['--audit-log-version=audit.k8s.io/v1beta1'])).toThrow('must be one of audit.k8s.io/v1');
      expect(() => parseFlags(['--audit-log-maxsize=-1'])).toThrow('must be a non-negative integer');
      const w = parseFlags([
        '--audit-webhook-config-file=/w',
        '--audit-webhook-mode=batch',
        '--audit-webhook-batch-max-size=10',
        '--audit-webhook-batch-max-wait=2s',
        '--audit-webhook-batch-buffer-size=100',
        '--audit-webhook-initial-backoff=1s',
      ]);
      expect(w.raw['audit-webhook-batch-max-wait']).toBe('2s');
      expect(parseFlags(['--audit-webhook-mode=blocking-strict']).raw['audit-webhook-mode']).toBe('blocking-strict');
      expect(() => parseFlags(['--audit-webhook-mode=sync'])).toThrow('--audit-webhook-mode=sync: must be one of batch, blocking, blocking-strict');
      expect(() => parseFlags(['--audit-webhook-batch-max-wait=0s'])).toThrow('must be a positive duration');
      expect(() => parseFlags(['--audit-webhook-batch-max-size=0'])).toThrow('--audit-webhook-batch-max-size must be at least 1');
      expectRefused(['--audit-log-batch-max-size=10'], 'audit-log-batch-max-size');
      expectRefused(['--audit-webhook-batch-throttle-qps=5'], 'audit-webhook-batch-throttle-qps');
    });
    it('admission plugins not built; the admission configuration is accepted', () => {
      expectRefused(['--enable-admission-plugins=NamespaceLifecycle,PodSecurity'], 'enable-admission-plugins');
      expect(() => parseFlags(['--enable-admission-plugins=PodSecurity'])).toThrow('admission plugin "PodSecurity" is not built');
      expect(parseFlags(['--enable-admission-plugins=ServiceAccount,SecurityContextDeny,StorageObjectInUseProtection']).unsupported).toEqual([]);
      expect(parseFlags(['--enable-admission-plugins=NamespaceLifecycle']).unsupported).toEqual([]);
      expect(parseFlags(['--enable-admission-plugins=MutatingAdmissionWebhook,ValidatingAdmissionWebhook']).unsupported).toEqual([]);
      expect(parseFlags(['--admission-control-config-file=/a.yaml']).unsupported).toEqual([]);
    });
    it('a bad boolean is a bad value, not a refusal', () => {
      expect(() => parseFlags(['--enable-bootstrap-token-auth=yes'])).toThrow('invalid value "yes" for --enable-bootstrap-token-auth: must be true or false');
    });
  });
  it('rejects unknown flags and bad values', () => {
    expect(() => parseFlags(['--nope'])).toThrow(FlagError);
    expect(() => parseFlags(['--secure-port', 'x'])).toThrow('must be a non-negative integer');
    expect(() => parseFlags(['--secure-port'])).toThrow('needs an argument');
    expect(() => parseFlags(['stray'])).toThrow('unexpected argument');
  });
  it("takes etcd's --heartbeat-interval and --election-timeout in ms, the timeout at least 5 heartbeats", () => {
    expect(parseFlags([])).toMatchObject({ heartbeatIntervalMs: 100, electionTimeoutMs: 1000 });
    expect(parseFlags(['--heartbeat-interval=50', '--election-timeout', '500'])).toMatchObject({ heartbeatIntervalMs: 50, electionTimeoutMs: 500 });
    expect(() => parseFlags(['--heartbeat-interval=300'])).toThrow('at least 5 times --heartbeat-interval');
    expect(() => parseFlags(['--heartbeat-interval=0'])).toThrow(FlagError);
  });
  it('takes --request-timeout as a Go duration, positive only', () => {
    expect(parseFlags([]).requestTimeoutMs).toBe(60_000);
    expect(parseFlags(['--request-timeout=1m30s']).requestTimeoutMs).toBe(90_000);
    expect(parseFlags(['--request-timeout', '250ms']).requestTimeoutMs).toBe(250);
    expect(() => parseFlags(['--request-timeout=60'])).toThrow('time: missing unit in duration "60"');
    expect(() => parseFlags(['--request-timeout=0s'])).toThrow('must be a positive duration');
    expect(() => parseFlags(['--request-timeout=-5s'])).toThrow('must be a positive duration');
    expect(() => parseFlags(['--request-timeout=600h'])).toThrow('at most 596h31m23s');
  });
});

describe('--kubelet-preferred-address-types', () => {
  it("takes Node address types in order, kube-apiserver's order by default, and refuses unknown ones", () => {
    expect(parseFlags([]).kubeletPreferredAddressTypes).toEqual(['Hostname', 'InternalDNS', 'InternalIP', 'ExternalDNS', 'ExternalIP']);
    expect(parseFlags(['--kubelet-preferred-address-types=InternalIP, Hostname']).kubeletPreferredAddressTypes).toEqual(['InternalIP', 'Hostname']);
    expect(() => parseFlags(['--kubelet-preferred-address-types=InternalIP,PodIP'])).toThrow('--kubelet-preferred-address-types: unknown address type "PodIP"');
    expect(() => parseFlags(['--kubelet-preferred-address-types='])).toThrow('--kubelet-preferred-address-types must be specified');
  });
});

describe('kubelet client flags', () => {
  it("takes kube-apiserver's names, and the certificate and key only together", () => {
    const cfg = parseFlags(['--kubelet-client-certificate=/p/k.crt', '--kubelet-client-key', '/p/k.key', '--kubelet-certificate-authority=/p/ca.crt']);
    expect([cfg.kubeletClientCertificate, cfg.kubeletClientKey, cfg.kubeletCertificateAuthority]).toEqual(['/p/k.crt', '/p/k.key', '/p/ca.crt']);
    expect(parseFlags([]).kubeletCertificateAuthority).toBeUndefined();
    expect(() => parseFlags(['--kubelet-client-certificate=/p/k.crt'])).toThrow('--kubelet-client-certificate and --kubelet-client-key must be given together');
    expect(() => parseFlags(['--kubelet-client-key=/p/k.key'])).toThrow('must be given together');
  });
});

describe('external etcd flags', () => {
  it('takes kube-apiserver names and defaults', () => {
    const cfg = parseFlags([
      '--storage-backend=etcd3',
      '--etcd-servers=https://127.0.0.1:2379,https://127.0.0.1:2479',
      '--etcd-cafile=/p/ca.crt',
      '--etcd-certfile=/p/c.crt',
      '--etcd-keyfile=/p/c.key',
    ]);
    expect(cfg.etcdServers).toBe('https://127.0.0.1:2379,https://127.0.0.1:2479');
    expect([cfg.etcdCafile, cfg.etcdCertfile, cfg.etcdKeyfile]).toEqual(['/p/ca.crt', '/p/c.crt', '/p/c.key']);
    expect(cfg.etcdPrefix).toBe('/registry');
    expect(cfg.etcdCompactionIntervalMs).toBe(300_000);
    const other = parseFlags(['--storage-backend=etcd3', '--etcd-servers=http://h:1', '--etcd-prefix=/kube', '--etcd-compaction-interval=0']);
    expect([other.etcdPrefix, other.etcdCompactionIntervalMs]).toEqual(['/kube', 0]);
    expect(parseFlags(['--storage-backend=etcd3', '--etcd-servers=http://h:1', '--etcd-compaction-interval=90s']).etcdCompactionIntervalMs).toBe(90_000);
  });

  it('refuses what cannot work', () => {
    expect(() => parseFlags(['--storage-backend=etcd3'])).toThrow('--etcd-servers is required');
    expect(() => parseFlags(['--etcd-servers=http://h:1'])).toThrow('needs --storage-backend=etcd3');
    expect(() => parseFlags(['--storage-backend=etcd3', '--etcd-servers=h:1'])).toThrow('not an http(s)://host:port URL');
    expect(() => parseFlags(['--storage-backend=etcd3', '--etcd-servers=ftp://h:1'])).toThrow('not an http(s)://host:port URL');
    expect(() => parseFlags(['--storage-backend=etcd3', '--etcd-servers=http://h:1', '--etcd-compaction-interval=soon'])).toThrow('--etcd-compaction-interval');
    expect(() => parseFlags(['--storage-backend=etcd3', '--etcd-servers=http://h:1', '--initial-cluster=n1=h:1'])).toThrow('belongs to the built-in store');
    expect(() => parseFlags(['--storage-backend=etcd3', '--etcd-servers=http://h:1', '--listen-client-urls=https://127.0.0.1:2379'])).toThrow(
      'clients talk to etcd itself',
    );
    expect(() => parseFlags(['--storage-backend=etcd3', '--etcd-servers=http://h:1', '--listen-metrics-urls=http://127.0.0.1:2381'])).toThrow(
      'ask etcd itself',
    );
    expect(parseFlags(['--listen-metrics-urls=http://127.0.0.1:2381']).listenMetricsUrls).toBe('http://127.0.0.1:2381');
    expect(() => parseFlags(['--storage-backend=consul'])).toThrow('not built into this server');
  });
});

describe('aggregation layer flags', () => {
  it("takes kube-apiserver's names, the proxy client certificate and key only together", () => {
    const cfg = parseFlags(['--proxy-client-cert-file=/p/fp.crt', '--proxy-client-key-file', '/p/fp.key', '--enable-aggregator-routing=false']);
    expect([cfg.proxyClientCertFile, cfg.proxyClientKeyFile, cfg.enableAggregatorRouting]).toEqual(['/p/fp.crt', '/p/fp.key', false]);
    expect(parseFlags([]).enableAggregatorRouting).toBeUndefined();
    expect(parseFlags(['--enable-aggregator-routing']).enableAggregatorRouting).toBe(true);
    expect(() => parseFlags(['--proxy-client-cert-file=/p/fp.crt'])).toThrow('--proxy-client-cert-file and --proxy-client-key-file must be given together');
    expect(() => parseFlags(['--enable-aggregator-routing=maybe'])).toThrow();
  });
});
