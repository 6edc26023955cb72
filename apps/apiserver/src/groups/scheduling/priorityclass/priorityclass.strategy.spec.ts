import { StatusError, type KubeObject } from '@app/apimachinery';
import type { RequestContext } from '@app/registry';
import { HIGHEST_USER_DEFINABLE_PRIORITY, priorityClassStrategy, SYSTEM_PRIORITY_CLASSES } from './priorityclass.strategy.js';

const ctx: RequestContext = { user: { username: 'u', groups: [] }, dryRun: false, warnings: [], now: () => new Date() };
const pc = (name: string, value: number, extra: Record<string, unknown> = {}): KubeObject => ({ metadata: { name }, value, ...extra });

describe('PriorityClass strategy', () => {
  it('accepts user classes up to HighestUserDefinablePriority, negative values included', () => {
    expect(priorityClassStrategy.validate!(pc('high', HIGHEST_USER_DEFINABLE_PRIORITY), ctx)).toEqual([]);
    expect(priorityClassStrategy.validate!(pc('low', -5), ctx)).toEqual([]);
  });

  it('refuses a user class above 1000000000', () => {
    expect(priorityClassStrategy.validate!(pc('too-high', HIGHEST_USER_DEFINABLE_PRIORITY + 1), ctx)).toEqual([
      { type: 'FieldValueForbidden', field: 'value', detail: 'maximum allowed value of a user defined priority is 1000000000' },
    ]);
  });

  it('reserves the system- prefix for the built-in classes with their exact value and globalDefault false', () => {
    for (const c of SYSTEM_PRIORITY_CLASSES) expect(priorityClassStrategy.validate!(structuredClone(c), ctx)).toEqual([]);
    const detail = (o: KubeObject) => priorityClassStrategy.validate!(o, ctx).map((e) => `${e.type} ${e.field}: ${e.detail}`);
    const prefix = "FieldValueForbidden metadata.name: priority class names with 'system-' prefix are reserved for system use only. error: ";
    expect(detail(pc('system-mine', 5))).toEqual([prefix + 'system-mine is not a known system priority class']);
    expect(detail(pc('system-node-critical', 5))).toEqual([prefix + 'value of system-node-critical PriorityClass must be 2000001000']);
    expect(detail(pc('system-cluster-critical', 2000000000, { globalDefault: true }))).toEqual([
      prefix + 'globalDefault of system-cluster-critical PriorityClass must be false',
    ]);
  });

  it('keeps value and preemptionPolicy on update; description and globalDefault may change', () => {
    const old = pc('a', 10, { preemptionPolicy: 'PreemptLowerPriority' });
    expect(
      priorityClassStrategy.validateUpdate!(pc('a', 10, { preemptionPolicy: 'PreemptLowerPriority', description: 'd', globalDefault: true }), old, ctx),
    ).toEqual([]);
    const errs = priorityClassStrategy.validateUpdate!(pc('a', 11, { preemptionPolicy: 'Never' }), old, ctx);
    expect(errs).toEqual([
      { type: 'FieldValueForbidden', field: 'value', detail: 'may not be changed in an update.' },
      { type: 'FieldValueInvalid', field: 'preemptionPolicy', value: 'Never', detail: 'field is immutable' },
    ]);
  });

  it('refuses deleting the built-in classes with 403, allows others', () => {
    expect(() => priorityClassStrategy.validateDelete!(pc('mine', 1), ctx)).not.toThrow();
    for (const name of ['system-node-critical', 'system-cluster-critical']) {
      let err: unknown;
      try {
        priorityClassStrategy.validateDelete!(pc(name, 1), ctx);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(StatusError);
      expect((err as StatusError).code).toBe(403);
      expect((err as StatusError).message).toBe(
        `priorityclasses.scheduling.k8s.io "${name}" is forbidden: this is a system priority class and cannot be deleted`,
      );
    }
  });

  it('defines the built-in classes with Kubernetes values', () => {
    expect(SYSTEM_PRIORITY_CLASSES.map((c) => [c.metadata.name, c.value])).toEqual([
      ['system-node-critical', 2000001000],
      ['system-cluster-critical', 2000000000],
    ]);
  });
});
