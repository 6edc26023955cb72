/**
 * etcd's JSON gateway (docs/etcd-api.md "JSON gateway"): `POST /v3/kv/range` and the other
 * unary calls of KV, Lease, Cluster, Maintenance, Auth, Lock and Election with a JSON body, answered in
 * JSON, and the watch, keep-alive and election-observe streams as JSON lines, as an etcd 3.4 member serves them on its client
 * URL for curl and other HTTP clients. Each request is converted to the call's protobuf message
 * and handed to the same handler as a gRPC call; each answer is encoded as for gRPC and
 * converted back.
 *
 * JSON mapping (etcd's gateway): bytes are base64, 64-bit integers strings (numbers are taken
 * too), enums names (numbers taken too); requests may name fields as in the .proto or in
 * lowerCamelCase, unknown fields are ignored; answers use the .proto's names and leave out
 * fields at their zero value. Errors are `{"error", "message", "code"}` with the gRPC code and
 * the HTTP status gRPC's gateway maps it to.
 */
import { EventEmitter } from 'node:events';
import { existsSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import protobuf from 'protobufjs';
import type { PackageDefinition } from '@grpc/proto-loader';
import { status as GrpcStatus } from '@grpc/grpc-js';
import {
  SerializedMessage,
  type CallStatus,
  type DuplexCall,
  type DuplexHandler,
  type Msg,
  type ServiceHandlers,
  type UnaryCall,
  type UnaryHandler,
} from '@app/grpc';

/**
 * The gateway's paths (the `google.api.http` options of etcd's rpc.proto, v3lock.proto and
 * v3election.proto) of the unary calls; services without a package are etcdserverpb's.
 */
const UNARY_ROUTES: Readonly<Record<string, readonly [service: string, method: string]>> = {
  '/v3/kv/range': ['KV', 'Range'],
  '/v3/kv/put': ['KV', 'Put'],
  '/v3/kv/deleterange': ['KV', 'DeleteRange'],
  '/v3/kv/txn': ['KV', 'Txn'],
  '/v3/kv/compaction': ['KV', 'Compact'],
  '/v3/lease/grant': ['Lease', 'LeaseGrant'],
  '/v3/lease/revoke': ['Lease', 'LeaseRevoke'],
  '/v3/kv/lease/revoke': ['Lease', 'LeaseRevoke'],
  '/v3/lease/timetolive': ['Lease', 'LeaseTimeToLive'],
  '/v3/kv/lease/timetolive': ['Lease', 'LeaseTimeToLive'],
  '/v3/lease/leases': ['Lease', 'LeaseLeases'],
  '/v3/kv/lease/leases': ['Lease', 'LeaseLeases'],
  '/v3/cluster/member/add': ['Cluster', 'MemberAdd'],
  '/v3/cluster/member/remove': ['Cluster', 'MemberRemove'],
  '/v3/cluster/member/update': ['Cluster', 'MemberUpdate'],
  '/v3/cluster/member/list': ['Cluster', 'MemberList'],
  '/v3/cluster/member/promote': ['Cluster', 'MemberPromote'],
  '/v3/maintenance/alarm': ['Maintenance', 'Alarm'],
  '/v3/maintenance/status': ['Maintenance', 'Status'],
  '/v3/maintenance/defragment': ['Maintenance', 'Defragment'],
  '/v3/maintenance/hash': ['Maintenance', 'Hash'],
  '/v3/maintenance/hashkv': ['Maintenance', 'HashKV'],
  '/v3/maintenance/transfer-leadership': ['Maintenance', 'MoveLeader'],
  '/v3/auth/enable': ['Auth', 'AuthEnable'],
  '/v3/auth/disable': ['Auth', 'AuthDisable'],
  '/v3/auth/status': ['Auth', 'AuthStatus'],
  '/v3/auth/authenticate': ['Auth', 'Authenticate'],
  '/v3/auth/user/add': ['Auth', 'UserAdd'],
  '/v3/auth/user/get': ['Auth', 'UserGet'],
  '/v3/auth/user/list': ['Auth', 'UserList'],
  '/v3/auth/user/delete': ['Auth', 'UserDelete'],
  '/v3/auth/user/changepw': ['Auth', 'UserChangePassword'],
  '/v3/auth/user/grant': ['Auth', 'UserGrantRole'],
  '/v3/auth/user/revoke': ['Auth', 'UserRevokeRole'],
  '/v3/auth/role/add': ['Auth', 'RoleAdd'],
  '/v3/auth/role/get': ['Auth', 'RoleGet'],
  '/v3/auth/role/list': ['Auth', 'RoleList'],
  '/v3/auth/role/delete': ['Auth', 'RoleDelete'],
  '/v3/auth/role/grant': ['Auth', 'RoleGrantPermission'],
  '/v3/auth/role/revoke': ['Auth', 'RoleRevokePermission'],
  '/v3/lock/lock': ['v3lockpb.Lock', 'Lock'],
  '/v3/lock/unlock': ['v3lockpb.Lock', 'Unlock'],
  '/v3/election/campaign': ['v3electionpb.Election', 'Campaign'],
  '/v3/election/proclaim': ['v3electionpb.Election', 'Proclaim'],
  '/v3/election/leader': ['v3electionpb.Election', 'Leader'],
  '/v3/election/resign': ['v3electionpb.Election', 'Resign'],
};

/**
 * The bidirectional calls the gateway serves: the request body's JSON messages are the client's
 * stream, and each response is one line `{"result": ...}`. A watch stays open after the body
 * (until the client goes away), as etcd's gateway keeps it; keep-alives end with the body.
 */
const STREAMING_ROUTES: Readonly<Record<string, readonly [service: string, method: string, endsWithBody: boolean]>> = {
  '/v3/watch': ['Watch', 'Watch', false],
  '/v3/lease/keepalive': ['Lease', 'LeaseKeepAlive', true],
  // Server-streaming: the body is its one request; it stays open as a watch does.
  '/v3/election/observe': ['v3electionpb.Election', 'Observe', false],
};

/** Streaming paths not served by this gateway (gRPC serves them). */
const UNSERVED_STREAMING_PATHS = new Set(['/v3/maintenance/snapshot']);

/** The largest request body: a gRPC request of the largest size (2 MiB), in base64, with room for the JSON around it. */
export const MAX_GATEWAY_BODY_BYTES = 3 * 1024 * 1024;

/** The HTTP status gRPC's gateway answers a gRPC code with. */
const HTTP_STATUS: Readonly<Record<number, number>> = {
  [GrpcStatus.OK]: 200,
  [GrpcStatus.CANCELLED]: 408,
  [GrpcStatus.UNKNOWN]: 500,
  [GrpcStatus.INVALID_ARGUMENT]: 400,
  [GrpcStatus.DEADLINE_EXCEEDED]: 504,
  [GrpcStatus.NOT_FOUND]: 404,
  [GrpcStatus.ALREADY_EXISTS]: 409,
  [GrpcStatus.PERMISSION_DENIED]: 403,
  [GrpcStatus.UNAUTHENTICATED]: 401,
  [GrpcStatus.RESOURCE_EXHAUSTED]: 429,
  [GrpcStatus.FAILED_PRECONDITION]: 412,
  [GrpcStatus.ABORTED]: 409,
  [GrpcStatus.OUT_OF_RANGE]: 400,
  [GrpcStatus.UNIMPLEMENTED]: 501,
  [GrpcStatus.INTERNAL]: 500,
  [GrpcStatus.UNAVAILABLE]: 503,
  [GrpcStatus.DATA_LOSS]: 500,
};

/** A request body that does not make the call's message: answered 400 INVALID_ARGUMENT. */
class BadJson extends Error {}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const INTEGER = /^-?\d+$/;
const LONG_TYPES = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);
const INT_TYPES = new Set(['int32', 'uint32', 'sint32', 'fixed32', 'sfixed32']);

