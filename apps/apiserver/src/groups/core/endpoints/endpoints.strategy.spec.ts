import type { KubeObject } from '@app/apimachinery';
import { endpointsCell, validateEndpoints } from './endpoints.strategy.js';

const ep = (subsets: unknown[]): KubeObject => ({ metadata: { name: 'e' }, subsets });
const msgs = (errs: Array<{ field: string; detail: string }>): string[] => errs.map((e) => `${e.field}: ${e.detail}`);

describe('Endpoints strategy', () => {
  it('refuses special addresses, bad ports and unnamed ports of a multi-port subset', () => {
    expect(validateEndpoints(ep([{ addresses: [{ ip: '10.0.0.1' }], ports: [{ port: 80 }] }]))).toEqual([]);
    expect(
      msgs(
        validateEndpoints(
          ep([
            {
              addresses: [{ ip: '0.0.0.0' }, { ip: '169.254.1.1' }, { ip: '224.0.0.1' }, { ip: '::1' }],
              ports: [{ port: 80 }, { port: 81, name: 'a', protocol: 'ICMP' }],
            },
          ]),
        ),
      ),
    ).toEqual([
      'subsets[0].addresses[0].ip: may not be unspecified (0.0.0.0)',
      'subsets[0].addresses[1].ip: may not be in the link-local range (169.254.0.0/16, fe80::/10)',
      'subsets[0].addresses[2].ip: may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)',
      'subsets[0].addresses[3].ip: may not be in the loopback range (127.0.0.0/8, ::1/128)',
      'subsets[0].ports[0].name: ',
      'subsets[0].ports[1].protocol: supported values: "SCTP", "TCP", "UDP"',
    ]);
  });

  it('ENDPOINTS column: ready ip:port pairs, three at most', () => {
    expect(endpointsCell(ep([]))).toBe('<none>');
    expect(endpointsCell(ep([{ addresses: [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }], notReadyAddresses: [{ ip: '10.0.0.9' }], ports: [{ port: 80 }] }]))).toBe(
      '10.0.0.1:80,10.0.0.2:80',
    );
    expect(endpointsCell(ep([{ addresses: [{ ip: 'a' }, { ip: 'b' }], ports: [{ port: 1 }, { port: 2 }] }]))).toBe('a:1,a:2,b:1 + 1 more...');
    // 100,000 addresses by 100,000 ports: ten billion pairs, counted, three written.
    const many = (n: number, f: (i: number) => object) => Array.from({ length: n }, (_, i) => f(i));
    expect(endpointsCell(ep([{ addresses: many(100_000, (i) => ({ ip: `10.0.${i}` })), ports: many(100_000, (i) => ({ port: i })) }]))).toBe(
      `10.0.0:0,10.0.0:1,10.0.0:2 + ${100_000 * 100_000 - 3} more...`,
    );
    expect(
      endpointsCell(ep([{ addresses: [{ ip: 'a' }] }, { addresses: [{ ip: 'b' }], ports: [{ port: 1 }] }, { addresses: [{ ip: 'c' }, { ip: 'd' }] }])),
    ).toBe('a,b:1,c + 1 more...');
  });
});
