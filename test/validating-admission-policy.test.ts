/**
 * ValidatingAdmissionPolicy end to end with real kubectl: policies and bindings are served,
 * validated (CEL compiled) and printed; a bound policy refuses, warns of or audits the requests
 * its constraints and the binding's match resources select, with parameters from ConfigMaps, its
 * match conditions, variables, messageExpression and reason, the `authorizer` checks of the
 * requesting user's access, and requests at another version of a resource (matchPolicy
 * Equivalent); the admission configuration kinds are never checked.
 */
import { jest } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { kubectl, request, startServer, waitFor, type ServerHandle } from './support/server.js';

jest.setTimeout(120_000);

type Obj = Record<string, unknown>;
let server: ServerHandle;
let dir: string;
const k = (args: string[], opts: { input?: string; expectFail?: boolean | 'any' } = {}) => kubectl(server, args, opts);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kapi-vap-'));
  await writeFile(join(dir, 'audit.yaml'), 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  namespaces: [audited]\n');
  server = await startServer({ args: [`--audit-policy-file=${join(dir, 'audit.yaml')}`, `--audit-log-path=${join(dir, 'audit.log')}`] });
  await k(['create', 'namespace', 'limited']);
  await k(['label', 'namespace', 'limited', 'environment=test']);
  await k(['create', 'namespace', 'free']);
  await k(['create', 'namespace', 'audited']);
});

