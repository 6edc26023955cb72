/**
 * The Deployment controller through kubectl: a Deployment gets a ReplicaSet named after its pod
 * template's hash (and the ReplicaSet its pods), `kubectl set image` starts a rolling update that
 * goes as far as maxSurge and maxUnavailable allow with pods that never become ready, `kubectl
 * rollout history` and `kubectl rollout undo` work from the ReplicaSets' revisions, Recreate
 * replaces the old pods before creating new ones, a paused Deployment rolls nothing out, scaling
 * resizes the ReplicaSet, and a rollout past its progress deadline is reported as such (`kubectl
 * rollout status` says so). Nothing runs pods here, as in a cluster without nodes.
 */
import { eventsOnceSeen } from './support/kubectl.helper.js';
import { waitFor } from './support/net.helper.js';
import { type ServerHandle, kubectl, startServer } from './support/server.js';

const NS = 'default';

interface Obj {
  metadata: {
    name: string;
    annotations?: Record<string, string>;
    labels?: Record<string, string>;
    ownerReferences?: { kind: string; name: string; uid: string }[];
  };
  spec: { replicas?: number; template?: { spec: { containers: { image: string }[] } } };
  status?: { replicas?: number; updatedReplicas?: number; conditions?: { type: string; status: string; reason: string; message: string }[] };
}

