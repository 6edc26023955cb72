/**
 * Request generator and answer checks of the HTTP fuzzer (bench/http.fuzz.ts). Pure: a case is a
 * function of (seed, index), so a failing case can be regenerated and printed as a reproducer.
 */
import { parse as parseYaml } from 'yaml';
import { encodeProtobuf, PROTOBUF_MAGIC } from '@app/apimachinery';

/** One generated request. */
export interface FuzzCase {
  readonly index: number;
  readonly protocol: 'h1' | 'h2';
  /** Whether the request presents the admin client certificate (else anonymous). */
  readonly admin: boolean;
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer | undefined;
}

/** A small deterministic PRNG (mulberry32): the same seed gives the same cases. */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  /** Uniform in [0, 1). */
  next(): number {
    this.s = (this.s + 0x6d2b79f5) >>> 0;
    let t = this.s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** Integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  /** True with probability p. */
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }
}

const METHODS = ['GET', 'GET', 'GET', 'POST', 'POST', 'PUT', 'PATCH', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'FUZZ'];
const NAMES = ['fuzz-0', 'fuzz-1', 'fuzz-2', 'fuzz-3', 'x', 'default', 'kube-system', 'a'.repeat(300), 'UPPER', 'bad_name', '..', '%2e%2e', '%00', 'é', ''];
const NAMESPACES = ['default', 'fuzz', 'kube-system', 'nope', 'BAD', '%2F', '-'];
const RESOURCES: ReadonlyArray<readonly [string, string]> = [
  ['/api/v1', 'configmaps'],
  ['/api/v1', 'secrets'],
  ['/api/v1', 'pods'],
  ['/api/v1', 'services'],
  ['/api/v1', 'events'],
  ['/api/v1', 'serviceaccounts'],
  ['/apis/apps/v1', 'deployments'],
  ['/apis/coordination.k8s.io/v1', 'leases'],
  ['/apis/rbac.authorization.k8s.io/v1', 'roles'],
  ['/apis/nope.example.com/v1', 'widgets'],
  ['/api/v2', 'configmaps'],
];
const SUBRESOURCES = ['status', 'scale', 'log', 'exec', 'binding', 'eviction', 'nope', 'token'];
const FIXED_PATHS = [
  '/api',
  '/apis',
  '/api/v1',
  '/apis/apps/v1',
  '/version',
  '/healthz',
  '/readyz',
  '/livez',
  '/readyz/verbose',
  '/metrics',
  '/openapi/v2',
  '/openapi/v3',
  '/openapi/v3/api/v1',
  '/api/v1/namespaces',
  '/api/v1/namespaces/fuzz',
  '/api/v1/configmaps',
  '/api/v1/watch/namespaces/default/configmaps',
  '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
  '/apis/authentication.k8s.io/v1/selfsubjectreviews',
  '/',
  '//',
  '/api/v1/namespaces/default/configmaps/../secrets',
  '/%zz',
  '/api/v1/namespaces/default/configmaps/%ff%fe',
];
const QUERY_KEYS = [
  'labelSelector',
  'fieldSelector',
  'limit',
  'continue',
  'resourceVersion',
  'resourceVersionMatch',
  'dryRun',
  'fieldManager',
  'force',
  'fieldValidation',
  'propagationPolicy',
  'gracePeriodSeconds',
  'timeoutSeconds',
  'watch',
  'allowWatchBookmarks',
  'pretty',
  'orphanDependents',
  'sendInitialEvents',
  'x',
];
const QUERY_VALUES = [
  '',
  'true',
  'false',
  '1',
  '0',
  '-1',
  '500',
  '99999999999999999999',
  'All',
  'Strict',
  'Warn',
  'Ignore',
  'NotOlderThan',
  'Exact',
  'Foreground',
  'Orphan',
  'a=b',
  'a in (b,c),!d',
  'metadata.name=x',
  'metadata.namespace!=default',
  'a=%',
  '(((',
  'eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiJ4In0',
  'fuzz',
  '%00',
  'ü',
];
const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/yaml',
  'application/vnd.kubernetes.protobuf',
  'application/merge-patch+json',
  'application/json-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
  'application/apply-patch+cbor',
  'application/cbor',
  'text/plain',
  'multipart/form-data; boundary=x',
  '*/*',
  ';;;',
  'application/json; charset=latin1',
];
const ACCEPTS = [
  'application/json',
  'application/json',
  'application/vnd.kubernetes.protobuf',
  'application/vnd.kubernetes.protobuf, application/json',
  'application/json;as=Table;v=v1;g=meta.k8s.io',
  'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io',
  'application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io',
  'application/yaml',
  'application/cbor',
  '*/*',
  'text/html',
  'application/json;q=0',
  ',,,',
  'application/*;q=0.5',
];

