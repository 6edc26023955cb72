/**
 * The one handler for every resource request of every kind: it turns a parsed request into a
 * call on the kind's GenericStore and encodes the answer. Kinds are data; nothing here knows a
 * kind by name except the namespace `finalize` subresource, which Kubernetes routes the same way.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Errors, fieldManagerFor, StatusError, type FieldError } from '@app/apimachinery';
import type { KubeObject } from '@app/storage';
import {
  GenericStore,
  type DeleteOptions,
  type FieldValidation,
  type KindDeclaration,
  type KindRegistry,
  type ListQuery,
  type RequestContext,
  type UserInfo,
  verbsOf,
  type Verb,
} from '@app/registry';
import { decodeBody, encodeList, encodeObject, type WireCodecs } from './codec.js';
import { negotiateOutput } from './negotiation.js';
import { serveWatch } from './watch.handler.js';
import { DeleteOptionsQueryDto, GetOptionsDto, ListOptionsDto, validateOptions, WriteOptionsDto } from './options.dto.js';
import type { RequestInfo } from './request-info.js';

/** What the handler needs from the rest of the server. */
export interface ResourceHandlerDeps {
  registry: KindRegistry;
  storeFor(decl: KindDeclaration): GenericStore;
  codecs: WireCodecs;
  /** Upper bound of a watch when the client sets no timeoutSeconds (seconds). */
  maxWatchSeconds: number;
  /** Interval of BOOKMARK events when allowWatchBookmarks=true (ms). */
  bookmarkIntervalMs: number;
}

/** First value of each query parameter. */
export type Query = Record<string, string | undefined>;

const FIELD_VALIDATIONS = new Set(['Strict', 'Warn', 'Ignore']);

function parseDryRun(q: Query, all: string[] | undefined): boolean {
  const values = all ?? (q.dryRun !== undefined ? [q.dryRun] : []);
  for (const v of values) {
    if (v !== 'All') throw Errors.badRequest(`dryRun: Unsupported value: ${JSON.stringify(v)}: supported values: "All"`);
  }
  return values.length > 0;
}

function parseFieldValidation(q: Query): FieldValidation {
  const v = q.fieldValidation;
  if (v === undefined || v === '') return 'Warn';
  if (!FIELD_VALIDATIONS.has(v)) {
    throw Errors.badRequest(`fieldValidation: Unsupported value: ${JSON.stringify(v)}: supported values: "Ignore", "Strict", "Warn"`);
  }
  return v as FieldValidation;
}

function parseIntParam(q: Query, name: string): number | undefined {
  const v = q[name];
  if (v === undefined || v === '') return undefined;
  if (!/^-?\d+$/.test(v)) throw Errors.badRequest(`${name}: Invalid value: ${JSON.stringify(v)}: must be an integer`);
  return Number(v);
}

function isTrue(v: string | undefined): boolean {
  return v === 'true' || v === '1';
}

function listQuery(q: Query): ListQuery {
  const limit = parseIntParam(q, 'limit');
  if (limit !== undefined && limit < 0) throw Errors.badRequest('limit: Invalid value: must be non-negative');
  return {
    labelSelector: q.labelSelector,
    fieldSelector: q.fieldSelector,
    resourceVersion: q.resourceVersion,
    resourceVersionMatch: q.resourceVersionMatch,
    limit,
    continue: q.continue,
  };
}

function successStatus(decl: KindDeclaration, obj: KubeObject): Record<string, unknown> {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Success',
    details: { name: obj.metadata.name, group: decl.group || undefined, kind: decl.plural, uid: obj.metadata.uid },
  };
}

/** Handles resource requests. */
export class ResourceHandler {
  constructor(private readonly deps: ResourceHandlerDeps) {}

  private send(reply: FastifyReply, code: number, contentType: string, body: string | Buffer, ctx: RequestContext): void {
    if (ctx.warnings.length) reply.header('Warning', ctx.warnings.map((w) => `299 - ${JSON.stringify(w)}`));
    reply.code(code).header('Content-Type', contentType).send(body);
  }

