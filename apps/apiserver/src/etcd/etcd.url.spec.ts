import { EtcdConfigError, parseClientUrl } from './etcd.url.js';

describe('parseClientUrl', () => {
  it('reads scheme, host and port of one URL', () => {
    expect(parseClientUrl('https://127.0.0.1:2379')).toEqual({ secure: true, host: '127.0.0.1', port: 2379 });
    expect(parseClientUrl(' http://[::1]:12379 ')).toEqual({ secure: false, host: '::1', port: 12379 });
    expect(parseClientUrl('https://0.0.0.0')).toEqual({ secure: true, host: '0.0.0.0', port: 2379 });
  });

  it('refuses several URLs (none is served in part), a bad URL and another scheme, naming the flag', () => {
    expect(() => parseClientUrl('https://127.0.0.1:2379,https://10.0.0.1:2379')).toThrow(EtcdConfigError);
    expect(() => parseClientUrl('https://127.0.0.1:2379,https://10.0.0.1:2379')).toThrow(
      '--listen-client-urls: one URL is served here, got 2 (https://127.0.0.1:2379, https://10.0.0.1:2379); listen on 0.0.0.0 or [::] to take every address',
    );
    expect(() => parseClientUrl('http://a:1,http://b:2', 'listen-metrics-urls')).toThrow(/^--listen-metrics-urls: one URL is served here, got 2/);
    expect(() => parseClientUrl('127.0.0.1:2379')).toThrow('--listen-client-urls: "127.0.0.1:2379" is not a URL such as https://127.0.0.1:2379');
    expect(() => parseClientUrl('not a url')).toThrow('--listen-client-urls: "not a url" is not a URL such as https://127.0.0.1:2379');
    expect(() => parseClientUrl('unix:///tmp/s')).toThrow('--listen-client-urls: the scheme must be https (or http without TLS)');
  });
});