interface Route {
  handler: UnaryHandler | DuplexHandler;
  /** For a streaming call: whether it ends once the body's messages are answered. */
  endsWithBody?: boolean;
  /** A server-streaming call: the body is its one request. */
  serverStream?: boolean;
  request: protobuf.Type;
  response: protobuf.Type;
  deserialize(b: Buffer): Msg;
  serialize(m: Msg): Buffer;
}

/** lowerCamelCase of a .proto field name, as protobuf's JSON mapping names it. */
function camel(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/**
 * Checks one JSON value against field `f` and converts it for `Type.fromObject` (bytes to
 * Buffers, 64-bit integers to decimal strings); throws BadJson naming the field.
 */
function fieldFromJson(f: protobuf.Field, v: unknown, path: string, depth: number): unknown {
  if (v === null) return undefined;
  if (f.repeated) {
    if (!Array.isArray(v)) throw new BadJson(`${path}: expected an array`);
    return v.map((x, i) => scalarFromJson(f, x, `${path}[${i}]`, depth));
  }
  return scalarFromJson(f, v, path, depth);
}

function scalarFromJson(f: protobuf.Field, v: unknown, path: string, depth: number): unknown {
  const rt = f.resolvedType;
  if (rt instanceof protobuf.Type) return messageFromJson(rt, v, path, depth + 1);
  if (rt instanceof protobuf.Enum) {
    if (typeof v === 'string' && v in rt.values) return v;
    if (typeof v === 'number' && Number.isInteger(v)) return v;
    throw new BadJson(`${path}: ${JSON.stringify(v)} is not a value of ${rt.name}`);
  }
  if (f.type === 'bytes') {
    if (typeof v !== 'string' || !BASE64.test(v) || v.length % 4 === 1) throw new BadJson(`${path}: expected base64`);
    return Buffer.from(v, 'base64');
  }
  if (f.type === 'bool') {
    if (typeof v !== 'boolean') throw new BadJson(`${path}: expected true or false`);
    return v;
  }
  if (f.type === 'string') {
    if (typeof v !== 'string') throw new BadJson(`${path}: expected a string`);
    return v;
  }
  if (LONG_TYPES.has(f.type) || INT_TYPES.has(f.type)) {
    const s = typeof v === 'number' && Number.isSafeInteger(v) ? String(v) : typeof v === 'string' && INTEGER.test(v) ? v : undefined;
    if (s === undefined) throw new BadJson(`${path}: expected an integer`);
    const n = BigInt(s);
    const unsigned = f.type.startsWith('u') || f.type.startsWith('fixed');
    const bits = LONG_TYPES.has(f.type) ? 64n : 32n;
    const [lo, hi] = unsigned ? [0n, (1n << bits) - 1n] : [-(1n << (bits - 1n)), (1n << (bits - 1n)) - 1n];
    if (n < lo || n > hi) throw new BadJson(`${path}: ${s} is out of range for ${f.type}`);
    return LONG_TYPES.has(f.type) ? s : Number(s);
  }
  if (typeof v !== 'number') throw new BadJson(`${path}: expected a number`);
  return v;
}

/** How deep messages may nest in a request (Txns in Txns): deeper is refused, not recursed into. */
const MAX_DEPTH = 32;

/** A message type's fields by the names JSON may give them (.proto and lowerCamelCase), built once per type. */
const fieldsByJsonName = new WeakMap<protobuf.Type, Map<string, protobuf.Field>>();

function jsonNames(t: protobuf.Type): Map<string, protobuf.Field> {
  let names = fieldsByJsonName.get(t);
  if (!names) {
    names = new Map();
    for (const f of t.fieldsArray) {
      names.set(f.name, f);
      names.set(camel(f.name), f);
    }
    fieldsByJsonName.set(t, names);
  }
  return names;
}

/** The request message `v` for `Type.fromObject`, checked field by field; `depth` counts the messages it is nested in. */
function messageFromJson(t: protobuf.Type, v: unknown, path: string, depth = 0): Record<string, unknown> {
  if (depth >= MAX_DEPTH) throw new BadJson(`${path}: messages nest more than ${MAX_DEPTH} deep`);
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new BadJson(`${path || 'the request'}: expected a JSON object`);
  const out: Record<string, unknown> = {};
  const names = jsonNames(t);
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    const f = names.get(k);
    if (!f) continue;
    const converted = fieldFromJson(f, x, path ? `${path}.${f.name}` : f.name, depth);
    if (converted !== undefined) out[f.name] = converted;
  }
  return out;
}

