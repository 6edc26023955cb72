/**
 * The CronJob controller through kubectl: a CronJob gets a Job at its scheduled times (named by
 * the minute, owned by it, listed in `status.active`), learns when the Job completes, keeps only
 * as many finished Jobs as its history limits say, and follows its concurrency policy (Forbid
 * skips a time while a Job runs, Replace deletes the running one) and `suspend`. Missed times
 * are played by moving `status.lastScheduleTime` back (as after a controller outage), so the
 * tests need not wait for the clock, except one that does: a CronJob left alone (`@every 2s`)
 * gets its Job when the schedule fires.
 */
import { eventsOnceSeen } from './support/kubectl.helper.js';
import { waitFor } from './support/net.helper.js';
import { type ServerHandle, kubectl, request, startServer } from './support/server.js';

const NS = 'default';

interface Ref {
  name: string;
  uid: string;
  kind?: string;
  apiVersion?: string;
}
interface CronJob {
  metadata: { uid: string };
  status?: { active?: Ref[]; lastScheduleTime?: string; lastSuccessfulTime?: string };
}
interface Job {
  metadata: {
    name: string;
    uid: string;
    creationTimestamp?: string;
    annotations?: Record<string, string>;
    labels?: Record<string, string>;
    ownerReferences?: Ref[];
  };
  spec: Record<string, unknown>;
  status?: { conditions?: { type: string; status: string }[] };
}
interface Pod {
  metadata: { name: string };
  status?: Record<string, unknown>;
}