function configMap(rng: Rng, name: string, namespace: string): Record<string, unknown> {
  const data: Record<string, string> = {};
  for (let i = rng.int(4); i > 0; i--) data[`k${rng.int(100)}`] = 'v'.repeat(rng.int(40));
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, labels: { fuzz: 'yes' } }, data };
}

function randomJson(rng: Rng, depth: number): unknown {
  const r = rng.int(depth > 3 ? 5 : 8);
  switch (r) {
    case 0:
      return null;
    case 1:
      return rng.chance(0.5);
    case 2:
      return rng.pick([0, -1, 1.5, 1e308, -0, 2 ** 53 + 1, 123456789]);
    case 3:
      return rng.pick(['', 'x', 'v1', 'ConfigMap', '\u0000', '𝄞', 'a'.repeat(100)]);
    case 4:
      return rng.pick(['metadata', 'spec', 'kind']);
    case 5:
    case 6: {
      const o: Record<string, unknown> = {};
      for (let i = rng.int(5); i > 0; i--)
        o[rng.pick(['apiVersion', 'kind', 'metadata', 'name', 'data', 'spec', 'op', 'path', 'value', 'x', '$patch', 'status'])] = randomJson(rng, depth + 1);
      return o;
    }
    default:
      return Array.from({ length: rng.int(4) }, () => randomJson(rng, depth + 1));
  }
}

function toYaml(v: unknown, indent = ''): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return v.length === 0 ? '[]' : v.map((x) => `\n${indent}- ${toYaml(x, indent + '  ')}`).join('');
  const entries = Object.entries(v as Record<string, unknown>);
  return entries.length === 0 ? '{}' : entries.map(([k, x]) => `\n${indent}${k}: ${toYaml(x, indent + '  ')}`).join('');
}

function mutate(rng: Rng, buf: Buffer): Buffer {
  const out = Buffer.from(buf);
  switch (rng.int(4)) {
    case 0: // flip bytes
      for (let i = 1 + rng.int(4); i > 0 && out.length > 0; i--) out[rng.int(out.length)] = rng.int(256);
      return out;
    case 1: // truncate
      return out.subarray(0, rng.int(out.length + 1));
    case 2: // duplicate a slice
      if (out.length === 0) return out;
      {
        const a = rng.int(out.length);
        const b = a + rng.int(out.length - a);
        return Buffer.concat([out.subarray(0, b), out.subarray(a, b), out.subarray(b)]);
      }
    default: // insert special characters
      return Buffer.concat([
        out.subarray(0, rng.int(out.length + 1)),
        Buffer.from(rng.pick(['"', '{', '[', '\\u', '\n  - ', ': ', '\u0000', '\uffff', '\ud800', '1e999'])),
        out,
      ]);
  }
}

