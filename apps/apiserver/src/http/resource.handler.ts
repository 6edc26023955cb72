/**
 * The one handler for every resource request of every kind: it turns a parsed request into a
 * call on the kind's GenericStore and encodes the answer. Kinds are data: which subresources
 * exist, and whether a kind is stored or REST-only, come from its declaration. Query options
 * are parsed and validated once (options.dto.ts) into the typed options the store takes.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  applyJsonPatch,
  applyMergePatch,
  applyStrategicMergePatch,
  Errors,
  fieldManagerFor,
  isJsonObject,
  StatusError,
  type JSONSchemaProps,
  type KubeObject,
} from '@app/apimachinery';
import {
  GenericStore,
  subresourceOf,
  type KindDeclaration,
  type KindRegistry,
  type RequestContext,
  type SubresourceDeclaration,
  type SubresourceRestHandler,
  verbsOf,
  type Verb,
} from '@app/registry';
import { decodeBody, encodeObject, encodeList, type WireCodecs } from './codec.js';
import { negotiateOutput } from './negotiation.js';
import { deprecationWarning } from './deprecation.js';
import { serveWatch } from './watch.handler.js';
import { DeleteOptionsQueryDto, GetOptionsDto, ListOptionsDto, validateOptions, WriteOptionsDto, type Query, type WriteOptionsKind } from './options.dto.js';
import { checkPathVerb, methodNotAllowed, pathShape } from './path-verbs.js';
import { namespaceIsTheObject, type RequestInfo } from './request-info.js';
import { proxyRequest } from './reverse-proxy.js';
import { tunnel, upgradeOf } from './upgrade-proxy.js';
import { stateOf } from '../pipeline/request-state.js';
import type { UserInfo } from '@app/auth';
import type { Authorizer } from '@app/authz';
import { warningHeaderValues } from './warning.headers.js';

export type { Query } from './options.dto.js';

/** What the handler needs from the rest of the server. */
export interface ResourceHandlerDeps {
  registry: KindRegistry;
  storeFor(decl: KindDeclaration): GenericStore;
  codecs: WireCodecs;
  /** Upper bound of a watch when the client sets no timeoutSeconds (seconds). */
  maxWatchSeconds: number;
  /** Interval of BOOKMARK events when allowWatchBookmarks=true (ms). */
  bookmarkIntervalMs: number;
  /** Told of every request to a deprecated kind-version (apiserver_requested_deprecated_apis). */
  onDeprecated?(decl: KindDeclaration, subresource: string): void;
  /**
   * The request pipeline's authorizer, asked once more for a delete that sets
   * ignoreStoreReadErrorWithClusterBreakingPotential (verb `unsafe-delete-ignore-read-errors`).
   * Without it such deletes are refused.
   */
  authorizer?: Authorizer;
}

/** The verb an unsafe deletion of an undecodable object needs besides `delete`. */
export const UNSAFE_DELETE_VERB = 'unsafe-delete-ignore-read-errors';

/** `pretty` as kube reads it: strconv.ParseBool's true values; anything else is false, never an error. */
function isTrue(v: string | undefined): boolean {
  return v !== undefined && ['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v);
}

/** Every value of each query parameter (a repeated one, such as exec's `command`, in order). */
function allValues(raw: Record<string, unknown>): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(raw)) out[k] = (Array.isArray(v) ? v : [v]).map(String);
  return out;
}