afterAll(async () => {
  await server?.cleanup();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const POLICY = `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: replicas.example.com}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: [apps]
      apiVersions: [v1]
      operations: [CREATE, UPDATE]
      resources: [deployments]
  validations:
  - expression: "object.spec.replicas <= 5"
`;
const BINDING = (name: string, actions: string, selector = 'environment: test') => `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: ${name}}
spec:
  policyName: replicas.example.com
  validationActions: [${actions}]
  matchResources:
    namespaceSelector:
      matchLabels: {${selector}}
`;

describe('ValidatingAdmissionPolicy', () => {
  it('refuses requests a bound policy fails, in the namespaces the binding selects', async () => {
    const resources = (await k(['api-resources', '--api-group=admissionregistration.k8s.io'])).stdout;
    expect(resources).toMatch(/validatingadmissionpolicies\s+admissionregistration.k8s.io\/v1\s+false\s+ValidatingAdmissionPolicy/);
    expect(resources).toMatch(/validatingadmissionpolicybindings\s+admissionregistration.k8s.io\/v1\s+false\s+ValidatingAdmissionPolicyBinding/);
    await k(['apply', '-f', '-'], { input: POLICY });
    await k(['apply', '-f', '-'], { input: BINDING('replicas-test.example.com', 'Deny') });
    const refused = await waitFor('the policy to take effect', async () => {
      const r = await k(['create', 'deployment', `big-${Date.now()}`, '-n', 'limited', '--image=nginx', '--replicas=6'], { expectFail: 'any' });
      return r.code !== 0 ? r : undefined;
    });
    expect(refused.stderr).toMatch(
      /error: failed to create deployment: deployments.apps "big-\d+" is forbidden: ValidatingAdmissionPolicy 'replicas.example.com' with binding 'replicas-test.example.com' denied request: failed expression: object.spec.replicas <= 5/,
    );
    // kubectl apply prints the 422 with its cause, as against kube-apiserver.
    const applied = await k(['apply', '-f', '-'], {
      input: JSON.stringify({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'applied', namespace: 'limited' }, spec: deploymentSpec(6) }),
      expectFail: true,
    });
    expect(applied.stderr).toContain(
      `The deployments "applied" is invalid: : ValidatingAdmissionPolicy 'replicas.example.com' with binding 'replicas-test.example.com' denied request: failed expression: object.spec.replicas <= 5`,
    );
    await k(['create', 'deployment', 'small', '-n', 'limited', '--image=nginx', '--replicas=2']);
    // The binding selects namespaces labelled environment=test only.
    await k(['create', 'deployment', 'big', '-n', 'free', '--image=nginx', '--replicas=6']);
    // Updates are checked too; /scale is a subresource the rule does not name, as in kube.
    await k(['scale', 'deployment', 'small', '-n', 'limited', '--replicas=3']);
    const scaled = await k(['patch', 'deployment', 'small', '-n', 'limited', '--type=merge', '-p', '{"spec":{"replicas":7}}'], { expectFail: true });
    expect(scaled.stderr).toContain('denied request: failed expression: object.spec.replicas <= 5');
    const status = (
      await request(server, 'POST', '/apis/apps/v1/namespaces/limited/deployments', {
        body: {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: 'raw' },
          spec: deploymentSpec(9),
        },
      })
    ).json<Obj>();
    expect(status).toMatchObject({
      code: 422,
      reason: 'Invalid',
      details: {
        name: 'raw',
        group: 'apps',
        kind: 'deployments',
        causes: [{ message: expect.stringContaining("ValidatingAdmissionPolicy 'replicas.example.com'") as unknown }],
      },
    });
    const table = (await k(['get', 'validatingadmissionpolicies'])).stdout;
    expect(table).toMatch(/NAME\s+VALIDATIONS\s+PARAMKIND\s+AGE/);
    expect(table).toMatch(/replicas.example.com\s+1\s+<unset>\s+\d+s/);
    expect((await k(['get', 'validatingadmissionpolicybindings'])).stdout).toMatch(/replicas-test.example.com\s+replicas.example.com\s+<unset>\s+\d+s/);
    await k(['delete', 'validatingadmissionpolicybinding', 'replicas-test.example.com']);
    await waitFor(
      'the binding to be gone',
      async () => (await k(['create', 'deployment', `gone-${Date.now()}`, '-n', 'limited', '--image=nginx', '--replicas=6'], { expectFail: 'any' })).code === 0,
    );
  });

  it('warns and audits instead of refusing when the binding says so', async () => {
    await k(['label', 'namespace', 'audited', 'environment=audit']);
    await k(['apply', '-f', '-'], { input: BINDING('replicas-audit.example.com', 'Warn, Audit', 'environment: audit') });
    const warned = await waitFor('the warning binding to take effect', async () => {
      const r = await k(['create', 'deployment', `w${Date.now()}`, '-n', 'audited', '--image=nginx', '--replicas=8']);
      return r.stderr.includes('Warning') ? r : undefined;
    });
    expect(warned.stderr).toContain(
      "Warning: Validation failed for ValidatingAdmissionPolicy 'replicas.example.com' with binding 'replicas-audit.example.com': failed expression: object.spec.replicas <= 5",
    );
    const events = (await readFile(join(dir, 'audit.log'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Obj);
    const annotated = events.find((e) => (e.annotations as Record<string, string> | undefined)?.['validation.policy.admission.k8s.io/validation_failure']);
    expect(JSON.parse((annotated!.annotations as Record<string, string>)['validation.policy.admission.k8s.io/validation_failure']!)).toEqual([
      {
        message: 'failed expression: object.spec.replicas <= 5',
        policy: 'replicas.example.com',
        binding: 'replicas-audit.example.com',
        expressionIndex: 0,
        validationActions: ['Warn', 'Audit'],
      },
    ]);
    await k(['delete', 'validatingadmissionpolicybinding', 'replicas-audit.example.com']);
  });

  it('takes its limits from parameter objects, with match conditions, variables, messageExpression and reason', async () => {
    await k(['create', 'namespace', 'params']);
    await k(['create', 'configmap', 'limits', '-n', 'params', '--from-literal=maxReplicas=3']);
    await k(['apply', '-f', '-'], {
      input: `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: limits.example.com}
spec:
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    resourceRules:
    - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments]}
  matchConditions:
  - name: not-exempt
    expression: "!has(object.metadata.labels) || !('exempt' in object.metadata.labels)"
  variables:
  - name: limit
    expression: "int(params.data.maxReplicas)"
  validations:
  - expression: "object.spec.replicas <= variables.limit"
    messageExpression: "'replicas must be at most ' + string(variables.limit) + ', not ' + string(object.spec.replicas)"
    reason: Forbidden
`,
    });
    await k(['apply', '-f', '-'], {
      input: `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: limits-params.example.com}
spec:
  policyName: limits.example.com
  validationActions: [Deny]
  paramRef: {name: limits, namespace: params, parameterNotFoundAction: Deny}
  matchResources:
    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: params}}
`,
    });
    const refused = await waitFor('the parameterized policy to take effect', async () => {
      const r = await request(server, 'POST', '/apis/apps/v1/namespaces/params/deployments', {
        body: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: `p${Date.now()}` }, spec: deploymentSpec(4) },
      });
      return r.status === 403 ? r : undefined;
    });
    expect(refused.json<Obj>().message).toMatch(
      /^deployments.apps "p\d+" is forbidden: ValidatingAdmissionPolicy 'limits.example.com' with binding 'limits-params.example.com' denied request: replicas must be at most 3, not 4$/,
    );
    const exempt = await request(server, 'POST', '/apis/apps/v1/namespaces/params/deployments', {
      body: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'exempt', labels: { exempt: 'yes' } }, spec: deploymentSpec(4) },
    });
    expect(exempt.status).toBe(201);
    // The parameter changes: the limit follows; without it the binding denies.
    await k(['create', 'configmap', 'limits', '-n', 'params', '--from-literal=maxReplicas=10', '--dry-run=client', '-o', 'yaml']).then((r) =>
      k(['apply', '-f', '-'], { input: r.stdout }),
    );
    const allowed = await k(['create', 'deployment', 'four', '-n', 'params', '--image=nginx', '--replicas=4']);
    expect(allowed.code).toBe(0);
    await k(['delete', 'configmap', 'limits', '-n', 'params']);
    const missing = await k(['create', 'deployment', 'five', '-n', 'params', '--image=nginx', '--replicas=1'], { expectFail: true });
    expect(missing.stderr).toContain('denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction');
    await k(['delete', 'validatingadmissionpolicybinding', 'limits-params.example.com']);
  });

  it('asks the authorizer about the requesting user', async () => {
    await k(['create', 'namespace', 'secure']);
    await k(['create', 'role', 'cm-writer', '-n', 'secure', '--verb=create,get', '--resource=configmaps']);
    await k(['create', 'rolebinding', 'alice-cm', '-n', 'secure', '--role=cm-writer', '--user=alice']);
    await k(['apply', '-f', '-'], {
      input: `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: tiered.example.com}
spec:
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [configmaps]}
  validations:
  - expression: "authorizer.requestResource.check('create').allowed()"
  - expression: >-
      !has(object.metadata.labels) || !('tier' in object.metadata.labels) ||
      authorizer.group('').resource('secrets').namespace(object.metadata.namespace).check('delete').allowed()
    messageExpression: "request.userInfo.username + ' may not delete secrets in ' + object.metadata.namespace"
    reason: Forbidden
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: tiered-secure.example.com}
spec:
  policyName: tiered.example.com
  validationActions: [Deny]
  matchResources:
    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: secure}}
`,
    });
    const cm = (name: string, labels: string) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}, namespace: secure, labels: {${labels}}}\n`;
    const refused = await waitFor('the authorizer policy to take effect', async () => {
      const r = await k(['create', '--as=alice', '-f', '-'], { input: cm(`t${Date.now()}`, 'tier: gold'), expectFail: 'any' });
      return r.code !== 0 ? r : undefined;
    });
    expect(refused.stderr).toMatch(
      /configmaps "t\d+" is forbidden: ValidatingAdmissionPolicy 'tiered.example.com' with binding 'tiered-secure.example.com' denied request: alice may not delete secrets in secure/,
    );
    // Without the label, and for the admin, the policy passes.
    expect((await k(['create', '--as=alice', '-f', '-'], { input: cm('plain', 'app: x') })).code).toBe(0);
    expect((await k(['create', '-f', '-'], { input: cm('admins', 'tier: gold') })).code).toBe(0);
    // Once alice may delete secrets there, her labelled ConfigMap is admitted.
    await k(['create', 'role', 'secret-admin', '-n', 'secure', '--verb=delete', '--resource=secrets']);
    await k(['create', 'rolebinding', 'alice-secrets', '-n', 'secure', '--role=secret-admin', '--user=alice']);
    await waitFor('alice to be admitted', async () => {
      const r = await k(['create', '--as=alice', '-f', '-'], { input: cm('alices', 'tier: gold'), expectFail: 'any' });
      return r.code === 0 ? r : undefined;
    });
    await k(['delete', 'validatingadmissionpolicybinding', 'tiered-secure.example.com']);
  });

  it('checks a request at another version of its resource, converted, under matchPolicy Equivalent', async () => {
    await k(['create', 'namespace', 'scaling']);
    const policy = (matchPolicy: string) => `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: cpu.example.com}
