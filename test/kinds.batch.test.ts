/**
 * batch/v1 Job and CronJob end to end with real kubectl, as stored kinds (no controllers, so a
 * Job stays Running at 0/1 and a CronJob never fires): `kubectl create job` and `create cronjob`
 * (protobuf bodies), `create job --from=cronjob/...` (a GET of the CronJob and a POST of a Job),
 * the columns of `get jobs,cronjobs`, Kubernetes' defaults and the generated selector in
 * `-o yaml`, `apply`, `explain`, refusals with Kubernetes' messages, and `delete`.
 */
import { jest } from '@jest/globals';
import { kubectl, startServer, type ServerHandle } from './support/server.js';

jest.setTimeout(180_000);

let server: ServerHandle;

beforeAll(async () => {
  server = await startServer();
});

afterAll(async () => {
  await server?.cleanup();
});

const k = (args: string[], opts: { input?: string; expectFail?: boolean } = {}) => kubectl(server, args, opts);

const CRONJOB = `apiVersion: batch/v1
kind: CronJob
metadata:
  name: nightly
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
          - name: backup
            image: example.com/backup:1.0
`;

describe('Job and CronJob', () => {
  it('are created, listed, copied and deleted with kubectl', async () => {
    expect((await k(['create', 'job', 'pi', '--image=perl', '--', 'perl', '-e', '1'])).stdout).toContain('job.batch/pi created');
    expect((await k(['create', 'cronjob', 'hello', '--image=busybox', '--schedule=*/1 * * * *'])).stdout).toContain('cronjob.batch/hello created');
    expect((await k(['create', 'job', 'manual', '--from=cronjob/hello'])).stdout).toContain('job.batch/manual created');

    const list = (await k(['get', 'jobs,cronjobs'])).stdout;
    expect(list).toMatch(/^NAME\s+STATUS\s+COMPLETIONS\s+DURATION\s+AGE$/m);
    // DURATION is empty until the Job controller has written the start time.
    expect(list).toMatch(/^job\.batch\/pi\s+Running\s+0\/1\s+(\d+s\s+)?\d+s$/m);
    expect(list).toMatch(/^job\.batch\/manual\s+Running\s+0\/1\s+(\d+s\s+)?\d+s$/m);
    expect(list).toMatch(/^NAME\s+SCHEDULE\s+TIMEZONE\s+SUSPEND\s+ACTIVE\s+LAST SCHEDULE\s+AGE$/m);
    // ACTIVE and LAST SCHEDULE stay 0 and <none> until the next minute, when the CronJob
    // controller starts a Job.
    expect(list).toMatch(/^cronjob\.batch\/hello\s+\*\/1 \* \* \* \*\s+<none>\s+False\s+(0\s+<none>|1\s+\d+s)\s+\d+s$/m);
    const wide = (await k(['get', 'job', 'pi', '-o', 'wide'])).stdout;
    expect(wide).toMatch(/^NAME\s+STATUS\s+COMPLETIONS\s+DURATION\s+AGE\s+CONTAINERS\s+IMAGES\s+SELECTOR$/m);
    expect(wide).toMatch(/^pi\s+Running\s+0\/1\s+(\d+s\s+)?\d+s\s+pi\s+perl\s+batch\.kubernetes\.io\/controller-uid=[0-9a-f-]{36}$/m);
    expect((await k(['get', 'cj'])).stdout).toMatch(/^hello\s/m);

    const uid = (await k(['get', 'job', 'pi', '-o', 'jsonpath={.metadata.uid}'])).stdout;
    const yaml = (await k(['get', 'job', 'pi', '-o', 'yaml'])).stdout;
    expect(yaml).toMatch(/backoffLimit: 6/);
    expect(yaml).toMatch(/completionMode: NonIndexed/);
    expect(yaml).toMatch(/completions: 1/);
    expect(yaml).toMatch(/parallelism: 1/);
    expect(yaml).toMatch(/podReplacementPolicy: TerminatingOrFailed/);
    expect(yaml).toMatch(/suspend: false/);
    expect(yaml).not.toMatch(/manualSelector/);
    expect(yaml).toContain(`batch.kubernetes.io/controller-uid: ${uid}`);
    expect(yaml).toMatch(/job-name: pi/);
    expect(yaml).toMatch(/restartPolicy: Never/);

    const cj = (await k(['get', 'cronjob', 'hello', '-o', 'yaml'])).stdout;
    expect(cj).toMatch(/concurrencyPolicy: Allow/);
    expect(cj).toMatch(/successfulJobsHistoryLimit: 3/);
    expect(cj).toMatch(/failedJobsHistoryLimit: 1/);
    expect(cj).toMatch(/suspend: false/);
    const manual = (await k(['get', 'job', 'manual', '-o', 'jsonpath={.metadata.annotations} {.metadata.ownerReferences[0].name}'])).stdout;
    expect(manual).toContain('"cronjob.kubernetes.io/instantiate":"manual"');
    expect(manual).toMatch(/ hello$/);

    expect((await k(['delete', 'job', 'pi', 'manual'])).stdout).toContain('job.batch "pi" deleted');
    expect((await k(['delete', 'cj', 'hello'])).stdout).toContain('cronjob.batch "hello" deleted');
    expect((await k(['get', 'jobs'])).stderr).toContain('No resources found');
  });

  it('are applied, explained and refused with Kubernetes messages', async () => {
    expect((await k(['apply', '-f', '-'], { input: CRONJOB })).stdout).toContain('cronjob.batch/nightly created');
    expect((await k(['apply', '-f', '-'], { input: CRONJOB.replace('0 3 * * *', '@daily') })).stdout).toContain('cronjob.batch/nightly configured');
    expect((await k(['get', 'cj', 'nightly', '-o', 'jsonpath={.spec.schedule}'])).stdout).toBe('@daily');
    expect((await k(['explain', 'job.spec'])).stdout).toMatch(/GROUP:\s+batch\nKIND:\s+Job\nVERSION:\s+v1/);
    expect((await k(['explain', 'cronjob.spec.schedule'])).stdout).toMatch(/KIND:\s+CronJob/);

    const tz = await k(['apply', '-f', '-'], {
      input: CRONJOB.replace('name: nightly', 'name: tz').replace('0 3 * * *', 'TZ=UTC 0 3 * * *'),
      expectFail: true,
    });
    expect(tz.stderr).toContain('cannot use TZ or CRON_TZ in schedule, use timeZone field instead');
    const bad = await k(['create', 'cronjob', 'bad', '--image=busybox', '--schedule=61 * * * *'], { expectFail: true });
    expect(bad.stderr).toContain('spec.schedule: Invalid value: "61 * * * *"');
    const always = await k(['apply', '-f', '-'], { input: CRONJOB.replace('name: nightly', 'name: always').replace('OnFailure', 'Always'), expectFail: true });
    expect(always.stderr).toContain('spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"');

    expect((await k(['create', 'job', 'once', '--image=busybox'])).stdout).toContain('job.batch/once created');
    const immutable = await k(
      ['patch', 'job', 'once', '--type', 'merge', '-p', '{"spec":{"template":{"spec":{"containers":[{"name":"once","image":"nginx"}]}}}}'],
      {
        expectFail: true,
      },
    );
    expect(immutable.stderr).toContain('spec.template: Invalid value');
    expect(immutable.stderr).toContain('field is immutable');
    expect((await k(['delete', 'job', 'once'])).stdout).toContain('job.batch "once" deleted');
    expect((await k(['delete', 'cronjob', 'nightly'])).stdout).toContain('cronjob.batch "nightly" deleted');
  });
});
