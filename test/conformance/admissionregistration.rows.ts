/**
 * The admissionregistration.k8s.io/v1 webhook configurations and admission policies: stored with the defaults of
 * pkg/apis/admissionregistration/v1 defaults.go, refused with the messages of
 * pkg/apis/admissionregistration/validation (and k8s.io/apiserver pkg/util/webhook for the
 * client config), printed as kubectl prints them (NAME WEBHOOKS AGE). Calling the webhooks is
 * not probed here.
 */
import type { RowGroup } from './conformance.types.js';

const NS = 'cf-admreg';
const A = '/apis/admissionregistration.k8s.io/v1';
const VWC = `${A}/validatingwebhookconfigurations`;
const MWC = `${A}/mutatingwebhookconfigurations`;
const VAP = `${A}/validatingadmissionpolicies`;
const VAPB = `${A}/validatingadmissionpolicybindings`;
const MERGE = { 'content-type': 'application/merge-patch+json' };
const TABLE = 'application/json;as=Table;g=meta.k8s.io;v=v1';

type Obj = Record<string, unknown>;
/** A webhook that names only what v1 requires, so every default shows. */
const hook = (extra: Obj = {}): Obj => ({
  name: 'check.cf-admreg.example.com',
  clientConfig: { service: { namespace: NS, name: 'hook' } },
  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
  sideEffects: 'None',
  admissionReviewVersions: ['v1'],
  ...extra,
});
const config = (kind: 'ValidatingWebhookConfiguration' | 'MutatingWebhookConfiguration', name: string, ...webhooks: Obj[]) => ({
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind,
  metadata: { name },
  webhooks,
});
const vwc = (name: string, ...webhooks: Obj[]) => config('ValidatingWebhookConfiguration', name, ...webhooks);
const mwc = (name: string, ...webhooks: Obj[]) => config('MutatingWebhookConfiguration', name, ...webhooks);
/** The defaulted fields every webhook gets (v1 defaults.go). */
const DEFAULTED = {
  failurePolicy: 'Fail',
  matchPolicy: 'Equivalent',
  timeoutSeconds: 10,
  namespaceSelector: {},
  objectSelector: {},
  rules: [{ scope: '*' }],
  clientConfig: { service: { port: 443 } },
};

