/**
 * Server-side apply benchmark (`node dist/bench/apply.bench.js`, part of `npm run bench`).
 *
 * One node; each of W workers owns one ConfigMap with 50 data fields. Two phases of equal
 * length, measured in the same run:
 *   updates  PUT of the whole object with every value changed (an Update operation of one
 *            manager), based on the resourceVersion of the previous response
 *   applies  PATCH application/apply-patch+yaml by three managers in turn, each applying its
 *            own 17 of the 50 fields with new values (ownership tracking, merge, no conflicts)
 * and prints applies/s against updates/s. Target: applies at least 50% of update throughput.
 * Before the server starts it prints two in-process figures of the apply request path (the
 * unit specs check behaviour only, never speed): the cost of one applyIntent() call of the
 * same shape (50 fields, 3 managers), and strict JSON decoding against JSON.parse on a 10 KB
 * object (every request body is decoded strictly).
 *
 * Flags: --seconds N (env BENCH_SECONDS, default 5), --workers N (default 16).
 */
import { parseArgs } from 'node:util';
import { applyIntent, ObjectMetaSchema, parseJsonStrict, type JSONSchemaProps } from '@app/apimachinery';
import { Pool } from 'undici7';
import { startServer } from '../test/support/server.js';
import { formatTable, percentile, type PhaseResult } from './api.bench.js';
import { isEntryPoint } from '../cluster/entry-point.js';

const FIELDS = 50;
const MANAGERS = 3;
const NS = 'bench-apply';

function data(seq: number, pick: (i: number) => boolean = () => true): Record<string, string> {
  const d: Record<string, string> = {};
  for (let i = 0; i < FIELDS; i++) if (pick(i)) d[`field-${String(i).padStart(2, '0')}`] = `value-${seq}-${i}`;
  return d;
}

interface Worker {
  name: string;
  latest: { metadata: Record<string, unknown> } & Record<string, unknown>;
}

async function call(
  pool: Pool,
  method: 'GET' | 'POST' | 'PUT' | 'PATCH',
  path: string,
  body: string | undefined,
  contentType = 'application/json',
): Promise<{ status: number; text: string }> {
  const res = await pool.request({
    method,
    path,
    headers: { 'content-type': contentType, accept: 'application/json' },
    ...(body !== undefined ? { body } : {}),
  });
  return { status: res.statusCode, text: await res.body.text() };
}

async function phase(name: string, seconds: number, workers: Worker[], step: (w: Worker, seq: number) => Promise<boolean>): Promise<PhaseResult> {
  const lat: number[] = [];
  let errors = 0;
  let seq = 0;
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  await Promise.all(
    workers.map(async (w) => {
      while (performance.now() < end) {
        const s = performance.now();
        if (await step(w, seq++)) lat.push(performance.now() - s);
        else errors++;
      }
    }),
  );
  const elapsed = (performance.now() - t0) / 1000;
  lat.sort((a, b) => a - b);
  return {
    name,
    seconds: elapsed,
    requests: lat.length,
    errors,
    perSecond: lat.length / elapsed,
    p50Ms: percentile(lat, 0.5),
    p99Ms: percentile(lat, 0.99),
    sampleErrors: [],
  };
}

/** Mean ns per call of `f` over `n` calls, after `warm` calls to let the JIT settle. */
function nsPerCall(f: () => void, n: number, warm = 200): number {
  for (let i = 0; i < warm; i++) f();
  const t = process.hrtime.bigint();
  for (let i = 0; i < n; i++) f();
  return Number(process.hrtime.bigint() - t) / n;
}

