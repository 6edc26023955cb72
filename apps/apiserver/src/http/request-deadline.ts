/**
 * The whole-request deadline of kube-apiserver's `--request-timeout` (default 1m0s): a request
 * that is not long-running (a watch, a log or another stream: isLongRunning) gets 504
 * `Timeout` once the deadline passes without an answer having started. A client may ask for
 * less with the `timeout` query parameter (kubectl's and client-go's `--request-timeout` send
 * it); a value of 0, a negative one or one above the server's maximum means the maximum. A
 * malformed value is a 400.
 *
 * As in kube, the deadline ends the wait, not the work: a write that is still being replicated
 * may complete after its client got the 504 (its outcome is unknown to the client, as after any
 * timeout). The request's in-flight slot is released with the answer.
 */
import { StatusError, parseGoDuration } from '@app/apimachinery';

/** setTimeout's largest delay (about 24.8 days); a longer deadline waits that long. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The deadline of one request in milliseconds: the `timeout` query parameter when it is a
 * positive duration below `maxMs`, else `maxMs`. Throws the 400 kube-apiserver answers to a
 * malformed value.
 */
export function requestDeadlineMs(timeoutParam: string | undefined, maxMs: number): number {
  if (timeoutParam === undefined || timeoutParam === '') return maxMs;
  let ms: number;
  try {
    ms = parseGoDuration(timeoutParam) / 1e6;
  } catch (e) {
    throw new StatusError(400, 'BadRequest', `invalid timeout specified in the request URL - ${(e as Error).message}`);
  }
  return ms > 0 && ms < maxMs ? ms : maxMs;
}

/** The 504 of a request that outlived its deadline (kube's timeout filter: no Retry-After). */
export function requestTimedOut(): StatusError {
  return new StatusError(504, 'Timeout', 'Timeout: request did not complete within requested timeout - context deadline exceeded', {});
}

/**
 * Runs `work` under a deadline. When the deadline passes first and `unanswered()` still holds,
 * the result is a rejection with the 504 above; the work goes on, and its later outcome
 * (including a rejection) is dropped. When an answer has already started (a long list being
 * streamed), the deadline does not cut it: the work's own end is awaited.
 */
export async function withDeadline<T>(work: Promise<T>, ms: number, unanswered: () => boolean): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => {
        if (unanswered()) reject(requestTimedOut());
      },
      Math.min(ms, MAX_TIMER_MS),
    );
  });
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
    // Whatever the work does after the deadline is nobody's to handle now.
    work.catch(() => undefined);
  }
}
