/**
 * The watch verb over HTTP (conventions "Change notification", "Resource versions" watch table,
 * "Watch events"; docs/watch.md): newline-delimited `{type, object}` JSON documents on the raw
 * response (HTTP/1.1 chunked or an HTTP/2 stream), Table rows when the Accept header asks for
 * Table (kubectl get -w), BOOKMARK events with allowWatchBookmarks, the streaming-list mode
 * (sendInitialEvents), and bounded buffering per watcher.
 *
 * Cost: storage decodes each write once for all watchers, and this handler
 * encodes each (event object, event type, output format) once: the bytes are cached on the
 * shared event object and written to every watcher that receives it.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { encodeWatchEventFrame, Errors, escapeFieldValue, StatusError, type JsonObject, type KubeObject } from '@app/apimachinery';
import type { ReadConsistency, WatchHandle } from '@app/storage';
import {
  apiVersionOf,
  decodeContinue,
  toTable,
  type GenericStore,
  type KindDeclaration,
  type ListResponse,
  type WatchEventOut,
  type WatchOptions,
} from '@app/registry';
import { negotiateOutput, type OutputFormat } from './negotiation.js';
import { envInt } from '../config/env.js';

/** Limits of watches. */
export interface WatchServeOptions {
  /**
   * Default watch length when the client sets no timeoutSeconds (seconds): like kube-apiserver's
   * --min-request-timeout, each watch gets a random length in [this, 2 x this) so watches
   * opened together do not all reconnect together.
   */
  maxWatchSeconds: number;
  /** Interval of BOOKMARK events when allowWatchBookmarks=true (ms). Env KAPI_WATCH_BOOKMARK_INTERVAL_MS overrides. */
  bookmarkIntervalMs: number;
  /**
   * Bytes a watcher may have queued (written, not yet taken by the client) before it is closed
   * as too slow. Default 8 MiB; env KAPI_WATCH_MAX_BUFFER_BYTES overrides.
   */
  maxBufferBytes?: number;
  /**
   * How long a watcher's queue may stay above maxBufferBytes without shrinking before it is
   * cut off (ms). Default 5000; env KAPI_WATCH_SLOW_GRACE_MS overrides.
   */
  slowGraceMs?: number;
}

/** Annotation on the BOOKMARK that ends the initial events of a streaming list (KEP-3157). */
export const INITIAL_EVENTS_END_ANNOTATION = 'k8s.io/initial-events-end';

/** Content type of a protobuf watch stream (Kubernetes' protobuf stream serializer). */
export const PROTOBUF_WATCH = 'application/vnd.kubernetes.protobuf;stream=watch';

const DEFAULT_MAX_BUFFER = 8 * 1024 * 1024;
const DEFAULT_SLOW_GRACE_MS = 5000;
/** setTimeout's largest delay; longer watch timeouts are clamped to it (about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** Objects in the first read of a watch's initial state. */
const FIRST_PAGE = 50;
/** Most objects in a later read; fewer when the objects are large (see serveWatch). */
const INITIAL_PAGE = 500;

/**
 * Encoded events, cached on the (shared, read-only) object they carry, keyed
 * `<type>|<format>`. Storage hands the same object to every watcher of a write, so the first
 * watcher encodes and the others reuse the bytes.
 */
const encoded = new WeakMap<object, Map<string, Buffer>>();

function cachedEncoding(object: object, key: string, encode: () => Buffer): Buffer {
  let perObject = encoded.get(object);
  const hit = perObject?.get(key);
  if (hit) return hit;
  const bytes = encode();
  if (!perObject) {
    perObject = new Map();
    encoded.set(object, perObject);
  }
  perObject.set(key, bytes);
  return bytes;
}

/** The JSON line of `{type, object}`, encoded once per object, type and format key. */
export function encodeEventLine(type: string, object: object, formatKey: string, build: () => unknown): Buffer {
  return cachedEncoding(object, `${type}|${formatKey}`, () => Buffer.from(JSON.stringify({ type, object: build() }) + '\n'));
}

/**
 * The protobuf watch frame of `{type, object}` (length-prefixed meta/v1 WatchEvent whose raw
 * object is the enveloped protobuf; stream type `application/vnd.kubernetes.protobuf;
 * stream=watch`), encoded once per object and type. `messageName` is the watched kind's
 * protobuf message (ERROR Status events need none).
 */
