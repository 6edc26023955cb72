/**
 * Builds and caches the OpenAPI documents for the current set of kinds, and answers the
 * `/openapi/v2`, `/openapi/v3` and `/openapi/v3/<gv>` requests the way kube-openapi's handlers
 * do (HTTP edges stay thin: they pass the path, `hash` query and If-None-Match header here and
 * write back the returned status, headers and body).
 *
 * Documents are built lazily on first request after `setKinds` and then reused until the kinds
 * change (custom resources come and go); the hash of each document is computed once.
 * Behaviour copied from kube-openapi handler3: ETag is the quoted uppercase SHA-512 hex; a
 * request with `?hash=` matching the current one gets `Cache-Control: public, immutable` and a
 * one-year Expires; a stale hash gets a 301 to the current URL.
 *
 * `/openapi/v2` is also served as protobuf (the gnostic message, openapi.protobuf.ts) when the
 * Accept header prefers it, as kube-openapi's v2 handler does: both forms carry the ETag of the
 * JSON document, answer If-None-Match with 304, and say `Vary: Accept`.
 */
import { groupVersionPath, type OpenAPIKind } from './openapi.kinds.js';
import { encodeOpenAPIV2Protobuf, OPENAPI_V2_PROTOBUF_MEDIA_TYPE, OPENAPI_V2_PROTOBUF_MEDIA_TYPE_DEPRECATED } from './openapi.protobuf.js';
import { buildOpenAPIV2Document } from './openapi.v2.js';
import {
  buildOpenAPIV3Discovery,
  buildOpenAPIV3Document,
  kindsByGroupVersion,
  openapiHash,
  publish,
  type OpenAPIInfo,
  type PublishedDocument,
} from './openapi.v3.js';

/** An HTTP answer for an OpenAPI endpoint. */
export interface OpenAPIResponse {
  status: 200 | 301 | 304 | 404 | 406;
  headers: Record<string, string>;
  /** JSON text, or the protobuf bytes of /openapi/v2. */
  body: string | Buffer;
}

/** What the edge passes in. */
export interface OpenAPIRequest {
  /** URL path without query, e.g. `/openapi/v3/apis/apps/v1`. */
  path: string;
  /** The `hash` query parameter, if any. */
  hash?: string;
  /** The If-None-Match request header, if any. */
  ifNoneMatch?: string;
  /** The Accept header: JSON everywhere, and the gnostic protobuf types for /openapi/v2; any
   * other type answers 406. */
  accept?: string;
  /** Wall clock for Expires; injectable for tests. */
  now?: Date;
}

/** Caches the published documents of one set of kinds. */
export class OpenAPIPublisher {
  private kinds: readonly OpenAPIKind[] = [];
  /** Group-version documents served as given (another server's, through the aggregation layer). */
  private external: ReadonlyMap<string, string> = new Map();
  private v3: Map<string, PublishedDocument> | undefined;
  private v3Discovery: PublishedDocument | undefined;
  private v2: PublishedDocument | undefined;
  private v2Protobuf: Buffer | undefined;

  constructor(
    kinds: readonly OpenAPIKind[] = [],
    private readonly info: OpenAPIInfo = {},
  ) {
    this.setKinds(kinds);
  }

  /** Replaces the served kinds; documents are rebuilt on next use. */
  setKinds(kinds: readonly OpenAPIKind[]): void {
    this.kinds = [...kinds];
    this.v3 = undefined;
    this.v3Discovery = undefined;
    this.v2 = undefined;
    this.v2Protobuf = undefined;
  }

  /**
   * Sets the v3 documents of group-versions served elsewhere, keyed like the others
   * (`apis/<g>/<v>`), as JSON text; a key that a kind here also has stays this server's.
   */
  setExternalV3(docs: ReadonlyMap<string, string>): void {
    this.external = new Map(docs);
    this.v3 = undefined;
    this.v3Discovery = undefined;
  }

  /** Group-version documents keyed `api/v1`, `apis/<g>/<v>`. */
  v3Documents(): ReadonlyMap<string, PublishedDocument> {
    if (!this.v3) {
      const docs = new Map<string, PublishedDocument>();
      for (const [key, body] of this.external) docs.set(key, { body, hash: openapiHash(body) });
      for (const [key, ks] of kindsByGroupVersion(this.kinds)) docs.set(key, publish(buildOpenAPIV3Document(ks, this.info)));
      this.v3 = docs;
    }
    return this.v3;
  }

  /** The `/openapi/v3` discovery document. */
  v3DiscoveryDocument(): PublishedDocument {
    this.v3Discovery ??= publish(buildOpenAPIV3Discovery(this.v3Documents()));
    return this.v3Discovery;
  }

  /** One group-version document, by key (`api/v1`) or by group and version. */
  v3Document(key: string): PublishedDocument | undefined;
  v3Document(group: string, version: string): PublishedDocument | undefined;
  v3Document(a: string, b?: string): PublishedDocument | undefined {
    return this.v3Documents().get(b === undefined ? a : groupVersionPath(a, b));
  }

