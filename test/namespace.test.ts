/**
 * Namespace lifecycle: `kubectl delete ns` of a namespace with objects, one of
 * them held by a finalizer; progress in status.conditions with Kubernetes' condition types,
 * reasons and messages; no new content while terminating; finalization through
 * PUT /api/v1/namespaces/{name}/finalize; the default namespaces cannot be deleted.
 */
import { kubectl, request, startServer, waitFor as pollUntil, type ServerHandle } from './support/server.js';

let server: ServerHandle;

beforeAll(async () => {
  server = await startServer();
});

afterAll(async () => {
  await server?.cleanup();
});

const k = (args: string[], opts: { input?: string; expectFail?: boolean; timeoutMs?: number } = {}) => kubectl(server, args, opts);

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
  lastTransitionTime: string;
}
interface Ns {
  metadata: { name: string; deletionTimestamp?: string; deletionGracePeriodSeconds?: number; finalizers?: string[] };
  spec?: { finalizers?: string[] };
  status?: { phase?: string; conditions?: Condition[] };
}

async function readNs(name: string): Promise<Ns | undefined> {
  const r = await request(server, 'GET', `/api/v1/namespaces/${name}`);
  if (r.status === 404) return undefined;
  return r.json<Ns>();
}

/** Namespace deletion runs through controllers: allow 20 s by default. */
const waitFor = <T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> => pollUntil(what, fn, timeoutMs);

const manifest = (ns: string) => `apiVersion: v1
kind: Namespace
metadata:
  name: ${ns}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: plain
  namespace: ${ns}
data:
  a: "1"
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: held
  namespace: ${ns}
  finalizers:
  - example.com/hold
data:
  a: "1"
---
apiVersion: v1
kind: Secret
metadata:
  name: s
  namespace: ${ns}
stringData:
  p: q
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: robot
  namespace: ${ns}
`;

describe('namespace deletion', () => {
  it('empties the namespace, waits on a finalizer with conditions reporting it, then removes it', async () => {
    await k(['apply', '-f', '-'], { input: manifest('doomed') });
    const r = await k(['delete', 'ns', 'doomed', '--wait=false']);
    expect(r.stdout).toContain('namespace "doomed" deleted');
    const ns = await waitFor('content conditions', async () => {
      const n = await readNs('doomed');
      const c = n?.status?.conditions?.find((x) => x.type === 'NamespaceContentRemaining');
      return c?.status === 'True' ? n : undefined;
    });
    expect(ns.status?.phase).toBe('Terminating');
    expect(ns.metadata.deletionTimestamp).toBeDefined();
    expect(ns.metadata.deletionGracePeriodSeconds).toBe(0);
    expect(ns.spec?.finalizers).toEqual(['kubernetes']);
    const conds = ns.status!.conditions!;
    expect(conds.map((c) => c.type)).toEqual([
      'NamespaceDeletionDiscoveryFailure',
      'NamespaceDeletionGroupVersionParsingFailure',
      'NamespaceDeletionContentFailure',
      'NamespaceContentRemaining',
      'NamespaceFinalizersRemaining',
    ]);
    const by = (t: string) => conds.find((c) => c.type === t)!;
    expect(by('NamespaceDeletionDiscoveryFailure')).toMatchObject({
      status: 'False',
      reason: 'ResourcesDiscovered',
      message: 'All resources successfully discovered',
    });
    expect(by('NamespaceDeletionGroupVersionParsingFailure')).toMatchObject({
      status: 'False',
      reason: 'ParsedGroupVersions',
      message: 'All legacy kube types successfully parsed',
    });
    expect(by('NamespaceDeletionContentFailure')).toMatchObject({
      status: 'False',
      reason: 'ContentDeleted',
      message: 'All content successfully deleted, may be waiting on finalization',
    });
    expect(by('NamespaceContentRemaining')).toMatchObject({
      status: 'True',
      reason: 'SomeResourcesRemain',
      message: 'Some resources are remaining: configmaps. has 1 resource instances',
    });
    expect(by('NamespaceFinalizersRemaining')).toMatchObject({
      status: 'True',
      reason: 'SomeFinalizersRemain',
      message: 'Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances',
    });
    for (const c of conds) expect(c.lastTransitionTime).toMatch(/Z$/);

    // Everything else is gone; the held object is Terminating and still readable.
    const left = await k(['get', 'cm,secret,sa', '-n', 'doomed', '-o', 'name']);
    expect(left.stdout.trim().split('\n')).toEqual(['configmap/held']);
    const held = JSON.parse((await k(['get', 'cm', 'held', '-n', 'doomed', '-o', 'json'])).stdout);
    expect(held.metadata.deletionTimestamp).toBeDefined();
    expect(await readNs('doomed')).toBeDefined();

    // Nothing new may be created meanwhile (NamespaceLifecycle admission).
    const no = await k(['create', 'cm', 'late', '-n', 'doomed', '--from-literal=a=b'], { expectFail: true });
    expect(no.stderr).toContain('configmaps "late" is forbidden: unable to create new content in namespace doomed because it is being terminated');
    const describe = await k(['describe', 'ns', 'doomed']);
    expect(describe.stdout).toMatch(/Status:\s+Terminating/);
    expect(describe.stdout).toContain('SomeFinalizersRemain');

    // The holder finishes: the namespace goes.
    await k(['patch', 'cm', 'held', '-n', 'doomed', '--type=json', '-p', '[{"op":"remove","path":"/metadata/finalizers"}]']);
    await waitFor('namespace removed', async () => (await readNs('doomed')) === undefined);
  });

  it('kubectl delete ns waits until the namespace and its content are gone', async () => {
    await k(['create', 'ns', 'quick']);
    for (let i = 0; i < 20; i++) await k(['create', 'cm', `c${i}`, '-n', 'quick', '--from-literal=a=b']);
    const r = await k(['delete', 'ns', 'quick', '--timeout=60s']);
    expect(r.stdout).toContain('namespace "quick" deleted');
    expect(await readNs('quick')).toBeUndefined();
    // A namespace of the same name starts empty (but for the kube-root-ca.crt every namespace gets).
    await k(['create', 'ns', 'quick']);
    const none = await k(['get', 'cm', '-n', 'quick', '-o', 'name']);
    expect(none.stdout.split('\n').filter((n) => n !== '' && n !== 'configmap/kube-root-ca.crt')).toEqual([]);
  });

  it('PUT /api/v1/namespaces/{name}/finalize with no finalizers removes a terminating namespace', async () => {
    await k(['apply', '-f', '-'], { input: manifest('forced') });
    await k(['delete', 'ns', 'forced', '--wait=false']);
    const ns = await waitFor('terminating', async () => {
      const n = await readNs('forced');
      return n?.status?.conditions?.length ? n : undefined;
    });
    const r = await request(server, 'PUT', '/api/v1/namespaces/forced/finalize', { body: { ...ns, spec: { finalizers: [] } } });
    expect(r.status).toBe(200);
    expect(r.json<Ns>().spec?.finalizers ?? []).toEqual([]);
    await waitFor('namespace removed', async () => (await readNs('forced')) === undefined);
  });

  it('the default namespaces cannot be deleted', async () => {
    for (const name of ['default', 'kube-system', 'kube-public']) {
      const no = await k(['delete', 'ns', name], { expectFail: true });
      expect(no.stderr).toContain(`Error from server (Forbidden): namespaces "${name}" is forbidden: this namespace may not be deleted`);
    }
    expect((await readNs('default'))?.status?.phase).toBe('Active');
  });
});
