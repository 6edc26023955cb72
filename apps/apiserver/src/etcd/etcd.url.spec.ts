import { EtcdConfigError, parseClientUrls } from './etcd.url.js';

describe('parseClientUrls', () => {
  it('reads scheme, host and port of each URL of a list', () => {
    expect(parseClientUrls('https://127.0.0.1:2379')).toEqual([{ url: 'https://127.0.0.1:2379', secure: true, host: '127.0.0.1', port: 2379 }]);
    expect(parseClientUrls(' http://[::1]:12379 ')).toEqual([{ url: 'http://[::1]:12379', secure: false, host: '::1', port: 12379 }]);
    expect(parseClientUrls('https://0.0.0.0')).toEqual([{ url: 'https://0.0.0.0', secure: true, host: '0.0.0.0', port: 2379 }]);
    expect(parseClientUrls('https://127.0.0.1:2379, http://10.0.0.1:2379,')).toEqual([
      { url: 'https://127.0.0.1:2379', secure: true, host: '127.0.0.1', port: 2379 },
      { url: 'http://10.0.0.1:2379', secure: false, host: '10.0.0.1', port: 2379 },
    ]);
  });

  it('refuses an empty list, the same address twice, a bad URL and another scheme, naming the flag', () => {
    expect(() => parseClientUrls(' , ')).toThrow(EtcdConfigError);
    expect(() => parseClientUrls('')).toThrow('--listen-client-urls: name at least one URL such as https://127.0.0.1:2379');
    expect(() => parseClientUrls('https://127.0.0.1:2379,http://127.0.0.1')).toThrow('--listen-client-urls: 127.0.0.1:2379 is named twice');
    expect(() => parseClientUrls('http://[::1]:1,https://[::1]:1', 'listen-metrics-urls')).toThrow('--listen-metrics-urls: [::1]:1 is named twice');
    expect(() => parseClientUrls('http://a:1,127.0.0.1:2379', 'advertise-client-urls')).toThrow(
      '--advertise-client-urls: "127.0.0.1:2379" is not a URL such as https://127.0.0.1:2379',
    );
    expect(() => parseClientUrls('not a url')).toThrow('--listen-client-urls: "not a url" is not a URL such as https://127.0.0.1:2379');
    expect(() => parseClientUrls('unix:///tmp/s')).toThrow('--listen-client-urls: the scheme must be https (or http without TLS)');
  });
});
