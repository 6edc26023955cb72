import { mkdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getFreePorts } from './net.helper.js';

describe('getFreePort', () => {
  it('hands out distinct ports below the ephemeral range that a server can bind', async () => {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    const ports = await getFreePorts(20);
    expect(new Set(ports).size).toBe(20);
    for (const p of ports) {
      expect(p).toBeGreaterThanOrEqual(1024);
      expect(p).toBeLessThan(low);
    }
    const srv = net.createServer();
    await new Promise<void>((resolve, reject) => {
      srv.once('error', reject);
      srv.listen({ port: ports[0], host: '127.0.0.1' }, resolve);
    });
    await new Promise((r) => srv.close(r));
  });

  it('skips a port that is taken', async () => {
    const [first] = await getFreePorts(1);
    // Occupy the next candidates: whatever comes next must not be one of them.
    const held: net.Server[] = [];
    for (let p = first! + 1; p <= first! + 3; p++) {
      const s = net.createServer();
      const ok = await new Promise<boolean>((resolve) => {
        s.once('error', () => resolve(false));
        s.listen({ port: p, host: '127.0.0.1' }, () => resolve(true));
      });
      if (ok) held.push(s);
    }
    try {
      const [next] = await getFreePorts(1);
      const heldPorts = held.map((s) => (s.address() as net.AddressInfo).port);
      expect(heldPorts).not.toContain(next);
    } finally {
      for (const s of held) await new Promise((r) => s.close(r));
    }
  });

  it('does not hand out a port another process handed out lately, and takes over a stale reservation', async () => {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    let [first] = await getFreePorts(1);
    // Away from the end of the window, where the walk starts again at its bottom.
    while (first! + 8 >= low) [first] = await getFreePorts(1);
    const dir = join(tmpdir(), 'kapi-test-ports');
    mkdirSync(dir, { recursive: true });
    // What another test process leaves when it hands out the next three candidates.
    for (let p = first! + 1; p <= first! + 3; p++) writeFileSync(join(dir, String(p)), '1');
    // And a reservation of an earlier run, long expired.
    const stale = join(dir, String(first! + 4));
    writeFileSync(stale, '1');
    const old = new Date(Date.now() - 3_600_000);
    utimesSync(stale, old, old);
    const [next] = await getFreePorts(1);
    expect(next).toBe(first! + 4);
    expect(readFileSync(stale, 'utf8')).toBe(String(process.pid));
  });
});
