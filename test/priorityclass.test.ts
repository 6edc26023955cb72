/**
 * scheduling.k8s.io/v1 PriorityClass end to end, the worked example of a kind defined as one
 * folder: real kubectl against a started server creates one from YAML, lists it with kubectl's
 * columns, explains it from the OpenAPI schema, gets the value-range error, is refused deleting
 * a built-in class, and a raw protobuf body creates one (the decoder finds the message through
 * the registry).
 */
import { jest } from '@jest/globals';
import * as https from 'node:https';
import { decodeProtobuf, encodeProtobuf, type ProtobufKinds } from '@app/apimachinery';
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

const MESSAGE = 'k8s.io.api.scheduling.v1.PriorityClass';

/** A GET over raw HTTPS with the body as bytes (the test HTTP client reads bodies as text). */
function getBytes(path: string, accept: string): Promise<{ status: number; type: string; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const u = new URL(path, server.url);
    const req = https.request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        ca: server.caPem,
        cert: server.adminCertPem,
        key: server.adminKeyPem,
        agent: false,
        headers: { accept },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body: Buffer.concat(chunks) }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('PriorityClass', () => {
  it('has the two built-in classes from the first start', async () => {
    const r = await k(['get', 'priorityclasses']);
    expect(r.stdout).toMatch(/^NAME\s+VALUE\s+GLOBAL-DEFAULT\s+AGE\s+PREEMPTIONPOLICY$/m);
    expect(r.stdout).toMatch(/^system-cluster-critical\s+2000000000\s+false\s+\d+s\s+PreemptLowerPriority$/m);
    expect(r.stdout).toMatch(/^system-node-critical\s+2000001000\s+false\s+\d+s\s+PreemptLowerPriority$/m);
  });

  it('creates one from YAML with kubectl and shows it with its columns', async () => {
    const yaml = `apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: batch-high
value: 1000000
globalDefault: false
description: "Batch jobs that may preempt others."
`;
    const c = await k(['create', '-f', '-'], { input: yaml });
    expect(c.stdout).toContain('priorityclass.scheduling.k8s.io/batch-high created');
    const r = await k(['get', 'pc', 'batch-high']);
    expect(r.stdout).toMatch(/^NAME\s+VALUE\s+GLOBAL-DEFAULT\s+AGE\s+PREEMPTIONPOLICY$/m);
    expect(r.stdout).toMatch(/^batch-high\s+1000000\s+false\s+\d+s\s+PreemptLowerPriority$/m);
    const obj = JSON.parse((await k(['get', 'priorityclass', 'batch-high', '-o', 'json'])).stdout);
    expect(obj).toMatchObject({
      apiVersion: 'scheduling.k8s.io/v1',
      kind: 'PriorityClass',
      value: 1000000,
      preemptionPolicy: 'PreemptLowerPriority',
      description: 'Batch jobs that may preempt others.',
    });
  });

  it('is explained from its OpenAPI schema', async () => {
    const r = await k(['explain', 'priorityclass']);
    expect(r.stdout).toMatch(/KIND:\s+PriorityClass/);
    expect(r.stdout).toMatch(/VERSION:\s+v1/);
    expect(r.stdout).toMatch(/^\s+value\s+<integer> -required-/m);
    expect(r.stdout).toMatch(/^\s+preemptionPolicy\s+<string>/m);
    const f = await k(['explain', 'priorityclass.globalDefault']);
    expect(f.stdout).toMatch(/FIELD:\s+globalDefault <boolean>/);
  });

  it('refuses a user class above 1000000000 and a system- name that is not built in', async () => {
    const tooHigh = await k(['create', 'priorityclass', 'too-high', '--value=1000000001'], { expectFail: true });
    expect(tooHigh.stderr).toContain(
      'error: failed to create priorityclass: PriorityClass.scheduling.k8s.io "too-high" is invalid: value: Forbidden: maximum allowed value of a user defined priority is 1000000000',
    );
    const reserved = await k(['create', '-f', '-'], {
      input: 'apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata:\n  name: system-mine\nvalue: 5\n',
      expectFail: true,
    });
    expect(reserved.stderr).toContain('The PriorityClass "system-mine" is invalid: metadata.name: Forbidden:');
    expect(reserved.stderr).toContain(
      "priority class names with 'system-' prefix are reserved for system use only. error: system-mine is not a known system priority class",
    );
  });

  it('keeps value immutable', async () => {
    const r = await k(['patch', 'priorityclass', 'batch-high', '--type=merge', '-p', '{"value":5}'], { expectFail: true });
    expect(r.stderr).toContain('value: Forbidden: may not be changed in an update.');
  });

  it('refuses deleting system-node-critical', async () => {
    const r = await k(['delete', 'priorityclass', 'system-node-critical'], { expectFail: true });
    expect(r.stderr).toContain(
      'Error from server (Forbidden): priorityclasses.scheduling.k8s.io "system-node-critical" is forbidden: this is a system priority class and cannot be deleted',
    );
    expect((await k(['get', 'pc', 'system-node-critical'])).stdout).toMatch(/^system-node-critical\s+2000001000/m);
    expect((await k(['delete', 'pc', 'batch-high'])).stdout).toContain('priorityclass.scheduling.k8s.io "batch-high" deleted');
  });

  it('creates one from a protobuf body and answers in protobuf', async () => {
    const body = encodeProtobuf(
      { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'from-protobuf' }, value: 42, preemptionPolicy: 'Never' },
      MESSAGE,
    );
    const r = await request(server, 'POST', '/apis/scheduling.k8s.io/v1/priorityclasses', {
      body: Buffer.from(body),
      headers: { 'content-type': 'application/vnd.kubernetes.protobuf', accept: 'application/json' },
    });
    expect(r.status).toBe(201);
    expect(r.json()).toMatchObject({ kind: 'PriorityClass', metadata: { name: 'from-protobuf' }, value: 42, preemptionPolicy: 'Never' });

    const got = await getBytes('/apis/scheduling.k8s.io/v1/priorityclasses/from-protobuf', 'application/vnd.kubernetes.protobuf');
    expect(got.status).toBe(200);
    expect(got.type).toBe('application/vnd.kubernetes.protobuf');
    const kinds: ProtobufKinds = {
      messageFor: (apiVersion, kind) => (apiVersion === 'scheduling.k8s.io/v1' && kind === 'PriorityClass' ? MESSAGE : undefined),
      servesGroupVersion: (apiVersion) => apiVersion === 'scheduling.k8s.io/v1',
    };
    const decoded = decodeProtobuf(new Uint8Array(got.body), kinds).object;
    expect(decoded).toMatchObject({ kind: 'PriorityClass', metadata: { name: 'from-protobuf' }, value: 42, preemptionPolicy: 'Never' });

    const pb = await k(['get', 'pc', 'from-protobuf']);
    expect(pb.stdout).toMatch(/^from-protobuf\s+42\s+false\s+\d+s\s+Never$/m);
  });
});
