/**
 * The watch verb over HTTP: newline-delimited `{type, object}` JSON documents on the raw
 * response (HTTP/1.1 chunked or an HTTP/2 stream), Table rows when the Accept header asks
 * for Table (kubectl get -w), BOOKMARK events with allowWatchBookmarks, bounded buffering.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Errors, type StatusError } from '@app/apimachinery';
import type { KubeObject } from '@app/storage';
import { apiVersionOf, toTable, type GenericStore, type KindDeclaration, type WatchEventOut } from '@app/registry';
import { negotiateOutput, type OutputFormat } from './negotiation.js';

/** First value of each query parameter. */
type Query = Record<string, string | undefined>;

/** Limits of watches. */
export interface WatchServeOptions {
  /** Upper bound of a watch when the client sets no timeoutSeconds (seconds). */
  maxWatchSeconds: number;
  /** Interval of BOOKMARK events when allowWatchBookmarks=true (ms). */
  bookmarkIntervalMs: number;
}

function isTrue(v: string | undefined): boolean {
  return v === 'true' || v === '1';
}

function parseIntParam(q: Query, name: string): number | undefined {
  const v = q[name];
  if (v === undefined || v === '') return undefined;
  if (!/^-?\d+$/.test(v)) throw Errors.badRequest(`${name}: Invalid value: ${JSON.stringify(v)}: must be an integer`);
  return Number(v);
}

/**
 * Streams watch events as newline-delimited JSON `{type, object}` (Table rows when asked).
 * unset/"0" resourceVersion: synthetic ADDED for current state first; N: changes after N.
 */
export async function serveWatch(
  opts: WatchServeOptions,
  req: FastifyRequest,
  reply: FastifyReply,
  decl: KindDeclaration,
  store: GenericStore,
  ns: string,
  name: string | undefined,
  q: Query,
): Promise<void> {
  const fmt: OutputFormat = negotiateOutput(req.headers.accept, false);
  if (fmt.kind === 'yaml' || fmt.kind === 'protobuf') throw Errors.notAcceptable(['application/json']);
  const { predicate } = store.selectorPredicate({ labelSelector: q.labelSelector, fieldSelector: q.fieldSelector });
  const pred = name ? (o: KubeObject) => o.metadata.name === name && (!predicate || predicate(o)) : predicate;
  const rvParam = q.resourceVersion;
  let initial: KubeObject[] = [];
  let after: number;
  const rv = rvParam === undefined || rvParam === '' ? undefined : Number(rvParam);
  if (rv !== undefined && (!Number.isSafeInteger(rv) || rv < 0)) throw Errors.badRequest(`invalid resourceVersion: ${JSON.stringify(rvParam)}`);
  if (rv === undefined || rv === 0) {
    const list = await store.list(ns, {
      labelSelector: q.labelSelector,
      fieldSelector: q.fieldSelector,
      resourceVersion: rv === 0 ? '0' : undefined,
    });
    initial = name ? list.items.filter((o) => o.metadata.name === name) : list.items;
    after = Number(list.resourceVersion);
  } else {
    after = rv;
  }
  const timeoutParam = parseIntParam(q, 'timeoutSeconds');
  const timeoutSec = timeoutParam !== undefined && timeoutParam > 0 ? Math.min(timeoutParam, opts.maxWatchSeconds) : opts.maxWatchSeconds;
  const bookmarks = isTrue(q.allowWatchBookmarks);

  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-cache, private' });
  let headersSent = false;
  let closed = false;
  let lastRevision = after;
  const MAX_BUFFER = 16 * 1024 * 1024;
  const apiVersion = apiVersionOf(decl);

  const render = (type: string, obj: KubeObject | Record<string, unknown>): string => {
    let object: unknown = obj;
    if (fmt.kind === 'table' && type !== 'BOOKMARK' && type !== 'ERROR') {
      object = toTable(decl, [obj as KubeObject], {
        now: new Date(),
        listMeta: { resourceVersion: (obj as KubeObject).metadata?.resourceVersion },
        includeObject: q.includeObject,
        version: fmt.version,
        withHeaders: !headersSent,
      });
      headersSent = true;
    } else if (fmt.kind === 'partial' && type !== 'BOOKMARK' && type !== 'ERROR') {
      object = { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${fmt.version}`, metadata: (obj as KubeObject).metadata };
    }
    return JSON.stringify({ type, object }) + '\n';
  };
  const write = (line: string): void => {
    if (closed) return;
    raw.write(line);
    const buffered = (raw as unknown as { writableLength?: number }).writableLength ?? 0;
    if (buffered > MAX_BUFFER) {
      // A watcher that cannot keep up is closed; it resumes from its last resourceVersion.
      finish();
    }
  };
  let handle: { stop(): void } | undefined;
  const timers: NodeJS.Timeout[] = [];
  const finish = (): void => {
    if (closed) return;
    if (bookmarks) {
      raw.write(render('BOOKMARK', { kind: decl.kind, apiVersion, metadata: { resourceVersion: String(lastRevision) } }));
    }
    closed = true;
    handle?.stop();
    for (const t of timers) clearTimeout(t);
    raw.end();
  };
  req.raw.on('close', () => {
    closed = true;
    handle?.stop();
    for (const t of timers) clearTimeout(t);
  });
  for (const o of initial) write(render('ADDED', o));
  handle = store.watch(ns, name, after, pred, {
    event: (e: WatchEventOut) => {
      lastRevision = e.revision;
      write(render(e.type, e.object));
    },
    error: (err: StatusError) => {
      write(render('ERROR', err.toStatus() as unknown as Record<string, unknown>));
      finish();
    },
  });
  timers.push(setTimeout(finish, timeoutSec * 1000));
  if (bookmarks) {
    const tick = (): void => {
      if (closed) return;
      const cur = Math.max(lastRevision, 0);
      write(render('BOOKMARK', { kind: decl.kind, apiVersion, metadata: { resourceVersion: String(cur) } }));
      timers.push(setTimeout(tick, opts.bookmarkIntervalMs));
    };
    timers.push(setTimeout(tick, opts.bookmarkIntervalMs));
  }
}
