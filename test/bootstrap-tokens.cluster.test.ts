/**
 * Bootstrap tokens across a cluster of three real nodes started with
 * --enable-bootstrap-token-auth and RBAC: a token Secret written through one node authenticates
 * on every node (each keeps its own watch-fed cache of the token Secrets), its signature shows
 * in the one cluster-info every node serves, and deleting the Secret through another node
 * revokes the token everywhere.
 */
import { NODE_NAMES as NAMES, startThreeNodeCluster, type TestCluster } from './support/cluster.helper.js';
import { kubectl, request, waitFor, type ServerHandle } from './support/server.js';

const TOKEN = 'clu001.0123456789abcdef';

describe('bootstrap tokens in a 3-node cluster', () => {
  let cluster: TestCluster | undefined;
  let nodes: ServerHandle[] = [];

  beforeAll(async () => {
    cluster = await startThreeNodeCluster('kapi-bootstrap-cluster-', ['--authorization-mode=RBAC', '--anonymous-auth=true', '--enable-bootstrap-token-auth']);
    nodes = cluster.nodes;
  }, 60_000);

  afterAll(async () => {
    await cluster?.cleanup();
  });

  const whoami = async (on: ServerHandle): Promise<string | number> => {
    const r = await request(on, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
      identity: 'anonymous',
      token: TOKEN,
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    });
    return r.status === 201 ? r.json<{ status: { userInfo: { username: string } } }>().status.userInfo.username : r.status;
  };
  const clusterInfo = async (on: ServerHandle) =>
    (await request(on, 'GET', '/api/v1/namespaces/kube-public/configmaps/cluster-info', { identity: 'anonymous' })).json<{ data: Record<string, string> }>()
      .data;

  it('a token made through one node works on all, is signed into cluster-info, and its deletion through another revokes it everywhere', async () => {
    for (const n of nodes) expect(await whoami(n)).toBe(401);
    await kubectl(nodes[0]!, ['apply', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'bootstrap-token-clu001', namespace: 'kube-system' },
        type: 'bootstrap.kubernetes.io/token',
        stringData: { 'token-id': 'clu001', 'token-secret': '0123456789abcdef', 'usage-bootstrap-authentication': 'true', 'usage-bootstrap-signing': 'true' },
      }),
    });
    for (const [i, n] of nodes.entries()) await waitFor(`the token on ${NAMES[i]}`, async () => (await whoami(n)) === 'system:bootstrap:clu001');
    for (const [i, n] of nodes.entries())
      await waitFor(`the signature on ${NAMES[i]}`, async () => (await clusterInfo(n))['jws-kubeconfig-clu001'] !== undefined);
    // One cluster-info for the cluster: every node serves the same kubeconfig.
    const kubeconfigs = await Promise.all(nodes.map(async (n) => (await clusterInfo(n)).kubeconfig));
    expect(new Set(kubeconfigs).size).toBe(1);

    await kubectl(nodes[2]!, ['delete', 'secret', '-n', 'kube-system', 'bootstrap-token-clu001']);
    for (const [i, n] of nodes.entries()) await waitFor(`the token refused on ${NAMES[i]}`, async () => (await whoami(n)) === 401);
    for (const [i, n] of nodes.entries())
      await waitFor(`no signature on ${NAMES[i]}`, async () => (await clusterInfo(n))['jws-kubeconfig-clu001'] === undefined);
  });
});
