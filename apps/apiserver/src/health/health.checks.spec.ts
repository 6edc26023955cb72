import { healthCheckSets, nodeHealthChecks, runHealthChecks, runOneHealthCheck, type HealthCheck } from './health.checks.js';

const ok = (name: string): HealthCheck => ({ name, check: () => undefined });
const bad = (name: string, why = 'broken'): HealthCheck => ({ name, check: () => why });

describe('runHealthChecks (kube-apiserver root health handler)', () => {
  it('all passing: `ok`, or the list and `<endpoint> check passed` with ?verbose', () => {
    const checks = [ok('ping'), ok('raft')];
    expect(runHealthChecks('readyz', checks, { verbose: false, exclude: [] })).toEqual({ status: 200, body: 'ok', failures: [] });
    expect(runHealthChecks('readyz', checks, { verbose: true, exclude: [] }).body).toBe('[+]ping ok\n[+]raft ok\nreadyz check passed\n');
  });

  it('a failure: 500, always verbose, the reason withheld from the body but given for the log', () => {
    const a = runHealthChecks('livez', [ok('ping'), bad('storage', 'disk full')], { verbose: false, exclude: [] });
    expect(a.status).toBe(500);
    expect(a.body).toBe('[+]ping ok\n[-]storage failed: reason withheld\nlivez check failed\n');
    expect(a.failures).toEqual(['storage: disk full']);
  });

  it('runs the checks on every call (a check that recovers passes the next time)', () => {
    let why: string | undefined = 'no leader';
    const raft: HealthCheck = { name: 'raft', check: () => why };
    expect(runHealthChecks('readyz', [raft], { verbose: false, exclude: [] }).status).toBe(500);
    why = undefined;
    expect(runHealthChecks('readyz', [raft], { verbose: false, exclude: [] }).status).toBe(200);
  });

  it('?exclude skips a check and says so; names that match nothing get a warning line', () => {
    const a = runHealthChecks('readyz', [ok('ping'), bad('raft')], { verbose: true, exclude: ['raft', 'nope', 'etcd'] });
    expect(a.status).toBe(200);
    expect(a.body).toBe('[+]ping ok\n[+]raft excluded: ok\nwarn: some health checks cannot be excluded: no matches for "etcd","nope"\nreadyz check passed\n');
  });
});

describe('runOneHealthCheck (/<endpoint>/<name>)', () => {
  it('answers `ok`, or 500 with the reason; undefined for an unknown name', () => {
    const checks = [ok('ping'), bad('poststarthook/initial-objects', 'waiting')];
    expect(runOneHealthCheck(checks, 'ping')).toMatchObject({ status: 200, body: 'ok' });
    expect(runOneHealthCheck(checks, 'poststarthook/initial-objects')).toMatchObject({ status: 500, body: 'internal server error: waiting\n' });
    expect(runOneHealthCheck(checks, 'etcd')).toBeUndefined();
  });
});

describe('healthCheckSets / nodeHealthChecks', () => {
  it('healthz is the union, each name once', () => {
    const s = healthCheckSets([ok('ping'), ok('a')], [ok('ping'), ok('b')]);
    expect(s.healthz.map((c) => c.name)).toEqual(['ping', 'a', 'b']);
  });

  it("a node's readyz follows raft, bootstrap, storage and shutdown; livez the event loop and storage", () => {
    const state: Record<string, string | undefined> = {};
    const sets = nodeHealthChecks({
      eventLoop: () => state.eventLoop,
      storageLivez: [{ name: 'storage', check: () => state.storage }],
      storageReadyz: [
        { name: 'storage', check: () => state.storage },
        { name: 'raft', check: () => state.raft },
      ],
      postStartHooks: ['initial-objects'],
      postStartHook: () => state.bootstrap,
      shutdown: () => state.shutdown,
      storageDisk: () => state.disk,
    });
    expect(sets.livez.map((c) => c.name)).toEqual(['ping', 'eventloop', 'storage']);
    expect(sets.readyz.map((c) => c.name)).toEqual(['ping', 'storage', 'raft', 'storage-disk', 'poststarthook/initial-objects', 'shutdown']);
    const run = (e: 'livez' | 'readyz' | 'healthz') => runHealthChecks(e, sets[e], { verbose: false, exclude: [] }).status;
    expect([run('livez'), run('readyz'), run('healthz')]).toEqual([200, 200, 200]);
    state.raft = 'no leader';
    expect([run('livez'), run('readyz'), run('healthz')]).toEqual([200, 500, 500]);
    state.raft = undefined;
    state.bootstrap = 'not yet';
    expect([run('livez'), run('readyz'), run('healthz')]).toEqual([200, 500, 500]);
    state.bootstrap = undefined;
    state.disk = 'no space left on device';
    expect([run('livez'), run('readyz'), run('healthz')]).toEqual([200, 500, 500]);
    state.disk = undefined;
    state.eventLoop = 'blocked';
    expect([run('livez'), run('readyz'), run('healthz')]).toEqual([500, 200, 500]);
    state.eventLoop = undefined;
    state.storage = 'write failed';
    expect([run('livez'), run('readyz'), run('healthz')]).toEqual([500, 500, 500]);
  });
});