spec:
  matchConstraints:
    matchPolicy: ${matchPolicy}
    resourceRules:
    - {apiGroups: [autoscaling], apiVersions: [v2], operations: [CREATE], resources: [horizontalpodautoscalers]}
  validations:
  - expression: "object.spec.metrics.all(m, m.type != 'Resource' || m.resource.target.averageUtilization <= 80)"
    messageExpression: "'at most 80% CPU, not ' + string(object.spec.metrics[0].resource.target.averageUtilization) + ' (' + request.kind.version + ' of ' + request.requestKind.version + ')'"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: cpu-scaling.example.com}
spec:
  policyName: cpu.example.com
  validationActions: [Deny]
  matchResources:
    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: scaling}}
`;
    await k(['apply', '-f', '-'], { input: policy('Equivalent') });
    // An autoscaling/v1 object, checked as the autoscaling/v2 object it converts to.
    const hpa = (name: string, cpu: number) => ({
      body: {
        apiVersion: 'autoscaling/v1',
        kind: 'HorizontalPodAutoscaler',
        metadata: { name },
        spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 3, targetCPUUtilizationPercentage: cpu },
      },
    });
    const refused = await waitFor('the autoscaling policy to take effect', async () => {
      const r = await request(server, 'POST', '/apis/autoscaling/v1/namespaces/scaling/horizontalpodautoscalers', hpa(`h${Date.now()}`, 90));
      return r.status === 422 ? r : undefined;
    });
    expect(refused.json<Obj>().message).toMatch(/denied request: at most 80% CPU, not 90 \(v2 of v1\)$/);
    expect((await request(server, 'POST', '/apis/autoscaling/v1/namespaces/scaling/horizontalpodautoscalers', hpa('fine', 50))).status).toBe(201);
    // Exact: the v1 request is not one the rules name.
    await k(['apply', '-f', '-'], { input: policy('Exact') });
    await waitFor('matchPolicy Exact to take effect', async () => {
      const r = await request(server, 'POST', '/apis/autoscaling/v1/namespaces/scaling/horizontalpodautoscalers', hpa(`x${Date.now()}`, 90));
      return r.status === 201;
    });
    await k(['delete', 'validatingadmissionpolicybinding', 'cpu-scaling.example.com']);
  });

  it('refuses policies and bindings that are not valid, with the field at fault', async () => {
    const bad = await k(['apply', '-f', '-'], {
      input: `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: bad.example.com}
