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
  it('records flags of later capabilities as unsupported rather than failing', () => {
    const c = parseFlags(['--authorization-mode=RBAC', '--oidc-issuer-url', 'https://x']);
    expect(c.unsupported).toEqual(['authorization-mode', 'oidc-issuer-url']);
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