  /** The `/openapi/v2` document. */
  v2Document(): PublishedDocument {
    this.v2 ??= publish(buildOpenAPIV2Document(this.kinds, this.info));
    return this.v2;
  }

  /** The `/openapi/v2` document as gnostic protobuf bytes (built from the JSON form on first use). */
  v2ProtobufDocument(): Buffer {
    this.v2Protobuf ??= encodeOpenAPIV2Protobuf(JSON.parse(this.v2Document().body) as Record<string, unknown>);
    return this.v2Protobuf;
  }

  /** Answers GET /openapi/v2, /openapi/v3 and /openapi/v3/<gv>; 404 for anything else. */
  handle(req: OpenAPIRequest): OpenAPIResponse {
    const path = req.path.replace(/\/+$/, '');
    if (path === '/openapi/v2') {
      const form = negotiate(req.accept, true);
      if (form === undefined) return notAcceptable();
      if (form === 'protobuf') {
        const doc = this.v2Document();
        return serve({ ...doc, body: '' }, req, false, { contentType: OPENAPI_V2_PROTOBUF_MEDIA_TYPE, body: () => this.v2ProtobufDocument() });
      }
      return serve(this.v2Document(), req, false);
    }
    if (negotiate(req.accept, false) === undefined) return notAcceptable();
    if (path === '/openapi/v3') return serve(this.v3DiscoveryDocument(), req, false);
    if (path.startsWith('/openapi/v3/')) {
      const key = path.slice('/openapi/v3/'.length);
      const doc = this.v3Document(key);
      if (!doc) return { status: 404, headers: { 'Content-Type': 'text/plain' }, body: `no OpenAPI v3 document for ${key}` };
      if (req.hash !== undefined && req.hash !== '' && req.hash !== doc.hash) {
        return { status: 301, headers: { Location: `/openapi/v3/${key}?hash=${doc.hash}` }, body: '' };
      }
      return serve(doc, req, req.hash !== undefined && req.hash !== '');
    }
    return { status: 404, headers: { 'Content-Type': 'text/plain' }, body: 'not found' };
  }
}

function notAcceptable(): OpenAPIResponse {
  return { status: 406, headers: { 'Content-Type': 'text/plain' }, body: 'only application/json and, for /openapi/v2, the gnostic protobuf types are served' };
}

/**
 * Which form an Accept header asks for: its media ranges by descending q (ties keep header
 * order, then the more specific range first, like goautoneg), the first one that matches a served
 * type wins, JSON before protobuf for wildcards. No header means JSON; undefined means 406.
 */
function negotiate(accept: string | undefined, protobufServed: boolean): 'json' | 'protobuf' | undefined {
  if (accept === undefined || accept.trim() === '') return 'json';
  const served: [string, 'json' | 'protobuf'][] = [['application/json', 'json']];
  if (protobufServed) {
    served.push([OPENAPI_V2_PROTOBUF_MEDIA_TYPE_DEPRECATED, 'protobuf'], [OPENAPI_V2_PROTOBUF_MEDIA_TYPE, 'protobuf']);
  }
  const clauses = accept
    .split(',')
    .map((raw, index) => {
      const [type, ...params] = raw.split(';').map((x) => x.trim());
      let q = 1;
      for (const p of params) {
        const [k, v] = p.split('=').map((x) => x.trim());
        if (k.toLowerCase() === 'q') q = Number.isFinite(Number(v)) ? Number(v) : 0;
      }
      const t = type.toLowerCase();
      const specificity = t === '*/*' ? 0 : t.endsWith('/*') ? 1 : 2;
      return { type: t, q, index, specificity };
    })
    .filter((c) => c.type !== '' && c.q > 0)
    .sort((a, b) => b.q - a.q || b.specificity - a.specificity || a.index - b.index);
  for (const c of clauses) {
    const [ct, cs] = c.type.split('/');
    for (const [mediaType, form] of served) {
      const [t, s] = mediaType.split('/');
      if ((ct === t || ct === '*') && (cs === s || cs === '*')) return form;
    }
  }
  return undefined;
}

/** The protobuf form of a document: its content type and bytes (built only when sent). */
interface AltForm {
  contentType: string;
  body: () => Buffer;
}

function serve(doc: PublishedDocument, req: OpenAPIRequest, immutable: boolean, alt?: AltForm): OpenAPIResponse {
  const etag = `"${doc.hash}"`;
  const headers: Record<string, string> = { 'Content-Type': alt?.contentType ?? 'application/json', ETag: etag, Vary: 'Accept' };
  if (immutable) {
    headers['Cache-Control'] = 'public, immutable';
    const now = req.now ?? new Date();
    headers.Expires = new Date(
      Date.UTC(now.getUTCFullYear() + 1, now.getUTCMonth(), now.getUTCDate(), now.getUTCHours(), now.getUTCMinutes(), now.getUTCSeconds()),
    ).toUTCString();
  }
  if (req.ifNoneMatch !== undefined && req.ifNoneMatch.split(',').some((t) => t.trim() === etag || t.trim() === '*')) {
    return { status: 304, headers, body: '' };
  }
  return { status: 200, headers, body: alt ? alt.body() : doc.body };
}
