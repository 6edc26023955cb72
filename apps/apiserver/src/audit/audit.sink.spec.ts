import type { AuditEvent, AuditStage } from '../pipeline/audit.port.js';
import { parseAuditPolicy } from './audit.policy.js';
import { PolicyAuditSink } from './audit.sink.js';
import { AuditWebhookBackend, type AuditWebhookMode } from './audit.webhook.js';

const ev = (stage: AuditStage): AuditEvent => ({
  kind: 'Event',
  apiVersion: 'audit.k8s.io/v1',
  level: 'Metadata',
  auditID: 'a',
  stage,
  requestURI: '/api',
  verb: 'get',
  user: { username: 'alice' },
  sourceIPs: ['127.0.0.1'],
  requestReceivedTimestamp: '2026-12-04T10:00:00.000000Z',
  stageTimestamp: '2026-12-04T10:00:00.000000Z',
});

/** A sink whose only backend is a webhook in `mode` that refuses every event. */
function refusingSink(mode: AuditWebhookMode) {
  let posts = 0;
  const webhook = new AuditWebhookBackend({
    mode,
    maxBatchSize: 10,
    maxWaitMs: 10,
    bufferSize: 10,
    initialBackoffMs: 1,
    sleep: async () => undefined,
    post: async () => (posts++, { status: 403 }),
  });
  const sink = new PolicyAuditSink(parseAuditPolicy('apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n  - level: Metadata\n'), undefined, undefined, webhook);
  return { sink, posts: () => posts };
}

describe('PolicyAuditSink with a blocking webhook', () => {
  it('blocking-strict: the request waits for its arrival to be taken and fails when it is not', async () => {
    const { sink, posts } = refusingSink('blocking-strict');
    await expect(sink.record(ev('RequestReceived'))).rejects.toThrow('the audit webhook answered 403');
    // A later stage may be waited for (a whole answer waits for its ResponseComplete), but it
    // never fails the request.
    const complete = sink.record(ev('ResponseComplete'));
    expect(complete).toBeInstanceOf(Promise);
    await expect(complete).resolves.toBeUndefined();
    expect(posts()).toBe(2);
  });

  it('blocking: the request waits for the webhook but goes on when it refuses', async () => {
    const { sink, posts } = refusingSink('blocking');
    const waiting = sink.record(ev('RequestReceived'));
    expect(waiting).toBeInstanceOf(Promise);
    await expect(waiting).resolves.toBeUndefined();
    expect(posts()).toBe(1);
  });

  it('batch: nothing to wait for', () => {
    expect(refusingSink('batch').sink.record(ev('RequestReceived'))).toBeUndefined();
  });
});
