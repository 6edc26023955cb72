/**
 * Holding an answer back until something outside has taken note of it: a blocking audit
 * webhook must have taken a long-running request's ResponseStarted event before the answer's
 * headers leave (kube's audit response writer records the stage before it writes the header).
 * Meanwhile what the handler writes is queued, in order, and replayed once `until` settles;
 * whether it resolved or failed (an event the webhook did not take never fails the answer), and
 * nothing is replayed when the client went away in between.
 */
import type { FastifyReply } from 'fastify';

type Raw = FastifyReply['raw'];
const HELD = ['write', 'end', 'flushHeaders'] as const;

/** Whether the response can no longer be written (the client went away). */
function gone(raw: Raw): boolean {
  const r = raw as Raw & { destroyed?: boolean; stream?: { destroyed: boolean } };
  return r.destroyed === true || r.stream?.destroyed === true;
}

/**
 * Queues `raw`'s writes until `until` settles, then calls `start` (which writes the headers)
 * and replays them. Writes report success while held, so a handler does not wait for a
 * 'drain' that a queue in memory never emits; the hold lasts as long as the webhook takes.
 */
export function holdAnswer(raw: Raw, until: Promise<unknown>, start: () => void): void {
  const target = raw as unknown as Record<string, unknown>;
  const queued: (() => void)[] = [];
  const saved: [string, (...args: unknown[]) => unknown][] = [];
  for (const name of HELD) {
    const original = target[name];
    if (typeof original !== 'function') continue;
    saved.push([name, original as (...args: unknown[]) => unknown]);
    target[name] = (...args: unknown[]) => {
      queued.push(() => (original as (...a: unknown[]) => unknown).apply(raw, args));
      return name === 'write' ? true : name === 'end' ? raw : undefined;
    };
  }
  const release = (): void => {
    for (const [name, original] of saved) target[name] = original;
    if (gone(raw)) return;
    try {
      start();
      for (const q of queued) q();
    } catch {
      // The stream closed under the replay: the 'close' handlers clean up.
    }
  };
  until.then(release, release);
}
