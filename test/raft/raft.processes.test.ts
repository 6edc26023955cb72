/**
 * Real processes: 3 Raft nodes (dist/test/support/raft-node.js) on loopback with real gRPC and
 * LevelDB (fsync on). Elect, replicate, kill -9 the leader, re-elect, restart it and catch up by
 * log; kill a follower, write past a low compaction threshold, restart it and catch up by snapshot.
 * Peer traffic is mutual TLS from a cluster PKI (libs/pki); an impostor with another CA on a
 * member's address gets nothing.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createPki } from '@app/pki';
import { getFreePort } from '../support/net.helper.js';

const SCRIPT = resolve('dist/test/support/raft-node.js');

interface Status {
  id: number;
  term: number;
  lead: number;
  role: string;
  commit: number;
  applied: number;
  lastIndex: number;
  snapshotIndex: number;
  firstIndex: number;
}

interface Proc {
  id: number;
  http: number;
  child?: ChildProcess;
  /** Data dir name and PKI dir name (defaults: n<id>, the cluster's PKI). */
  data?: string;
  pki?: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('raft: three real processes', () => {
  let dir: string;
  const procs: Proc[] = [];
  let peers = '';
  const extra: Proc[] = [];

  async function startProc(p: Proc): Promise<void> {
    const child = spawn(
      process.execPath,
      [
        SCRIPT,
        '--id',
        String(p.id),
        '--data-dir',
        join(dir, p.data ?? `n${p.id}`),
        '--peers',
        peers,
        '--http-port',
        String(p.http),
        '--snapshot-entries',
        '20',
        '--keep-entries',
        '5',
        '--tick-ms',
        '50',
        '--pki-dir',
        join(dir, p.pki ?? 'pki'),
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    p.child = child;
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    await new Promise<void>((res, rej) => {
      const t = setTimeout(() => rej(new Error(`node ${p.id} did not start: ${err}`)), 15000);
      child.stdout!.on('data', (d: Buffer) => {
        if (d.toString().includes('READY')) {
          clearTimeout(t);
          res();
        }
      });
      child.on('exit', (code) => rej(new Error(`node ${p.id} exited ${code}: ${err}`)));
    });
  }

  function kill9(p: Proc): void {
    p.child?.kill('SIGKILL');
    p.child = undefined;
  }

  async function status(p: Proc): Promise<Status | undefined> {
    try {
      const r = await fetch(`http://127.0.0.1:${p.http}/status`, { signal: AbortSignal.timeout(2000) });
      return (await r.json()) as Status;
    } catch {
      return undefined;
    }
  }

  async function put(p: Proc, k: string, v: string): Promise<{ index: number; rev: number }> {
    const r = await fetch(`http://127.0.0.1:${p.http}/put?k=${encodeURIComponent(k)}`, { method: 'POST', body: v, signal: AbortSignal.timeout(10000) });
    const body = (await r.json()) as { index: number; rev: number; error?: string };
    if (r.status !== 200) throw new Error(`put failed: ${body.error}`);
    return body;
  }

  async function get(p: Proc, k: string): Promise<string | null> {
    const r = await fetch(`http://127.0.0.1:${p.http}/get?k=${encodeURIComponent(k)}`, { signal: AbortSignal.timeout(10000) });
    const body = (await r.json()) as { value: string | null; error?: string };
    if (r.status !== 200) throw new Error(`get failed: ${body.error}`);
    return body.value;
  }

  async function waitLeader(among: Proc[], notId = 0): Promise<Proc> {
    const end = Date.now() + 20000;
    while (Date.now() < end) {
      const ss = await Promise.all(among.map(status));
      const leader = ss.find((s) => s && s.role === 'leader' && s.id !== notId);
      if (leader && ss.every((s) => s && s.lead === leader.id)) return among.find((p) => p.id === leader.id)!;
      await sleep(50);
    }
    throw new Error('no leader elected');
  }

  async function waitApplied(p: Proc, index: number): Promise<Status> {
    const end = Date.now() + 20000;
    while (Date.now() < end) {
      const s = await status(p);
      if (s && s.applied >= index) return s;
      await sleep(50);
    }
    throw new Error(`node ${p.id} did not apply ${index}`);
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'raft-procs-'));
    await createPki({ outDir: join(dir, 'pki'), hosts: ['127.0.0.1'] });
    await createPki({ outDir: join(dir, 'other-pki'), hosts: ['127.0.0.1'] });
    const list: string[] = [];
    for (const id of [1, 2, 3]) {
      procs.push({ id, http: await getFreePort() });
      list.push(`${id}=127.0.0.1:${await getFreePort()}`);
    }
    peers = list.join(',');
    await Promise.all(procs.map(startProc));
  }, 60000);

  afterAll(() => {
    for (const p of [...procs, ...extra]) kill9(p);
    rmSync(dir, { recursive: true, force: true });
  });

  it('elects, replicates, survives kill -9 of the leader and catches up by log and by snapshot', async () => {
    const leader = await waitLeader(procs);
    for (let i = 0; i < 5; i++) await put(leader, `k${i}`, `v${i}`);
    const follower = procs.find((p) => p !== leader)!;
    // Linearizable read through a follower (ReadIndex forwarded to the leader).
    expect(await get(follower, 'k4')).toBe('v4');

    // kill -9 the leader: the other two elect a new one with a higher term.
    const before = (await status(leader))!;
    kill9(leader);
    const rest = procs.filter((p) => p !== leader);
    const leader2 = await waitLeader(rest, leader.id);
    const s2 = (await status(leader2))!;
    expect(s2.term).toBeGreaterThan(before.term);
    const w = await put(leader2, 'after-kill', 'yes');
    expect(await get(leader2, 'k0')).toBe('v0');

    // Restart the old leader: few entries were written, so it catches up from the log.
    expect((await status(leader2))!.firstIndex).toBeLessThanOrEqual(before.lastIndex + 1);
    await startProc(leader);
    const back = await waitApplied(leader, w.index);
    expect(back.snapshotIndex).toBe(before.snapshotIndex);
    expect(await get(leader, 'after-kill')).toBe('yes');

    // kill -9 a follower, write well past the compaction threshold, restart: the leader's log
    // no longer reaches back to the follower's last entry, so it must install a snapshot.
    const current = await waitLeader(procs);
    const victim = procs.find((p) => p !== current)!;
    const vs = (await status(victim))!;
    kill9(victim);
    let last = { index: 0, rev: 0 };
    for (let i = 0; i < 60; i++) last = await put(current, `s${i}`, `x${i}`);
    const cs = (await status(current))!;
    expect(cs.firstIndex).toBeGreaterThan(vs.lastIndex + 1);
    await startProc(victim);
    const caught = await waitApplied(victim, last.index);
    expect(caught.snapshotIndex).toBeGreaterThan(vs.lastIndex);
    expect(await get(victim, 's59')).toBe('x59');
    expect(await get(victim, 'k3')).toBe('v3');
  }, 120000);

  it('refuses an impostor with a certificate from another CA on a member address', async () => {
    const leader = await waitLeader(procs);
    const victim = procs.find((p) => p !== leader)!;
    kill9(victim);
    // Same id and peer port as the member, fresh data, peer certificate of an unrelated CA.
    const rogue: Proc = { id: victim.id, http: await getFreePort(), data: `rogue${victim.id}`, pki: 'other-pki' };
    extra.push(rogue);
    await startProc(rogue);
    const w = await put(leader, 'while-rogue', 'ok');
    await sleep(1500);
    // Plaintext or a shared CA would let the leader replicate to it (it would follow the leader
    // and apply the write); with mutual TLS neither side accepts the other.
    const rs = (await status(rogue))!;
    expect(rs.lead).toBe(0);
    expect(rs.applied).toBeLessThan(w.index);
    // The real member, back on its address, catches up as usual.
    kill9(rogue);
    await startProc(victim);
    await waitApplied(victim, w.index);
    expect(await get(victim, 'while-rogue')).toBe('ok');
  }, 60000);
});
