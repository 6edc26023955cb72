/**
 * RequestInfo: what a request is about, read from its path and method alone, the way
 * Kubernetes' apiserver/pkg/endpoints/request.RequestInfoFactory does it. Authorization,
 * metrics, audit and the handlers all key off this one parse.
 */

/** The verb of a resource request, or the lower-cased HTTP method for non-resource paths. */
export type RequestVerb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection' | 'head' | 'options' | 'post' | 'put';

/** Parsed request. `isResourceRequest` false for /version, /healthz, discovery roots, ... */
export interface RequestInfo {
  isResourceRequest: boolean;
  path: string;
  verb: RequestVerb | string;
  /** 'api' or 'apis' for API paths. */
  apiPrefix: string;
  apiGroup: string;
  apiVersion: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
  /**
   * A list or watch whose field selector requires `metadata.name` to equal a valid name: that
   * name. Kubernetes' RequestInfo reports it as the request's name, so that authorization (RBAC
   * `resourceNames`, the Node authorizer) and audit see a one-object read as one.
   */
  selectedName?: string;
  /** The `fieldSelector` query parameter of a list, watch or deletecollection, as sent. */
  fieldSelector?: string;
  /** The `labelSelector` query parameter of a list, watch or deletecollection, as sent. */
  labelSelector?: string;
  /** Path segments after the prefix, for discovery routing. */
  parts: string[];
  /**
   * The path below a `proxy` subresource, as sent (still percent-encoded, its trailing slash
   * kept): '' for .../proxy, '/' for .../proxy/, '/a/b' for .../proxy/a/b.
   */
  proxyPath?: string;
}

/**
 * Subresources of a namespace that are not resources in their own right: Kubernetes'
 * RequestInfoFactory keeps this rule itself (namespaceSubresources), because /namespaces/{name}/x
 * is otherwise read as resource x inside namespace {name}. It is a rule of the path, not of the
 * Namespace kind's declaration (whose subresources discovery and the handler read).
 */
const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

function isTruthyParam(v: string | undefined): boolean {
  // kube's parameter codec: 0, f and false (any case) are false, anything else true.
  return v !== undefined && v !== '' && v !== '0' && !/^(f|false)$/i.test(v);
}

/**
 * Parses a request. `query` holds the decoded query parameters (first value of each).
 * Path segments are percent-decoded; empty segments from a trailing slash are dropped.
 */