export function encodeEventFrame(type: string, object: object, messageName?: string): Buffer {
  return cachedEncoding(object, `${type}|protobuf`, () => Buffer.from(encodeWatchEventFrame(type, object as JsonObject, messageName)));
}

/** Bytes queued on the response and its transport, not yet taken by the client. */
function bufferedBytes(raw: FastifyReply['raw']): number {
  const r = raw as unknown as { writableLength?: number; stream?: { writableLength?: number } };
  // HTTP/2: the stream's queue. HTTP/1.1: OutgoingMessage.writableLength already includes the
  // socket's queue.
  if (r.stream) return r.stream.writableLength ?? 0;
  return r.writableLength ?? 0;
}

/**
 * Streams a watch. resourceVersion unset or "0": synthetic ADDED for the current state (Most
 * Recent / Any), then changes; N: exactly the changes after N (a future N waits until it is
 * reached or the watch times out; a compacted N is HTTP 200 then an ERROR event with a 410
 * Status). sendInitialEvents=true (with resourceVersionMatch=NotOlderThan): the state not older
 * than N as ADDED events, then a BOOKMARK annotated k8s.io/initial-events-end, then changes.
 * `params` are the watch options already validated (options.dto.ts); nothing is parsed here.
 */
export async function serveWatch(
  opts: WatchServeOptions,
  req: FastifyRequest,
  reply: FastifyReply,
  decl: KindDeclaration,
  store: GenericStore,
  ns: string,
  name: string | undefined,
  params: WatchOptions,
  includeObject: string | undefined,
  protobufOk = false,
): Promise<void> {
  const fmt: OutputFormat = negotiateOutput(req.headers.accept, protobufOk);
  if (fmt.kind === 'yaml') throw Errors.notAcceptable(protobufOk ? ['application/json', PROTOBUF_WATCH] : ['application/json']);
  const selectors = { labelSelector: params.labelSelector, fieldSelector: params.fieldSelector };
  const { predicate } = store.selectorPredicate(selectors);
  const pred = name ? (o: KubeObject) => o.metadata.name === name && (!predicate || predicate(o)) : predicate;
  const rv = params.resourceVersion;

  // Where the stream starts (`after`), which state goes first as ADDED events, and whether a
  // BOOKMARK marks the end of that state. The state is read a page at a time, later pages at the
  // first page's revision, and each page is sent before the next is read, so a watch over a
  // large collection never holds all of it. The first page holds FIRST_PAGE objects; each later
  // one as many as would encode to about half the slow-watcher bound at the size of the
  // objects sent so far, at most INITIAL_PAGE, so a collection of large objects is read a few at
  // a time. Only the first page is read here, before the response starts, so that its errors
  // are still plain HTTP errors.
  // unset: Most Recent; "0": Any; N: not older than N.
  const consistency: ReadConsistency = rv === undefined ? { mode: 'MostRecent' } : rv === 0 ? { mode: 'Any' } : { mode: 'NotOlderThan', revision: rv };
  // A watch of one object by its URL reads its initial state as a list by metadata.name does:
  // that key alone.
  const readSelectors =
    name === undefined
      ? selectors
      : { ...selectors, fieldSelector: [params.fieldSelector, `metadata.name=${escapeFieldValue(name)}`].filter(Boolean).join(',') };
  const listPage = (c: ReadConsistency, continueAfter?: string, limit = FIRST_PAGE): Promise<ListResponse> =>
    store.list(ns, { ...readSelectors, consistency: c, limit, ...(continueAfter !== undefined ? { continueAfter } : {}) });
  const start = async (): Promise<{ first: ListResponse | undefined; after: number; initialEnd: boolean }> => {
    if (params.sendInitialEvents === true) {
      // Streaming list: unset = consistent read, "0" = any, N = not older than N.
      const first = await listPage(consistency);
      return { first, after: Number(first.resourceVersion), initialEnd: true };
    }
    if (params.sendInitialEvents === false) {
      // No initial state: from N, or from "now" when unset/"0".
      if (rv !== undefined && rv !== 0) return { first: undefined, after: rv, initialEnd: false };
      // Only the revision is needed: a one-item page read Most Recent ("0": Any).
      return { first: undefined, after: Number((await store.list(ns, { consistency, limit: 1 })).resourceVersion), initialEnd: false };
    }
    if (rv === undefined || rv === 0) {
      const first = await listPage(consistency);
      return { first, after: Number(first.resourceVersion), initialEnd: false };
    }
    return { first: undefined, after: rv, initialEnd: false };
  };
  const { first, after, initialEnd } = await start();

  const timeoutMs = Math.min(
    MAX_TIMER_MS,
    params.timeoutSeconds !== undefined ? params.timeoutSeconds * 1000 : opts.maxWatchSeconds * 1000 * (1 + Math.random()),
  );
  const bookmarks = params.allowWatchBookmarks;
  const bookmarkEvery = envInt('KAPI_WATCH_BOOKMARK_INTERVAL_MS') ?? opts.bookmarkIntervalMs;
  const maxBuffer = envInt('KAPI_WATCH_MAX_BUFFER_BYTES') ?? opts.maxBufferBytes ?? DEFAULT_MAX_BUFFER;
  const slowGraceMs = envInt('KAPI_WATCH_SLOW_GRACE_MS') ?? opts.slowGraceMs ?? DEFAULT_SLOW_GRACE_MS;

  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, { 'content-type': fmt.kind === 'protobuf' ? PROTOBUF_WATCH : 'application/json', 'cache-control': 'no-cache, private' });
  // Send the headers now, as kube-apiserver flushes them: a watch with nothing to report yet
  // (a future resourceVersion, a quiet collection) is still established at once.
  (raw as unknown as { flushHeaders?: () => void }).flushHeaders?.();
  let headersSent = false;
  let closed = false;
  let lastRevision = after;
  // Set once the store watch starts (after the initial events); the closures below read it
  // earlier, when the client goes away first.
  let handle: WatchHandle | undefined = undefined;
  const timers: NodeJS.Timeout[] = [];
  const apiVersion = apiVersionOf(decl);
  const formatKey = fmt.kind === 'partial' ? `partial/${fmt.version}` : 'json';

  const line = (type: string, obj: KubeObject | Record<string, unknown>): Buffer => {
    // protobufOk: the kind has a protobuf message; Status and bookmarks encode as well.
    if (fmt.kind === 'protobuf') return encodeEventFrame(type, obj, decl.protobufMessage);
    if (fmt.kind === 'table' && type !== 'BOOKMARK' && type !== 'ERROR') {
      // Table rows carry per-watcher state (column headers only on the first): not shared.
      const object = toTable(decl, [obj as KubeObject], {
        now: new Date(),
        listMeta: { resourceVersion: (obj as KubeObject).metadata?.resourceVersion },
        includeObject,
        version: fmt.version,
        withHeaders: !headersSent,
      });
      headersSent = true;
      return Buffer.from(JSON.stringify({ type, object }) + '\n');
    }
    if (fmt.kind === 'partial' && type !== 'BOOKMARK' && type !== 'ERROR') {
      return encodeEventLine(type, obj, formatKey, () => ({
        kind: 'PartialObjectMetadata',
        apiVersion: `meta.k8s.io/${fmt.version}`,
        metadata: (obj as KubeObject).metadata,
      }));
    }
    return encodeEventLine(type, obj, formatKey, () => obj);
  };
  const bookmark = (resourceVersion: number, annotations?: Record<string, string>): Buffer =>
    line('BOOKMARK', { kind: decl.kind, apiVersion, metadata: { resourceVersion: String(resourceVersion), ...(annotations ? { annotations } : {}) } });

  const cleanup = (): void => {
    closed = true;
    handle?.stop();
    for (const t of timers) clearTimeout(t);
  };
  /**
   * Slow watchers (docs/watch.md): when a watcher's queue passes maxBuffer a check is armed;
   * after `slowGraceMs` the watcher is cut off unless its queue shrank meanwhile (a reader that
   * drains a burst, such as a history replay, is left alone; one that reads slower than events
   * arrive is not). Cutting destroys the stream, dropping its queued bytes so memory is
   * released, and the client sees the connection end with an error; it resumes from the last
   * resourceVersion it received (Kubernetes' cacher likewise terminates blocked watchers).
   */
  let slowTimer: NodeJS.Timeout | undefined;
  const checkSlow = (mark: number): void => {
    slowTimer = undefined;
    if (closed) return;
    const now = bufferedBytes(raw);
    if (now <= maxBuffer) return;
    if (now < mark) {
      slowTimer = setTimeout(() => checkSlow(now), slowGraceMs);
      timers.push(slowTimer);
      return;
    }
    cleanup();
    raw.destroy(new Error('watch closed: client too slow'));
  };
  const write = (b: Buffer): void => {
    if (closed) return;
    raw.write(b);
    if (slowTimer === undefined) {
      const queued = bufferedBytes(raw);
      if (queued > maxBuffer) {
        slowTimer = setTimeout(() => checkSlow(queued), slowGraceMs);
        timers.push(slowTimer);
      }
    }
  };
  // Announce the revision through which everything has been sent (storage progress when it
  // can tell, else the last event's revision).
  const progress = (): number => Math.max(lastRevision, handle?.progress?.() ?? 0);
  const finish = (): void => {
    if (closed) return;
    if (bookmarks) raw.write(bookmark(progress()));
    cleanup();
    raw.end();
  };
  req.raw.on('close', cleanup);
  raw.on('error', cleanup);

  // Ends the watch with an ERROR event carrying the error's Status.
  const endWithError = (err: StatusError): void => {
    if (closed) return;
    try {
      raw.write(line('ERROR', err.toStatus() as unknown as Record<string, unknown>));
    } finally {
      cleanup();
      raw.end();
    }
  };
  // Resolves once the queue is at most `limit` bytes or the response closed. 'drain' alone does
  // not tell: over HTTP/1.1 it comes only once a write passed the socket's high-water mark
  // (http1.write-buffer.ts), which may be above `limit`; so the queue is also looked at every
  // 50 ms while waiting.
  const below = (limit: number): Promise<void> =>
    new Promise<void>((resolve) => {
      const check = (): void => {
        if (!closed && !raw.destroyed && bufferedBytes(raw) > limit) return;
        clearInterval(poll);
        raw.off('drain', check);
        raw.off('close', check);
        resolve();
      };
      const poll = setInterval(check, 50);
      raw.on('drain', check);
      raw.on('close', check);
    });
  // Initial state, paced by the client (it is ours to send, so wait for the queue to drain
  // rather than cutting off a client that is merely reading a large list), a page at a time;
  // changes meanwhile are replayed from history by the watch below, which starts at the first
  // page's revision. A later page that fails ends the watch with an ERROR event, as a failing
  // watch does; when its revision was compacted while a slow client read the pages before, the
  // watch's own position is gone: the 410 a watch from a compacted revision gets.
  let page = first;
  let sentBytes = 0;
  let sentObjects = 0;
  while (page) {
    for (const o of page.items) {
      if (closed) return;
      if (name !== undefined && o.metadata.name !== name) continue;
      const frame = line('ADDED', o);
      sentBytes += frame.length;
      sentObjects++;
      if (!raw.write(frame) && bufferedBytes(raw) > maxBuffer / 2) await below(maxBuffer / 2);
    }
    if (closed) return;
    if (page.continue === undefined) break;
    const next = decodeContinue(page.continue).start;
    const limit = sentObjects === 0 ? INITIAL_PAGE : Math.max(1, Math.min(INITIAL_PAGE, Math.floor(maxBuffer / 2 / (sentBytes / sentObjects))));
    try {
      page = await listPage({ mode: 'Exact', revision: after }, next, limit);
    } catch (e) {
      if (closed) return;
      const err = !(e instanceof StatusError)
        ? Errors.internal(String(e))
        : e.code === 410
          ? Errors.gone(`too old resource version: ${after} (${store.storage.compactedRevision()})`)
          : e;
      endWithError(err);
      return;
    }
  }
  if (closed) return;
  if (initialEnd) write(bookmark(after, { [INITIAL_EVENTS_END_ANNOTATION]: 'true' }));

  // A field selector requiring one metadata.name watches that key alone (the initial state
  // above was read as that key alone too, by store.list).
  handle = store.watch(ns, name ?? store.singleName(ns, readSelectors.fieldSelector), after, pred, {
    event: (e: WatchEventOut) => {
      lastRevision = e.revision;
      write(line(e.type, e.object));
    },
    error: endWithError,
    // The history replay is paced the same way: its next part is read once the client took
    // the queue below half the bound. Live events are not held back (the slow-watcher policy
    // above applies to them).
    ready: () => (closed || bufferedBytes(raw) <= maxBuffer / 2 ? undefined : below(maxBuffer / 2)),
  });
  if (closed) handle.stop();
  timers.push(setTimeout(finish, timeoutMs));
  if (bookmarks) {
    const tick = (): void => {
      if (closed) return;
      write(bookmark(progress()));
      timers.push(setTimeout(tick, bookmarkEvery));
    };
    timers.push(setTimeout(tick, bookmarkEvery));
  }
}