  /** Serves one resource request; throws StatusError for the error encoder. */
  async handle(req: FastifyRequest, reply: FastifyReply, info: RequestInfo, query: Query, user: UserInfo, rawQuery: Record<string, unknown>): Promise<void> {
    const decl = this.deps.registry.lookup(info.apiGroup, info.apiVersion, info.resource);
    if (!decl) throw new StatusError(404, 'NotFound', 'the server could not find the requested resource', {});
    const sub = info.subresource;
    if (sub && !(sub === 'status' && decl.subresources?.status) && !(sub === 'finalize' && decl.kind === 'Namespace' && decl.group === '')) {
      throw new StatusError(404, 'NotFound', 'the server could not find the requested resource', {});
    }
    const verb = info.verb as Verb;
    if (!verbsOf(decl).includes(verb)) {
      throw Errors.methodNotAllowed(verb, { group: decl.group, resource: decl.plural });
    }
    if (decl.namespaced) {
      // A namespaced kind needs a namespace for everything but list/watch across all namespaces.
      if (!info.namespace && !(verb === 'list' || verb === 'watch') ) {
        throw new StatusError(404, 'NotFound', 'the server could not find the requested resource', {});
      }
    } else if (info.namespace && !(decl.kind === 'Namespace' && decl.group === '')) {
      throw new StatusError(404, 'NotFound', 'the server could not find the requested resource', {});
    }
    const ns = decl.namespaced ? info.namespace : '';
    // Typed options, validated once (class-validator): 400 on a bad parameter. Most requests
    // carry no parameters at all; they skip the validator.
    if (Object.keys(query).length === 0) {
      // nothing to validate
    } else if (verb === 'get') validateOptions(GetOptionsDto, query);
    else if (verb === 'list' || verb === 'watch') validateOptions(ListOptionsDto, query);
    else if (verb === 'delete' || verb === 'deletecollection') validateOptions(DeleteOptionsQueryDto, query);
    else validateOptions(WriteOptionsDto, query);
    const store = this.deps.storeFor(decl);
    const pretty = isTrue(query.pretty);
    const dryRunAll = rawQuery.dryRun;
    const ctx: RequestContext = {
      user,
      namespace: ns,
      dryRun: parseDryRun(query, Array.isArray(dryRunAll) ? (dryRunAll as string[]) : undefined),
      warnings: [],
      now: () => new Date(),
    };
    const protobufOk = this.deps.codecs.hasProtobuf(decl.protobufMessage);
    const fieldManager = fieldManagerFor(query.fieldManager, req.headers['user-agent']);
    const accept = req.headers.accept;
    const includeObject = query.includeObject;

    switch (verb) {
      case 'get': {
        const fmt = negotiateOutput(accept, protobufOk);
        const obj = await store.get(ns, info.name, query.resourceVersion);
        const enc = encodeObject(this.deps.codecs, decl, obj, fmt, pretty, includeObject);
        return this.send(reply, 200, enc.contentType, enc.body, ctx);
      }
      case 'list': {
        const fmt = negotiateOutput(accept, protobufOk);
        const res = await store.list(ns, listQuery(query));
        const meta: Record<string, unknown> = { resourceVersion: res.resourceVersion };
        if (res.continue) meta.continue = res.continue;
        if (res.remainingItemCount !== undefined) meta.remainingItemCount = res.remainingItemCount;
        const enc = encodeList(this.deps.codecs, decl, res.items, meta, fmt, pretty, includeObject);
        return this.send(reply, 200, enc.contentType, enc.body, ctx);
      }
      case 'watch':
        return serveWatch({ maxWatchSeconds: this.deps.maxWatchSeconds, bookmarkIntervalMs: this.deps.bookmarkIntervalMs }, req, reply, decl, store, ns, info.name || undefined, query, protobufOk);
      case 'create': {
        const fmt = negotiateOutput(accept, protobufOk, { allowTable: false });
        const body = decodeBody(this.deps.codecs, req.headers['content-type'], req.body as Buffer | undefined, protobufOk);
        const obj = await store.create(ns, body.value as KubeObject, {
          ctx,
          fieldValidation: parseFieldValidation(query),
          duplicateFields: body.duplicates,
          fieldManager,
        });
        const enc = encodeObject(this.deps.codecs, decl, obj, fmt, pretty);
        return this.send(reply, 201, enc.contentType, enc.body, ctx);
      }
      case 'update': {
        const fmt = negotiateOutput(accept, protobufOk, { allowTable: false });
        const body = decodeBody(this.deps.codecs, req.headers['content-type'], req.body as Buffer | undefined, protobufOk);
        const res = await store.update(ns, info.name, body.value as KubeObject, {
          ctx,
          fieldValidation: parseFieldValidation(query),
          duplicateFields: body.duplicates,
          subresource: sub,
          fieldManager,
        });
        const enc = encodeObject(this.deps.codecs, decl, res.object, fmt, pretty);
        return this.send(reply, res.created ? 201 : 200, enc.contentType, enc.body, ctx);
      }
      case 'patch': {
        const fmt = negotiateOutput(accept, protobufOk, { allowTable: false });
        const ct = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
        if (ct === 'application/apply-patch+yaml') {
          let intent: { value: unknown; duplicates: string[] };
          try {
            intent = this.deps.codecs.parseYaml(((req.body as Buffer | undefined) ?? Buffer.alloc(0)).toString('utf8'));
          } catch (e) {
            throw Errors.badRequest(`error decoding YAML: ${(e as Error).message}`);
          }
          const res = await store.apply(ns, info.name, intent.value as KubeObject, {
            ctx,
            fieldValidation: parseFieldValidation(query),
            duplicateFields: intent.duplicates,
            subresource: sub,
            fieldManagerParam: query.fieldManager,
            force: isTrue(query.force),
          });
          const enc = encodeObject(this.deps.codecs, decl, res.object, fmt, pretty);
          return this.send(reply, res.created ? 201 : 200, enc.contentType, enc.body, ctx);
        }
        const types: Record<string, 'merge-patch' | 'json-patch' | 'strategic-merge-patch'> = {
          'application/merge-patch+json': 'merge-patch',
          'application/json-patch+json': 'json-patch',
          'application/strategic-merge-patch+json': 'strategic-merge-patch',
        };
        const patchType = types[ct];
        if (!patchType) {
          throw Errors.unsupportedMediaType(ct, [
            'application/json-patch+json',
            'application/merge-patch+json',
            'application/strategic-merge-patch+json',
            'application/apply-patch+yaml',
          ]);
        }
        const text = ((req.body as Buffer | undefined) ?? Buffer.alloc(0)).toString('utf8');
        let patch: { value: unknown; duplicates: string[] };
        try {
          patch = this.deps.codecs.parseJson(text);
        } catch (e) {
          throw Errors.badRequest(`error decoding patch: ${(e as Error).message}`);
        }
        const obj = await store.patch(ns, info.name, patchType, patch.value, {
          ctx,
          fieldValidation: parseFieldValidation(query),
          duplicateFields: patch.duplicates,
          subresource: sub,
          fieldManager,
        });
        const enc = encodeObject(this.deps.codecs, decl, obj, fmt, pretty);
        return this.send(reply, 200, enc.contentType, enc.body, ctx);
      }
      case 'delete': {
        const fmt = negotiateOutput(accept, protobufOk, { allowTable: false });
        const opts = this.deleteOptions(req, query, protobufOk);
        if (opts.dryRun?.length) ctx.dryRun = parseDryRun({}, opts.dryRun);
        const res = await store.delete(ns, info.name, opts, ctx);
        // Kubernetes (apiserver endpoints/handlers/delete.go): 202 Accepted only when the object
        // was not removed at once AND the client asked for cascading deletion with
        // orphanDependents=false; every other success is 200, Terminating included.
        const code = !res.deleted && opts.orphanDependents === false ? 202 : 200;
        // Body per the resources document ("Delete response bodies"): the kinds listed with the
        // deleted object answer with the object (its Terminating state when finalizers remain),
        // every other kind with a Success Status naming it, for 200 and 202 alike.
        if (decl.deleteReturnsObject) {
          const enc = encodeObject(this.deps.codecs, decl, res.object, fmt, pretty);
          return this.send(reply, code, enc.contentType, enc.body, ctx);
        }
        return this.send(reply, code, 'application/json', JSON.stringify(successStatus(decl, res.object)), ctx);
      }
      case 'deletecollection': {
        const opts = this.deleteOptions(req, query, protobufOk);
        if (opts.dryRun?.length) ctx.dryRun = parseDryRun({}, opts.dryRun);
        await store.deleteCollection(ns, listQuery(query), opts, ctx);
        return this.send(reply, 200, 'application/json', JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success' }), ctx);
      }
      default:
        throw Errors.methodNotAllowed(verb, { group: decl.group, resource: decl.plural });
    }
  }

  /** DeleteOptions from the body (JSON, YAML or protobuf) and the query parameters. */
  private deleteOptions(req: FastifyRequest, q: Query, protobufOk: boolean): DeleteOptions {
    let opts: DeleteOptions = {};
    const body = req.body as Buffer | undefined;
    if (body && body.length > 0) {
      const d = decodeBody(this.deps.codecs, req.headers['content-type'], body, protobufOk || true);
      const v = d.value as Record<string, unknown>;
      if (!v || typeof v !== 'object' || Array.isArray(v)) throw Errors.badRequest('DeleteOptions must be an object');
      if (v.kind !== undefined && v.kind !== 'DeleteOptions') {
        throw Errors.badRequest(`the body of the request was not a DeleteOptions: kind ${String(v.kind)}`);
      }
      opts = validateDeleteOptions(v);
    }
    // Query parameters override the body (Kubernetes decodes both into one DeleteOptions).
    const grace = parseIntParam(q, 'gracePeriodSeconds');
    if (grace !== undefined) opts.gracePeriodSeconds = grace;
    if (q.propagationPolicy) opts.propagationPolicy = q.propagationPolicy as DeleteOptions['propagationPolicy'];
    if (q.orphanDependents !== undefined && q.orphanDependents !== '') opts.orphanDependents = isTrue(q.orphanDependents);
    if (q.dryRun) opts.dryRun = [q.dryRun];
    // metav1 validation.ValidateDeleteOptions, reported as DeleteOptions.meta.k8s.io "" is invalid.
    const errs: FieldError[] = [];
    if (opts.orphanDependents !== undefined && opts.propagationPolicy !== undefined) {
      errs.push({ type: 'FieldValueInvalid', field: 'propagationPolicy', value: opts.propagationPolicy, detail: 'orphanDependents and deletionPropagation cannot be both set' });
    }
    if (opts.propagationPolicy !== undefined && !['Orphan', 'Background', 'Foreground'].includes(opts.propagationPolicy)) {
      errs.push({
        type: 'FieldValueNotSupported',
        field: 'propagationPolicy',
        value: opts.propagationPolicy,
        detail: 'supported values: "Foreground", "Background", "Orphan", "nil"',
      });
    }
    if (errs.length) throw Errors.invalid('meta.k8s.io', 'DeleteOptions', '', errs);
    return opts;
  }
}

/** Checks the shape of a DeleteOptions body (fields and types). */
function validateDeleteOptions(v: Record<string, unknown>): DeleteOptions {
  const out: DeleteOptions = {};
  if (v.gracePeriodSeconds !== undefined && v.gracePeriodSeconds !== null) {
    if (typeof v.gracePeriodSeconds !== 'number' || !Number.isInteger(v.gracePeriodSeconds)) {
      throw Errors.badRequest('DeleteOptions.gracePeriodSeconds must be an integer');
    }
    out.gracePeriodSeconds = v.gracePeriodSeconds;
  }
  if (v.propagationPolicy !== undefined && v.propagationPolicy !== null) {
    if (typeof v.propagationPolicy !== 'string') throw Errors.badRequest('DeleteOptions.propagationPolicy must be a string');
    out.propagationPolicy = v.propagationPolicy as DeleteOptions['propagationPolicy'];
  }
  if (v.orphanDependents !== undefined && v.orphanDependents !== null) {
    if (typeof v.orphanDependents !== 'boolean') throw Errors.badRequest('DeleteOptions.orphanDependents must be a boolean');
    out.orphanDependents = v.orphanDependents;
  }
  if (v.preconditions !== undefined && v.preconditions !== null) {
    const p = v.preconditions as Record<string, unknown>;
    if (typeof p !== 'object' || Array.isArray(p)) throw Errors.badRequest('DeleteOptions.preconditions must be an object');
    out.preconditions = {};
    // metav1.Preconditions holds pointers: a field present (even "") is a condition, null is none.
    for (const f of ['uid', 'resourceVersion'] as const) {
      if (p[f] === undefined || p[f] === null) continue;
      if (typeof p[f] !== 'string') throw Errors.badRequest(`DeleteOptions.preconditions.${f} must be a string`);
      out.preconditions[f] = p[f] as string;
    }
  }
  if (v.dryRun !== undefined && v.dryRun !== null) {
    if (!Array.isArray(v.dryRun)) throw Errors.badRequest('DeleteOptions.dryRun must be a list of strings');
    out.dryRun = v.dryRun.map(String);
  }
  return out;
}
