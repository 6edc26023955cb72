import { describe, expect, it } from '@jest/globals';
import type { Etcd3Watch } from './etcd3.watch.js';
import { Etcd3WatchHub, HUB_HELD_EVENTS } from './etcd3.watch-hub.js';
import { StorageError, type StorageEvent, type WatchSink } from './storage.interface.js';

// The hub's bookkeeping, with a stand-in for the etcd watch (the storage spec runs it on etcd).
function hub(afterRevision = 10) {
  let upstream: WatchSink | undefined;
  const calls = { stopped: 0, empty: 0 };
  const h = new Etcd3WatchHub(
    { key: '/registry/x/', recursive: true, afterRevision },
    (sink) => {
      upstream = sink;
      return {
        stop: () => calls.stopped++,
        progress: () => 42,
      } as unknown as Etcd3Watch;
    },
    () => calls.empty++,
  );
  const send = (revision: number, key = `/registry/x/${revision}`): StorageEvent => {
    const e: StorageEvent = { type: 'ADDED', key, object: { apiVersion: 'v1', kind: 'K', metadata: { name: key } }, revision };
    upstream!.event(e);
    return e;
  };
  const member = (after: number) => {
    const revs: number[] = [];
    const errors: string[] = [];
    const handle = h.join(after, { event: (e) => revs.push(e.revision), error: (e) => errors.push(e.code) });
    return { revs, errors, handle };
  };
  return { h, send, member, calls, fail: (err: StorageError) => upstream!.error(err) };
}

describe('Etcd3WatchHub', () => {
  it('hands a joining watch the held events after its revision, then the live ones, in order', async () => {
    const t = hub();
    t.send(11);
    t.send(12);
    const a = t.member(11);
    // A live event before the backlog was handed over queues behind it.
    t.send(13);
    expect(a.revs).toEqual([]);
    await Promise.resolve();
    expect(a.revs).toEqual([12, 13]);
    t.send(14);
    expect(a.revs).toEqual([12, 13, 14]);
    expect(a.handle.progress()).toBe(42);
  });

  it('drops the oldest whole revisions past its bound, and then refuses watches from before them', () => {
    const t = hub(0);
    t.send(1, '/registry/x/a');
    t.send(1, '/registry/x/b');
    expect(t.h.canJoin(0)).toBe(true);
    for (let r = 2; r <= HUB_HELD_EVENTS; r++) t.send(r);
    // One event over the bound drops revision 1, both of its events.
    expect(t.h.canJoin(0)).toBe(false);
    expect(t.h.canJoin(1)).toBe(true);
  });

  it('ends every watch with the etcd watch’s error, and stops the etcd watch with its last watch', () => {
    const t = hub();
    const a = t.member(10);
    const b = t.member(10);
    t.fail(new StorageError('Compacted', '/registry/x/', 'too old'));
    expect([a.errors, b.errors]).toEqual([['Compacted'], ['Compacted']]);
    expect(t.calls.empty).toBe(1);
    expect(t.h.canJoin(10)).toBe(false);

    const u = hub();
    const c = u.member(10);
    const d = u.member(10);
    c.handle.stop();
    expect(u.calls).toEqual({ stopped: 0, empty: 0 });
    d.handle.stop();
    expect(u.calls).toEqual({ stopped: 1, empty: 1 });
    u.send(11);
    expect(d.revs).toEqual([]);
  });
});
