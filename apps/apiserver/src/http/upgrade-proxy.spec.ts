import { forwardedHeaders, switchingHead } from './upgrade-proxy.js';

describe('upgrade proxy', () => {
  it("forwards what switching protocols needs, every value in order, and never the client's credentials", () => {
    const raw = [
      'Authorization',
      'Bearer secret',
      'X-Stream-Protocol-Version',
      'v4.channel.k8s.io',
      'Connection',
      'Upgrade',
      'Impersonate-User',
      'someone',
      'X-Stream-Protocol-Version',
      'v3.channel.k8s.io',
      'Upgrade',
      'SPDY/3.1',
      'Cookie',
      'a=b',
      'User-Agent',
      'kubectl/v1.32.4',
    ];
    expect(forwardedHeaders(raw, '10.0.0.7:10250')).toEqual([
      'Host',
      '10.0.0.7:10250',
      'X-Stream-Protocol-Version',
      'v4.channel.k8s.io',
      'Connection',
      'Upgrade',
      'X-Stream-Protocol-Version',
      'v3.channel.k8s.io',
      'Upgrade',
      'SPDY/3.1',
      'User-Agent',
      'kubectl/v1.32.4',
    ]);
  });

  it("writes the backend's switch as the client gets it", () => {
    expect(switchingHead('', ['Upgrade', 'websocket', 'Sec-WebSocket-Protocol', 'v5.channel.k8s.io'])).toBe(
      'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nSec-WebSocket-Protocol: v5.channel.k8s.io\r\n\r\n',
    );
  });
});
