import {
  AGGREGATE_PREFIX,
  EventCorrelator,
  EventSinkQueue,
  eventKey,
  goSprintf,
  makeEvent,
  metaTime,
  referenceOf,
  retriable,
  spamKey,
  TokenBucket,
  UniqueNanos,
  type CoreEvent,
  type EventSink,
} from './event.recorder.logic.js';
import { labelSelectorString } from './disruption.logic.js';

const T0 = Date.parse('2026-12-01T12:00:00Z');
const pdb = {
  apiVersion: 'policy/v1',
  kind: 'PodDisruptionBudget',
  metadata: { name: 'web', namespace: 'ns', uid: 'u-1', resourceVersion: '42', labels: { a: 'b' } },
  spec: {},
};

function clock(start = T0) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

const nanos = new UniqueNanos(() => 0n);
function ev(message = 'No matching pods found', opts: { reason?: string; obj?: typeof pdb; at?: number; component?: string } = {}): CoreEvent {
  const at = opts.at ?? T0;
  return makeEvent(
    referenceOf(opts.obj ?? pdb),
    'Normal',
    opts.reason ?? 'NoPods',
    message,
    { component: opts.component ?? 'controllermanager' },
    'n1',
    at,
    nanos.next(at),
  );
}

describe('makeEvent', () => {
  it('names the event <object>.<UnixNano in hex> in the object namespace, with count 1 and both timestamps', () => {
    const e = makeEvent(referenceOf(pdb), 'Warning', 'NoPods', 'm', { component: 'controllermanager' }, 'n1', T0, 1764590400000000000n);
    expect(e).toEqual({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'web.187d159e9e108000', namespace: 'ns' },
      involvedObject: { kind: 'PodDisruptionBudget', apiVersion: 'policy/v1', name: 'web', namespace: 'ns', uid: 'u-1', resourceVersion: '42' },
      reason: 'NoPods',
      message: 'm',
      source: { component: 'controllermanager' },
      firstTimestamp: '2026-12-01T12:00:00Z',
      lastTimestamp: '2026-12-01T12:00:00Z',
      count: 1,
      type: 'Warning',
      reportingComponent: 'controllermanager',
      reportingInstance: 'n1',
    });
    expect(1764590400000000000n.toString(16)).toBe('187d159e9e108000');
  });

  it('puts events of cluster-scoped objects in default', () => {
    const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n', uid: 'u' } };
    const e = makeEvent(referenceOf(node), 'Normal', 'R', 'm', { component: 'c' }, '', T0, 1n);
    expect(e.metadata.namespace).toBe('default');
    expect(e.involvedObject).toEqual({ kind: 'Node', apiVersion: 'v1', name: 'n', uid: 'u' });
  });

  it('gives unique, growing suffixes within one millisecond', () => {
    const n = new UniqueNanos(() => 5n);
    const a = n.next(T0);
    const b = n.next(T0);
    expect(b).toBe(a + 1n);
    expect(metaTime(T0 + 999)).toBe('2026-12-01T12:00:00Z');
  });

  it('formats messages as fmt.Sprintf does for %v %s %d %q', () => {
    expect(goSprintf('Failed: %v', new Error('boom'))).toBe('Failed: boom');
    expect(goSprintf('%d of %s, %q', 3, 'x', 'ns')).toBe('3 of x, "ns"');
    expect(goSprintf('100%% %v')).toBe('100% %!v(MISSING)');
  });

  it('prints a label selector as its Go String()', () => {
    expect(labelSelectorString({ matchLabels: { b: '2', a: '1' } })).toBe(
      '&LabelSelector{MatchLabels:map[string]string{a: 1,b: 2,},MatchExpressions:[]LabelSelectorRequirement{},}',
    );
    expect(labelSelectorString({ matchExpressions: [{ key: 'k', operator: 'In', values: ['x', 'y'] }] })).toBe(
      '&LabelSelector{MatchLabels:map[string]string{},MatchExpressions:[]LabelSelectorRequirement{LabelSelectorRequirement{Key:k,Operator:In,Values:[x y],},},}',
    );
  });
});

