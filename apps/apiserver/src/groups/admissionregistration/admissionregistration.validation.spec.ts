import { fieldErrorMessage } from '@app/apimachinery';
import { validateWebhookConfiguration, validateWebhookConfigurationUpdate, validateWebhookURL } from './admissionregistration.validation.js';
import { parseGoUrl } from './webhook.url.js';

type Obj = Record<string, unknown>;
const hook = (extra: Obj = {}): Obj => ({
  name: 'check.policy.example.com',
  clientConfig: { service: { namespace: 'ns', name: 'svc', port: 443 } },
  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: '*' }],
  failurePolicy: 'Fail',
  matchPolicy: 'Equivalent',
  namespaceSelector: {},
  objectSelector: {},
  sideEffects: 'None',
  timeoutSeconds: 10,
  admissionReviewVersions: ['v1'],
  ...extra,
});
const cfg = (...webhooks: Obj[]): Obj => ({ metadata: { name: 'c' }, webhooks });
const msgs = (o: Obj, kind: 'mutating' | 'validating' = 'validating') => validateWebhookConfiguration(o, kind).map(fieldErrorMessage);

describe('webhook configuration validation', () => {
  it('accepts a complete webhook of either kind', () => {
    expect(msgs(cfg(hook()))).toEqual([]);
    expect(msgs(cfg(hook({ reinvocationPolicy: 'IfNeeded' })), 'mutating')).toEqual([]);
    expect(msgs(cfg(hook({ clientConfig: { url: 'https://hooks.example.com:8443/validate' } })))).toEqual([]);
  });

  it('wants fully qualified, unique names', () => {
    expect(msgs(cfg(hook({ name: '' }), hook({ name: 'Bad_Name' }), hook({ name: 'two.parts' }), hook(), hook()))).toEqual([
      'webhooks[0].name: Required value',
      `webhooks[1].name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
      'webhooks[2].name: Invalid value: "two.parts": should be a domain with at least three segments separated by dots',
      'webhooks[4].name: Duplicate value: "check.policy.example.com"',
    ]);
  });

  it('checks rules: operations, wildcards alone, resources and scope', () => {
    const rules = [
      { operations: [], apiGroups: [], apiVersions: [], resources: [] },
      { operations: ['*', 'CREATE', 'PATCH'], apiGroups: ['*', 'apps'], apiVersions: ['*', ''], resources: ['*/*', 'pods'], scope: 'Everywhere' },
      { operations: ['UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods/*', 'pods/status', '*/scale', 'deployments/scale', '*', 'pods', ''] },
    ];
    expect(msgs(cfg(hook({ rules })))).toEqual([
      'webhooks[0].rules[0].operations: Required value',
      'webhooks[0].rules[0].apiGroups: Required value',
      'webhooks[0].rules[0].apiVersions: Required value',
      'webhooks[0].rules[0].resources: Required value',
      `webhooks[0].rules[1].operations: Invalid value: []admissionregistration.OperationType{"*", "CREATE", "PATCH"}: if '*' is present, must not specify other operations`,
      'webhooks[0].rules[1].operations[2]: Unsupported value: "PATCH": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE"',
      `webhooks[0].rules[1].apiGroups: Invalid value: []string{"*", "apps"}: if '*' is present, must not specify other API groups`,
      `webhooks[0].rules[1].apiVersions: Invalid value: []string{"*", ""}: if '*' is present, must not specify other API versions`,
      'webhooks[0].rules[1].apiVersions[1]: Required value',
      `webhooks[0].rules[1].resources: Invalid value: []string{"*/*", "pods"}: if '*/*' is present, must not specify other resources`,
      'webhooks[0].rules[1].scope: Unsupported value: "Everywhere": supported values: "*", "Cluster", "Namespaced"',
      `webhooks[0].rules[2].resources[1]: Invalid value: "pods/status": if 'pods/*' is present, must not specify pods/status`,
      `webhooks[0].rules[2].resources[3]: Invalid value: "deployments/scale": if '*/scale' is present, must not specify deployments/scale`,
      'webhooks[0].rules[2].resources[6]: Required value',
      `webhooks[0].rules[2].resources: Invalid value: []string{"pods/*", "pods/status", "*/scale", "deployments/scale", "*", "pods", ""}: if '*' is present, must not specify other resources without subresources`,
    ]);
    // `pods` after `*`: the last plain resource decides, as in Kubernetes.
    expect(msgs(cfg(hook({ rules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*', 'pods'] }] })))).toEqual([
      `webhooks[0].rules[0].resources: Invalid value: []string{"*", "pods"}: if '*' is present, must not specify other resources without subresources`,
    ]);
  });

  it('checks the policies, side effects, timeout and review versions', () => {
    const bad = hook({
      failurePolicy: 'Retry',
      matchPolicy: 'Loose',
      sideEffects: 'Some',
      timeoutSeconds: 31,
      reinvocationPolicy: 'Always',
      admissionReviewVersions: ['v2', 'v2', 'V3'],
    });
    expect(msgs(cfg(bad), 'mutating')).toEqual([
      'webhooks[0].failurePolicy: Unsupported value: "Retry": supported values: "Fail", "Ignore"',
      'webhooks[0].matchPolicy: Unsupported value: "Loose": supported values: "Equivalent", "Exact"',
      'webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"',
      'webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds',
      'webhooks[0].reinvocationPolicy: Unsupported value: "Always": supported values: "IfNeeded", "Never"',
      'webhooks[0].admissionReviewVersions[1]: Invalid value: "v2": duplicate version',
      `webhooks[0].admissionReviewVersions[2]: Invalid value: "V3": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
      'webhooks[0].admissionReviewVersions: Invalid value: []string{"v2", "v2", "V3"}: must include at least one of v1, v1beta1',
    ]);
    expect(msgs(cfg(hook({ sideEffects: undefined, admissionReviewVersions: [], timeoutSeconds: 0 })))).toEqual([
      'webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun',
      'webhooks[0].timeoutSeconds: Invalid value: 0: the timeout value must be between 1 and 30 seconds',
      'webhooks[0].admissionReviewVersions: Required value: must specify one of v1, v1beta1',
    ]);
    // reinvocationPolicy is a mutating webhook's field only.
    expect(msgs(cfg(hook({ reinvocationPolicy: 'Always' })))).toEqual([]);
  });

  it('wants exactly one of url and service, each as Kubernetes checks it', () => {
    const cc = (clientConfig: Obj) => msgs(cfg(hook({ clientConfig })));
    expect(cc({})).toEqual(['webhooks[0].clientConfig: Required value: exactly one of url or service is required']);
    expect(cc({ url: 'https://a.example.com', service: { namespace: 'n', name: 's', port: 443 } })).toEqual([
      'webhooks[0].clientConfig: Required value: exactly one of url or service is required',
    ]);
    expect(cc({ url: 'http://' })).toEqual([
      `webhooks[0].clientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]`,
      'webhooks[0].clientConfig.url: Invalid value: "": host must be provided; desired format: https://host[/path]',
    ]);
    expect(cc({ url: 'https://user:pw@a.example.com/p?x=1#frag' })).toEqual([
      'webhooks[0].clientConfig.url: Invalid value: "user:pw": user information is not permitted in the URL',
      'webhooks[0].clientConfig.url: Invalid value: "frag": fragments are not permitted in the URL',
      'webhooks[0].clientConfig.url: Invalid value: "x=1": query parameters are not permitted in the URL',
    ]);
    expect(cc({ url: '://nope' })).toEqual([
      'webhooks[0].clientConfig.url: Required value: url must be a valid URL: parse "://nope": missing protocol scheme; desired format: https://host[/path]',
    ]);
    expect(cc({ service: { port: 0, path: 'x//Y/' } })).toEqual([
      'webhooks[0].clientConfig.service.name: Required value: service name is required',
      'webhooks[0].clientConfig.service.namespace: Required value: service namespace is required',
      'webhooks[0].clientConfig.service.port: Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive',
      `webhooks[0].clientConfig.service.path: Invalid value: "x//Y/": must start with a '/'`,
      // Kubernetes drops the first character whatever it is, so "x" is not a segment.
      'webhooks[0].clientConfig.service.path: Invalid value: "x//Y/": segment[0] may not be empty',
      'webhooks[0].clientConfig.service.path: Invalid value: "x//Y/": segment[1] may not be empty',
      `webhooks[0].clientConfig.service.path: Invalid value: "x//Y/": segment[2]: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
    ]);
    expect(cc({ service: { namespace: 'n', name: 's', port: 443, path: '//' } })).toEqual([
      'webhooks[0].clientConfig.service.path: Invalid value: "//": segment[0] may not be empty',
    ]);
  });

  it('checks selectors and match conditions', () => {
    const bad = hook({
      namespaceSelector: { matchExpressions: [{ key: 'env', operator: 'In' }] },
      objectSelector: { matchLabels: { 'a b': 'x' }, matchExpressions: [{ key: 'k', operator: 'Exists', values: ['v'] }] },
      matchConditions: [
        { name: 'ok', expression: "request.userInfo.username != 'x'" },
        { name: 'ok', expression: ' ' },
        { expression: 'true' },
        { name: 'syntax', expression: 'object.metadata.name ==' },
        { name: 'type', expression: "'a' + 1" },
        { name: 'string', expression: "'a'" },
      ],
    });
    expect(msgs(cfg(bad))).toEqual([
      "webhooks[0].namespaceSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
      `webhooks[0].objectSelector.matchLabels: Invalid value: "a b": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
      "webhooks[0].objectSelector.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
      'webhooks[0].matchConditions[1].expression: Required value',
      'webhooks[0].matchConditions[1].name: Duplicate value: "ok"',
      'webhooks[0].matchConditions[2].name: Required value',
      'webhooks[0].matchConditions[3].expression: Invalid value: "object.metadata.name ==": compilation failed: ERROR: <input>:1:24: Unexpected token: EOF',
      `webhooks[0].matchConditions[4].expression: Invalid value: "'a' + 1": compilation failed: ERROR: <input>:1:1: no such overload: string + int`,
      `webhooks[0].matchConditions[5].expression: Invalid value: "'a'": must evaluate to bool`,
    ]);
  });

  it('on update keeps accepting what the stored object already had', () => {
    const legacy = cfg(hook({ sideEffects: 'Unknown', admissionReviewVersions: ['v0'] }));
    expect(msgs(legacy)).toHaveLength(2);
    const changed = cfg(hook({ sideEffects: 'Unknown', admissionReviewVersions: ['v0'], timeoutSeconds: 5 }));
    expect(validateWebhookConfigurationUpdate(changed, legacy, 'validating')).toEqual([]);
    // A stored object that follows the rules holds its update to them.
    expect(validateWebhookConfigurationUpdate(legacy, cfg(hook()), 'validating').map(fieldErrorMessage)).toEqual([
      'webhooks[0].sideEffects: Unsupported value: "Unknown": supported values: "None", "NoneOnDryRun"',
      'webhooks[0].admissionReviewVersions: Invalid value: []string{"v0"}: must include at least one of v1, v1beta1',
    ]);
  });
});

