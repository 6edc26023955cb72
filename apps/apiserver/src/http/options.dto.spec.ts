import { StatusError } from '@app/apimachinery';
import { DeleteOptionsQueryDto, GetOptionsDto, ListOptionsDto, validateOptions, WriteOptionsDto } from './options.dto.js';

function statusOf(f: () => unknown): StatusError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(StatusError);
    return e as StatusError;
  }
  throw new Error('expected a failure');
}

describe('request options (class-validator)', () => {
  it('accepts valid options and ignores unknown parameters', () => {
    const o = validateOptions(ListOptionsDto, { limit: '10', resourceVersion: '5', resourceVersionMatch: 'NotOlderThan', other: 'x' });
    expect(o.limit).toBe('10');
  });
  it.each([
    [ListOptionsDto, { limit: 'abc' }, 'limit: Invalid value'],
    [ListOptionsDto, { resourceVersionMatch: 'Sometimes' }, 'resourceVersionMatch: Unsupported value'],
    [DeleteOptionsQueryDto, { gracePeriodSeconds: '1.5' }, 'gracePeriodSeconds: Invalid value'],
  ] as const)('rejects %p %j with a 400', (cls, q, msg) => {
    const e = statusOf(() => validateOptions(cls as new () => object, q as Record<string, string>));
    expect(e.code).toBe(400);
    expect(e.message).toContain(msg);
  });
});

