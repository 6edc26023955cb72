/**
 * Service-account tokens across a cluster of three real nodes sharing one PKI (so one
 * service-account key): a token made through one node authenticates on the other two (each
 * checks it against its own watch-fed copy of the service accounts), and deleting the service
 * account through a third node revokes it on all of them.
 */
import { NODE_NAMES as NAMES, startThreeNodeCluster, type TestCluster } from './support/cluster.helper.js';
import { kubectl, request, waitFor, type ServerHandle } from './support/server.js';

describe('service-account tokens in a 3-node cluster', () => {
  let cluster: TestCluster | undefined;
  let nodes: ServerHandle[] = [];

  beforeAll(async () => {
    cluster = await startThreeNodeCluster('kapi-sa-cluster-', ['--authorization-mode=AlwaysAllow']);
    nodes = cluster.nodes;
  }, 60_000);

  afterAll(async () => {
    await cluster?.cleanup();
  });

  /** The user name a token authenticates as on `on`, or the HTTP status. */
  const whoami = async (on: ServerHandle, token: string): Promise<string | number> => {
    const r = await request(on, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
      identity: 'anonymous',
      token,
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    });
    return r.status === 201 ? r.json<{ status: { userInfo: { username: string } } }>().status.userInfo.username : r.status;
  };

  it('a token made through one node authenticates on the others; deleting its account through a third revokes it everywhere', async () => {
    await kubectl(nodes[0]!, ['create', 'serviceaccount', 'robot', '-n', 'default']);
    const token = (await kubectl(nodes[0]!, ['create', 'token', 'robot', '-n', 'default'])).stdout.trim();
    for (const [i, n] of nodes.entries()) {
      await waitFor(`token accepted on ${NAMES[i]}`, async () => (await whoami(n, token)) === 'system:serviceaccount:default:robot');
    }
    expect(await Promise.all(nodes.map((n) => whoami(n, token)))).toEqual(Array(3).fill('system:serviceaccount:default:robot'));
    await kubectl(nodes[2]!, ['delete', 'serviceaccount', 'robot', '-n', 'default']);
    for (const [i, n] of nodes.entries()) await waitFor(`token refused on ${NAMES[i]}`, async () => (await whoami(n, token)) === 401);
    expect(await Promise.all(nodes.map((n) => whoami(n, token)))).toEqual([401, 401, 401]);
  });
});
