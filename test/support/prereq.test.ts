/**
 * The prerequisite gate itself: a missing tool fails by name unless opted out, an opt-out is
 * recorded for the run's summary, and a misspelt opt-out is an error rather than a silent no-op.
 * The missing tool is etcd with PATH emptied (Debian puts it in /usr/bin, never in the sbin
 * directories searched besides PATH), so the answers do not depend on what is installed here.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MissingPrerequisiteError, onPath, optedOut, prerequisite } from './prereq.js';

describe('test prerequisites', () => {
  let dir = '';
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'kapi-prereq-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('fails naming the tool and what to install when it is missing and not opted out', async () => {
    let thrown: unknown;
    try {
      prerequisite('etcd', 'a test that needs etcd', { env: { PATH: '' }, recordDir: dir });
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(MissingPrerequisiteError);
    expect((thrown as Error).message).toMatch(/missing test prerequisite etcd .*apt-get install etcd-server.*KAPI_TEST_WITHOUT=etcd/);
    expect(await readdir(dir)).toEqual([]);
  });

  it('with KAPI_TEST_WITHOUT naming it: answers false and records what was not covered', async () => {
    expect(prerequisite('etcd', 'a test that needs etcd', { env: { PATH: '', KAPI_TEST_WITHOUT: 'haproxy, etcd' }, recordDir: dir })).toBe(false);
    const files = await readdir(dir);
    expect(files).toHaveLength(1);
    expect(JSON.parse(await readFile(path.join(dir, files[0]!), 'utf8'))).toEqual({ prerequisite: 'etcd', needs: 'a test that needs etcd' });
  });

  it('finds executables on PATH', () => {
    expect(onPath('node', { PATH: path.dirname(process.execPath) })).toBe(path.join(path.dirname(process.execPath), 'node'));
    expect(onPath('kapi-no-such-tool', { PATH: path.dirname(process.execPath) })).toBeUndefined();
  });

  it('rejects an unknown opt-out name', () => {
    expect(optedOut({ KAPI_TEST_WITHOUT: 'haproxy,netns,etcd,etcdctl' })).toEqual(new Set(['haproxy', 'netns', 'etcd', 'etcdctl']));
    expect(() => optedOut({ KAPI_TEST_WITHOUT: 'ha-proxy' })).toThrow(/unknown prerequisite "ha-proxy"/);
  });
});