describe('CronJob controller', () => {
  let server: ServerHandle;
  const k = (args: string[], opts: { input?: string; expectFail?: boolean } = {}) => kubectl(server, args, opts);
  const cronJob = async (name: string): Promise<CronJob> =>
    (await request(server, 'GET', `/apis/batch/v1/namespaces/${NS}/cronjobs/${name}`)).json() as CronJob;
  const jobsOf = async (name: string): Promise<Job[]> => {
    const uid = (await cronJob(name)).metadata.uid;
    const all = (await request(server, 'GET', `/apis/batch/v1/namespaces/${NS}/jobs`)).json() as { items: Job[] };
    return all.items.filter((j) => j.metadata.ownerReferences?.some((r) => r.uid === uid));
  };
  const waitJobs = (name: string, check: (js: Job[]) => boolean, what: string, timeoutMs?: number) =>
    waitFor(
      what,
      async () => {
        const js = await jobsOf(name);
        return check(js) ? js : undefined;
      },
      timeoutMs,
    );
  const events = async (name: string, reason: string): Promise<string> =>
    (await k(['get', 'events', '-n', NS, '--field-selector', `involvedObject.name=${name},reason=${reason}`, '-o', 'jsonpath={.items[*].message}'])).stdout;
  /** Plays a controller outage: the last scheduled time moves `minutes` back. */
  const missed = async (name: string, minutes: number) => {
    const t = new Date(Date.now() - minutes * 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    await k(['patch', 'cronjob', name, '-n', NS, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status: { lastScheduleTime: t } })]);
  };
  /** Plays the kubelet: every pod of the Job succeeds. */
  const succeed = async (job: string) => {
    const pods = await waitFor(`pods of ${job}`, async () => {
      const ps = (await request(server, 'GET', `/api/v1/namespaces/${NS}/pods?labelSelector=batch.kubernetes.io/job-name%3D${job}`)).json() as { items: Pod[] };
      return ps.items.length ? ps.items : undefined;
    });
    for (const p of pods) {
      p.status = { ...p.status, phase: 'Succeeded' };
      expect((await request(server, 'PUT', `/api/v1/namespaces/${NS}/pods/${p.metadata.name}/status`, { body: p })).status).toBe(200);
    }
  };
  const minuteOf = (iso: string): number => Date.parse(iso) / 60_000;

  beforeAll(async () => {
    server = await startServer();
    // Left alone: its first Job comes when its schedule next fires, on the clock (every two
    // seconds, so the test need not wait for a minute to turn).
    await k(['create', 'cronjob', 'clock', '-n', NS, '--image=busybox', '--schedule=@every 2s']);
  });

  afterAll(async () => {
    await server?.cleanup();
  });

  it('starts the Job of the latest missed time, owned by the CronJob and listed as active', async () => {
    // The case expects one Job: it must not run into the next turn of the minute, when the
    // schedule fires again. Starting in the first 40 s of a minute leaves it 20 s.
    const second = new Date().getUTCSeconds();
    if (second >= 40) await new Promise((r) => setTimeout(r, (61 - second) * 1000));
    await k(['create', 'cronjob', 'tick', '-n', NS, '--image=busybox', '--schedule=*/1 * * * *', '--', 'date']);
    await missed('tick', 10);
    const [job] = await waitJobs('tick', (js) => js.length === 1, 'the Job of tick');
    const cj = await waitFor('tick active', async () => {
      const c = await cronJob('tick');
      return c.status?.active?.length ? c : undefined;
    });
    const scheduled = cj.status!.lastScheduleTime!;
    // The latest minute, not the ten missed: one Job.
    expect(Date.now() - Date.parse(scheduled)).toBeLessThan(120_000);
    expect(job!.metadata.name).toBe(`tick-${minuteOf(scheduled)}`);
    expect(job!.metadata.annotations?.['batch.kubernetes.io/cronjob-scheduled-timestamp']).toBe(scheduled);
    expect(job!.metadata.ownerReferences).toEqual([
      expect.objectContaining({ apiVersion: 'batch/v1', kind: 'CronJob', name: 'tick', controller: true, blockOwnerDeletion: true }),
    ]);
    expect(cj.status!.active).toEqual([expect.objectContaining({ kind: 'Job', apiVersion: 'batch/v1', name: job!.metadata.name, uid: job!.metadata.uid })]);
    await eventsOnceSeen(server, NS, 'involvedObject.name=tick,reason=SuccessfulCreate', (out) => out.includes(`Created job ${job!.metadata.name}`));
    // kubectl's columns: SCHEDULE, TIMEZONE, SUSPEND, ACTIVE, LAST SCHEDULE.
    expect((await k(['get', 'cronjob', 'tick', '-n', NS])).stdout).toMatch(/^tick\s+\*\/1 \* \* \* \*\s+<none>\s+False\s+1\s+\d+s\s+/m);

    // The Job completes: it leaves the active list and sets the last successful time.
    await succeed(job!.metadata.name);
    const done = await waitFor('tick to see its Job complete', async () => {
      const c = await cronJob('tick');
      return !c.status?.active && c.status?.lastSuccessfulTime ? c : undefined;
    });
    expect(Date.parse(done.status!.lastSuccessfulTime!)).toBeGreaterThanOrEqual(Date.parse(scheduled));
    await eventsOnceSeen(server, NS, 'involvedObject.name=tick,reason=SawCompletedJob', (out) =>
      out.includes(`Saw completed job: ${job!.metadata.name}, condition: Complete`),
    );
  });

  it('keeps only as many finished Jobs as the history limit', async () => {
    await k(['create', '-n', NS, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'batch/v1',
        kind: 'CronJob',
        metadata: { name: 'lean' },
        spec: {
          schedule: '* * * * *',
          successfulJobsHistoryLimit: 0,
          jobTemplate: {
            metadata: { labels: { team: 'ops' } },
            spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } },
          },
        },
      }),
    });
    await missed('lean', 5);
    const [job] = await waitJobs('lean', (js) => js.length === 1, 'the Job of lean');
    expect(job!.metadata.labels).toMatchObject({ team: 'ops' });
    await succeed(job!.metadata.name);
    await waitJobs('lean', (js) => js.length === 0, 'the finished Job deleted');
    await eventsOnceSeen(server, NS, 'involvedObject.name=lean,reason=SuccessfulDelete', (out) => out.includes(`Deleted job ${job!.metadata.name}`));
  });

  it('Forbid skips a time while a Job runs; Replace deletes the running Job and starts the new one', async () => {
    // Each starts suspended with an earlier run still active (a Job made with kubectl from the
    // CronJob, listed in its status) and a missed time, then is resumed.
    const prepare = async (name: string, policy: string): Promise<Job> => {
      await k(['create', '-n', NS, '-f', '-'], {
        input: JSON.stringify({
          apiVersion: 'batch/v1',
          kind: 'CronJob',
          metadata: { name },
          spec: {
            schedule: '* * * * *',
            concurrencyPolicy: policy,
            suspend: true,
            jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } } },
          },
        }),
      });
      await k(['create', 'job', `${name}-earlier`, '-n', NS, `--from=cronjob/${name}`]);
      const [earlier] = await waitJobs(name, (js) => js.length === 1, `the earlier Job of ${name}`);
      const ref = { kind: 'Job', apiVersion: 'batch/v1', namespace: NS, name: earlier!.metadata.name, uid: earlier!.metadata.uid };
      const t = new Date(Date.now() - 5 * 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
      await k([
        'patch',
        'cronjob',
        name,
        '-n',
        NS,
        '--subresource=status',
        '--type=merge',
        '-p',
        JSON.stringify({ status: { active: [ref], lastScheduleTime: t } }),
      ]);
      await k(['patch', 'cronjob', name, '-n', NS, '--type=merge', '-p', '{"spec":{"suspend":false}}']);
      return earlier!;
    };
    await prepare('solo', 'Forbid');
    const first = await prepare('fresh', 'Replace');

    await waitFor('JobAlreadyActive', async () =>
      (await events('solo', 'JobAlreadyActive')).includes('Not starting job because prior execution is running and concurrency policy is Forbid')
        ? true
        : undefined,
    );
    expect((await jobsOf('solo')).map((j) => j.metadata.name)).toEqual(['solo-earlier']);
    expect((await cronJob('solo')).status?.active?.map((r) => r.name)).toEqual(['solo-earlier']);

    const replaced = await waitJobs('fresh', (js) => js.length === 1 && js[0]!.metadata.uid !== first.metadata.uid, 'the replacing Job of fresh');
    expect(replaced[0]!.metadata.name).toMatch(/^fresh-\d+$/);
    await eventsOnceSeen(server, NS, 'involvedObject.name=fresh,reason=SuccessfulDelete', (out) => out.includes('Deleted job fresh-earlier'));
    await waitFor('fresh to list the new Job only', async () => {
      const c = await cronJob('fresh');
      return c.status?.active?.length === 1 && c.status.active[0]!.uid === replaced[0]!.metadata.uid ? c : undefined;
    });
  });

  it('starts nothing while suspended, and resumes when unsuspended', async () => {
    await k(['create', 'cronjob', 'held', '-n', NS, '--image=busybox', '--schedule=* * * * *']);
    await k(['patch', 'cronjob', 'held', '-n', NS, '--type=merge', '-p', '{"spec":{"suspend":true}}']);
    await missed('held', 5);
    // Another CronJob's Job, asked for after this one, proves the controller has looked at both.
    await k(['create', 'cronjob', 'witness', '-n', NS, '--image=busybox', '--schedule=* * * * *']);
    await missed('witness', 5);
    await waitJobs('witness', (js) => js.length === 1, 'the Job of witness');
    expect(await jobsOf('held')).toHaveLength(0);
    expect((await k(['get', 'cronjob', 'held', '-n', NS])).stdout).toMatch(/^held\s+\* \* \* \* \*\s+<none>\s+True\s+0\s+5m/m);
    await k(['patch', 'cronjob', 'held', '-n', NS, '--type=merge', '-p', '{"spec":{"suspend":false}}']);
    await waitJobs('held', (js) => js.length === 1, 'the Job of held once resumed');
  });

  it('reads the schedule in spec.timeZone', async () => {
    await k(['create', '-n', NS, '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'batch/v1',
        kind: 'CronJob',
        metadata: { name: 'zoned' },
        spec: {
          schedule: '0 9 * * *',
          timeZone: 'Asia/Tokyo',
          jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } } },
        },
      }),
    });
    await missed('zoned', 2 * 24 * 60);
    const [job] = await waitJobs('zoned', (js) => js.length === 1, 'the Job of zoned');
    // 09:00 in Tokyo is 00:00 UTC; the annotation gives it in Tokyo's zone.
    expect(job!.metadata.annotations?.['batch.kubernetes.io/cronjob-scheduled-timestamp']).toMatch(/T09:00:00\+09:00$/);
    expect(job!.metadata.name).toMatch(/^zoned-\d+$/);
    expect(Number(job!.metadata.name.slice('zoned-'.length)) % (24 * 60)).toBe(0);
  });

  it('reports a Job it cannot create, and keeps the CronJob as it was', async () => {
    await k(['create', 'namespace', 'cj-quota']);
    await k(['create', 'quota', 'no-jobs', '-n', 'cj-quota', '--hard=count/jobs.batch=0']);
    await k(['create', 'cronjob', 'denied', '-n', 'cj-quota', '--image=busybox', '--schedule=* * * * *']);
    const t = new Date(Date.now() - 5 * 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    await k([
      'patch',
      'cronjob',
      'denied',
      '-n',
      'cj-quota',
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status: { lastScheduleTime: t } }),
    ]);
    const message = await waitFor('FailedCreate', async () => {
      const m = (
        await k(['get', 'events', '-n', 'cj-quota', '--field-selector', 'involvedObject.name=denied,reason=FailedCreate', '-o', 'jsonpath={.items[*].message}'])
      ).stdout;
      return m || undefined;
    });
    expect(message).toMatch(/^Error creating job: jobs\.batch "denied-\d+" is forbidden: exceeded quota: no-jobs/);
    const cj = (await request(server, 'GET', '/apis/batch/v1/namespaces/cj-quota/cronjobs/denied')).json() as CronJob;
    expect(cj.status).toEqual({ lastScheduleTime: t });
  });

  it('starts a CronJob left alone when its schedule next fires', async () => {
    const [job] = await waitJobs('clock', (js) => js.length >= 1, 'the Job of clock');
    expect(job!.metadata.name).toMatch(/^clock-\d+$/);
    const scheduled = Date.parse(job!.metadata.annotations!['batch.kubernetes.io/cronjob-scheduled-timestamp']!);
    // Named after the minute it was scheduled for.
    expect(job!.metadata.name).toBe(`clock-${Math.floor(scheduled / 60_000)}`);
    // The CronJob recorded that time, or a later one if the schedule fired again meanwhile.
    const cj = await cronJob('clock');
    expect(Date.parse(cj.status?.lastScheduleTime ?? '')).toBeGreaterThanOrEqual(scheduled);
    // Created when the schedule fired (the controller's timer), not at a later resync (30 s).
    const created = Date.parse(job!.metadata.creationTimestamp ?? '');
    expect(created - scheduled).toBeLessThan(10_000);
  });
});