/** Answers a gateway error: gRPC code and message, as etcd's gateway does. */
function sendError(res: ServerResponse, code: number, message: string, httpStatus = HTTP_STATUS[code] ?? 500): void {
  const body = JSON.stringify({ error: message, message, code });
  res.writeHead(httpStatus, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

/** Reads the body, up to MAX_GATEWAY_BODY_BYTES; undefined when it is larger. */
async function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of req) {
    total += (chunk as Buffer).length;
    if (total > MAX_GATEWAY_BODY_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** The gateway of one etcd endpoint: the unary handlers it serves, by path. */
export class EtcdGateway {
  private readonly routes = new Map<string, Route>();

  /**
   * `def`: the proto-loader definitions the gRPC server uses; `protoFile`: the same .proto,
   * read again by protobufjs for the JSON mapping; `services`: the handlers by service name.
   */
  constructor(def: PackageDefinition, protoFiles: readonly string[], services: Record<string, ServiceHandlers>) {
    const root = new protobuf.Root();
    // Imports ("rpc.proto") are beside the files that name them.
    const dirs = [...new Set(protoFiles.map((f) => dirname(f)))];
    root.resolvePath = (origin, target) => {
      if (isAbsolute(target)) return target;
      return dirs.map((d) => join(d, target)).find((p) => existsSync(p)) ?? join(dirname(origin), target);
    };
    root.loadSync([...protoFiles], { keepCase: true });
    root.resolveAll();
    const routes = [
      ...Object.entries(UNARY_ROUTES).map(([path, [service, method]]) => ({ path, service, method, endsWithBody: undefined })),
      ...Object.entries(STREAMING_ROUTES).map(([path, [service, method, endsWithBody]]) => ({ path, service, method, endsWithBody })),
    ];
    for (const { path, service: name, method, endsWithBody } of routes) {
      const service = name.includes('.') ? name : `etcdserverpb.${name}`;
      const handler = services[service]?.[method] as UnaryHandler | DuplexHandler | undefined;
      const m = (def[service] as Record<string, { requestDeserialize(b: Buffer): Msg; responseSerialize(m: Msg): Buffer }> | undefined)?.[method];
      const rpc = (root.lookup(service) as protobuf.Service | null)?.methods[method];
      if (!handler || !m || !rpc) continue;
      this.routes.set(path, {
        handler,
        ...(endsWithBody !== undefined ? { endsWithBody } : {}),
        ...(!rpc.requestStream && rpc.responseStream ? { serverStream: true } : {}),
        request: root.lookupType(rpc.requestType),
        response: root.lookupType(rpc.responseType),
        deserialize: (b) => m.requestDeserialize(b),
        serialize: (x) => m.responseSerialize(x),
      });
    }
  }

  /** True when `path` is the gateway's (every path under /v3/). */
  owns(path: string): boolean {
    return path.startsWith('/v3/');
  }

  /** Answers a client that may not use the etcd API: PERMISSION_DENIED, as a call of it would be. */
  refuse(res: ServerResponse): void {
    sendError(res, GrpcStatus.PERMISSION_DENIED, 'etcdserver: permission denied');
  }

  /** Answers one request under /v3/. */
  async handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const route = this.routes.get(path);
    if (!route) {
      if (UNSERVED_STREAMING_PATHS.has(path))
        return sendError(res, GrpcStatus.UNIMPLEMENTED, `${path} is a streaming call: it is served over gRPC, not by the JSON gateway`);
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end('Not Found\n');
      return;
    }
    if (req.method !== 'POST') {
      req.resume();
      res.writeHead(405, { 'Content-Type': 'text/plain; charset=utf-8', Allow: 'POST' });
      res.end('Method Not Allowed\n');
      return;
    }
    const body = await readBody(req);
    if (body === undefined) return sendError(res, GrpcStatus.RESOURCE_EXHAUSTED, `the request body is larger than ${MAX_GATEWAY_BODY_BYTES} bytes`, 413);
    let requests: Msg[];
    try {
      requests = parseMessages(body.toString('utf8')).map((json) => {
        const message = route.request.fromObject(messageFromJson(route.request, json, ''));
        return route.deserialize(Buffer.from(route.request.encode(message).finish()));
      });
    } catch (e) {
      if (e instanceof BadJson) return sendError(res, GrpcStatus.INVALID_ARGUMENT, e.message);
      throw e;
    }
    if (route.endsWithBody !== undefined) return this.stream(route, requests, res);
    const request = requests[0] ?? route.deserialize(Buffer.alloc(0));
    const answer = await new Promise<{ msg?: Msg; status?: CallStatus }>((resolve) => {
      const call: UnaryCall = {
        request,
        get cancelled() {
          return res.destroyed;
        },
        respond: (msg) => resolve({ msg }),
        fail: (status) => resolve({ status }),
      };
      (route.handler as UnaryHandler)(call);
    });
    if (answer.status) return sendError(res, answer.status.code ?? GrpcStatus.UNKNOWN, answer.status.details ?? '');
    const text = JSON.stringify(toJson(route, answer.msg!));
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
    res.end(text);
  }

  /**
   * Serves a bidirectional call: `requests` are its client stream, each response is written
   * as it comes, one JSON line; a failure is a last line `{"error": {...}}`.
   */
  private stream(route: Route, requests: Msg[], res: ServerResponse): void {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    // The status goes at once: an Observe of an election without a leader writes nothing for a while.
    res.flushHeaders();
    const call = new GatewayStream(route, res, route.serverStream ? requests[0] : undefined);
    (route.handler as DuplexHandler)(call);
    if (route.serverStream) return;
    for (const r of requests) call.emit('data', r);
    if (route.endsWithBody) call.emit('end');
  }
}

/** A response message in the gateway's JSON. */
function toJson(route: Route, msg: Msg): unknown {
  const bytes = msg instanceof SerializedMessage ? msg.frame().subarray(5) : route.serialize(msg);
  return route.response.toObject(route.response.decode(bytes), { longs: String, enums: String, bytes: String });
}

/**
 * The JSON messages of a request body: one value, or several one after the other (as a client
 * streams them); an empty body is one empty message.
 */
function parseMessages(text: string): unknown[] {
  const out: unknown[] = [];
  const parse = (json: string): void => {
    try {
      out.push(JSON.parse(json));
    } catch (e) {
      throw new BadJson(`the request body is not JSON: ${(e as Error).message}`);
    }
  };
  let start = 0;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if ((c === '}' || c === ']') && --depth === 0) {
      // The end of a top-level object or array.
      parse(text.slice(start, i + 1));
      start = i + 1;
    }
  }
  const rest = text.slice(start).trim();
  // What follows the last object or array (the whole body when it holds none): one more value, or nothing.
  if (rest !== '') parse(rest);
  else if (out.length === 0) out.push({});
  return out;
}

/** A bidirectional call whose responses go to an HTTP response as JSON lines. */
class GatewayStream extends EventEmitter implements DuplexCall {
  private ended = false;

  constructor(
    private readonly route: Route,
    private readonly res: ServerResponse,
    /** A server-streaming call's request. */
    readonly request?: Msg,
  ) {
    super();
    res.on('close', () => {
      if (this.ended) return;
      this.ended = true;
      this.emit('cancelled');
    });
    res.on('drain', () => this.emit('drain'));
  }

  get cancelled(): boolean {
    return this.res.destroyed;
  }

  get bufferedBytes(): number {
    return this.res.writableLength;
  }

  sendHeaders(): void {
    this.res.flushHeaders();
  }

  pause(): void {}

  resume(): void {}

  write(msg: Msg): boolean {
    if (this.ended) return true;
    return this.res.write(`${JSON.stringify({ result: toJson(this.route, msg) })}\n`);
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.res.end();
  }

  fail(status: CallStatus): void {
    if (this.ended) return;
    this.ended = true;
    const code = status.code ?? GrpcStatus.UNKNOWN;
    const message = status.details ?? '';
    this.res.end(`${JSON.stringify({ error: { grpc_code: code, http_code: HTTP_STATUS[code] ?? 500, message } })}\n`);
  }
}
