import { AUDIT_WEBHOOK_ATTEMPTS, AuditWebhookBackend, type AuditWebhookOptions } from './audit.webhook.js';
import type { AuditEvent } from '../pipeline/audit.port.js';

const ev = (id: string): AuditEvent => ({
  kind: 'Event',
  apiVersion: 'audit.k8s.io/v1',
  level: 'Metadata',
  auditID: id,
  stage: 'ResponseComplete',
  requestURI: '/api',
  verb: 'get',
  user: { username: 'alice' },
  sourceIPs: ['127.0.0.1'],
  requestReceivedTimestamp: '2026-12-03T10:00:00.000000Z',
  stageTimestamp: '2026-12-03T10:00:00.000000Z',
});

interface Sent {
  kind: string;
  apiVersion: string;
  items: AuditEvent[];
}

function backend(over: Partial<AuditWebhookOptions> = {}) {
  const sent: Sent[] = [];
  const lost: Array<[number, string]> = [];
  const b = new AuditWebhookBackend({
    maxBatchSize: 3,
    maxWaitMs: 50,
    bufferSize: 100,
    initialBackoffMs: 5,
    post: (list) => {
      sent.push(list as Sent);
      return Promise.resolve({ status: 200 });
    },
    lost: (n, why) => lost.push([n, why]),
    ...over,
  });
  return { b, sent, lost };
}

const ids = (s: Sent[]) => s.map((l) => l.items.map((e) => e.auditID).join(','));

describe('audit webhook backend', () => {
  it('sends a full batch at once and a smaller one when its first event has waited long enough, as EventLists', async () => {
    const { b, sent } = backend();
    for (const id of ['1', '2', '3', '4']) b.write(ev(id));
    await new Promise((r) => setImmediate(r));
    expect(ids(sent)).toEqual(['1,2,3']);
    expect(sent[0]).toMatchObject({ kind: 'EventList', apiVersion: 'audit.k8s.io/v1', metadata: {} });
    await new Promise((r) => setTimeout(r, 120));
    expect(ids(sent)).toEqual(['1,2,3', '4']);
    await b.close();
  });

  it('retries a batch the service does not take, in order, then gives it up and counts it', async () => {
    let calls = 0;
    const { b, sent, lost } = backend({
      post: (list) => {
        calls++;
        sent.push(list as Sent);
        return calls <= 2 ? Promise.reject(new Error('ECONNREFUSED')) : Promise.resolve({ status: calls === 3 ? 503 : 200 });
      },
    });
    b.write(ev('a'));
    await b.flush();
    // Refused twice, 503 once, then taken: the same batch every time.
    expect(ids(sent)).toEqual(['a', 'a', 'a', 'a']);
    expect(lost).toEqual([]);
    const failing = backend({ post: () => Promise.resolve({ status: 500 }) });
    failing.b.write(ev('x'));
    failing.b.write(ev('y'));
    await failing.b.flush();
    expect(failing.lost).toEqual([[2, 'the audit webhook answered 500']]);
    await b.close();
  });

  it('drops what does not fit in the buffer, and sends what is left on close without waiting', async () => {
    const { b, sent, lost } = backend({ maxBatchSize: 10, bufferSize: 2, maxWaitMs: 60_000 });
    for (const id of ['1', '2', '3']) b.write(ev(id));
    expect(lost).toEqual([[1, 'the audit webhook buffer is full']]);
    await b.close();
    expect(ids(sent)).toEqual(['1,2']);
    b.write(ev('late'));
    await b.flush();
    expect(ids(sent)).toEqual(['1,2']);
  });

  it('gives a batch at most two attempts once closing', async () => {
    let calls = 0;
    const { b, lost } = backend({
      initialBackoffMs: 60_000,
      post: () => {
        calls++;
        return Promise.resolve({ status: 500 });
      },
    });
    b.write(ev('1'));
    await b.close();
    expect(calls).toBe(2);
    expect(calls).toBeLessThan(AUDIT_WEBHOOK_ATTEMPTS);
    expect(lost).toEqual([[1, 'the audit webhook answered 500']]);
  });

  it('blocking: sends each event alone at once, retrying transient failures on the backoff, and says whether it was taken', async () => {
    const waits: number[] = [];
    const answers = [500, 429, 200];
    const { b, sent, lost } = backend({
      mode: 'blocking-strict',
      initialBackoffMs: 100,
      sleep: async (ms) => void waits.push(ms),
      post: (list) => {
        sent.push(list as Sent);
        return Promise.resolve({ status: answers.shift() ?? 200 });
      },
    });
    expect(b.blocking).toBe(true);
    await b.send(ev('a'));
    expect(ids(sent)).toEqual(['a', 'a', 'a']);
    // kube's webhook backoff: the initial wait, then 1.5 times more, each with up to 20% jitter.
    expect(waits).toHaveLength(2);
    expect(waits[0]).toBeGreaterThanOrEqual(100);
    expect(waits[0]).toBeLessThanOrEqual(120);
    expect(waits[1]).toBeGreaterThanOrEqual(150);
    expect(waits[1]).toBeLessThanOrEqual(180);
    expect(lost).toEqual([]);
    // A refusal that is not transient is final: the event is lost and the sender told so.
    answers.push(403);
    await expect(b.send(ev('b'))).rejects.toThrow('the audit webhook answered 403');
    expect(lost).toEqual([[1, 'the audit webhook answered 403']]);
    expect(ids(sent)).toEqual(['a', 'a', 'a', 'b']);
  });

  it('blocking: gives an event up after five attempts; write() sends without waiting or throwing', async () => {
    let calls = 0;
    const { b, lost } = backend({
      mode: 'blocking',
      sleep: async () => undefined,
      post: () => {
        calls++;
        return Promise.reject(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
      },
    });
    await expect(b.send(ev('x'))).rejects.toThrow('the audit webhook could not be reached: socket hang up');
    expect(calls).toBe(AUDIT_WEBHOOK_ATTEMPTS);
    b.write(ev('y'));
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    expect(calls).toBe(AUDIT_WEBHOOK_ATTEMPTS * 2);
    expect(lost).toHaveLength(2);
    expect(backend().b.blocking).toBe(false);
  });
});
