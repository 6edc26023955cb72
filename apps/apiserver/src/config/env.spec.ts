import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EnvError, KAPI_ENV, envInt, validateEnv } from './env.js';

describe('envInt', () => {
  it('reads an integer within its bounds; unset or empty is undefined', () => {
    expect(envInt('KAPI_RAFT_TICK_MS', { KAPI_RAFT_TICK_MS: '50' })).toBe(50);
    expect(envInt('KAPI_RAFT_TICK_MS', {})).toBeUndefined();
    expect(envInt('KAPI_RAFT_TICK_MS', { KAPI_RAFT_TICK_MS: '' })).toBeUndefined();
  });

  it('refuses 0, out-of-bounds and non-integer values, naming the variable', () => {
    expect(() => envInt('KAPI_SNAPSHOT_COUNT', { KAPI_SNAPSHOT_COUNT: '0' })).toThrow('invalid value 0 for KAPI_SNAPSHOT_COUNT: must be from 1 to');
    expect(() => envInt('KAPI_RAFT_TICK_MS', { KAPI_RAFT_TICK_MS: '5000' })).toThrow(EnvError);
    expect(() => envInt('KAPI_LEASE_DURATION_MS', { KAPI_LEASE_DURATION_MS: '15s' })).toThrow(
      'invalid value "15s" for KAPI_LEASE_DURATION_MS: must be an integer',
    );
    expect(() => envInt('KAPI_LEASE_DURATION_MS', { KAPI_LEASE_DURATION_MS: '-1' })).toThrow('KAPI_LEASE_DURATION_MS');
    expect(() => envInt('KAPI_IDLE_TIMEOUT_MS', { KAPI_IDLE_TIMEOUT_MS: '1e5' })).toThrow('KAPI_IDLE_TIMEOUT_MS');
  });

  it('refuses a name missing from the table', () => {
    expect(() => envInt('KAPI_NOT_A_KNOB', {})).toThrow('not in KAPI_ENV');
  });
});

describe('validateEnv', () => {
  it('accepts no variables, and the values the e2e tests use', () => {
    expect(validateEnv({})).toEqual([]);
    expect(
      validateEnv({
        KAPI_LEASE_DURATION_MS: '6000',
        KAPI_LEASE_RENEW_DEADLINE_MS: '4000',
        KAPI_LEASE_RETRY_PERIOD_MS: '1000',
        KAPI_READ_INDEX_TIMEOUT_MS: '2000',
        KAPI_READ_HEADER_TIMEOUT_MS: '1500',
        KAPI_IDLE_TIMEOUT_MS: '2500',
        KAPI_BODY_TIMEOUT_MS: '2000',
        KAPI_SNAPSHOT_COUNT: '60',
        KAPI_SNAPSHOT_CATCHUP_ENTRIES: '10',
        KAPI_WATCH_BOOKMARK_INTERVAL_MS: '400',
        KAPI_WATCH_MAX_BUFFER_BYTES: String(1024 * 1024),
        KAPI_WATCH_SLOW_GRACE_MS: '1000',
        KAPI_RAFT_TICK_MS: '100',
        KAPI_START_ENTRY: '/x/main.js',
      }),
    ).toEqual([]);
  });

  it('names the first bad variable', () => {
    expect(() => validateEnv({ KAPI_LEASE_RETRY_PERIOD_MS: 'abc' })).toThrow('KAPI_LEASE_RETRY_PERIOD_MS');
  });

  it("keeps client-go's order of the Lease timings", () => {
    expect(() => validateEnv({ KAPI_LEASE_DURATION_MS: '5000' })).toThrow('KAPI_LEASE_RENEW_DEADLINE_MS (10000) must be below KAPI_LEASE_DURATION_MS (5000)');
    expect(() => validateEnv({ KAPI_LEASE_RETRY_PERIOD_MS: '10000' })).toThrow(
      'KAPI_LEASE_RETRY_PERIOD_MS (10000) must be below KAPI_LEASE_RENEW_DEADLINE_MS (10000)',
    );
  });

  it('warns of KAPI_ names it does not read', () => {
    expect(validateEnv({ KAPI_RAFT_TICKS_MS: '100' })).toEqual(['environment variable KAPI_RAFT_TICKS_MS is not read by this server (see docs/tuning.md)']);
  });
});

describe('KAPI_ENV', () => {
  const root = fileURLToPath(new URL('../../../../', import.meta.url));
  const sources = (dir: string): string[] =>
    readdirSync(dir).flatMap((n) => {
      const p = join(dir, n);
      if (statSync(p).isDirectory()) return n === 'node_modules' ? [] : sources(p);
      return p.endsWith('.ts') && !p.endsWith('.spec.ts') ? [p] : [];
    });

  it('lists every variable the server code reads, and the code reads them only through envInt', () => {
    const listed = new Set(KAPI_ENV.map((v) => v.name));
    for (const file of ['apps', 'libs', 'cluster'].flatMap((d) => sources(join(root, d)))) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/envInt\('(KAPI_[A-Z_]+)'/g)) expect(listed.has(m[1]!) ? m[1] : `${m[1]} (${file})`).toBe(m[1]);
      for (const m of text.matchAll(/process\.env\.(KAPI_[A-Z_]+)/g)) expect(`${m[1]} in ${file}`).toBe(`KAPI_START_ENTRY in ${file}`);
    }
  });

  it('is documented in docs/tuning.md, test-only variables marked', () => {
    const doc = readFileSync(join(root, 'docs', 'tuning.md'), 'utf8');
    for (const v of KAPI_ENV) expect(doc).toMatch(new RegExp(`^\\| \`${v.name}\` \\|.*\\| ${v.min}-${v.max} \\|.*\\| ${v.use} \\|$`, 'm'));
  });

  it('has sane bounds', () => {
    for (const v of KAPI_ENV) {
      const sane =
        v.unit === 'switch'
          ? v.min === 0 && v.max === 1
          : Number.isInteger(v.min) && Number.isInteger(v.max) && v.min >= (v.unit === 'percent' || v.unit === 'pods' ? 0 : 1) && v.min < v.max;
      expect(sane).toBe(true);
    }
  });
});
