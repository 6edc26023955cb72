import { DEFAULT_WEBHOOK_BACKOFF, isTransientWebhookOutcome, webhookBackoffDelay, withWebhookBackoff, type WebhookAnswer } from './webhook.backoff.js';

const reset = () => Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });

describe('webhook backoff', () => {
  it('takes resets, 500, 504, 429 and a failure with Retry-After as transient', () => {
    expect(isTransientWebhookOutcome(reset())).toBe(true);
    for (const status of [500, 504, 429]) expect(isTransientWebhookOutcome({ status, body: undefined })).toBe(true);
    expect(isTransientWebhookOutcome({ status: 503, body: undefined, headers: { 'retry-after': '1' } })).toBe(true);
  });

  it('takes a refused connection, a timeout, other statuses and any success as final', () => {
    expect(isTransientWebhookOutcome(refused())).toBe(false);
    expect(isTransientWebhookOutcome(new Error('request to https://x timed out'))).toBe(false);
    for (const status of [200, 201, 400, 401, 403, 404, 502, 503]) expect(isTransientWebhookOutcome({ status, body: undefined })).toBe(false);
    expect(isTransientWebhookOutcome({ status: 200, body: undefined, headers: { 'retry-after': '1' } })).toBe(false);
  });

  it('waits 500 ms, then 1.5 times longer each time, lengthened by up to 20%', () => {
    const b = DEFAULT_WEBHOOK_BACKOFF;
    expect([1, 2, 3, 4].map((n) => webhookBackoffDelay(b, n, () => 0))).toEqual([500, 750, 1125, 1687.5]);
    expect(webhookBackoffDelay(b, 1, () => 1)).toBe(600);
    expect(webhookBackoffDelay({ ...b, jitter: 0 }, 2, () => 1)).toBe(750);
  });

  const run = async (outcomes: Array<WebhookAnswer | Error>) => {
    const waits: number[] = [];
    let calls = 0;
    const post = withWebhookBackoff(
      async () => {
        const o = outcomes[Math.min(calls++, outcomes.length - 1)]!;
        if (o instanceof Error) throw o;
        return o;
      },
      { ...DEFAULT_WEBHOOK_BACKOFF, jitter: 0 },
      async (ms) => {
        waits.push(ms);
      },
    );
    const result = await post({}).catch((e: Error) => e);
    return { result, calls, waits };
  };

  it('retries transient failures until an answer, on the schedule', async () => {
    const ok = { status: 200, body: { kind: 'TokenReview' } };
    const r = await run([reset(), { status: 500, body: undefined }, ok]);
    expect(r.result).toBe(ok);
    expect(r.calls).toBe(3);
    expect(r.waits).toEqual([500, 750]);
  });

  it('gives up after five attempts with the last outcome, answer or error', async () => {
    const failing = await run([{ status: 500, body: { message: 'down' } }]);
    expect(failing.calls).toBe(5);
    expect(failing.result).toMatchObject({ status: 500, body: { message: 'down' } });
    expect(failing.waits).toEqual([500, 750, 1125, 1687.5]);
    const resets = await run([reset()]);
    expect(resets.calls).toBe(5);
    expect((resets.result as Error).message).toBe('socket hang up');
  });

  it('stops at once on a final outcome', async () => {
    const r = await run([refused(), { status: 200, body: {} }]);
    expect(r.calls).toBe(1);
    expect((r.result as NodeJS.ErrnoException).code).toBe('ECONNREFUSED');
    expect(r.waits).toEqual([]);
  });
});
