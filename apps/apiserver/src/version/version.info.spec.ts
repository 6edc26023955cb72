import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UNKNOWN_BUILD, readBuildInfo, versionBody } from './version.info.js';

describe('readBuildInfo', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kapi-build-info-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, text: string): string => {
    const f = join(dir, name);
    writeFileSync(f, text);
    return f;
  };

  it('reads the record the build wrote', () => {
    const f = write('ok.json', JSON.stringify({ gitCommit: 'a'.repeat(40), gitTreeState: 'dirty', buildDate: '2026-11-25T17:00:01Z' }));
    expect(readBuildInfo(f)).toEqual({ gitCommit: 'a'.repeat(40), gitTreeState: 'dirty', buildDate: '2026-11-25T17:00:01Z' });
  });

  it('says unknown without a record, for an unreadable one, and per malformed field', () => {
    expect(readBuildInfo(join(dir, 'absent.json'))).toEqual(UNKNOWN_BUILD);
    expect(readBuildInfo(write('bad.json', '{not json'))).toEqual(UNKNOWN_BUILD);
    expect(readBuildInfo(write('partial.json', JSON.stringify({ gitCommit: 'xyz', gitTreeState: 'clean', buildDate: 5 })))).toEqual({
      gitCommit: 'unknown',
      gitTreeState: 'clean',
      buildDate: 'unknown',
    });
  });
});

describe('versionBody', () => {
  it("carries the API level and the build's record", () => {
    const b = versionBody(
      { major: '1', minor: '32', gitVersion: 'v1.32.0+kapi' },
      { gitCommit: 'b'.repeat(40), gitTreeState: 'clean', buildDate: '2026-01-02T03:04:05Z' },
    );
    expect(b).toMatchObject({
      major: '1',
      minor: '32',
      gitVersion: 'v1.32.0+kapi',
      gitCommit: 'b'.repeat(40),
      gitTreeState: 'clean',
      buildDate: '2026-01-02T03:04:05Z',
      compiler: 'tsc',
    });
  });
});