/** The group. */
export const ADMISSIONREGISTRATION: RowGroup = {
  name: 'admission webhook configurations',
  namespace: NS,
  rows: [
    {
      id: 'admreg-1',
      rule: "A ValidatingWebhookConfiguration's webhooks get their defaults; generation starts at 1; get and list return it",
      source: 'upstream pkg/apis/admissionregistration/v1 defaults.go; registry validatingwebhookconfiguration strategy.go',
      upstream:
        '201 with failurePolicy Fail, matchPolicy Equivalent, timeoutSeconds 10, empty selectors, rule scope "*", service port 443, no reinvocationPolicy; metadata.generation 1',
      req: { method: 'POST', path: VWC, body: vwc('cf-admreg-v1', hook()) },
      expect: { status: 201, body: { metadata: { generation: 1 }, webhooks: [DEFAULTED] }, absent: ['webhooks.0.reinvocationPolicy'] },
      then: [
        {
          req: { method: 'GET', path: `${VWC}/cf-admreg-v1` },
          expect: { status: 200, body: { kind: 'ValidatingWebhookConfiguration', webhooks: [DEFAULTED] } },
        },
        {
          req: { method: 'GET', path: `${VWC}?fieldSelector=metadata.name%3Dcf-admreg-v1` },
          expect: { status: 200, body: { kind: 'ValidatingWebhookConfigurationList', items: [{ webhooks: [DEFAULTED] }] } },
        },
      ],
    },
    {
      id: 'admreg-2',
      rule: 'A MutatingWebhookConfiguration also defaults reinvocationPolicy to Never',
      source: 'upstream pkg/apis/admissionregistration/v1 defaults.go (SetDefaults_MutatingWebhook)',
      upstream: '201 with the validating defaults and reinvocationPolicy Never',
      req: { method: 'POST', path: MWC, body: mwc('cf-admreg-m1', hook()) },
      expect: { status: 201, body: { metadata: { generation: 1 }, webhooks: [{ ...DEFAULTED, reinvocationPolicy: 'Never' }] } },
      then: [
        {
          req: { method: 'GET', path: `${MWC}/cf-admreg-m1` },
          expect: { status: 200, body: { kind: 'MutatingWebhookConfiguration', webhooks: [{ reinvocationPolicy: 'Never' }] } },
        },
        {
          req: { method: 'GET', path: `${MWC}?fieldSelector=metadata.name%3Dcf-admreg-m1` },
          expect: { status: 200, body: { kind: 'MutatingWebhookConfigurationList', items: [{ metadata: { name: 'cf-admreg-m1' } }] } },
        },
      ],
    },
    {
      id: 'admreg-3',
      rule: 'A v1 webhook declares sideEffects (None or NoneOnDryRun)',
      source: 'upstream pkg/apis/admissionregistration/validation (validateMutatingWebhook)',
      upstream: '422 Invalid "webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun"',
      req: { method: 'POST', path: MWC, body: mwc('cf-admreg-m2', hook({ sideEffects: undefined })) },
      expect: {
        status: 422,
        reason: 'Invalid',
        message:
          'MutatingWebhookConfiguration.admissionregistration.k8s.io "cf-admreg-m2" is invalid: webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun',
      },
    },
    {
      id: 'admreg-4',
      rule: 'A webhook URL is https with a host',
      source: 'upstream k8s.io/apiserver pkg/util/webhook validation.go (ValidateWebhookURL)',
      upstream: `422 Invalid "[webhooks[0].clientConfig.url: Invalid value: \\"http\\": 'https' is the only allowed URL scheme; ..., ...: host must be provided; ...]"`,
      req: { method: 'POST', path: VWC, body: vwc('cf-admreg-v2', hook({ clientConfig: { url: 'http://' } })) },
      expect: {
        status: 422,
        reason: 'Invalid',
        message: `ValidatingWebhookConfiguration.admissionregistration.k8s.io "cf-admreg-v2" is invalid: [webhooks[0].clientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path], webhooks[0].clientConfig.url: Invalid value: "": host must be provided; desired format: https://host[/path]]`,
      },
    },
    {
      id: 'admreg-5',
      rule: 'A client config names exactly one of url and service',
      source: 'upstream pkg/apis/admissionregistration/validation (validateValidatingWebhook)',
      upstream: '422 Invalid "webhooks[0].clientConfig: Required value: exactly one of url or service is required"',
      req: {
        method: 'POST',
        path: VWC,
        body: vwc('cf-admreg-v3', hook({ clientConfig: { url: 'https://hook.example.com/check', service: { namespace: NS, name: 'hook' } } })),
      },
      expect: {
        status: 422,
        reason: 'Invalid',
        message:
          'ValidatingWebhookConfiguration.admissionregistration.k8s.io "cf-admreg-v3" is invalid: webhooks[0].clientConfig: Required value: exactly one of url or service is required',
      },
    },
    {
      id: 'admreg-6',
      rule: 'timeoutSeconds is 1 to 30',
      source: 'upstream pkg/apis/admissionregistration/validation (validateMutatingWebhook)',
      upstream: '422 Invalid "webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds"',
      req: { method: 'POST', path: MWC, body: mwc('cf-admreg-m3', hook({ timeoutSeconds: 31 })) },
      expect: {
        status: 422,
        reason: 'Invalid',
        message:
          'MutatingWebhookConfiguration.admissionregistration.k8s.io "cf-admreg-m3" is invalid: webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds',
      },
    },
    {
      id: 'admreg-7',
      rule: 'The Table of a webhook configuration has the columns Name, Webhooks (a count) and Age',
      source: 'upstream pkg/printers/internalversion printers.go (printValidatingWebhook)',
      upstream: '200 Table with columns Name, Webhooks (integer), Age; cells ["cf-admreg-t1", 2, "<age>"]',
      setup: [{ method: 'POST', path: VWC, body: vwc('cf-admreg-t1', hook(), hook({ name: 'second.cf-admreg.example.com' })) }],
      req: { method: 'GET', path: `${VWC}/cf-admreg-t1`, headers: { accept: TABLE } },
      expect: {
        status: 200,
        body: { kind: 'Table', columnDefinitions: [{ name: 'Name' }, { name: 'Webhooks', type: 'integer' }, { name: 'Age' }] },
        text: /"cells":\["cf-admreg-t1",2,"\d+s"\]/,
      },
    },
    {
      id: 'admreg-8',
      rule: 'Changing the webhooks bumps metadata.generation; changing only labels does not',
      source: 'upstream registry mutatingwebhookconfiguration strategy.go (PrepareForUpdate)',
      upstream: '200 generation 2 after a timeout change; 200 generation 2 after a label change',
      setup: [{ method: 'POST', path: MWC, body: mwc('cf-admreg-g1', hook()) }],
      req: {
        method: 'PATCH',
        path: `${MWC}/cf-admreg-g1`,
        headers: MERGE,
        body: { webhooks: [{ ...hook(), timeoutSeconds: 5 }] },
      },
      expect: { status: 200, body: { metadata: { generation: 2 }, webhooks: [{ timeoutSeconds: 5 }] } },
      then: [
        {
          req: { method: 'PATCH', path: `${MWC}/cf-admreg-g1`, headers: MERGE, body: { metadata: { labels: { a: 'b' } } } },
          expect: { status: 200, body: { metadata: { generation: 2 } } },
        },
      ],
    },
    {
      id: 'admreg-9',
      rule: 'kubectl lists webhook configurations as NAME WEBHOOKS AGE',
      source: 'upstream pkg/printers/internalversion printers.go',
      upstream: 'NAME WEBHOOKS AGE, one line per configuration',
      setup: [{ method: 'POST', path: VWC, body: vwc('cf-admreg-k1', hook()) }],
      kubectl: { args: ['get', 'validatingwebhookconfigurations', 'cf-admreg-k1'], stdout: /^NAME\s+WEBHOOKS\s+AGE\ncf-admreg-k1\s+1\s+\d+s\n$/ },
    },
    {
      id: 'admreg-10',
      rule: 'A ValidatingAdmissionPolicy gets its defaults; generation starts at 1 and status is not taken from the create',
      source: 'upstream pkg/apis/admissionregistration/v1 defaults.go; registry validatingadmissionpolicy strategy.go',
      upstream: '201 with failurePolicy Fail, matchPolicy Equivalent, empty selectors, rule scope "*"; metadata.generation 1; no status',
      req: {
        method: 'POST',
        path: VAP,
        body: {
          metadata: { name: 'cf-admreg-p1' },
          spec: {
            matchConstraints: { resourceRules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }] },
            validations: [{ expression: 'true' }],
          },
          status: { observedGeneration: 7 },
        },
      },
      expect: {
        status: 201,
        body: {
          metadata: { generation: 1 },
          spec: {
            failurePolicy: 'Fail',
            matchConstraints: { matchPolicy: 'Equivalent', namespaceSelector: {}, objectSelector: {}, resourceRules: [{ scope: '*' }] },
          },
        },
        absent: ['status.observedGeneration'],
      },
    },
    {
      id: 'admreg-11',
      rule: 'A ValidatingAdmissionPolicy has validations or audit annotations',
      source: 'upstream pkg/apis/admissionregistration/validation (validateValidatingAdmissionPolicySpec)',
      upstream: '422 Invalid "spec.validations: Required value: validations or auditAnnotations must contain at least one item"',
      req: {
        method: 'POST',
        path: VAP,
        body: {
          metadata: { name: 'cf-admreg-p2' },
          spec: { matchConstraints: { resourceRules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }] } },
        },
      },
      expect: {
        status: 422,
        reason: 'Invalid',
        message:
          'ValidatingAdmissionPolicy.admissionregistration.k8s.io "cf-admreg-p2" is invalid: spec.validations: Required value: validations or auditAnnotations must contain at least one item',
      },
    },
    {
      id: 'admreg-12',
      rule: 'A ValidatingAdmissionPolicyBinding names its policy and at least one validation action',
      source: 'upstream pkg/apis/admissionregistration/validation (validateValidatingAdmissionPolicyBindingSpec)',
      upstream: '422 Invalid "[spec.policyName: Required value, spec.validationActions: Required value: at least one validation action is required]"',
      req: { method: 'POST', path: VAPB, body: { metadata: { name: 'cf-admreg-b1' }, spec: {} } },
      expect: {
        status: 422,
        reason: 'Invalid',
        message:
          'ValidatingAdmissionPolicyBinding.admissionregistration.k8s.io "cf-admreg-b1" is invalid: [spec.policyName: Required value, spec.validationActions: Required value: at least one validation action is required]',
      },
    },
  ],
};
