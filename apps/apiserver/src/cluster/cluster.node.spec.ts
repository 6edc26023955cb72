import { ClusterConfigError } from './cluster.ids.js';
import { resolvePeerTls } from './cluster.node.js';

describe('resolvePeerTls', () => {
  const pki = { caPem: 'CA', peerCertPem: 'CERT', peerKeyPem: 'KEY' };

  it("defaults to the PKI's peer pair and CA, leaving the allowed names to the transport (its own CN)", async () => {
    expect(await resolvePeerTls({}, pki)).toEqual({ ca: 'CA', cert: 'CERT', key: 'KEY' });
  });

  it('takes --peer-cert-allowed-cn as a comma-separated list', async () => {
    expect((await resolvePeerTls({ peerCertAllowedCn: 'n1-peer, n2-peer,n3-peer' }, pki)).allowedCN).toEqual(['n1-peer', 'n2-peer', 'n3-peer']);
    await expect(resolvePeerTls({ peerCertAllowedCn: 'a,,b' }, pki)).rejects.toThrow(ClusterConfigError);
    await expect(resolvePeerTls({ peerCertAllowedCn: '' }, pki)).rejects.toThrow('--peer-cert-allowed-cn');
  });

  it('names the flag of a file it cannot read', async () => {
    await expect(resolvePeerTls({ peerCertFile: '/nonexistent/peer.crt' }, pki)).rejects.toThrow('--peer-cert-file: cannot read /nonexistent/peer.crt');
  });
});
