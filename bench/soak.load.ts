/**
 * The soak run's load (bench/soak.ts): HTTPS clients with the admin certificate that create,
 * update, patch, get, list and delete ConfigMaps, Secrets and Leases in several namespaces,
 * spread over the nodes at a fixed total rate, and long-running watches on every node that
 * resume from their last resourceVersion.
 *
 * Each worker owns its objects (no other client writes them), so an update sends the
 * resourceVersion of its own last write and must succeed: a 409 there is a lost or reordered
 * write, counted as an error. The object count stays bounded (a worker deletes once it holds
 * `objectsPerWorker`), so a store that grows during the run holds garbage, not data.
 *
 * Transient answers, counted apart and not as errors: 429 (the in-flight limit,
 * docs/architecture.md), 503 and 504 (a request that ran out of time or found no leader). After
 * one, the worker reads its object back to learn whether the write happened. A watch that gets
 * 410 Gone (its revision compacted away) relists and goes on from the list's revision, as an
 * informer does.
 */
import { randomBytes } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { request as undiciRequest } from 'undici7';
import { type HttpTarget, agentFor, request } from '../test/support/http.helper.js';

/** Per node: what the load sent there and what the watches on it saw. */
export interface NodeLoadStats {
  requests: number;
  errors: number;
  transient: number;
  watchEvents: number;
  watchRestarts: number;
  watchRelists: number;
  watchBackwards: number;
  watchErrors: number;
}

/** Options of {@link SoakLoad}. */
export interface SoakLoadOptions {
  readonly workers: number;
  readonly namespaces: number;
  readonly objectsPerWorker: number;
  /** Requests per second over all workers (each waits out its share of the period). */
  readonly ratePerS: number;
  /** Watch requests carry a timeoutSeconds drawn between this and twice this. */
  readonly watchTimeoutS: number;
  /** KiB of data in each ConfigMap. */
  readonly objectKiB: number;
}

interface Kind {
  readonly name: string;
  readonly path: (ns: string) => string;
  readonly body: (name: string, ns: string, seq: number, kib: number) => Record<string, unknown>;
  readonly mutate: (obj: Record<string, unknown>, seq: number, kib: number) => void;
  readonly patch: (seq: number) => Record<string, unknown>;
}

const microTime = (): string => new Date().toISOString().replace('Z', '000Z');

const KINDS: readonly Kind[] = [
  {
    name: 'cm',
    path: (ns) => `/api/v1/namespaces/${ns}/configmaps`,
    body: (name, ns, seq, kib) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace: ns, labels: { soak: 'yes' } },
      data: payload(seq, kib),
    }),
    mutate: (o, seq, kib) => void (o.data = payload(seq, kib)),
    patch: (seq) => ({ data: { patched: String(seq) } }),
  },
  {
    name: 'secret',
    path: (ns) => `/api/v1/namespaces/${ns}/secrets`,
    body: (name, ns, seq) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: ns }, type: 'Opaque', data: { token: b64(`t-${seq}`) } }),
    mutate: (o, seq) => void (o.data = { token: b64(`t-${seq}`), extra: randomBytes(seq % 2048).toString('base64') }),
    patch: (seq) => ({ metadata: { annotations: { 'soak/seq': String(seq) } } }),
  },
  {
    name: 'lease',
    path: (ns) => `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`,
    body: (name, ns) => ({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name, namespace: ns },
      spec: { holderIdentity: name, leaseDurationSeconds: 15, renewTime: microTime() },
    }),
    mutate: (o) => void ((o.spec as Record<string, unknown>).renewTime = microTime()),
    patch: (seq) => ({ spec: { leaseTransitions: seq % 1000 } }),
  },
];

/**
 * `kib` KiB of data (16 by default) that does not compress (LevelDB compresses its tables): enough bytes per
 * write that both stores' 32 MiB write buffers flush every minute or two, and their level-0
 * tables merge every few minutes, at 40 requests/s. A 30-minute run then sees LevelDB's steady
 * state many times over, not only the first fill (with 1 KiB objects that took over an hour).
 */
function payload(seq: number, kib: number): Record<string, string> {
  const d: Record<string, string> = { seq: String(seq) };
  for (let k = 0; k < 8; k++) d[`key-${k}`] = randomBytes(64 * kib).toString('hex');
  return d;
}

function b64(s: string): string {
  return Buffer.from(s).toString('base64');
}

interface Owned {
  readonly kind: Kind;
  readonly ns: string;
  readonly name: string;
  /** The object as last written (undefined while unknown after a transient answer). */
  obj: Record<string, unknown> | undefined;
}

/** The watched collections: cluster-wide, so every worker's writes show up on every node. */
const WATCH_PATHS: readonly string[] = ['/api/v1/configmaps', '/api/v1/secrets', '/apis/coordination.k8s.io/v1/leases'];

/** The mixed load; `start` sets it going, `stop` ends it and waits for every client. */
export class SoakLoad {
  /** Stats per target, in the targets' order. */
  readonly stats: NodeLoadStats[];
  /** The first few error descriptions, for the report. */
  readonly errorLog: string[] = [];
  private running = false;
  private readonly tasks: Promise<void>[] = [];
  private readonly abort = new AbortController();
  private seq = 0;

