import { InflightLimiter, inflightKind } from './inflight.js';

describe('in-flight request limits', () => {
  const user = { groups: ['dev', 'system:authenticated'] };

  it('sorts requests into read-only and mutating; long-running requests (watches, logs, exec) and system:masters are exempt', () => {
    const req = (verb: string, subresource = '') => ({ verb, subresource });
    expect(inflightKind('GET', req('get'), user)).toBe('readOnly');
    expect(inflightKind('GET', req('list'), user)).toBe('readOnly');
    expect(inflightKind('HEAD', req('get'), user)).toBe('readOnly');
    expect(inflightKind('GET', req('get', 'status'), user)).toBe('readOnly');
    for (const m of ['POST', 'PUT', 'PATCH', 'DELETE', 'patch']) expect(inflightKind(m, req('create'), user)).toBe('mutating');
    expect(inflightKind('GET', req('watch'), user)).toBeUndefined();
    expect(inflightKind('GET', req('get', 'log'), user)).toBeUndefined();
    expect(inflightKind('POST', req('create', 'exec'), user)).toBeUndefined();
    expect(inflightKind('POST', req('create'), { groups: ['system:masters'] })).toBeUndefined();
  });

  it('refuses past the limit of a kind, gives a place back once, and treats 0 as no limit', () => {
    const l = new InflightLimiter({ readOnly: 2, mutating: 0 });
    const a = l.tryAcquire('readOnly');
    const b = l.tryAcquire('readOnly');
    expect(a).toBeDefined();
    expect(b).toBeDefined();
    expect(l.tryAcquire('readOnly')).toBeUndefined();
    expect(l.inFlight('readOnly')).toBe(2);
    a!();
    a!();
    expect(l.inFlight('readOnly')).toBe(1);
    expect(l.tryAcquire('readOnly')).toBeDefined();
    expect(l.tryAcquire('readOnly')).toBeUndefined();
    // The other kind has its own budget; 0 means none.
    for (let i = 0; i < 1000; i++) expect(l.tryAcquire('mutating')).toBeDefined();
    expect(l.inFlight('mutating')).toBe(1000);
  });
});