describe('EventCorrelator', () => {
  it('keys an event by source, object, type, reason and message; spam by source and object', () => {
    expect(eventKey(ev('a'))).not.toBe(eventKey(ev('b')));
    expect(eventKey(ev('a'))).toBe(eventKey(ev('a', { at: T0 + 5000 })));
    expect(eventKey(ev('a', { component: 'x' }))).not.toBe(eventKey(ev('a')));
    expect(spamKey(ev('a'))).toBe(spamKey(ev('b', { reason: 'Other' })));
    expect(spamKey(ev('a', { obj: { ...pdb, metadata: { ...pdb.metadata, uid: 'u-2' } } }))).not.toBe(spamKey(ev('a')));
  });

  it('turns a repeat into a patch of the first Event: same name, count + 1, new lastTimestamp', () => {
    const c = clock();
    const cor = new EventCorrelator({ now: c.now });
    const first = cor.correlate(ev());
    expect(first).toMatchObject({ skip: false });
    if (first.skip) throw new Error('skipped');
    expect(first.patch).toBeUndefined();
    cor.updateState({ ...first.event, metadata: { ...first.event.metadata, resourceVersion: '7' } });
    c.advance(30_000);
    const second = cor.correlate(ev('No matching pods found', { at: c.now() }));
    if (second.skip) throw new Error('skipped');
    expect(second.event.metadata.name).toBe(first.event.metadata.name);
    expect(second.event.count).toBe(2);
    expect(second.event.firstTimestamp).toBe('2026-12-01T12:00:00Z');
    expect(second.patch).toEqual({ count: 2, lastTimestamp: '2026-12-01T12:00:30Z', message: 'No matching pods found' });
    cor.updateState(second.event);
    const third = cor.correlate(ev('No matching pods found', { at: c.now() }));
    expect(!third.skip && third.patch?.count).toBe(3);
  });

  it('keeps different messages apart, then combines the 10th similar one within 10 minutes', () => {
    const c = clock();
    const cor = new EventCorrelator({ now: c.now });
    const names = new Set<string>();
    for (let i = 1; i <= 9; i++) {
      const r = cor.correlate(ev(`message ${i}`));
      if (r.skip) throw new Error('skipped');
      expect(r.patch).toBeUndefined();
      names.add(r.event.metadata.name);
    }
    expect(names.size).toBe(9);
    const tenth = cor.correlate(ev('message 10'));
    if (tenth.skip) throw new Error('skipped');
    expect(tenth.event.message).toBe(`${AGGREGATE_PREFIX}message 10`);
    expect(tenth.event.count).toBe(1);
    cor.updateState(tenth.event);
    const eleventh = cor.correlate(ev('message 11'));
    if (eleventh.skip) throw new Error('skipped');
    expect(eleventh.event.metadata.name).toBe(tenth.event.metadata.name);
    expect(eleventh.event.count).toBe(2);
    expect(eleventh.patch?.message).toBe(`${AGGREGATE_PREFIX}message 11`);
    // More than 10 minutes later the record starts afresh.
    c.advance(600_001);
    const later = cor.correlate(ev('message 12'));
    expect(!later.skip && later.event.message).toBe('message 12');
  });

  it('drops events of one source and object beyond a burst of 25, one more per 5 minutes', () => {
    const c = clock();
    const cor = new EventCorrelator({ now: c.now });
    let written = 0;
    for (let i = 0; i < 40; i++) if (!cor.correlate(ev()).skip) written++;
    expect(written).toBe(25);
    // Another object has its own bucket.
    expect(cor.correlate(ev('x', { obj: { ...pdb, metadata: { ...pdb.metadata, name: 'other', uid: 'u-9' } } })).skip).toBe(false);
    c.advance(299_000);
    expect(cor.correlate(ev()).skip).toBe(true);
    c.advance(1_000);
    expect(cor.correlate(ev()).skip).toBe(false);
    expect(cor.correlate(ev()).skip).toBe(true);
  });

  it('token bucket: full at start, refills at qps up to burst', () => {
    const b = new TokenBucket(2, 1, 0);
    expect([b.tryAccept(0), b.tryAccept(0), b.tryAccept(0)]).toEqual([true, true, false]);
    expect(b.tryAccept(1000)).toBe(true);
    expect([b.tryAccept(10_000), b.tryAccept(10_000), b.tryAccept(10_000)]).toEqual([true, true, false]);
  });
});

