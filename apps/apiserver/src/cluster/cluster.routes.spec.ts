import { StorageError } from '@app/storage';
import { membershipError } from './cluster.routes.js';

describe('membershipError', () => {
  it('answers a membership change refused for too many pending proposals with 429 and Retry-After', () => {
    const e = membershipError(new StorageError('TooManyRequests', '', 'too many requests: proposals of 9 bytes are pending'));
    expect(e).toMatchObject({ code: 429, reason: 'TooManyRequests', headers: { 'Retry-After': '1' } });
    expect(e.message).toBe('too many requests: proposals of 9 bytes are pending');
    expect(membershipError(new StorageError('Unavailable', '', 'no quorum'))).toMatchObject({ code: 504 });
  });
});
