import { ClusterConfigError, nodeIdFromName, normalizePeerAddress, parseInitialCluster } from './cluster.ids.js';

describe('cluster ids and --initial-cluster', () => {
  it('derives stable non-zero 32-bit ids from names (FNV-1a)', () => {
    // FNV-1a 32 of "a" is 0xe40c292c (reference value of the algorithm).
    expect(nodeIdFromName('a')).toBe(0xe40c292c);
    expect(nodeIdFromName('n1')).toBe(nodeIdFromName('n1'));
    expect(nodeIdFromName('n1')).not.toBe(nodeIdFromName('n2'));
    for (const n of ['n1', 'node-2', 'x.y']) {
      const id = nodeIdFromName(n);
      expect(id).toBeGreaterThan(0);
      expect(id).toBeLessThanOrEqual(0xffffffff);
    }
  });

  it('parses name=host:port lists, with or without a scheme', () => {
    expect(parseInitialCluster('n1=127.0.0.1:2381, n2=http://10.0.0.2:2380')).toEqual([
      { name: 'n1', id: nodeIdFromName('n1'), peerAddress: '127.0.0.1:2381' },
      { name: 'n2', id: nodeIdFromName('n2'), peerAddress: '10.0.0.2:2380' },
    ]);
    expect(normalizePeerAddress('[::1]:2380')).toBe('[::1]:2380');
  });

  it('rejects malformed entries, bad names, duplicates and bad ports with ClusterConfigError', () => {
    for (const bad of ['', 'n1', 'n1=host', 'N1=127.0.0.1:1', 'n1=127.0.0.1:1,n1=127.0.0.1:2', 'n1=127.0.0.1:70000']) {
      expect(() => parseInitialCluster(bad)).toThrow(ClusterConfigError);
    }
  });
});