function body(rng: Rng, name: string, namespace: string): { body: Buffer; type: string } {
  const cm = configMap(rng, name, namespace);
  switch (rng.int(9)) {
    case 0:
      return { body: Buffer.from(JSON.stringify(cm)), type: 'application/json' };
    case 1:
      return { body: mutate(rng, Buffer.from(JSON.stringify(cm))), type: 'application/json' };
    case 2:
      return { body: Buffer.from(JSON.stringify(randomJson(rng, 0))), type: 'application/json' };
    case 3:
      return { body: Buffer.from(toYaml(cm).trimStart()), type: 'application/yaml' };
    case 4:
      return { body: mutate(rng, Buffer.from(toYaml(rng.chance(0.5) ? cm : randomJson(rng, 0)).trimStart())), type: 'application/apply-patch+yaml' };
    case 5: {
      const pb = Buffer.from(encodeProtobuf(cm as never, 'k8s.io.api.core.v1.ConfigMap'));
      return { body: rng.chance(0.3) ? pb : mutate(rng, pb), type: 'application/vnd.kubernetes.protobuf' };
    }
    case 6: {
      const ops = Array.from({ length: 1 + rng.int(3) }, () => ({
        op: rng.pick(['add', 'remove', 'replace', 'test', 'move', 'copy', 'nope']),
        path: rng.pick(['/data/a', '/metadata/labels/x', '/metadata/name', '/', '', '/data/~2', '/spec/containers/-', '/data/0']),
        ...(rng.chance(0.7) ? { value: randomJson(rng, 2) } : {}),
        ...(rng.chance(0.2) ? { from: '/data' } : {}),
      }));
      return { body: Buffer.from(JSON.stringify(ops)), type: 'application/json-patch+json' };
    }
    case 7: {
      const deep = rng.int(2) === 0 ? '['.repeat(1000 + rng.int(20000)) : `{"a":${'{"a":'.repeat(2000)}1`;
      return { body: Buffer.from(deep), type: rng.pick(CONTENT_TYPES) };
    }
    default: {
      const n = rng.int(512);
      const b = Buffer.alloc(n + (rng.chance(0.5) ? 4 : 0));
      const magic = b.length > n;
      for (let i = 0; i < b.length; i++) b[i] = rng.int(256);
      if (magic) b.set(PROTOBUF_MAGIC, 0);
      return { body: b, type: rng.pick(CONTENT_TYPES) };
    }
  }
}

function mutatePath(rng: Rng, p: string): string {
  switch (rng.int(6)) {
    case 0:
      return p + rng.pick(['/', '//', '/x', '/%2F', '?', '#x', '/..', '/.']);
    case 1: {
      const segs = p.split('/');
      // Segment 0 stays empty: a path must start with a slash (HTTP/2 refuses any other).
      segs[1 + rng.int(segs.length - 1)] = rng.pick(['', '.', '..', '%', '%2e', 'x'.repeat(500), 'watch', 'namespaces', 'proxy', '\u00e9']);
      return segs.join('/');
    }
    case 2:
      return p.toUpperCase();
    default:
      return p;
  }
}

function generatePath(rng: Rng, name: string, namespace: string): string {
  if (rng.chance(0.2)) return mutatePath(rng, rng.pick(FIXED_PATHS));
  const [gv, resource] = rng.pick(RESOURCES);
  let p = rng.chance(0.8) ? `${gv}/namespaces/${namespace}/${resource}` : `${gv}/${resource}`;
  if (rng.chance(0.6)) p += `/${name}`;
  if (rng.chance(0.15)) p += `/${rng.pick(SUBRESOURCES)}`;
  return rng.chance(0.25) ? mutatePath(rng, p) : p;
}

function generateQuery(rng: Rng): string {
  const parts: string[] = [];
  for (let i = rng.int(4); i > 0; i--) {
    const k = rng.pick(QUERY_KEYS);
    let v = rng.pick(QUERY_VALUES);
    // A watch answers 200 and streams; bound it so it ends on its own.
    if (k === 'watch' || k === 'timeoutSeconds') v = rng.pick(['true', '1', 'false']);
    // Now and then a value goes unescaped, except for spaces, which no request line may hold.
    parts.push(rng.chance(0.9) ? `${k}=${encodeURIComponent(v)}` : `${k}=${v.replace(/ /g, '%20')}`);
  }
  return parts.length === 0 ? '' : `?${parts.join('&')}`;
}

/**
 * The request number `index` of the run seeded with `seed`. Names and namespaces come from
 * small pools, so the objects the run creates stay bounded (the RSS check needs that).
 */
