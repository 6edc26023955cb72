import { FlagError, parseFlags } from './flags.js';

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
    expect(c.unsupported).toEqual(['runtime-config', 'feature-gates', 'cluster-signing-duration']);
    expect(c.raw['anonymous-auth']).toBe('false');
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
      expectRefused(['--authorization-mode=Node'], 'authorization-mode');
      expectRefused(['--authorization-mode', 'Node,RBAC'], 'authorization-mode');
      expectRefused(['--authorization-mode=AlwaysAllow,Webhook'], 'authorization-mode');
      expect(() => parseFlags(['--authorization-mode='])).toThrow('--authorization-mode=: give at least one authorization mode');
      expect(() => parseFlags(['--authorization-mode=Node,RBAC'])).toThrow(
        'authorization mode "Node" is not built into this server (built: AlwaysAllow, AlwaysDeny, RBAC)',
      );
      expectRefused(['--authorization-policy-file=/p.jsonl'], 'authorization-policy-file');
      expectRefused(['--authorization-webhook-config-file=/w.yaml'], 'authorization-webhook-config-file');
    });
    it('--authorization-mode=AlwaysDeny, AlwaysAllow and RBAC are accepted', () => {
      expect(parseFlags(['--authorization-mode=AlwaysDeny,AlwaysAllow']).raw['authorization-mode']).toBe('AlwaysDeny,AlwaysAllow');
      expect(parseFlags(['--authorization-mode=RBAC']).raw['authorization-mode']).toBe('RBAC');
      expect(parseFlags(['--authorization-mode=RBAC,AlwaysDeny']).raw['authorization-mode']).toBe('RBAC,AlwaysDeny');
    });
    it('--authorization-mode=AlwaysAllow (the default of this build) is accepted', () => {
      const c = parseFlags(['--authorization-mode=AlwaysAllow']);
      expect(c.unsupported).toEqual([]);
      expect(c.raw['authorization-mode']).toBe('AlwaysAllow');
    });
    it('authentication methods not built', () => {
      expectRefused(['--oidc-unknown-setting=x'], 'oidc-unknown-setting');
      expectRefused(['--requestheader-unknown-setting=x'], 'requestheader-unknown-setting');
      expectRefused(['--authentication-token-webhook-unknown=x'], 'authentication-token-webhook-unknown');
      expectRefused(['--enable-bootstrap-token-auth'], 'enable-bootstrap-token-auth');
      expectRefused(['--enable-bootstrap-token-auth=true'], 'enable-bootstrap-token-auth');
      expect(parseFlags(['--enable-bootstrap-token-auth=false']).unsupported).toEqual([]);
      expectRefused(['--service-account-key-file=/sa.pub'], 'service-account-key-file');
      expectRefused(['--service-account-signing-key-file=/sa.key'], 'service-account-signing-key-file');
      expectRefused(['--service-account-issuer=https://kubernetes.default.svc'], 'service-account-issuer');
      expectRefused(['--client-ca-file=/ca.crt'], 'client-ca-file');
      expectRefused(['--tls-cert-file=/s.crt'], 'tls-cert-file');
      expectRefused(['--tls-private-key-file=/s.key'], 'tls-private-key-file');
    });
    it('auditing', () => {
      expectRefused(['--audit-log-path=/var/log/audit.log'], 'audit-log-path');
      expectRefused(['--audit-policy-file', '/p.yaml'], 'audit-policy-file');
      expectRefused(['--audit-webhook-config-file=/w'], 'audit-webhook-config-file');
    });
    it('admission plugins not built, and admission configuration', () => {
      expectRefused(['--enable-admission-plugins=NamespaceLifecycle,PodSecurity'], 'enable-admission-plugins');
      expect(() => parseFlags(['--enable-admission-plugins=PodSecurity'])).toThrow('admission plugin "PodSecurity" is not built');
      expect(parseFlags(['--enable-admission-plugins=ServiceAccount,SecurityContextDeny,StorageObjectInUseProtection']).unsupported).toEqual([]);
      expect(parseFlags(['--enable-admission-plugins=NamespaceLifecycle']).unsupported).toEqual([]);
      expectRefused(['--admission-control-config-file=/a.yaml'], 'admission-control-config-file');
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
