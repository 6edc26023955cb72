/**
 * events.k8s.io/v1 Event end to end: one set of Events behind two APIs. What kube-scheduler's
 * recorder writes at events.k8s.io/v1 shows in `kubectl get events` (core/v1) and the other way
 * round; a watch at either API sees writes made through the other; kubectl's columns and short
 * name behave as against Kubernetes.
 */
import { jest } from '@jest/globals';
import { kubectl, request, startServer, type ServerHandle } from './support/server.js';

jest.setTimeout(120_000);

let server: ServerHandle;

beforeAll(async () => {
  server = await startServer();
});

afterAll(async () => {
  await server?.cleanup();
});

const k = (args: string[], opts: { input?: string; expectFail?: boolean } = {}) => kubectl(server, args, opts);

const SCHEDULED = `apiVersion: events.k8s.io/v1
kind: Event
metadata: {name: web.scheduled, namespace: default}
eventTime: "2026-01-01T00:00:00.000000Z"
reportingController: default-scheduler
reportingInstance: default-scheduler-n1
action: Binding
reason: Scheduled
regarding: {apiVersion: v1, kind: Pod, name: web, namespace: default}
note: Successfully assigned default/web to n1
type: Normal
`;

describe('events.k8s.io/v1 Event', () => {
  it('created at events.k8s.io shows in both APIs, with kubectl columns and the short name both resources carry', async () => {
    expect((await k(['create', '-f', '-'], { input: SCHEDULED })).stdout).toContain('event.events.k8s.io/web.scheduled created');
    const v1 = await k(['get', 'events.events.k8s.io']);
    expect(v1.stdout).toMatch(/^NAME\s+LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE$/m);
    expect(v1.stdout).toMatch(/^web\.scheduled\s+\S+\s+Normal\s+Scheduled\s+pod\/web\s+Successfully assigned default\/web to n1$/m);
    // As against Kubernetes, `ev` resolves to core/v1 Events, and kubectl says the other resource has it too.
    const core = await k(['get', 'ev', 'web.scheduled', '-o', 'jsonpath={.apiVersion} {.involvedObject.name} {.reportingComponent} {.message}']);
    expect(core.stdout).toBe('v1 web default-scheduler Successfully assigned default/web to n1');
    expect(core.stderr).toContain('short name "ev" could also match lower priority resource events.events.k8s.io');
    expect((await k(['get', 'events', '--field-selector', 'involvedObject.name=web', '-o', 'name'])).stdout.trim()).toBe('event/web.scheduled');
  });

  it('a watch at events.k8s.io sees core/v1 writes in its own shape, and a delete through either ends the object in both', async () => {
    const rv = (await request(server, 'GET', '/apis/events.k8s.io/v1/namespaces/default/events')).json<{ metadata: { resourceVersion: string } }>().metadata
      .resourceVersion;
    const watch = request(server, 'GET', `/apis/events.k8s.io/v1/namespaces/default/events?watch=1&resourceVersion=${rv}&timeoutSeconds=3`);
    const created = await request(server, 'POST', '/api/v1/namespaces/default/events', {
      body: {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: 'cm.made' },
        involvedObject: { kind: 'ConfigMap', name: 'cm', namespace: 'default' },
        reason: 'Made',
        message: 'made by hand',
        type: 'Normal',
        count: 1,
      },
    });
    expect(created.status).toBe(201);
    expect((await k(['delete', 'events.events.k8s.io', 'cm.made'])).stdout).toContain('event.events.k8s.io "cm.made" deleted');
    const lines = (await watch).body
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; object: Record<string, unknown> });
    expect(lines.map((l) => l.type)).toEqual(['ADDED', 'DELETED']);
    expect(lines[0]!.object).toMatchObject({
      apiVersion: 'events.k8s.io/v1',
      regarding: { kind: 'ConfigMap', name: 'cm' },
      note: 'made by hand',
      deprecatedCount: 1,
    });
    expect((await request(server, 'GET', '/api/v1/namespaces/default/events/cm.made')).status).toBe(404);
  });

  it('refuses at events.k8s.io what only the newer API refuses, which core/v1 still takes', async () => {
    const old = SCHEDULED.replace('web.scheduled', 'old.style')
      .replace(/eventTime: .*\n/, '')
      .replace('type: Normal', 'type: Normal\ndeprecatedCount: 4');
    const refused = await k(['create', '-f', '-'], { input: old, expectFail: true });
    expect(refused.stderr).toContain('eventTime: Required value');
    expect(refused.stderr).toContain('count: Invalid value: "": needs to be unset');
    const legacy = await request(server, 'POST', '/api/v1/namespaces/default/events', {
      body: {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: 'old.style' },
        involvedObject: { kind: 'Pod', name: 'web', namespace: 'default' },
        reason: 'Scheduled',
        count: 4,
      },
    });
    expect(legacy.status).toBe(201);
    expect((await request(server, 'GET', '/apis/events.k8s.io/v1/namespaces/default/events/old.style')).json()).toMatchObject({
      deprecatedCount: 4,
      reason: 'Scheduled',
    });
  });
});
