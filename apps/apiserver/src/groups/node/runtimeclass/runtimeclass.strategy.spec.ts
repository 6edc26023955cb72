import type { KubeObject } from '@app/apimachinery';
import type { RequestContext } from '@app/registry';
import { runtimeClassStrategy } from './runtimeclass.strategy.js';

const ctx: RequestContext = { user: { username: 'u', groups: [] }, dryRun: false, warnings: [], now: () => new Date() };
const rc = (extra: Record<string, unknown>): KubeObject => ({ metadata: { name: 'gvisor' }, handler: 'runsc', ...extra });
const msgs = (o: KubeObject) => runtimeClassStrategy.validate!(o, ctx).map((e) => `${e.field}: ${e.detail}`);

describe('RuntimeClass strategy', () => {
  it('accepts a DNS-label handler with scheduling', () => {
    expect(
      msgs(rc({ scheduling: { nodeSelector: { 'sandbox.example/ok': 'yes' }, tolerations: [{ key: 'sandbox', operator: 'Exists', effect: 'NoSchedule' }] } })),
    ).toEqual([]);
  });
  it('refuses a handler that is not a lower-case DNS label, as Kubernetes words it', () => {
    expect(msgs(rc({ handler: 'Run_SC' }))).toEqual([
      "handler: a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    ]);
  });
  it('checks tolerations as the pod rules do', () => {
    expect(
      msgs(
        rc({
          scheduling: {
            tolerations: [
              { operator: 'Equal', value: 'x' },
              { key: 'k', operator: 'Exists', value: 'v' },
              { key: 'k', tolerationSeconds: 5, effect: 'NoSchedule' },
            ],
          },
        }),
      ),
    ).toEqual([
      'scheduling.tolerations[0].operator: operator must be Exists when `key` is empty, which means "match all values and all keys"',
      "scheduling.tolerations[1].operator: value must be empty when `operator` is 'Exists'",
      "scheduling.tolerations[2].effect: effect must be 'NoExecute' when `tolerationSeconds` is set",
    ]);
  });
  it('keeps the handler immutable', () => {
    expect(runtimeClassStrategy.validateUpdate!(rc({ handler: 'runc' }), rc({}), ctx)).toEqual([
      { type: 'FieldValueInvalid', field: 'handler', value: 'runc', detail: 'field is immutable' },
    ]);
  });
});
