/**
 * The pure parts of the aggregation layer, as kube-aggregator has them: what is kept of an
 * APIService, a Service and its Endpoints; where a request to an APIService's service goes (its
 * cluster IP, or with --enable-aggregator-routing one of its endpoints); the `Available`
 * condition of a service that cannot be reached; and the order of groups and versions.
 */
import type { KubeObject } from '@app/apimachinery';

type Obj = Record<string, unknown>;
const asObj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const asList = (v: unknown): Obj[] => (Array.isArray(v) ? v.map(asObj) : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** What the aggregation layer reads of an APIService. */
export interface ApiServiceView {
  name: string;
  group: string;
  version: string;
  groupPriorityMinimum: number;
  versionPriority: number;
  /** Where it is served; undefined: here (a local APIService). */
  service?: { namespace: string; name: string; port: number };
  /** The PEM bundle that verifies the server's certificate (spec.caBundle, decoded); undefined: the system's roots. */
  caBundle?: string;
  insecureSkipTLSVerify: boolean;
  /** Its `Available` condition is True. */
  available: boolean;
}

/** The projection of a stored APIService. */
export function apiServiceView(obj: KubeObject): ApiServiceView {
  const spec = asObj(obj.spec);
  const svc = spec.service === null || spec.service === undefined ? undefined : asObj(spec.service);
  const conds = asList(asObj(obj.status).conditions);
  const ca = str(spec.caBundle);
  return {
    name: obj.metadata.name ?? '',
    group: str(spec.group),
    version: str(spec.version),
    groupPriorityMinimum: typeof spec.groupPriorityMinimum === 'number' ? spec.groupPriorityMinimum : 0,
    versionPriority: typeof spec.versionPriority === 'number' ? spec.versionPriority : 0,
    ...(svc ? { service: { namespace: str(svc.namespace), name: str(svc.name), port: typeof svc.port === 'number' ? svc.port : 443 } } : {}),
    ...(ca ? { caBundle: Buffer.from(ca, 'base64').toString('utf8') } : {}),
    insecureSkipTLSVerify: spec.insecureSkipTLSVerify === true,
    available: conds.some((c) => c.type === 'Available' && c.status === 'True'),
  };
}

/** What is read of a Service. */
export interface ServiceView {
  type: string;
  clusterIP: string;
  externalName: string;
  ports: Array<{ port: number; name: string }>;
}

export function serviceView(obj: KubeObject): ServiceView {
  const spec = asObj(obj.spec);
  return {
    type: str(spec.type) || 'ClusterIP',
    clusterIP: str(spec.clusterIP),
    externalName: str(spec.externalName),
    ports: asList(spec.ports).map((p) => ({ port: typeof p.port === 'number' ? p.port : 0, name: str(p.name) })),
  };
}

/** What is read of an Endpoints: per subset its ready addresses and its ports. */
export type EndpointsView = Array<{ addresses: string[]; ports: Array<{ name: string; port: number }> }>;

export function endpointsView(obj: KubeObject): EndpointsView {
  return asList(obj.subsets).map((s) => ({
    addresses: asList(s.addresses)
      .map((a) => str(a.ip))
      .filter((ip) => ip !== ''),
    ports: asList(s.ports).map((p) => ({ name: str(p.name), port: typeof p.port === 'number' ? p.port : 0 })),
  }));
}

/** A reason the service of an APIService cannot be reached, with the condition it gives. */
export class Unreachable extends Error {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

/** The `Available` condition's status, reason and message. */
export interface Availability {
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
}

const httpsHost = (host: string, port: number): URL => new URL(`https://${host.includes(':') ? `[${host}]` : host}:${port}`);

/**
 * Where requests to `svc` on `port` go, as kube's service resolvers decide: by default the
 * service's cluster IP (an ExternalName service: its name); with `routing` (the flag
 * --enable-aggregator-routing) a ready address of its endpoints, picked at random, at the port
 * of the subset named as the service port. Throws Unreachable otherwise. `pick` chooses among n.
 */
export function resolveService(
  ref: { namespace: string; name: string; port: number },
  service: ServiceView | undefined,
  endpoints: EndpointsView | undefined,
  routing: boolean,
  pick: (n: number) => number = (n) => Math.floor(Math.random() * n),
): URL {
  if (!service) throw new Unreachable('ServiceNotFound', `service/${ref.name} in ${JSON.stringify(ref.namespace)} is not present`);
  const routable = ['ClusterIP', 'NodePort', 'LoadBalancer'].includes(service.type);
  if (!routing && service.type === 'ExternalName') return httpsHost(service.externalName, ref.port);
  if (!routable) throw new Unreachable('ServiceAccessError', `unsupported service type ${JSON.stringify(service.type)}`);
  const svcPort = service.ports.find((p) => p.port === ref.port);
  if (!svcPort) throw new Unreachable('ServicePortError', `service/${ref.name} in ${JSON.stringify(ref.namespace)} is not listening on port ${ref.port}`);
  if (!routing) {
    if (!service.clusterIP || service.clusterIP === 'None')
      throw new Unreachable('ServiceAccessError', `cannot route to service with ClusterIP ${service.clusterIP || 'None'}`);
    return httpsHost(service.clusterIP, ref.port);
  }
  if (!endpoints) throw new Unreachable('EndpointsNotFound', `cannot find endpoints for service/${ref.name} in ${JSON.stringify(ref.namespace)}`);
  const candidates: Array<{ ip: string; port: number }> = [];
  for (const s of endpoints) {
    const p = s.ports.find((x) => x.name === svcPort.name);
    if (p) for (const ip of s.addresses) candidates.push({ ip, port: p.port });
  }
  if (candidates.length === 0)
    throw new Unreachable(
      'MissingEndpoints',
      `endpoints for service/${ref.name} in ${JSON.stringify(ref.namespace)} have no addresses with port name ${JSON.stringify(svcPort.name)}`,
    );
  const c = candidates[pick(candidates.length)]!;
  return httpsHost(c.ip, c.port);
}

/**
 * kube's CompareKubeAwareVersionStrings as a sort comparator: GA before beta before alpha, a
 * higher major and then minor first; versions not of that form after them, alphabetically.
 */
export function compareKubeVersions(a: string, b: string): number {
  const parse = (v: string) => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    return m ? { major: Number(m[1]), level: m[2] === 'alpha' ? 0 : m[2] === 'beta' ? 1 : 2, minor: Number(m[3] ?? 0) } : undefined;
  };
  const pa = parse(a);
  const pb = parse(b);
  if (!pa || !pb) return pa ? -1 : pb ? 1 : a.localeCompare(b);
  return pb.level - pa.level || pb.major - pa.major || pb.minor - pa.minor;
}

/** kube's order of versions in a group: versionPriority, highest first, then by version. */
export function compareByVersionPriority(
  a: Pick<ApiServiceView, 'versionPriority' | 'version'>,
  b: Pick<ApiServiceView, 'versionPriority' | 'version'>,
): number {
  return b.versionPriority - a.versionPriority || compareKubeVersions(a.version, b.version);
}