  constructor(
    private readonly targets: readonly HttpTarget[],
    private readonly opts: SoakLoadOptions,
  ) {
    // Every watch and every sleeping worker listens on the one abort signal.
    setMaxListeners(0, this.abort.signal);
    this.stats = targets.map(() => ({
      requests: 0,
      errors: 0,
      transient: 0,
      watchEvents: 0,
      watchRestarts: 0,
      watchRelists: 0,
      watchBackwards: 0,
      watchErrors: 0,
    }));
  }

  /** The namespaces the workers write in. */
  namespaces(): string[] {
    return Array.from({ length: this.opts.namespaces }, (_, i) => `soak-${i}`);
  }

  /** Creates the namespaces (an existing one is fine). */
  async setup(): Promise<void> {
    for (const ns of this.namespaces()) {
      const r = await request(this.targets[0]!, 'POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } });
      if (r.status !== 201 && r.status !== 409) throw new Error(`creating namespace ${ns}: ${r.status} ${r.body.slice(0, 200)}`);
    }
  }

  /** Starts the workers and the watches (`watchesPerNode` of WATCH_PATHS on every node). */
  start(): void {
    this.running = true;
    for (let w = 0; w < this.opts.workers; w++) this.tasks.push(this.worker(w));
    this.targets.forEach((_, node) => {
      for (const p of WATCH_PATHS) this.tasks.push(this.watch(node, p));
    });
  }

  /** Stops every client and waits for them. */
  async stop(): Promise<void> {
    this.running = false;
    this.abort.abort();
    await Promise.all(this.tasks);
  }

  /** Run-wide totals. */
  totals(): NodeLoadStats {
    const t: NodeLoadStats = { requests: 0, errors: 0, transient: 0, watchEvents: 0, watchRestarts: 0, watchRelists: 0, watchBackwards: 0, watchErrors: 0 };
    for (const s of this.stats) for (const k of Object.keys(t) as (keyof NodeLoadStats)[]) t[k] += s[k];
    return t;
  }

  private fail(node: number, what: string, watch = false): void {
    if (watch) this.stats[node]!.watchErrors++;
    else this.stats[node]!.errors++;
    const line = `${new Date().toISOString()} node ${node + 1}: ${what}`;
    if (this.errorLog.length >= 50) return;
    this.errorLog.push(line);
    // printed as it happens too: a 30-minute run should not hide its first error until the end
    process.stdout.write(`soak: error: ${line}\n`);
  }

  /** One request to a random node; the status, or 0 for a transient failure (counted), or undefined for an error (counted). */
  private async send(
    method: string,
    path: string,
    expect: readonly number[],
    body?: unknown,
    contentType?: string,
  ): Promise<{ status: number; obj?: Record<string, unknown> } | undefined> {
    const node = Math.floor(Math.random() * this.targets.length);
    const st = this.stats[node]!;
    st.requests++;
    try {
      const r = await request(this.targets[node]!, method, path, {
        ...(body !== undefined ? { body } : {}),
        ...(contentType ? { headers: { 'content-type': contentType } } : {}),
        timeoutMs: 60_000,
      });
      if (expect.includes(r.status)) return { status: r.status, obj: r.json<Record<string, unknown>>() };
      if (r.status === 429 || r.status === 503 || r.status === 504) {
        st.transient++;
        return { status: 0 };
      }
      this.fail(node, `${method} ${path}: ${r.status} ${r.body.slice(0, 300)}`);
    } catch (e) {
      if (!this.running) return undefined;
      this.fail(node, `${method} ${path}: ${(e as Error).message}`);
    }
    return undefined;
  }

  private async worker(w: number): Promise<void> {
    const owned: Owned[] = [];
    const nss = this.namespaces();
    const period = (this.opts.workers * 1000) / this.opts.ratePerS;
    let made = 0;
    while (this.running) {
      const began = Date.now();
      await this.step(w, owned, nss, () => made++);
      const rest = period - (Date.now() - began);
      if (rest > 0 && this.running) await sleep(rest * (0.5 + Math.random()), undefined, { signal: this.abort.signal }).catch(() => undefined);
    }
  }

  private async step(w: number, owned: Owned[], nss: readonly string[], nextName: () => number): Promise<void> {
    const seq = ++this.seq;
    const unknown = owned.find((o) => o.obj === undefined);
    if (unknown) return this.resync(owned, unknown);
    const r = Math.random() * 100;
    if (owned.length === 0 || (r < 20 && owned.length < this.opts.objectsPerWorker)) {
      const kind = KINDS[seq % 5 < 3 ? 0 : seq % 5 === 3 ? 1 : 2]!;
      const ns = nss[(w + seq) % nss.length]!;
      const o: Owned = { kind, ns, name: `${kind.name}-w${w}-${nextName()}`, obj: undefined };
      const res = await this.send('POST', kind.path(ns), [201], kind.body(o.name, ns, seq, this.opts.objectKiB));
      if (res === undefined) return;
      owned.push(o);
      if (res.status !== 0) o.obj = res.obj;
      return;
    }
    const o = owned[Math.floor(Math.random() * owned.length)]!;
    const path = `${o.kind.path(o.ns)}/${o.name}`;
    // r < 20 here means a create when full: a delete instead
    if (r < 35) {
      const res = await this.send('DELETE', path, [200, 202]);
      if (res?.status === 0) o.obj = undefined;
      else if (res) owned.splice(owned.indexOf(o), 1);
      return;
    }
    if (r < 55) {
      const next = structuredClone(o.obj!);
      o.kind.mutate(next, seq, this.opts.objectKiB);
      const res = await this.send('PUT', path, [200], next);
      if (res) o.obj = res.status === 0 ? undefined : res.obj;
      return;
    }
    if (r < 70) {
      const res = await this.send('PATCH', path, [200], o.kind.patch(seq), 'application/merge-patch+json');
      if (res) o.obj = res.status === 0 ? undefined : res.obj;
      return;
    }
    if (r < 90) {
      await this.send('GET', path, [200]);
      return;
    }
    await this.send('GET', `${o.kind.path(o.ns)}?limit=100`, [200]);
  }

  /** After a transient answer to a write: read the object back (gone: forget it). */
  private async resync(owned: Owned[], o: Owned): Promise<void> {
    const res = await this.send('GET', `${o.kind.path(o.ns)}/${o.name}`, [200, 404]);
    if (!res || res.status === 0) return;
    if (res.status === 404) owned.splice(owned.indexOf(o), 1);
    else o.obj = res.obj;
  }

  /** Lists `path` on the node: the list's resourceVersion, or undefined (counted). */
  private async list(node: number, path: string): Promise<number | undefined> {
    try {
      const r = await request(this.targets[node]!, 'GET', `${path}?limit=500`, { timeoutMs: 60_000 });
      if (r.status === 200) return Number(r.json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion);
      if (r.status === 429 || r.status === 503 || r.status === 504) return undefined;
      this.fail(node, `list ${path}: ${r.status} ${r.body.slice(0, 200)}`, true);
    } catch (e) {
      if (this.running) this.fail(node, `list ${path}: ${(e as Error).message}`, true);
    }
    return undefined;
  }

  /**
   * One informer-like watch: list, then watch from the list's revision; on the end of a watch
   * (its timeout) go on from the last revision seen; on 410 Gone relist. Every event's
   * resourceVersion, and every relist's, must not be below the highest seen before.
   */
  private async watch(node: number, path: string): Promise<void> {
    const st = this.stats[node]!;
    let last = 0;
    let rv: number | undefined;
    const seen = (v: number): void => {
      if (v < last) {
        st.watchBackwards++;
        this.fail(node, `watch ${path}: resourceVersion ${v} after ${last}`, true);
      } else last = v;
    };
    while (this.running) {
      if (rv === undefined) {
        rv = await this.list(node, path);
        if (rv === undefined) {
          await sleep(1000, undefined, { signal: this.abort.signal }).catch(() => undefined);
          continue;
        }
        seen(rv);
      }
      const timeout = Math.round(this.opts.watchTimeoutS * (1 + Math.random()));
      const url = new URL(`${path}?watch=1&allowWatchBookmarks=true&resourceVersion=${rv}&timeoutSeconds=${timeout}`, this.targets[node]!.url);
      let gone = false;
      try {
        const res = await undiciRequest(url, {
          method: 'GET',
          dispatcher: agentFor(this.targets[node]!),
          signal: this.abort.signal,
          bodyTimeout: (timeout + 30) * 1000,
        });
        if (res.statusCode !== 200) {
          const text = await res.body.text();
          if (res.statusCode === 410) gone = true;
          else if (res.statusCode === 429 || res.statusCode === 503 || res.statusCode === 504) st.transient++;
          else this.fail(node, `watch ${path}: ${res.statusCode} ${text.slice(0, 200)}`, true);
        } else {
          let buf = '';
          for await (const chunk of res.body) {
            buf += (chunk as Buffer).toString('utf8');
            let nl: number;
            while ((nl = buf.indexOf('\n')) >= 0) {
              const line = buf.slice(0, nl).trim();
              buf = buf.slice(nl + 1);
              if (line === '') continue;
              const ev = JSON.parse(line) as { type: string; object: { code?: number; message?: string; metadata?: { resourceVersion?: string } } };
              if (ev.type === 'ERROR') {
                if (ev.object.code === 410) gone = true;
                else this.fail(node, `watch ${path}: ERROR ${JSON.stringify(ev.object).slice(0, 200)}`, true);
                continue;
              }
              st.watchEvents++;
              const v = Number(ev.object.metadata?.resourceVersion);
              seen(v);
              rv = v;
            }
          }
        }
      } catch (e) {
        if (!this.running) return;
        this.fail(node, `watch ${path}: ${(e as Error).message}`, true);
        await sleep(1000, undefined, { signal: this.abort.signal }).catch(() => undefined);
      }
      if (!this.running) return;
      if (gone) {
        st.watchRelists++;
        rv = undefined;
      } else st.watchRestarts++;
    }
  }
}