describe('webhook URL parsing (Go net/url)', () => {
  it('splits what the rules read', () => {
    expect(parseGoUrl('https://a.example.com:8443/x?q=1#f')).toEqual({ scheme: 'https', host: 'a.example.com:8443', rawQuery: 'q=1', fragment: 'f' });
    expect(parseGoUrl('HTTPS://[::1]:443')).toEqual({ scheme: 'https', host: '[::1]:443', rawQuery: '', fragment: '' });
    expect(parseGoUrl('a.example.com/path')).toEqual({ scheme: '', host: '', rawQuery: '', fragment: '' });
  });
  it('reports what url.Parse refuses', () => {
    expect(parseGoUrl('https://a.example.com:port/')).toEqual({ error: 'parse "https://a.example.com:port/": invalid port ":port" after host' });
    expect(parseGoUrl('https://a b.example.com/')).toEqual({ error: 'parse "https://a b.example.com/": invalid character " " in host name' });
    expect(parseGoUrl('https://a.example.com/%zz')).toEqual({ error: 'parse "https://a.example.com/%zz": invalid URL escape "%zz"' });
    expect(validateWebhookURL('a.example.com', 'url').map(fieldErrorMessage)).toEqual([
      `url: Invalid value: "": 'https' is the only allowed URL scheme; desired format: https://host[/path]`,
      'url: Invalid value: "": host must be provided; desired format: https://host[/path]',
    ]);
  });
});