const NOT_FOUND = (): StatusError => new StatusError(404, 'NotFound', 'the server could not find the requested resource', {});

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
  /** The stream subresource requests being answered (followed logs), until each ends. */
  private readonly streams = new Set<AbortController>();

  constructor(private readonly deps: ResourceHandlerDeps) {}

  /** Ends every stream being answered: the server is stopping, and a followed log would hold its close up. */
  endStreams(): void {
    for (const abort of this.streams) abort.abort();
    this.streams.clear();
  }

  private send(reply: FastifyReply, code: number, contentType: string, body: string | Buffer | NodeJS.ReadableStream, ctx: RequestContext): void {
    if (ctx.warnings.length) reply.header('Warning', warningHeaderValues(ctx.warnings));
    reply.code(code).header('Content-Type', contentType).send(body);
  }

  /** Serves one resource request; throws StatusError for the error encoder. */
  async handle(req: FastifyRequest, reply: FastifyReply, info: RequestInfo, query: Query, user: UserInfo, rawQuery: Record<string, unknown>): Promise<void> {
    const decl = this.deps.registry.lookup(info.apiGroup, info.apiVersion, info.resource);
    if (!decl) throw NOT_FOUND();
    const sub = info.subresource;
    const subDecl = subresourceOf(decl, sub);
    if (sub && !subDecl) throw NOT_FOUND();
    const verb = info.verb as Verb;
    // The route table first (path-verbs.ts): a path that names nothing is 404, a method the
    // path has no route for 405, before any option or body is looked at.
    const shape = pathShape({
      namespaced: decl.namespaced,
      namespace: info.namespace,
      name: info.name,
      subresource: sub,
      namespaceIsObject: namespaceIsTheObject(info),
    });
    if (!shape) throw NOT_FOUND();
    // A proxy passes on every method (kube's connect methods include OPTIONS, which has no verb).
    if (!(info.verb === '' && shape === 'subresource' && subDecl?.connect?.proxy)) checkPathVerb(shape, verb, subDecl ? subDecl.verbs : verbsOf(decl));
    const ns = decl.namespaced ? info.namespace : '';
    const store = this.deps.storeFor(decl);
    const pretty = isTrue(query.pretty);
    const dryRunAll = Array.isArray(rawQuery.dryRun) ? (rawQuery.dryRun as string[]) : undefined;
    const audit = stateOf(req)?.audit;
    const ctx: RequestContext = { user, namespace: ns, dryRun: false, warnings: [], now: () => new Date(), ...(audit ? { audit } : {}) };
    const deprecated = deprecationWarning(decl);
    if (deprecated) {
      // Every answer carries it, errors and watches included (their headers are written from
      // the raw response); successful answers list it first among their warnings.
      ctx.warnings.push(deprecated);
      reply.raw.setHeader('Warning', `299 - ${JSON.stringify(deprecated)}`);
      if (audit) {
        audit.annotate('k8s.io/deprecated', 'true');
        if (decl.deprecation?.removedIn) audit.annotate('k8s.io/removed-release', decl.deprecation.removedIn);
      }
      this.deps.onDeprecated?.(decl, sub);
    }
    const protobufOk = this.deps.codecs.hasProtobuf(decl.protobufMessage);
    const fieldManager = fieldManagerFor(query.fieldManager, req.headers['user-agent']);
    const accept = req.headers.accept;
    const includeObject = query.includeObject;
    const writeOptions = (kind: WriteOptionsKind, apply = false) => {
      const p = validateOptions(WriteOptionsDto, query).toParams(dryRunAll, kind, apply);
      ctx.dryRun = p.dryRun;
      return p;
    };
    if (decl.computed && !sub && (verb === 'get' || verb === 'list'))
      return this.serveComputed(req, reply, decl, verb, ns, info.name, ctx, pretty, includeObject);
    if (subDecl?.stream) {
      if (verb !== 'get') throw methodNotAllowed();
      // Aborted when the client goes (a followed log's upstream request ends with it), or when
      // the server stops.
      const abort = new AbortController();
      this.streams.add(abort);
      reply.raw.once('close', () => {
        this.streams.delete(abort);
        abort.abort();
      });
      const answer = await subDecl.stream.get(ns, info.name, query, ctx, abort.signal);
      const done = new Promise<void>((resolve) => reply.raw.once('close', resolve));
      this.send(reply, 200, answer.contentType, answer.body, ctx);
      // The request is served once the stream has ended (a followed log: when either side goes);
      // returning earlier would tell Fastify that nothing was sent.
      return done;
    }
    if (subDecl?.connect) {
      // kube's connect handler: the options and the location first (a missing pod is 404 to
      // any request), then a request that does not ask to switch protocols is refused, but by
      // a proxy, which passes it on.
      const proxyPath = subDecl.connect.proxy ? (info.proxyPath ?? '') : undefined;
      const target = await subDecl.connect.connect(ns, info.name, allValues(rawQuery), ctx, proxyPath);
      // A proxy passes the request's query on as it is.
      const q = req.url.indexOf('?');
      if (proxyPath !== undefined && q >= 0) target.url.search = req.url.slice(q);
      const conn = upgradeOf(req.raw);
      if (conn) return tunnel(req, reply, conn, target);
      if (proxyPath === undefined) throw Errors.badRequest('Upgrade request required');
      const path = req.url.split('?')[0]!;
      return proxyRequest(req, reply, target, path.slice(0, path.length - proxyPath.length));
    }
    if (subDecl?.rest) {
      const protobufBody = this.deps.codecs.hasProtobuf(subDecl.kind.protobufMessage);
      return this.serveRestSubresource(req, reply, decl, sub, subDecl, verb, ns, info.name, ctx, writeOptions, pretty, protobufBody);
    }

    switch (verb) {
      case 'get': {
        const getOptions = validateOptions(GetOptionsDto, query).toOptions();
        const fmt = negotiateOutput(accept, protobufOk);
        const obj = await store.get(ns, info.name, getOptions);
        const enc = encodeObject(this.deps.codecs, decl, obj, fmt, pretty, includeObject);
        return this.send(reply, 200, enc.contentType, enc.body, ctx);
      }
      case 'list': {
        const listOptions = validateOptions(ListOptionsDto, query).toListOptions();
        const fmt = negotiateOutput(accept, protobufOk);
        const res = await store.list(ns, listOptions);
        const meta: Record<string, unknown> = { resourceVersion: res.resourceVersion };
        if (res.continue) meta.continue = res.continue;
        if (res.remainingItemCount !== undefined) meta.remainingItemCount = res.remainingItemCount;
        const enc = encodeList(this.deps.codecs, decl, res.items, meta, fmt, pretty, includeObject);
        return this.send(reply, 200, enc.contentType, enc.body, ctx);
      }
      case 'watch':
        return serveWatch(
          { maxWatchSeconds: this.deps.maxWatchSeconds, bookmarkIntervalMs: this.deps.bookmarkIntervalMs },
          req,
          reply,
          decl,
          store,
          ns,
          info.name || undefined,
          validateOptions(ListOptionsDto, query).toWatchOptions(),
          includeObject,
          protobufOk,
        );
      case 'create': {
        const params = writeOptions('CreateOptions');
        const fmt = negotiateOutput(accept, protobufOk, { allowTable: false });
        const body = decodeBody(this.deps.codecs, req.headers['content-type'], req.body as Buffer | undefined, protobufOk);
        const obj = await store.create(ns, body.value as KubeObject, {
          ctx,
          fieldValidation: params.fieldValidation,
          duplicateFields: body.duplicates,
          fieldManager,
        });
        const enc = encodeObject(this.deps.codecs, decl, obj, fmt, pretty);
        return this.send(reply, 201, enc.contentType, enc.body, ctx);
      }
      case 'update': {
        const params = writeOptions('UpdateOptions');
        const fmt = negotiateOutput(accept, protobufOk, { allowTable: false });
        const body = decodeBody(this.deps.codecs, req.headers['content-type'], req.body as Buffer | undefined, protobufOk);
        const res = await store.update(ns, info.name, body.value as KubeObject, {
          ctx,
          fieldValidation: params.fieldValidation,
          duplicateFields: body.duplicates,
          subresource: sub,
          fieldManager,
        });
        const enc = encodeObject(this.deps.codecs, decl, res.object, fmt, pretty);
        return this.send(reply, res.created ? 201 : 200, enc.contentType, enc.body, ctx);
      }
      case 'patch': {
        const ct = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
        const params = writeOptions('PatchOptions', ct === 'application/apply-patch+yaml');
        const fmt = negotiateOutput(accept, protobufOk, { allowTable: false });
        if (ct === 'application/apply-patch+yaml') {
          let intent: { value: unknown; duplicates: string[] };
          try {
            intent = this.deps.codecs.parseYaml(((req.body as Buffer | undefined) ?? Buffer.alloc(0)).toString('utf8'));
          } catch (e) {
            throw Errors.badRequest(`error decoding YAML: ${(e as Error).message}`);
          }
          const res = await store.apply(ns, info.name, intent.value as KubeObject, {
            ctx,
            fieldValidation: params.fieldValidation,
            duplicateFields: intent.duplicates,
            subresource: sub,
            fieldManagerParam: params.fieldManager,
            force: params.force,
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
          fieldValidation: params.fieldValidation,
          duplicateFields: patch.duplicates,
          subresource: sub,
          fieldManager,
        });
        const enc = encodeObject(this.deps.codecs, decl, obj, fmt, pretty);
        return this.send(reply, 200, enc.contentType, enc.body, ctx);
      }
      case 'delete': {
        const opts = this.deleteOptions(req, query, dryRunAll, ctx);
        const fmt = negotiateOutput(accept, protobufOk, { allowTable: false });
        await this.authorizeUnsafeDelete(opts, info, decl, user);
        const res = await store.delete(ns, info.name, opts, ctx);
        // Kubernetes (apiserver endpoints/handlers/delete.go): 202 Accepted only when the object
        // was not removed at once AND the client asked for cascading deletion with
        // orphanDependents=false; every other success is 200, Terminating included.
        const code = !res.deleted && opts.orphanDependents === false ? 202 : 200;
        // Body per the resources document ("Delete response bodies"): the kinds listed with the
        // deleted object answer with the object (its Terminating state when finalizers remain),
        // every other kind with a Success Status naming it, for 200 and 202 alike.
        // An undecodable object deleted unsafely has no last state: a Success Status naming it.
        if (decl.deleteReturnsObject && res.object) {
          const enc = encodeObject(this.deps.codecs, decl, res.object, fmt, pretty);
          return this.send(reply, code, enc.contentType, enc.body, ctx);
        }
        return this.send(reply, code, 'application/json', JSON.stringify(successStatus(decl, res.object ?? { metadata: { name: info.name } })), ctx);
      }
      case 'deletecollection': {
        const opts = this.deleteOptions(req, query, dryRunAll, ctx);
        // Kubernetes refuses the unsafe option on a collection before anything is read or
        // authorized: an undecodable object is removed by name only.
        if (opts.ignoreStoreReadErrorWithClusterBreakingPotential) {
          throw Errors.invalid('meta.k8s.io', 'DeleteOptions', '', [
            {
              type: 'FieldValueInvalid',
              field: 'ignoreStoreReadErrorWithClusterBreakingPotential',
              value: true,
              detail: 'is not allowed with DELETECOLLECTION, try again after removing the option',
            },
          ]);
        }
        await store.deleteCollection(ns, { labelSelector: query.labelSelector, fieldSelector: query.fieldSelector }, opts, ctx);
        return this.send(reply, 200, 'application/json', JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success' }), ctx);
      }
      default:
        throw methodNotAllowed();
    }
  }

  /**
   * A delete that sets ignoreStoreReadErrorWithClusterBreakingPotential needs the verb
   * `unsafe-delete-ignore-read-errors` on the resource as well (Kubernetes' authorizeUnsafeDelete,
   * before the object is read): 403 with the authorizer's reason otherwise, and always on a
   * subresource.
   */
  private async authorizeUnsafeDelete(
    opts: { ignoreStoreReadErrorWithClusterBreakingPotential?: boolean },
    info: RequestInfo,
    decl: KindDeclaration,
    user: UserInfo,
  ): Promise<void> {
    if (!opts.ignoreStoreReadErrorWithClusterBreakingPotential) return;
    const gr = { group: decl.group, resource: decl.plural };
    if (info.subresource) {
      throw Errors.forbidden(
        gr,
        info.name,
        'ignoreStoreReadErrorWithClusterBreakingPotential delete option is not allowed on a subresource or non-resource request',
      );
    }
    const d = this.deps.authorizer
      ? await this.deps.authorizer.authorize({
          user,
          verb: UNSAFE_DELETE_VERB,
          isResourceRequest: true,
          path: '',
          apiGroup: decl.group,
          apiVersion: decl.version,
          resource: decl.plural,
          subresource: '',
          namespace: info.namespace,
          name: info.name,
        })
      : { decision: 'NoOpinion' as const, reason: 'no authorizer is configured' };
    if (d.decision !== 'Allow') throw Errors.forbidden(gr, info.name, `not permitted to do "${UNSAFE_DELETE_VERB}", reason: ${d.reason ?? ''}`);
  }

  /**
   * DeleteOptions from the body (JSON, YAML or protobuf) and the query parameters, validated
   * once (options.dto.ts); the request's dry run follows them.
   */
  private deleteOptions(req: FastifyRequest, q: Query, dryRunAll: string[] | undefined, ctx: RequestContext) {
    const dto = validateOptions(DeleteOptionsQueryDto, q);
    const body = req.body as Buffer | undefined;
    const value = body && body.length > 0 ? decodeBody(this.deps.codecs, req.headers['content-type'], body, true).value : undefined;
    const opts = dto.toDeleteOptions(value, dryRunAll);
    ctx.dryRun = (opts.dryRun?.length ?? 0) > 0;
    return opts;
  }

  /**
   * get and list of a kind whose objects are computed (componentstatuses): the
   * handler's answer, in any output format (Table included).
   */
  private async serveComputed(
    req: FastifyRequest,
    reply: FastifyReply,
    decl: KindDeclaration,
    verb: 'get' | 'list',
    ns: string,
    name: string,
    ctx: RequestContext,
    pretty: boolean,
    includeObject: Query['includeObject'],
  ): Promise<void> {
    const computed = decl.computed!;
    const fmt = negotiateOutput(req.headers.accept, this.deps.codecs.hasProtobuf(decl.protobufMessage));
    if (verb === 'get') {
      const enc = encodeObject(this.deps.codecs, decl, await computed.get(ns, name, ctx), fmt, pretty, includeObject);
      return this.send(reply, 200, enc.contentType, enc.body, ctx);
    }
    const enc = encodeList(this.deps.codecs, decl, await computed.list(ns, ctx), {}, fmt, pretty, includeObject);
    return this.send(reply, 200, enc.contentType, enc.body, ctx);
  }

  /**
   * A subresource that is not a view of the stored object (TokenRequest, Scale): its REST
   * handler answers in JSON; the body may be protobuf when the subresource's kind names a message.
   * A PATCH (JSON, merge or strategic merge) is applied to the handler's current object and
   * written back through its update, as Kubernetes' patcher does for such subresources.
   */
  private async serveRestSubresource(
    req: FastifyRequest,
    reply: FastifyReply,
    decl: KindDeclaration,
    subresource: string,
    subDecl: Extract<SubresourceDeclaration, { rest: SubresourceRestHandler }>,
    verb: Verb,
    ns: string,
    name: string,
    ctx: RequestContext,
    writeOptions: (kind: WriteOptionsKind) => unknown,
    pretty: boolean,
    protobufBody: boolean,
  ): Promise<void> {
    const rest = subDecl.rest;
    const fmt = negotiateOutput(req.headers.accept, false, { allowTable: false });
    const body = (): KubeObject => decodeBody(this.deps.codecs, req.headers['content-type'], req.body as Buffer | undefined, protobufBody).value as KubeObject;
    let out: KubeObject | undefined;
    let code = 200;
    // A write is admitted as the subresource, with the subresource's own kind (kube's handlers
    // run admission on the Eviction or the Scale); the handler's own writes then skip it. Made
    // after the write options are read, so it carries their dry run.
    const admitted = (): RequestContext => ({ ...ctx, admitted: true });
    const admit = async (operation: 'CREATE' | 'UPDATE', object: KubeObject, oldObject?: KubeObject): Promise<KubeObject> => {
      const { group, version, kind } = subDecl.kind;
      const attrs = { operation, decl, namespace: ns, name, subresource, object, oldObject, ctx, kind: { group, version, kind } };
      const admission = this.deps.storeFor(decl).admission;
      await admission.admit(attrs);
      await admission.validate(attrs);
      return attrs.object;
    };
    if (verb === 'get' && rest.get) out = await rest.get(ns, name, ctx);
    else if (verb === 'create' && rest.create) {
      writeOptions('CreateOptions');
      out = await rest.create(ns, name, await admit('CREATE', body()), admitted());
      code = 201;
    } else if (verb === 'update' && rest.update) {
      writeOptions('UpdateOptions');
      const obj = body();
      const old = rest.get ? await rest.get(ns, name, ctx) : undefined;
      out = await rest.update(ns, name, await admit('UPDATE', obj, old), admitted());
    } else if (verb === 'patch' && rest.get && rest.update) {
      writeOptions('PatchOptions');
      const old = await rest.get(ns, name, ctx);
      const patched = this.patchRestObject(req, structuredClone(old), subDecl.kind.schema);
      out = await rest.update(ns, name, await admit('UPDATE', patched, old), admitted());
    }
    if (!out) throw methodNotAllowed();
    const enc = encodeObject(this.deps.codecs, decl, out, fmt, pretty);
    return this.send(reply, code, enc.contentType, enc.body, ctx);
  }

  /** `current` with the request's JSON, merge or strategic merge patch applied (415 for other types). */
  private patchRestObject(req: FastifyRequest, current: KubeObject, schema: JSONSchemaProps | undefined): KubeObject {
    const ct = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    const types = ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json'];
    if (!types.includes(ct)) throw Errors.unsupportedMediaType(ct, types);
    let patch: unknown;
    try {
      patch = this.deps.codecs.parseJson(((req.body as Buffer | undefined) ?? Buffer.alloc(0)).toString('utf8')).value;
    } catch (e) {
      throw Errors.badRequest(`error decoding patch: ${(e as Error).message}`);
    }
    let patched: unknown;
    if (ct === 'application/json-patch+json') patched = applyJsonPatch(current, patch);
    else if (ct === 'application/merge-patch+json') patched = applyMergePatch(current, patch);
    else {
      if (!isJsonObject(patch)) throw Errors.badRequest('invalid JSON document');
      patched = applyStrategicMergePatch(current as Record<string, unknown>, patch, schema);
    }
    if (!isJsonObject(patched)) throw Errors.badRequest('the patch result must be an object');
    return patched as KubeObject;
  }
}
