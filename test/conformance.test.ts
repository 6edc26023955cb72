/**
 * The conformance table: one test case per row of docs/conformance.md, each probing one rule of
 * the conventions and resources documents (or upstream behaviour where they are silent) through
 * a real client (raw HTTPS, or kubectl where it can express the request). One server serves the
 * whole table; each group of rows works in its own namespace. The document is generated from
 * the same rows (scripts/conformance-doc.mjs); the last case checks the two agree.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { kubectl, repoRoot, request, startServer, waitFor, type HttpResponse, type ServerHandle } from './support/server.js';
import type { Expect, Req, Row } from './conformance/conformance.types.js';
import { GROUPS } from './conformance/conformance.rows.js';

let server: ServerHandle;

beforeAll(async () => {
  server = await startServer();
  for (const g of GROUPS) {
    const r = await request(server, 'POST', '/api/v1/namespaces', { body: { metadata: { name: g.namespace } } });
    if (r.status !== 201) throw new Error(`namespace ${g.namespace}: ${r.status} ${r.body}`);
  }
  // As in Kubernetes, the root-CA publisher puts kube-root-ca.crt into every new namespace
  // (rows that list configmaps count it); wait for it so every row sees the same namespace.
  for (const g of GROUPS) {
    await waitFor(
      `kube-root-ca.crt in ${g.namespace}`,
      async () => (await request(server, 'GET', `/api/v1/namespaces/${g.namespace}/configmaps/kube-root-ca.crt`)).status === 200,
    );
  }
});

afterAll(async () => {
  await server?.cleanup();
});

function send(req: Req): Promise<HttpResponse> {
  const headers = { ...(req.headers ?? {}) };
  if (req.body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
  return request(server, req.method, req.path, { body: req.body, headers });
}

function at(obj: unknown, path: string): unknown {
  let cur = obj;
  for (const p of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[p];
  }
  return cur;
}

function check(what: string, r: HttpResponse, e: Expect): void {
  const ctx = `${what}: ${r.status} ${r.body.slice(0, 400)}`;
  expect({ ctx, status: r.status }).toEqual({ ctx, status: e.status });
  for (const [h, v] of Object.entries(e.headers ?? {})) {
    if (typeof v === 'string') expect({ ctx, [h]: r.headers[h] }).toEqual({ ctx, [h]: v });
    else expect(r.headers[h] ?? '').toMatch(v);
  }
  if (e.text) expect(r.body).toMatch(e.text);
  if (e.prefix !== undefined) expect(r.body.slice(0, e.prefix.length)).toBe(e.prefix);
  if (e.reason === undefined && e.message === undefined && e.body === undefined && e.absent === undefined) return;
  const json = r.json<Record<string, unknown>>();
  if (e.reason !== undefined) expect({ ctx, reason: json.reason }).toEqual({ ctx, reason: e.reason });
  if (typeof e.message === 'string') expect({ ctx, message: json.message }).toEqual({ ctx, message: e.message });
  else if (e.message) expect(String(json.message)).toMatch(e.message);
  if (e.body) expect(json).toMatchObject(e.body);
  for (const p of e.absent ?? []) expect({ ctx, [p]: at(json, p) }).toEqual({ ctx, [p]: undefined });
}

/** Runs `attempt` until it passes or `waitMs` has passed (then its last failure is the answer). */
async function eventually(waitMs: number | undefined, attempt: () => Promise<void>): Promise<void> {
  const end = Date.now() + (waitMs ?? 0);
  for (;;) {
    try {
      await attempt();
      return;
    } catch (e) {
      if (Date.now() >= end) throw e;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

async function runRow(row: Row): Promise<void> {
  for (const [i, s] of (row.setup ?? []).entries()) {
    await eventually(s.waitMs, async () => {
      const r = await send(s);
      if (s.expect) check(`setup ${i}`, r, s.expect);
      else if (r.status >= 300) throw new Error(`setup ${i} ${s.method} ${s.path}: ${r.status} ${r.body}`);
    });
  }
  if (row.req) check('probe', await send(row.req), row.expect ?? { status: 200 });
  if (row.kubectl) {
    const k = row.kubectl;
    await eventually(k.waitMs, async () => {
      const r = await kubectl(server, k.args, { input: k.input, expectFail: k.fail ?? false });
      if (k.stdout) expect(r.stdout).toMatch(k.stdout);
      if (k.stderr) expect(r.stderr).toMatch(k.stderr);
    });
  }
  for (const [i, t] of (row.then ?? []).entries()) await eventually(t.waitMs, async () => check(`then ${i}`, await send(t.req), t.expect));
}

for (const g of GROUPS) {
  describe(`${g.name}`, () => {
    it.each(g.rows.map((r) => [r.id, r] as const))('%s', async (_id, row) => {
      await expect(runRow(row)).resolves.toBeUndefined();
    });
  });
}

describe('docs/conformance.md', () => {
  it('lists every row of the table, and no other', () => {
    const doc = readFileSync(join(repoRoot(), 'docs/conformance.md'), 'utf8');
    const inDoc = [...doc.matchAll(/^\| `([a-z]+(?:-[a-z]+)*-\d+)` +\|/gm)].map((m) => m[1]).sort();
    const inTable = GROUPS.flatMap((g) => g.rows.map((r) => r.id)).sort();
    expect(inDoc).toEqual(inTable);
    expect(new Set(inTable).size).toBe(inTable.length);
  });
});