class FakeSink implements EventSink {
  readonly stored = new Map<string, CoreEvent>();
  calls: string[] = [];
  failures: unknown[] = [];
  private rv = 0;

  async create(e: CoreEvent): Promise<CoreEvent> {
    this.calls.push(`create ${e.metadata.name}`);
    const f = this.failures.shift();
    if (f) throw f;
    if (this.stored.has(e.metadata.name)) throw Object.assign(new Error('exists'), { code: 409, reason: 'AlreadyExists' });
    const o = { ...e, metadata: { ...e.metadata, resourceVersion: String(++this.rv) } };
    this.stored.set(e.metadata.name, o);
    return o;
  }

  async patch(e: CoreEvent, patch: Record<string, unknown>): Promise<CoreEvent> {
    this.calls.push(`patch ${e.metadata.name} ${JSON.stringify(patch)}`);
    const f = this.failures.shift();
    if (f) throw f;
    const cur = this.stored.get(e.metadata.name);
    if (!cur) throw Object.assign(new Error('not found'), { code: 404, reason: 'NotFound' });
    const o = { ...cur, ...patch, metadata: { ...cur.metadata, resourceVersion: String(++this.rv) } } as CoreEvent;
    this.stored.set(e.metadata.name, o);
    return o;
  }
}

describe('EventSinkQueue', () => {
  const setup = (opts: { maxQueued?: number; maxTries?: number } = {}) => {
    const c = clock();
    const sink = new FakeSink();
    const q = new EventSinkQueue({ sink, correlator: new EventCorrelator({ now: c.now }), sleep: async () => {}, ...opts });
    return { c, sink, q };
  };

  it('creates the first Event and patches count and lastTimestamp of repeats', async () => {
    const { sink, q } = setup();
    q.push(ev());
    q.push(ev());
    q.push(ev());
    await q.whenIdle();
    expect(sink.stored.size).toBe(1);
    const [stored] = [...sink.stored.values()];
    expect(stored!.count).toBe(3);
    expect(sink.calls[0]).toMatch(/^create web\./);
    expect(sink.calls[1]).toMatch(/^patch web\.[0-9a-f]+ \{"count":2,/);
    expect(q.written).toBe(3);
  });

  it('creates the Event again when the patched one is gone', async () => {
    const { sink, q } = setup();
    q.push(ev());
    await q.whenIdle();
    sink.stored.clear();
    q.push(ev());
    await q.whenIdle();
    expect(sink.calls.map((c) => c.split(' ')[0])).toEqual(['create', 'patch', 'create']);
    expect([...sink.stored.values()][0]!.count).toBe(2);
  });

  it('retries transient failures a few times, gives up at once on refusals', async () => {
    const { sink, q } = setup({ maxTries: 3 });
    sink.failures = [Object.assign(new Error('conflict'), { code: 409, reason: 'Conflict' }), new Error('storage unavailable')];
    q.push(ev());
    await q.whenIdle();
    expect(sink.calls.length).toBe(3);
    expect(sink.stored.size).toBe(1);
    sink.failures = [Object.assign(new Error('forbidden: namespace is terminating'), { code: 403, reason: 'Forbidden' })];
    q.push(ev('other'));
    await q.whenIdle();
    expect(sink.calls.length).toBe(4);
    expect(q.failed).toBe(1);
    expect(retriable(Object.assign(new Error(), { code: 409, reason: 'AlreadyExists' }))).toBe(false);
    expect(retriable(Object.assign(new Error(), { code: 503 }))).toBe(true);
  });

  it('never holds more than its cap: the excess is dropped and counted', async () => {
    const { sink, q } = setup({ maxQueued: 3 });
    const accepted = [1, 2, 3, 4, 5].map((i) => q.push(ev(`m${i}`)));
    expect(accepted).toEqual([true, true, true, false, false]);
    expect(q.dropped).toBe(2);
    await q.whenIdle();
    expect(sink.stored.size).toBe(3);
  });

  it('counts events the spam filter drops and writes nothing after stop', async () => {
    const { sink, q } = setup();
    for (let i = 0; i < 30; i++) q.push(ev());
    await q.whenIdle();
    expect(q.filtered).toBe(5);
    expect([...sink.stored.values()][0]!.count).toBe(25);
    q.stop();
    expect(q.push(ev())).toBe(false);
  });
});
