import { AuditRecord, microTime } from './audit.record.js';
import type { AuditEvent, AuditLevel, AuditStage } from './audit.port.js';
import { parseRequestInfo } from '../http/request-info.js';
import type { RequestState } from './request-state.js';

function record(level: AuditLevel, omit: AuditStage[] = [], omitManagedFields = false) {
  const events: AuditEvent[] = [];
  const state: RequestState = {
    info: parseRequestInfo('POST', '/api/v1/namespaces/a/configmaps', {}),
    query: {},
    auditId: 'id-1',
    authenticatedUser: { username: 'alice', groups: ['dev'] },
    user: { username: 'alice', groups: ['dev'] },
  };
  const rec = new AuditRecord({
    sink: { enabled: true, configFor: () => ({ level, omitStages: new Set(omit), omitManagedFields }), record: (e) => void events.push(e) },
    config: { level, omitStages: new Set(omit), omitManagedFields },
    state,
    requestURI: '/api/v1/namespaces/a/configmaps',
    sourceIPs: ['10.0.0.1'],
    userAgent: 'kubectl/v1.32.4',
    received: new Date('2026-12-03T10:00:00.123Z'),
    decode: (_t, b) => JSON.parse(b.toString()) as unknown,
  });
  return { rec, events };
}

const cm = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'x', uid: 'u-1', resourceVersion: '7', managedFields: [{ manager: 'kubectl' }] },
  data: { a: 'b' },
};

describe('audit record', () => {
  it('completes the object reference from the body at every level, and keeps the bodies by level', () => {
    const meta = record('Metadata');
    meta.rec.requestBodyIs('application/json', Buffer.from(JSON.stringify(cm)), false);
    meta.rec.responseBodyIs('application/json', JSON.stringify(cm));
    meta.rec.emit('ResponseComplete', 201);
    expect(meta.events[0]).toMatchObject({
      level: 'Metadata',
      objectRef: { resource: 'configmaps', namespace: 'a', name: 'x', uid: 'u-1', resourceVersion: '7', apiVersion: 'v1' },
      responseStatus: { metadata: {}, code: 201 },
      requestReceivedTimestamp: '2026-12-03T10:00:00.123000Z',
    });
    expect(meta.events[0]).not.toHaveProperty('requestObject');
    expect(meta.events[0]).not.toHaveProperty('responseObject');

    const full = record('RequestResponse', [], true);
    full.rec.requestBodyIs('application/json', Buffer.from(JSON.stringify(cm)), false);
    full.rec.responseBodyIs('application/json', JSON.stringify(cm));
    full.rec.emit('ResponseComplete', 201);
    expect((full.events[0]!.requestObject as typeof cm).metadata).toEqual({ name: 'x', uid: 'u-1', resourceVersion: '7' });
    expect((full.events[0]!.responseObject as typeof cm).data).toEqual({ a: 'b' });
  });

  it('takes the status and reason of a Status answer at Metadata, and records a stage once, unless omitted', () => {
    const { rec, events } = record('Metadata', ['RequestReceived']);
    rec.emit('RequestReceived');
    rec.responseBodyIs('application/json', '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":200}');
    rec.emit('ResponseComplete', 200);
    rec.emit('ResponseComplete', 200);
    expect(events.map((e) => e.stage)).toEqual(['ResponseComplete']);
    expect(events[0]!.responseStatus).toEqual({ metadata: {}, status: 'Success', code: 200 });
  });

  it('records an unexpected exception as one Panic event in place of ResponseComplete', () => {
    const { rec, events } = record('Metadata');
    rec.panic();
    rec.emit('ResponseComplete', 500);
    expect(events.map((e) => e.stage)).toEqual(['Panic']);
    expect(events[0]!.responseStatus).toEqual({ metadata: {}, status: 'Failure', reason: 'InternalError', code: 500 });
  });

  it('keeps the first value of an annotation, and annotations only at their level', () => {
    const { rec, events } = record('Metadata');
    rec.annotate('a', '1');
    rec.annotate('a', '2');
    rec.annotate('patch', 'p', 'Request');
    rec.emit('ResponseComplete', 200);
    expect(events[0]!.annotations).toEqual({ a: '1' });
    expect(microTime(new Date('2026-01-02T03:04:05.006Z'))).toBe('2026-01-02T03:04:05.006000Z');
  });
});