export function generateCase(seed: number, index: number): FuzzCase {
  const rng = new Rng((seed ^ Math.imul(index + 1, 0x9e3779b1)) >>> 0);
  const method = rng.pick(METHODS);
  const name = rng.pick(NAMES);
  const namespace = rng.pick(NAMESPACES);
  const path = generatePath(rng, name, namespace) + generateQuery(rng);
  const headers: Record<string, string> = {};
  if (rng.chance(0.7)) headers.accept = rng.pick(ACCEPTS);
  let b: Buffer | undefined;
  if (method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS' ? rng.chance(0.9) : rng.chance(0.05)) {
    const made = body(rng, name, namespace);
    b = made.body;
    headers['content-type'] = rng.chance(0.7) ? made.type : rng.pick(CONTENT_TYPES);
  }
  if (rng.chance(0.1)) headers['impersonate-user'] = rng.pick(['alice', 'system:admin', '', 'system:serviceaccount:default:x', '\u00e9']);
  if (rng.chance(0.05)) headers['impersonate-group'] = rng.pick(['system:masters', 'g', '']);
  if (rng.chance(0.03)) headers['impersonate-uid'] = rng.pick(['u1', '']);
  if (rng.chance(0.03)) headers['impersonate-extra-scopes'] = rng.pick(['a', '%zz', '']);
  if (rng.chance(0.1))
    headers.authorization = rng.pick(['Bearer ', 'Bearer x', 'Bearer a.b.c', 'Basic Zm9vOmJhcg==', 'Negotiate', 'Bearer eyJhbGciOiJub25lIn0.e30.', 'garbage']);
  if (rng.chance(0.03)) headers['content-encoding'] = rng.pick(['gzip', 'br', 'x']);
  if (rng.chance(0.03)) headers['accept-encoding'] = rng.pick(['gzip', 'br', '*', 'x']);
  return { index, protocol: rng.chance(0.5) ? 'h1' : 'h2', admin: rng.chance(0.9), method, path, headers, body: b };
}

/** The case as text a person can replay (body base64). */
export function describeCase(c: FuzzCase): string {
  return [
    `case ${c.index} over ${c.protocol === 'h2' ? 'HTTP/2' : 'HTTP/1.1'} as ${c.admin ? 'admin (client certificate)' : 'anonymous'}`,
    `${c.method} ${c.path}`,
    ...Object.entries(c.headers).map(([k, v]) => `${k}: ${JSON.stringify(v)}`),
    `body (base64): ${c.body === undefined ? '<none>' : c.body.toString('base64')}`,
  ].join('\n');
}

/** Whether a status code is a 5xx the server may answer (503 overload/unavailable, 504 timeout). */
export function allowedServerError(code: number): boolean {
  return code < 500 || code === 503 || code === 504;
}

/**
 * Why an error answer (status >= 400) is not a Status, or undefined when it is: a JSON
 * `{kind: "Status", apiVersion: "v1", code}` whose code is the HTTP status, or the protobuf
 * envelope (the "k8s\0" magic) when the answer is protobuf, or the same Status in YAML when the
 * request accepted only YAML. HEAD answers carry no body.
 */
export function statusViolation(method: string, code: number, contentType: string | undefined, body: Buffer): string | undefined {
  if (code < 400 || method === 'HEAD') return undefined;
  const ct = (contentType ?? '').toLowerCase();
  if (ct.startsWith('application/vnd.kubernetes.protobuf')) {
    if (body.length >= 4 && PROTOBUF_MAGIC.every((x, i) => body[i] === x) && body.includes(Buffer.from('Status'))) return undefined;
    return 'protobuf error answer without the envelope of a Status';
  }
  const yaml = ct.startsWith('application/yaml');
  if (!ct.startsWith('application/json') && !yaml) return `error answer with content-type ${JSON.stringify(contentType)}`;
  let parsed: unknown;
  try {
    parsed = yaml ? parseYaml(body.toString('utf8')) : JSON.parse(body.toString('utf8'));
  } catch {
    return `error answer is not ${yaml ? 'YAML' : 'JSON'}`;
  }
  const s = parsed as { kind?: unknown; apiVersion?: unknown; code?: unknown };
  if (typeof parsed !== 'object' || parsed === null || s.kind !== 'Status' || s.apiVersion !== 'v1') return 'error answer is not a Status';
  if (s.code !== code) return `Status code ${String(s.code)} differs from HTTP ${code}`;
  return undefined;
}