describe('typed options', () => {
  it('get: resourceVersion becomes the read consistency', () => {
    expect(validateOptions(GetOptionsDto, {}).toOptions()).toEqual({ consistency: { mode: 'MostRecent' } });
    expect(validateOptions(GetOptionsDto, { resourceVersion: '0' }).toOptions()).toEqual({ consistency: { mode: 'Any' } });
    expect(validateOptions(GetOptionsDto, { resourceVersion: '7' }).toOptions()).toEqual({ consistency: { mode: 'NotOlderThan', revision: 7 } });
  });

  it('list: the consistency is resolved once, with Kubernetes messages for the invalid cells', () => {
    const list = (q: Record<string, string>) => validateOptions(ListOptionsDto, q).toListOptions();
    expect(list({ resourceVersion: '5', limit: '2' })).toMatchObject({ consistency: { mode: 'Exact', revision: 5 }, limit: 2 });
    expect(list({ resourceVersion: '5' })).toMatchObject({ consistency: { mode: 'NotOlderThan', revision: 5 } });
    expect(list({ resourceVersion: '5', resourceVersionMatch: 'Exact' })).toMatchObject({ consistency: { mode: 'Exact', revision: 5 } });
    expect(statusOf(() => list({ resourceVersionMatch: 'Exact' })).message).toBe(
      'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
    );
    expect(statusOf(() => list({ resourceVersionMatch: 'Exact', resourceVersion: '0' })).message).toContain(
      'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
    );
    expect(statusOf(() => list({ continue: 'not-a-token' })).code).toBe(400);
  });

  it('watch: reads resourceVersion, bookmarks, timeout and sendInitialEvents', () => {
    const watch = (q: Record<string, string>) => validateOptions(ListOptionsDto, q).toWatchOptions();
    expect(watch({})).toEqual({ resourceVersion: undefined, sendInitialEvents: undefined, allowWatchBookmarks: false, timeoutSeconds: undefined });
    expect(watch({ resourceVersion: '0', allowWatchBookmarks: 'true', timeoutSeconds: '0' })).toMatchObject({
      resourceVersion: 0,
      allowWatchBookmarks: true,
      timeoutSeconds: undefined,
    });
    expect(watch({ resourceVersion: '12', timeoutSeconds: '30' })).toMatchObject({ resourceVersion: 12, timeoutSeconds: 30 });
    expect(watch({ sendInitialEvents: 'true', resourceVersionMatch: 'NotOlderThan' }).sendInitialEvents).toBe(true);
    expect(watch({ sendInitialEvents: 'false', resourceVersionMatch: 'NotOlderThan', resourceVersion: '3' }).sendInitialEvents).toBe(false);
  });

  it('watch: rejects the combinations Kubernetes validateWatchOptions forbids, with 400', () => {
    const bad: Record<string, string>[] = [
      { sendInitialEvents: 'true' },
      { sendInitialEvents: 'true', resourceVersionMatch: 'Exact', resourceVersion: '1' },
      { resourceVersionMatch: 'NotOlderThan', resourceVersion: '1' },
      { sendInitialEvents: 'true', resourceVersionMatch: 'NotOlderThan', continue: 'x' },
      { resourceVersion: 'abc' },
      { timeoutSeconds: '-1' },
      { timeoutSeconds: 'soon' },
    ];
    for (const q of bad) expect(statusOf(() => validateOptions(ListOptionsDto, q).toWatchOptions()).code).toBe(400);
  });

  it('write: dryRun, fieldValidation (default Warn), fieldManager and force', () => {
    expect(validateOptions(WriteOptionsDto, {}).toParams(undefined, 'CreateOptions')).toEqual({
      dryRun: false,
      fieldValidation: 'Warn',
      fieldManager: undefined,
      force: false,
    });
    expect(
      validateOptions(WriteOptionsDto, { dryRun: 'All', fieldValidation: 'Strict', fieldManager: 'me', force: 'true' }).toParams(
        undefined,
        'PatchOptions',
        true,
      ),
    ).toEqual({
      dryRun: true,
      fieldValidation: 'Strict',
      fieldManager: 'me',
      force: true,
    });
    // Every value of a repeated dryRun is checked, not only the first.
    expect(statusOf(() => validateOptions(WriteOptionsDto, { dryRun: 'All' }).toParams(['All', 'Some'], 'CreateOptions')).message).toBe(
      'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: "Some": supported values: "All"',
    );
  });

  it('write: decoded values the options validation refuses are 422 naming the options kind', () => {
    const force = statusOf(() => validateOptions(WriteOptionsDto, { force: 'true' }).toParams(undefined, 'PatchOptions'));
    expect(force.code).toBe(422);
    expect(force.message).toBe('PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch');
    const fv = statusOf(() => validateOptions(WriteOptionsDto, { fieldValidation: 'Loose' }).toParams(undefined, 'UpdateOptions'));
    expect(fv.code).toBe(422);
    expect(fv.message).toBe(
      'UpdateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Loose": supported values: "", "Ignore", "Strict", "Warn"',
    );
    expect(statusOf(() => validateOptions(WriteOptionsDto, { fieldManager: 'x'.repeat(129) }).toParams(undefined, 'CreateOptions')).code).toBe(422);
    // Booleans decode as kube's parameter codec reads them: only 0, f, false are false.
    expect(validateOptions(WriteOptionsDto, { force: 'maybe' }).toParams(undefined, 'PatchOptions', true).force).toBe(true);
    expect(validateOptions(WriteOptionsDto, { force: 'F' }).toParams(undefined, 'PatchOptions', true).force).toBe(false);
  });

  it('delete: body and query merge into one DeleteOptions, the query winning; invalid combinations are 422', () => {
    const del = (q: Record<string, string>, body?: unknown) => validateOptions(DeleteOptionsQueryDto, q).toDeleteOptions(body);
    expect(del({ gracePeriodSeconds: '0' }, { kind: 'DeleteOptions', gracePeriodSeconds: 30, preconditions: { uid: 'u' } })).toEqual({
      gracePeriodSeconds: 0,
      preconditions: { uid: 'u' },
    });
    expect(del({ dryRun: 'All' }, { propagationPolicy: 'Foreground' })).toEqual({ propagationPolicy: 'Foreground', dryRun: ['All'] });
    expect(statusOf(() => del({}, { dryRun: ['Nope'] })).message).toBe(
      'DeleteOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: "Nope": supported values: "All"',
    );
    const both = statusOf(() => del({ orphanDependents: 'false' }, { propagationPolicy: 'Background' }));
    expect(both.code).toBe(422);
    expect(both.message).toBe(
      'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Background": orphanDependents and deletionPropagation cannot be both set',
    );
    expect(statusOf(() => del({}, { kind: 'Pod' })).code).toBe(400);
    // The unsafe deletion of undecodable objects, from the body or the query (which wins).
    const unsafe = 'ignoreStoreReadErrorWithClusterBreakingPotential';
    expect(del({}, { [unsafe]: true })).toEqual({ [unsafe]: true });
    expect(del({ [unsafe]: 'true' })).toEqual({ [unsafe]: true });
    expect(del({ [unsafe]: 'false' }, { [unsafe]: true })).toEqual({ [unsafe]: false });
    expect(statusOf(() => del({}, { [unsafe]: 'yes' })).message).toBe(`DeleteOptions.${unsafe} must be a boolean`);
  });
});