describe('Deployment controller', () => {
  let server: ServerHandle;
  const k = (args: string[], opts: { input?: string; expectFail?: boolean } = {}) => kubectl(server, args, opts);
  const get = async (kind: string, name: string): Promise<Obj> => JSON.parse((await k(['get', kind, name, '-n', NS, '-o', 'json'])).stdout) as Obj;
  const list = async (kind: string, selector: string): Promise<Obj[]> =>
    (JSON.parse((await k(['get', kind, '-n', NS, '-l', selector, '-o', 'json'])).stdout) as { items: Obj[] }).items;
  /** The ReplicaSets of a deployment, by revision, once `check` holds for them. */
  const replicaSets = (selector: string, check: (rss: Obj[]) => boolean, what: string) =>
    waitFor(what, async () => {
      const rss = (await list('rs', selector)).sort(
        (a, b) => Number(a.metadata.annotations?.['deployment.kubernetes.io/revision']) - Number(b.metadata.annotations?.['deployment.kubernetes.io/revision']),
      );
      return check(rss) ? rss : undefined;
    });
  const condition = (d: Obj, type: string) => d.status?.conditions?.find((c) => c.type === type);

  beforeAll(async () => {
    server = await startServer();
  });

  afterAll(async () => {
    await server?.cleanup();
  });

  it('creates the ReplicaSet of a Deployment, which creates the pods; the status counts them', async () => {
    await k(['create', 'deployment', 'web', '-n', NS, '--image=nginx:1.26', '--replicas=3']);
    const [rs] = await replicaSets('app=web', (rss) => rss.length === 1, 'the first ReplicaSet');
    const d = await get('deployment', 'web');
    const hash = rs!.metadata.labels?.['pod-template-hash'];
    expect(hash).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]+$/);
    expect(rs!.metadata.name).toBe(`web-${hash}`);
    expect(rs!.metadata.annotations).toMatchObject({
      'deployment.kubernetes.io/revision': '1',
      'deployment.kubernetes.io/desired-replicas': '3',
      'deployment.kubernetes.io/max-replicas': '4',
    });
    expect(rs!.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'Deployment', name: 'web' });
    expect(rs!.spec.replicas).toBe(3);
    const pods = await waitFor('3 pods', async () => {
      const ps = await list('pods', `app=web,pod-template-hash=${hash}`);
      return ps.length === 3 ? ps : undefined;
    });
    expect(pods[0]!.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'ReplicaSet', name: `web-${hash}` });
    const status = await waitFor('the status', async () => {
      const now = await get('deployment', 'web');
      return now.status?.updatedReplicas === 3 ? now : undefined;
    });
    expect(d.metadata.annotations?.['deployment.kubernetes.io/revision'] ?? '1').toBe('1');
    expect(status.status).toMatchObject({ replicas: 3, updatedReplicas: 3, unavailableReplicas: 3 });
    expect(condition(status, 'Available')).toMatchObject({
      status: 'False',
      reason: 'MinimumReplicasUnavailable',
      message: 'Deployment does not have minimum availability.',
    });
    expect(condition(status, 'Progressing')?.status).toBe('True');
    expect((await k(['get', 'deploy', 'web', '-n', NS])).stdout).toMatch(/^web\s+0\/3\s+3\s+0\s+\d+s$/m);
    await eventsOnceSeen(server, NS, 'involvedObject.name=web,reason=ScalingReplicaSet', (out) => out.includes(`Scaled up replica set web-${hash} to 3`));
  });

  it('rolls a new image out as far as maxSurge allows, keeps the history, and undoes it', async () => {
    await k(['set', 'image', 'deployment/web', '-n', NS, 'nginx=nginx:1.27']);
    // replicas 3, maxSurge 25% (1), maxUnavailable 25% (0): one new pod, no old one removed while none is available.
    const [oldRS, newRS] = await replicaSets('app=web', (rss) => rss.length === 2 && rss[1]!.spec.replicas === 1, 'the second ReplicaSet at 1');
    expect(oldRS!.spec.replicas).toBe(3);
    expect(newRS!.metadata.annotations?.['deployment.kubernetes.io/revision']).toBe('2');
    expect(newRS!.spec.template?.spec.containers[0]!.image).toBe('nginx:1.27');
    const d = await waitFor('revision 2', async () => {
      const now = await get('deployment', 'web');
      return now.metadata.annotations?.['deployment.kubernetes.io/revision'] === '2' ? now : undefined;
    });
    expect(d.metadata.name).toBe('web');
    const history = await k(['rollout', 'history', 'deployment/web', '-n', NS]);
    expect(history.stdout).toMatch(/REVISION\s+CHANGE-CAUSE\n1\s+<none>\n2\s+<none>/);
    const rev2 = await k(['rollout', 'history', 'deployment/web', '-n', NS, '--revision=2']);
    expect(rev2.stdout).toContain('nginx:1.27');

    // Waiting for the rollout: no pod ever becomes available here.
    const waiting = await k(['rollout', 'status', 'deployment/web', '-n', NS, '--timeout=1s'], { expectFail: true });
    expect(waiting.stdout).toContain('Waiting for deployment "web" rollout to finish: 1 out of 3 new replicas have been updated...');

    // Undo: the first ReplicaSet's template again, so it becomes the new one, at revision 3.
    const undo = await k(['rollout', 'undo', 'deployment/web', '-n', NS]);
    expect(undo.stdout).toContain('deployment.apps/web rolled back');
    const rss = await replicaSets(
      'app=web',
      (list) => list.some((rs) => rs.metadata.name === oldRS!.metadata.name && rs.metadata.annotations?.['deployment.kubernetes.io/revision'] === '3'),
      'the first ReplicaSet at revision 3',
    );
    const back = rss.find((rs) => rs.metadata.name === oldRS!.metadata.name)!;
    expect(back.metadata.annotations?.['deployment.kubernetes.io/revision-history']).toBe('1');
    expect((await get('deployment', 'web')).spec.template?.spec.containers[0]!.image).toBe('nginx:1.26');
  });

  it('scales the ReplicaSet of a settled Deployment', async () => {
    await k(['create', 'deployment', 'api', '-n', NS, '--image=nginx', '--replicas=2']);
    await replicaSets('app=api', (rss) => rss.length === 1 && rss[0]!.spec.replicas === 2, 'the ReplicaSet at 2');
    await waitFor('2 pods', async () => ((await list('pods', 'app=api')).length === 2 ? true : undefined));
    await k(['scale', 'deployment', 'api', '-n', NS, '--replicas=1']);
    const [rs] = await replicaSets('app=api', (rss) => rss[0]?.spec.replicas === 1, 'the ReplicaSet at 1');
    expect(rs!.metadata.annotations?.['deployment.kubernetes.io/desired-replicas']).toBe('1');
    await waitFor('1 pod', async () => ((await list('pods', 'app=api')).length === 1 ? true : undefined));
    await eventsOnceSeen(server, NS, 'involvedObject.name=api,reason=ScalingReplicaSet', (out) =>
      out.includes(`Scaled down replica set ${rs!.metadata.name} to 1 from 2`),
    );
  });

  it('scales a Deployment mid-rollout in proportion to its ReplicaSets', async () => {
    await k(['create', 'deployment', 'prop', '-n', NS, '--image=nginx:1.26', '--replicas=3']);
    await replicaSets('app=prop', (rss) => rss.length === 1 && rss[0]!.spec.replicas === 3, 'the first ReplicaSet at 3');
    await k(['set', 'image', 'deployment/prop', '-n', NS, 'nginx=nginx:1.27']);
    await replicaSets('app=prop', (rss) => rss.length === 2 && rss[0]!.spec.replicas === 3 && rss[1]!.spec.replicas === 1, 'the rollout stalled at 3 + 1');
    const [oldRS, newRS] = await list('rs', 'app=prop').then((rss) => rss.sort((a, b) => (a.spec.replicas! > b.spec.replicas! ? -1 : 1)));
    // 6 replicas allow 6 + 2 (maxSurge 25%, rounded up); the 4 added go 3 to the old ReplicaSet and
    // 1 to the new. (The rollout then goes on from there, so the sizes are read from the Events.)
    await k(['scale', 'deployment', 'prop', '-n', NS, '--replicas=6']);
    const scaled = (await waitFor('the proportional scale-up', async () => {
      const messages = (
        await k(['get', 'events', '-n', NS, '--field-selector', 'involvedObject.name=prop,reason=ScalingReplicaSet', '-o', 'jsonpath={.items[*].message}'])
      ).stdout;
      return messages.includes(`replica set ${newRS!.metadata.name} to 2 from 1`) ? messages : undefined;
    })) as string;
    expect(scaled).toContain(`Scaled up replica set ${oldRS!.metadata.name} to 6 from 3`);
    expect(scaled).toContain(`Scaled up replica set ${newRS!.metadata.name} to 2 from 1`);
  });

  it('Recreate removes every old pod before the new ReplicaSet gets any', async () => {
    await k(['apply', '-n', NS, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'db' },
        spec: {
          replicas: 2,
          strategy: { type: 'Recreate' },
          selector: { matchLabels: { app: 'db' } },
          template: { metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'db', image: 'postgres:16' }] } },
        },
      }),
    });
    await waitFor('2 pods', async () => ((await list('pods', 'app=db')).length === 2 ? true : undefined));
    await k(['set', 'image', 'deployment/db', '-n', NS, 'db=postgres:17']);
    const [oldRS, newRS] = await replicaSets('app=db', (rss) => rss.length === 2 && rss[1]!.spec.replicas === 2, 'the new ReplicaSet at 2');
    expect(oldRS!.spec.replicas).toBe(0);
    const pods = await waitFor('2 new pods', async () => {
      const ps = await list('pods', 'app=db');
      return ps.length === 2 && ps.every((p) => p.metadata.labels?.['pod-template-hash'] === newRS!.metadata.labels?.['pod-template-hash']) ? ps : undefined;
    });
    expect(pods).toHaveLength(2);
  });

  it('a paused Deployment rolls nothing out until resumed', async () => {
    await k(['create', 'deployment', 'cache', '-n', NS, '--image=redis:7', '--replicas=1']);
    await replicaSets('app=cache', (rss) => rss.length === 1, 'the ReplicaSet');
    await k(['rollout', 'pause', 'deployment/cache', '-n', NS]);
    await k(['set', 'image', 'deployment/cache', '-n', NS, 'redis=redis:8']);
    const paused = await waitFor('the paused condition', async () => {
      const d = await get('deployment', 'cache');
      return condition(d, 'Progressing')?.reason === 'DeploymentPaused' ? d : undefined;
    });
    expect(condition(paused, 'Progressing')).toMatchObject({ status: 'Unknown', message: 'Deployment is paused' });
    expect(await list('rs', 'app=cache')).toHaveLength(1);
    await k(['rollout', 'resume', 'deployment/cache', '-n', NS]);
    await replicaSets('app=cache', (rss) => rss.length === 2, 'the new ReplicaSet after resuming');
  });

  it('reports a rollout that made no progress within its deadline', async () => {
    await k(['apply', '-n', NS, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'slow' },
        spec: {
          replicas: 1,
          progressDeadlineSeconds: 1,
          selector: { matchLabels: { app: 'slow' } },
          template: { metadata: { labels: { app: 'slow' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
        },
      }),
    });
    const d = await waitFor('the deadline exceeded', async () => {
      const now = await get('deployment', 'slow');
      return condition(now, 'Progressing')?.reason === 'ProgressDeadlineExceeded' ? now : undefined;
    });
    expect(condition(d, 'Progressing')?.status).toBe('False');
    expect(condition(d, 'Progressing')?.message).toMatch(/^ReplicaSet "slow-[a-z0-9]+" has timed out progressing\.$/);
    const status = await k(['rollout', 'status', 'deployment/slow', '-n', NS, '--timeout=5s'], { expectFail: true });
    expect(status.stderr).toContain('deployment "slow" exceeded its progress deadline');
  });
});
