import { clientErrorResponse } from './client-error.js';

describe('clientErrorResponse', () => {
  const parse = (raw: string) => {
    const [head, body] = raw.split('\r\n\r\n');
    return {
      status: head!.split('\r\n')[0],
      headers: head!.split('\r\n').slice(1),
      body: JSON.parse(body!) as Record<string, unknown>,
      length: Buffer.byteLength(body!),
    };
  };

  it('answers oversized headers with a 431 Status and closes the connection', () => {
    const r = parse(clientErrorResponse({ code: 'HPE_HEADER_OVERFLOW' })!);
    expect(r.status).toBe('HTTP/1.1 431 Request Header Fields Too Large');
    expect(r.headers).toEqual(['Content-Type: application/json', `Content-Length: ${r.length}`, 'Connection: close']);
    expect(r.body).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 431 });
    expect(r.body.reason).toBeUndefined();
  });

  it('answers other parse errors with 400 BadRequest, timeouts with 408, and a reset with nothing', () => {
    expect(parse(clientErrorResponse({ code: 'HPE_INVALID_METHOD' })!).body).toMatchObject({ code: 400, reason: 'BadRequest' });
    expect(parse(clientErrorResponse({ code: 'ERR_HTTP_REQUEST_TIMEOUT' })!).status).toBe('HTTP/1.1 408 Request Timeout');
    expect(clientErrorResponse({ code: 'ECONNRESET' })).toBeUndefined();
  });
});
