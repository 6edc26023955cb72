import { clusterInfoServer } from './cluster-info.publisher.js';

describe('cluster-info server URL', () => {
  const endpoint = { url: 'https://127.0.0.1:6443', host: '127.0.0.1' };
  it('is the advertised address when given, else the URL this node serves', () => {
    expect(clusterInfoServer({ securePort: 6443 }, endpoint)).toBe('https://127.0.0.1:6443');
    expect(clusterInfoServer({ securePort: 7443, advertiseAddress: '10.0.0.5' }, endpoint)).toBe('https://10.0.0.5:7443');
    expect(clusterInfoServer({ securePort: 7443, advertiseAddress: 'fd00::5' }, endpoint)).toBe('https://[fd00::5]:7443');
  });
});
