import * as path from 'node:path';
import { LauncherUsageError, defaultServerEntry, parseLauncherArgs } from './launcher.cli.js';
import { TopologyError } from './launcher.js';

describe('parseLauncherArgs', () => {
  it('defaults to the documented layout under ./data/cluster with a balancer, 60 s readiness, 10 s grace', () => {
    const a = parseLauncherArgs([]);
    expect(a.command).toBe('run');
    expect(a.topology.target).toBe('local');
    expect(a.topology.pkiDir).toBe(path.resolve('data/cluster/pki'));
    expect(a.topology.nodes.map((n) => `${n.name}:${n.securePort}/${n.peerPort}`)).toEqual(['n1:6444/2381', 'n2:6445/2382', 'n3:6446/2383']);
    expect(a.topology.balancer.port).toBe(6443);
    expect(a.noBalancer).toBe(false);
    expect(a.readyTimeoutMs).toBe(60_000);
    expect(a.graceMs).toBe(10_000);
    expect(a.restart).toBe(true);
  });

  it('takes a base dir, first ports or port lists, the balancer port and timeouts', () => {
    const a = parseLauncherArgs([
      '--base-dir',
      '/tmp/k',
      '--secure-port',
      '7001,7003,7005',
      '--peer-port',
      '8000',
      '--lb-port',
      '7000',
      '--no-lb',
      '--grace',
      '0.5',
      '--ready-timeout',
      '5',
      '--server-arg=--compaction-interval=0',
      '--haproxy',
      '/opt/haproxy',
    ]);
    expect(a.topology.nodes.map((n) => [n.securePort, n.peerPort, n.dataDir])).toEqual([
      [7001, 8000, '/tmp/k/n1'],
      [7003, 8001, '/tmp/k/n2'],
      [7005, 8002, '/tmp/k/n3'],
    ]);
    expect(a.topology.balancer.port).toBe(7000);
    expect(a.noBalancer).toBe(true);
    expect(a.graceMs).toBe(500);
    expect(a.readyTimeoutMs).toBe(5000);
    expect(a.serverArgs).toEqual(['--compaction-interval=0']);
    expect(a.haproxy).toBe('/opt/haproxy');
    expect(parseLauncherArgs(['--no-restart']).restart).toBe(false);
  });

  it('derives the node count from a port list, or takes --nodes', () => {
    expect(parseLauncherArgs(['--secure-port', '7001,7002']).topology.nodes.map((n) => n.name)).toEqual(['n1', 'n2']);
    expect(parseLauncherArgs(['--nodes', '5']).topology.nodes).toHaveLength(5);
  });

  it('haproxy-config selects the compose topology with --compose', () => {
    const a = parseLauncherArgs(['haproxy-config', '--compose']);
    expect(a.command).toBe('haproxy-config');
    expect(a.topology.target).toBe('compose');
    expect(parseLauncherArgs(['--help']).command).toBe('help');
  });

  it('rejects bad input with typed errors', () => {
    expect(() => parseLauncherArgs(['--secure-port', 'abc'])).toThrow(LauncherUsageError);
    expect(() => parseLauncherArgs(['--nodes', '0'])).toThrow(LauncherUsageError);
    expect(() => parseLauncherArgs(['--lb-port', '1,2'])).toThrow(LauncherUsageError);
    expect(() => parseLauncherArgs(['--grace=-1'])).toThrow(LauncherUsageError);
    expect(() => parseLauncherArgs(['--compose'])).toThrow(LauncherUsageError);
    expect(() => parseLauncherArgs(['start'])).toThrow(LauncherUsageError);
    expect(() => parseLauncherArgs(['--bogus'])).toThrow(LauncherUsageError);
    expect(() => parseLauncherArgs(['--lb-port', '6444'])).toThrow(TopologyError);
  });

  it('finds the built server next to the build output', () => {
    expect(defaultServerEntry()).toMatch(/dist[\\/]apps[\\/]apiserver[\\/]src[\\/]main\.js$/);
  });
});
