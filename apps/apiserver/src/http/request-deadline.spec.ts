import { StatusError } from '@app/apimachinery';
import { requestDeadlineMs, withDeadline } from './request-deadline.js';

describe('request deadline', () => {
  it('takes the timeout parameter when it is positive and below the maximum', () => {
    expect(requestDeadlineMs(undefined, 60_000)).toBe(60_000);
    expect(requestDeadlineMs('', 60_000)).toBe(60_000);
    expect(requestDeadlineMs('5s', 60_000)).toBe(5000);
    expect(requestDeadlineMs('2m', 60_000)).toBe(60_000);
    expect(requestDeadlineMs('0s', 60_000)).toBe(60_000);
    expect(requestDeadlineMs('-1s', 60_000)).toBe(60_000);
  });

  it('answers a malformed timeout parameter with 400 BadRequest', () => {
    let err: unknown;
    try {
      requestDeadlineMs('soon', 60_000);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(StatusError);
    expect((err as StatusError).toStatus()).toMatchObject({
      code: 400,
      reason: 'BadRequest',
      message: 'invalid timeout specified in the request URL - time: invalid duration "soon"',
    });
  });

  it('gives the result of work that ends in time', async () => {
    await expect(withDeadline(Promise.resolve(7), 1000, () => true)).resolves.toBe(7);
    await expect(withDeadline(Promise.reject(new Error('boom')), 1000, () => true)).rejects.toThrow('boom');
  });

  it("answers 504 Timeout when the work outlives the deadline, and drops the work's later failure", async () => {
    let fail!: (e: Error) => void;
    const work = new Promise<number>((_, reject) => (fail = reject));
    const err = (await withDeadline(work, 20, () => true).catch((e: unknown) => e)) as StatusError;
    expect(err.toStatus()).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Timeout: request did not complete within requested timeout - context deadline exceeded',
      reason: 'Timeout',
      code: 504,
    });
    expect(err.headers).toBeUndefined(); // no Retry-After, as kube's timeout filter
    fail(new Error('late')); // must not surface as an unhandled rejection
    await new Promise((r) => setImmediate(r));
  });

  it('does not cut an answer that has started', async () => {
    let finish!: (v: number) => void;
    const work = new Promise<number>((resolve) => (finish = resolve));
    const p = withDeadline(work, 10, () => false);
    await new Promise((r) => setTimeout(r, 40));
    finish(3);
    await expect(p).resolves.toBe(3);
  });
});
