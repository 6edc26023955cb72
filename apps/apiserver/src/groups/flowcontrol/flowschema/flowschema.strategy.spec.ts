import type { KubeObject } from '@app/apimachinery';
import type { RequestContext } from '@app/registry';
import { MANDATORY_FLOW_SCHEMAS } from '../flowcontrol.kinds.js';
import { flowSchemaStrategy } from './flowschema.strategy.js';

const ctx: RequestContext = { user: { username: 'u', groups: [] }, dryRun: false, warnings: [], now: () => new Date() };
const fs = (spec: Record<string, unknown>): KubeObject => ({
  metadata: { name: 'f' },
  spec: { priorityLevelConfiguration: { name: 'p' }, matchingPrecedence: 100, ...spec },
});
const msgs = (o: KubeObject) => flowSchemaStrategy.validate!(o, ctx).map((e) => `${e.field}: ${e.detail}`);

describe('FlowSchema strategy', () => {
  it('accepts the mandatory schemas', () => {
    for (const m of MANDATORY_FLOW_SCHEMAS) expect(msgs(structuredClone(m))).toEqual([]);
  });
  it('checks precedence, the priority level and the distinguisher', () => {
    expect(msgs(fs({ matchingPrecedence: 10001, priorityLevelConfiguration: {}, distinguisherMethod: { type: 'ByColour' } }))).toEqual([
      'spec.matchingPrecedence: must not be greater than 10000',
      'spec.distinguisherMethod.type: supported values: "ByNamespace", "ByUser"',
      'spec.priorityLevelConfiguration.name: must reference a priority level',
    ]);
  });
  it('checks subjects and rules with Kubernetes messages', () => {
    const rules = [
      { subjects: [], nonResourceRules: [{ verbs: ['get', '*'], nonResourceURLs: [] }] },
      {
        subjects: [{ kind: 'User' }, { kind: 'ServiceAccount', serviceAccount: { name: 'a' } }, { kind: 'Robot' }],
        resourceRules: [{ verbs: [], apiGroups: [], resources: [] }],
      },
      { subjects: [{ kind: 'Group', group: { name: 'g' } }] },
    ];
    expect(msgs(fs({ rules }))).toEqual([
      'spec.rules[0].subjects: subjects must contain at least one value',
      "spec.rules[0].nonResourceRules[0].verbs: if '*' is present, must not specify other verbs",
      'spec.rules[0].nonResourceRules[0].nonResourceURLs: nonResourceURLs must contain at least one value',
      "spec.rules[1].subjects[0].user: user is required when subject kind is 'User'",
      'spec.rules[1].subjects[1].serviceAccount.namespace: namespace is required',
      'spec.rules[1].subjects[2].kind: supported values: "Group", "ServiceAccount", "User"',
      'spec.rules[1].resourceRules[0].verbs: verbs must contain at least one value',
      'spec.rules[1].resourceRules[0].apiGroups: resource rules must supply at least one api group',
      'spec.rules[1].resourceRules[0].resources: resource rules must supply at least one resource',
      'spec.rules[1].resourceRules[0].namespaces: resource rules that are not cluster scoped must supply at least one namespace',
      'spec.rules[2]: at least one of resourceRules and nonResourceRules has to be non-empty',
    ]);
  });
});
