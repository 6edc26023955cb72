import { allowedServerError, describeCase, generateCase, statusViolation } from './http.cases.js';

const status = (code: number): Buffer => Buffer.from(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code }));

describe('fuzz cases', () => {
  it('are a function of seed and index', () => {
    expect(describeCase(generateCase(7, 123))).toBe(describeCase(generateCase(7, 123)));
    const seen = new Set(Array.from({ length: 50 }, (_, i) => describeCase(generateCase(7, i))));
    expect(seen.size).toBeGreaterThan(40);
  });

  it('always start their path with a slash and carry a body only with a content type', () => {
    for (let i = 0; i < 2000; i++) {
      const c = generateCase(11, i);
      expect(c.path.startsWith('/')).toBe(true);
      expect(c.body === undefined || 'content-type' in c.headers).toBe(true);
    }
  });
});

describe('answer checks', () => {
  it('allow 503 and 504 and no other 5xx', () => {
    expect([200, 404, 429, 503, 504].every(allowedServerError)).toBe(true);
    expect([500, 501, 502].some(allowedServerError)).toBe(false);
  });

  it('take a Status in JSON or YAML whose code is the HTTP status, and the protobuf envelope', () => {
    expect(statusViolation('GET', 404, 'application/json', status(404))).toBeUndefined();
    expect(statusViolation('GET', 404, 'application/yaml', Buffer.from('kind: Status\napiVersion: v1\ncode: 404\n'))).toBeUndefined();
    expect(
      statusViolation('GET', 406, 'application/vnd.kubernetes.protobuf', Buffer.concat([Buffer.from('k8s\0'), Buffer.from('\n\x0c\n\x02v1\x12\x06Status')])),
    ).toBeUndefined();
    expect(statusViolation('HEAD', 404, undefined, Buffer.alloc(0))).toBeUndefined();
    expect(statusViolation('GET', 200, 'text/plain', Buffer.from('ok'))).toBeUndefined();
  });

  it('refuse any other error answer', () => {
    expect(statusViolation('GET', 404, 'application/json', Buffer.from('{"statusCode":404,"message":"Not Found"}'))).toMatch(/not a Status/);
    expect(statusViolation('GET', 400, 'application/json', status(404))).toMatch(/differs/);
    expect(statusViolation('GET', 400, 'text/plain', Buffer.from('Bad Request'))).toMatch(/content-type/);
    expect(statusViolation('GET', 400, 'application/json', Buffer.from('{'))).toMatch(/not JSON/);
    expect(statusViolation('GET', 406, 'application/vnd.kubernetes.protobuf', Buffer.from('nope'))).toMatch(/protobuf/);
  });
});