/** In-process figures of the apply path, printed before the HTTP phases. */
export function inProcessFigures(): string[] {
  const schema: JSONSchemaProps = {
    type: 'object',
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { allOf: [ObjectMetaSchema] },
      data: { type: 'object', additionalProperties: { type: 'string' } },
    },
  };
  const now = new Date(0);
  const cm = (d: Record<string, string>): Record<string, unknown> => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: NS }, data: d });
  const apply = (live: Record<string, unknown> | undefined, d: Record<string, string>, manager: string) =>
    applyIntent({ live, intent: cm(d), manager, force: false, schema, apiVersion: 'v1', now }).object;
  let live = apply(
    undefined,
    data(0, (i) => i % MANAGERS === 0),
    'manager-0',
  );
  for (let m = 1; m < MANAGERS; m++)
    live = apply(
      live,
      data(0, (i) => i % MANAGERS === m),
      `manager-${m}`,
    );
  const intent = data(1, (i) => i % MANAGERS === 1);
  const applyNs = nsPerCall(() => apply(live, intent, 'manager-1'), 2000);

  const obj: Record<string, unknown> = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', labels: { a: 'b' } }, data: {} };
  for (let i = 0; i < 200; i++) (obj.data as Record<string, string>)[`key-${i}`] = `value number ${i} with some text`;
  obj.list = Array.from({ length: 50 }, (_, i) => ({ name: `n${i}`, port: i, on: i % 2 === 0 }));
  const text = JSON.stringify(obj);
  const nativeNs = nsPerCall(() => JSON.parse(text), 2000);
  const strictNs = nsPerCall(() => parseJsonStrict(text), 2000);
  return [
    `in-process applyIntent, ${FIELDS} fields / ${MANAGERS} managers: ${(applyNs / 1000).toFixed(1)} µs per apply`,
    `in-process parseJsonStrict / JSON.parse on ${text.length} bytes: ${(strictNs / nativeNs).toFixed(2)}x (${(strictNs / 1000).toFixed(1)} µs vs ${(nativeNs / 1000).toFixed(1)} µs)`,
  ];
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { seconds: { type: 'string' }, workers: { type: 'string' } } });
  const seconds = Number(values.seconds ?? process.env.BENCH_SECONDS ?? 5);
  const nWorkers = Number(values.workers ?? 16);
  for (const line of inProcessFigures()) process.stdout.write(`${line}\n`);
  process.stdout.write('starting API server...\n');
  const server = await startServer();
  const pool = new Pool(server.url, {
    connections: nWorkers,
    pipelining: 1,
    connect: { ca: server.caPem, cert: server.adminCertPem, key: server.adminKeyPem },
  });
  try {
    await call(pool, 'POST', '/api/v1/namespaces', JSON.stringify({ metadata: { name: NS } }));
    // Apply targets start without data: the three managers own their fields from their first apply.
    const make = async (prefix: string, initial: Record<string, string>): Promise<Worker[]> =>
      Promise.all(
        Array.from({ length: nWorkers }, async (_, i) => {
          const name = `${prefix}-${i}`;
          const r = await call(pool, 'POST', `/api/v1/namespaces/${NS}/configmaps?fieldManager=seed`, JSON.stringify({ metadata: { name }, data: initial }));
          if (r.status !== 201) throw new Error(`seed ${name}: ${r.status} ${r.text.slice(0, 200)}`);
          return { name, latest: JSON.parse(r.text) };
        }),
      );
    const updaters = await make('upd', data(0));
    const appliers = await make('ssa', {});
    const updates = await phase('updates (PUT, 50 fields)', seconds, updaters, async (w, seq) => {
      const body = JSON.stringify({ ...w.latest, data: data(seq) });
      const r = await call(pool, 'PUT', `/api/v1/namespaces/${NS}/configmaps/${w.name}?fieldManager=bench-update`, body);
      if (r.status !== 200) return false;
      w.latest = JSON.parse(r.text);
      return true;
    });
    const applies = await phase('applies (3 managers)', seconds, appliers, async (w, seq) => {
      const m = seq % MANAGERS;
      const intent = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: w.name, namespace: NS }, data: data(seq, (i) => i % MANAGERS === m) };
      const r = await call(
        pool,
        'PATCH',
        `/api/v1/namespaces/${NS}/configmaps/${w.name}?fieldManager=manager-${m}`,
        JSON.stringify(intent),
        'application/apply-patch+yaml',
      );
      return r.status === 200;
    });
    process.stdout.write(`\n${formatTable([updates, applies])}\n\n`);
    const ratio = applies.perSecond / updates.perSecond;
    process.stdout.write(`applies / updates = ${(ratio * 100).toFixed(1)}%   (target >= 50%)   ${ratio >= 0.5 ? 'MET' : 'NOT MET'}\n`);
    return updates.errors + applies.errors > 0 ? 1 : 0;
  } finally {
    await pool.close();
    await server.cleanup();
  }
}

if (isEntryPoint(import.meta.url)) {
  main().then(
    (code) => process.exit(code),
    (e) => {
      process.stderr.write(`bench: ${(e as Error).message}\n`);
      process.exit(1);
    },
  );
}