export function parseRequestInfo(method: string, rawPath: string, query: Record<string, string | undefined>): RequestInfo {
  const path = rawPath;
  const trimmed = path.replace(/^\/+/, '').replace(/\/+$/, '');
  let parts: string[];
  try {
    parts = trimmed === '' ? [] : trimmed.split('/').map((p) => decodeURIComponent(p));
  } catch {
    parts = trimmed.split('/');
  }
  const info: RequestInfo = {
    isResourceRequest: false,
    path,
    verb: method.toLowerCase(),
    apiPrefix: '',
    apiGroup: '',
    apiVersion: '',
    namespace: '',
    resource: '',
    subresource: '',
    name: '',
    parts,
  };
  if (parts.length === 0 || (parts[0] !== 'api' && parts[0] !== 'apis')) return info;
  // An empty segment ("//") names nothing; such paths are not resource requests (404).
  if (parts.some((p) => p === '')) return info;
  info.apiPrefix = parts[0];
  let rest = parts.slice(1);
  if (info.apiPrefix === 'apis') {
    if (rest.length === 0) return info;
    info.apiGroup = rest[0];
    rest = rest.slice(1);
  }
  if (rest.length === 0) return info;
  info.apiVersion = rest[0];
  rest = rest.slice(1);
  if (rest.length === 0) return info;

  info.isResourceRequest = true;
  const m = method.toUpperCase();
  switch (m) {
    case 'POST':
      info.verb = 'create';
      break;
    case 'GET':
    case 'HEAD':
      info.verb = 'get';
      break;
    case 'PUT':
      info.verb = 'update';
      break;
    case 'PATCH':
      info.verb = 'patch';
      break;
    case 'DELETE':
      info.verb = 'delete';
      break;
    default:
      // kube's RequestInfoFactory: any other method (OPTIONS) has no verb on a resource path.
      info.verb = '';
  }
  // Deprecated path form /api/v1/watch/...: the verb is watch.
  let legacyWatch = false;
  if (rest[0] === 'watch' && (m === 'GET' || m === 'HEAD')) {
    legacyWatch = true;
    rest = rest.slice(1);
    if (rest.length === 0) {
      info.isResourceRequest = false;
      return info;
    }
  }
  if (rest[0] === 'namespaces') {
    if (rest.length > 1) {
      info.namespace = rest[1];
      if (rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2])) rest = rest.slice(2);
    }
  }
  info.resource = rest[0] ?? '';
  if (rest.length >= 2) info.name = rest[1];
  if (rest.length >= 3) info.subresource = rest[2];
  if (rest.length >= 3 && rest[2] === 'proxy') {
    // What follows a proxy subresource is the path it proxies to, as kube's RequestInfo keeps it.
    const below = rest.length - 3;
    const raw = trimmed.split('/');
    info.proxyPath = (below > 0 ? `/${raw.slice(raw.length - below).join('/')}` : '') + (path.length > 1 && path.endsWith('/') ? '/' : '');
  } else if (rest.length > 3) {
    // Deeper paths of other subresources name nothing; keep the parse but mark it.
    info.subresource = rest.slice(2).join('/');
  }
  const watchParam = isTruthyParam(query.watch);
  if (info.verb === 'get' && (legacyWatch || watchParam)) info.verb = 'watch';
  else if (info.verb === 'get' && info.name === '') info.verb = 'list';
  if (info.verb === 'delete' && info.name === '') info.verb = 'deletecollection';
  if ((info.verb === 'list' || info.verb === 'watch') && info.name === '' && query.fieldSelector) {
    const name = exactMetadataName(query.fieldSelector);
    if (name !== undefined) info.selectedName = name;
  }
  if (
    (info.verb === 'list' || info.verb === 'watch' || info.verb === 'deletecollection') &&
    typeof query.fieldSelector === 'string' &&
    query.fieldSelector !== ''
  )
    info.fieldSelector = query.fieldSelector;
  if (
    (info.verb === 'list' || info.verb === 'watch' || info.verb === 'deletecollection') &&
    typeof query.labelSelector === 'string' &&
    query.labelSelector !== ''
  )
    info.labelSelector = query.labelSelector;
  return info;
}

/**
 * True when the path's namespace names the object itself: /api/v1/namespaces/{name}[/status
 * |/finalize]. Kubernetes' RequestInfoFactory sets Namespace to the name there (so namespace-
 * scoped authorization covers one's own namespace), which is why a cluster-scoped kind accepts
 * a namespace in this one shape.
 */
export function namespaceIsTheObject(info: Pick<RequestInfo, 'apiGroup' | 'resource' | 'namespace' | 'name'>): boolean {
  return info.apiGroup === '' && info.resource === 'namespaces' && info.namespace === info.name;
}

/** Subresources whose requests run as long as a stream does (kube's BasicLongRunningRequestCheck). */
const LONG_RUNNING_SUBRESOURCES = new Set(['attach', 'exec', 'log', 'portforward', 'proxy']);

/**
 * True for a long-running request (kube-apiserver's check: a watch, or a request of the attach,
 * exec, log, portforward or proxy subresource): it has no request deadline and does not count
 * against the in-flight limits.
 */
export function isLongRunning(info: Pick<RequestInfo, 'verb' | 'subresource'>): boolean {
  return info.verb === 'watch' || LONG_RUNNING_SUBRESOURCES.has(info.subresource);
}

/**
 * The name a field selector requires of `metadata.name` (`metadata.name=x` or `==x`, alone or
 * among other terms), when it is a valid path segment name; undefined otherwise.
 */
export function exactMetadataName(selector: string): string | undefined {
  for (const term of selector.split(',')) {
    const m = /^\s*metadata\.name\s*(==|=)\s*(.*?)\s*$/.exec(term);
    if (!m) continue;
    const name = m[2]!;
    if (name === '' || name === '.' || name === '..' || /[/%\\]/.test(name)) return undefined;
    return name;
  }
  return undefined;
}
