import { StatusError } from '@app/apimachinery';
import { checkProxyableHost, checkProxyableIp, hostPort, isGlobalUnicast, proxyUrl, splitSchemeNamePort } from './proxy.location.js';

describe('proxy locations', () => {
  it('splits [scheme:]name[:port] as kube does', () => {
    expect(splitSchemeNamePort('web')).toEqual({ scheme: '', name: 'web', port: '' });
    expect(splitSchemeNamePort('web:8080')).toEqual({ scheme: '', name: 'web', port: '8080' });
    expect(splitSchemeNamePort('https:web:443')).toEqual({ scheme: 'https', name: 'web', port: '443' });
    expect(splitSchemeNamePort('http:web:')).toEqual({ scheme: 'http', name: 'web', port: '' });
    expect(splitSchemeNamePort('web:http')).toEqual({ scheme: '', name: 'web', port: 'http' });
    expect(splitSchemeNamePort('')).toBeUndefined();
    expect(splitSchemeNamePort(':80')).toBeUndefined();
    expect(splitSchemeNamePort('ftp:web:21')).toBeUndefined();
    expect(splitSchemeNamePort('a:b:c:d')).toBeUndefined();
  });

  it('takes only global unicast addresses, as Go tells them', () => {
    for (const ip of ['10.1.2.3', '192.0.2.2', '8.8.8.8', '2001:db8::1', 'fd00::2', '::ffff:10.0.0.1']) expect([ip, isGlobalUnicast(ip)]).toEqual([ip, true]);
    for (const ip of [
      '',
      'not-an-ip',
      '0.0.0.0',
      '127.0.0.1',
      '127.9.9.9',
      '169.254.169.254',
      '224.0.0.1',
      '239.1.1.1',
      '255.255.255.255',
      '::',
      '::1',
      'fe80::1',
      'ff02::1',
      '::ffff:127.0.0.1',
    ]) {
      expect([ip, isGlobalUnicast(ip)]).toEqual([ip, false]);
    }
    expect(() => checkProxyableIp('127.0.0.1')).toThrow(StatusError);
    expect(() => checkProxyableIp('127.0.0.1')).toThrow('address not allowed');
    expect(() => checkProxyableIp('10.0.0.1')).not.toThrow();
  });

  it('resolves host names before taking them: every address must be proxyable', async () => {
    await expect(checkProxyableHost('localhost')).rejects.toMatchObject({ code: 400, message: 'address not allowed' });
    await expect(checkProxyableHost('10.0.0.7')).resolves.toBeUndefined();
    await expect(checkProxyableHost('name.invalid')).rejects.toMatchObject({ code: 400, message: expect.stringMatching(/^lookup name\.invalid: /) });
  });

  it('builds the backend URL with the path below the proxy; a port that is not a number cannot be dialed', () => {
    expect(proxyUrl('', '10.0.0.1', '8080', '/a/b/').href).toBe('http://10.0.0.1:8080/a/b/');
    expect(proxyUrl('https', 'fd00::2', '', '').href).toBe('https://[fd00::2]/');
    expect(proxyUrl('', '10.0.0.1', '80', '/x%2Fy').pathname).toBe('/x%2Fy');
    expect(hostPort('fd00::2', 443)).toBe('[fd00::2]:443');
    expect(() => proxyUrl('', '10.0.0.1', 'http', '/')).toThrow(expect.objectContaining({ code: 503, reason: 'ServiceUnavailable' }) as Error);
    expect(() => proxyUrl('', '10.0.0.1', '70000', '/')).toThrow('error trying to reach service: dial tcp: lookup tcp/70000: unknown port');
  });
});
