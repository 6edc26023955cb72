/**
 * The audit events of one request, built as kube-apiserver's audit filter builds them: the
 * request's metadata at every level; its annotations (the authorization decision, admission
 * webhooks' mutations) at Metadata and above; the request body at Request and above; the
 * response body at RequestResponse. Bodies are kept as received and sent and decoded only when
 * an event is written, so a request costs nothing more than its level asks for.
 */
import type { UserInfo } from '@app/auth';
import { levelAtLeast, type AuditEvent, type AuditLevel, type AuditRequestConfig, type AuditSink, type AuditStage, type AuditUser } from './audit.port.js';
import type { RequestState } from './request-state.js';

/** Decodes a body (request or response) by its media type into its JSON form; undefined when it is not an object document. */
export type AuditBodyDecoder = (contentType: string | undefined, body: Buffer | string) => unknown;

/** The user-agent is cut here, as kube-apiserver cuts it. */
const MAX_USER_AGENT = 1024;

/** An RFC 3339 time with microseconds (metav1.MicroTime). */
export function microTime(d: Date): string {
  return d.toISOString().replace('Z', '000Z');
}

function auditUser(u: UserInfo | undefined): AuditUser {
  if (!u) return {};
  const out: AuditUser = { username: u.username };
  if (u.uid) out.uid = u.uid;
  if (u.groups.length > 0) out.groups = [...u.groups];
  if (u.extra && Object.keys(u.extra).length > 0) out.extra = u.extra;
  return out;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A copy of an object (or of each item of a list or table) without metadata.managedFields. */
function withoutManagedFields(v: unknown): unknown {
  if (!isObj(v)) return v;
  const strip = (o: unknown): unknown => {
    if (!isObj(o) || !isObj(o.metadata) || !('managedFields' in o.metadata)) return o;
    const { managedFields: _drop, ...metadata } = o.metadata;
    return { ...o, metadata };
  };
  let out = strip(v) as Obj;
  if (Array.isArray(out.items)) out = { ...out, items: out.items.map(strip) };
  if (Array.isArray(out.rows)) out = { ...out, rows: out.rows.map((r: unknown) => (isObj(r) && isObj(r.object) ? { ...r, object: strip(r.object) } : r)) };
  return out;
}

export interface AuditRecordInput {
  sink: AuditSink;
  config: AuditRequestConfig;
  state: RequestState;
  requestURI: string;
  sourceIPs: string[];
  userAgent: string | undefined;
  received: Date;
  decode: AuditBodyDecoder;
}

/** The audit state of one request being recorded. */
export class AuditRecord {
  readonly level: AuditLevel;
  private readonly annotations: Record<string, string> = {};
  private requestBody?: { contentType: string | undefined; body: Buffer; patch: boolean };
  private responseBody?: { contentType: string | undefined; body: Buffer | string };
  private status?: { status?: string; reason?: string; code: number };
  private readonly done = new Set<AuditStage>();

  constructor(private readonly input: AuditRecordInput) {
    this.level = input.config.level;
  }

  /** Adds an annotation kept at `min` and above (kube keeps the first value of a key). */
  annotate(key: string, value: string, min: AuditLevel = 'Metadata'): void {
    if (!levelAtLeast(this.level, min)) return;
    if (!(key in this.annotations)) this.annotations[key] = value;
  }

  /** The request's body, recorded as requestObject at Request and above (a patch as the patch document). */
  requestBodyIs(contentType: string | undefined, body: Buffer, patch: boolean): void {
    if (body.length > 0) this.requestBody = { contentType, body, patch };
  }

  /** The answer's body (kept at RequestResponse), and a Status answer's status and reason (every level). */
  responseBodyIs(contentType: string | undefined, body: Buffer | string): void {
    if (levelAtLeast(this.level, 'RequestResponse')) this.responseBody = { contentType, body };
    if (this.status || !String(contentType ?? '').startsWith('application/json')) return;
    const head = typeof body === 'string' ? body.slice(0, 40) : body.subarray(0, 40).toString('latin1');
    if (!head.includes('"kind":"Status"')) return;
    const s = this.input.decode(contentType, body);
    if (isObj(s) && typeof s.code === 'number') this.statusIs({ status: s.status as string | undefined, reason: s.reason as string | undefined, code: s.code });
  }

  /** The Status an error answer carries. */
  statusIs(s: { status?: string; reason?: string; code: number }): void {
    this.status = { ...(s.status ? { status: s.status } : {}), ...(s.reason ? { reason: s.reason } : {}), code: s.code };
  }

  /** Whether the policy keeps events of `stage`. */
  keeps(stage: AuditStage): boolean {
    return !this.input.config.omitStages.has(stage);
  }

  /**
   * A request that ended in an unexpected exception (kube's panic): one Panic event with a 500
   * InternalError status takes the place of ResponseComplete.
   */
  panic(): void {
    this.statusIs({ status: 'Failure', reason: 'InternalError', code: 500 });
    this.emit('Panic', 500);
    this.done.add('ResponseComplete');
  }

  /**
   * Builds and records the event of `stage` (once per stage; not when the policy omits it). A
   * promise when the sink wants the request to wait for it (AuditSink.record).
   */
  emit(stage: AuditStage, code?: number): Promise<void> | void {
    if (this.done.has(stage) || !this.keeps(stage)) return;
    this.done.add(stage);
    return this.input.sink.record(this.event(stage, code));
  }

  /** The event of `stage`; the response status when `code` is given. */
  event(stage: AuditStage, code?: number): AuditEvent {
    const { state: s, config } = this.input;
    const info = s.info;
    const ua = this.input.userAgent;
    const ev: AuditEvent = {
      kind: 'Event',
      apiVersion: 'audit.k8s.io/v1',
      level: this.level,
      auditID: s.auditId!,
      stage,
      requestURI: this.input.requestURI,
      verb: info.verb,
      user: auditUser(s.authenticatedUser),
      sourceIPs: this.input.sourceIPs,
      ...(ua ? { userAgent: ua.length > MAX_USER_AGENT ? `${ua.slice(0, MAX_USER_AGENT)}...TRUNCATED` : ua } : {}),
      requestReceivedTimestamp: microTime(this.input.received),
      stageTimestamp: microTime(new Date()),
    };
    if (s.user && s.authenticatedUser && s.user !== s.authenticatedUser) ev.impersonatedUser = auditUser(s.user);
    let requestObject: unknown;
    if (this.requestBody && (levelAtLeast(this.level, 'Request') || info.isResourceRequest)) {
      try {
        requestObject = this.input.decode(this.requestBody.contentType, this.requestBody.body);
      } catch {
        requestObject = undefined;
      }
    }
    if (info.isResourceRequest) {
      const ref: NonNullable<AuditEvent['objectRef']> = {};
      if (info.resource) ref.resource = info.resource;
      if (info.namespace) ref.namespace = info.namespace;
      if (info.name) ref.name = info.name;
      if (info.apiGroup) ref.apiGroup = info.apiGroup;
      if (info.apiVersion) ref.apiVersion = info.apiVersion;
      if (info.subresource) ref.subresource = info.subresource;
      // kube completes the reference from the object the request carries (not from a patch).
      const meta = !this.requestBody?.patch && isObj(requestObject) && isObj(requestObject.metadata) ? requestObject.metadata : undefined;
      if (meta) {
        if (!ref.namespace && typeof meta.namespace === 'string' && meta.namespace) ref.namespace = meta.namespace;
        if (!ref.name && typeof meta.name === 'string' && meta.name) ref.name = meta.name;
        if (typeof meta.uid === 'string' && meta.uid) ref.uid = meta.uid;
        if (typeof meta.resourceVersion === 'string' && meta.resourceVersion) ref.resourceVersion = meta.resourceVersion;
      }
      ev.objectRef = ref;
    }
    if (code !== undefined) ev.responseStatus = { metadata: {}, ...(this.status ? { ...this.status, code } : { code }) };
    if (levelAtLeast(this.level, 'Request') && requestObject !== undefined)
      ev.requestObject = config.omitManagedFields && !this.requestBody!.patch ? withoutManagedFields(requestObject) : requestObject;
    if (levelAtLeast(this.level, 'RequestResponse') && this.responseBody && stage !== 'RequestReceived') {
      let responseObject: unknown;
      try {
        responseObject = this.input.decode(this.responseBody.contentType, this.responseBody.body);
      } catch {
        responseObject = undefined;
      }
      if (responseObject !== undefined) ev.responseObject = config.omitManagedFields ? withoutManagedFields(responseObject) : responseObject;
    }
    if (Object.keys(this.annotations).length > 0) ev.annotations = { ...this.annotations };
    return ev;
  }
}