spec:
  matchConstraints: {resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}]}
  validations:
  - expression: "object.spec.replicas <="
  - expression: "'not a bool'"
    reason: Teapot
`,
      expectFail: true,
    });
    expect(bad.stderr).toContain('The ValidatingAdmissionPolicy "bad.example.com" is invalid');
    expect(bad.stderr).toContain('spec.validations[0].expression: Invalid value: "object.spec.replicas <=": compilation failed: ERROR: <input>:1:');
    expect(bad.stderr).toContain(`spec.validations[1].expression: Invalid value: "'not a bool'": must evaluate to bool`);
    expect(bad.stderr).toContain('spec.validations[1].reason: Unsupported value: "Teapot"');
    const binding = await k(['apply', '-f', '-'], {
      input: `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: bad-binding.example.com}
spec:
  policyName: replicas.example.com
  validationActions: [Deny, Warn]
  paramRef: {name: x}
`,
      expectFail: true,
    });
    expect(binding.stderr).toContain('spec.paramRef.parameterNotFoundAction: Required value');
    expect(binding.stderr).toContain('spec.validationActions: Invalid value');
    expect(binding.stderr).toContain('must not contain both Deny and Warn');
  });
});

function deploymentSpec(replicas: number): Obj {
  return {
    replicas,
    selector: { matchLabels: { app: 'x' } },
    template: { metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
  };
}
