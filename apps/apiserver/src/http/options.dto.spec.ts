import { StatusError } from '@app/apimachinery';
import { DeleteOptionsQueryDto, ListOptionsDto, validateOptions, WriteOptionsDto } from './options.dto.js';

describe('request options (class-validator)', () => {
  it('accepts valid options and ignores unknown parameters', () => {
    const o = validateOptions(ListOptionsDto, { limit: '10', resourceVersion: '5', resourceVersionMatch: 'NotOlderThan', other: 'x' });
    expect(o.limit).toBe('10');
  });
  it.each([
    [ListOptionsDto, { limit: 'abc' }, 'limit: Invalid value'],
    [ListOptionsDto, { resourceVersionMatch: 'Sometimes' }, 'resourceVersionMatch: Unsupported value'],
    [ListOptionsDto, { watch: 'yes' }, 'watch: Unsupported value'],
    [WriteOptionsDto, { dryRun: 'Some' }, 'dryRun: Unsupported value'],
    [WriteOptionsDto, { fieldValidation: 'Loose' }, 'fieldValidation: Unsupported value'],
    [DeleteOptionsQueryDto, { gracePeriodSeconds: '1.5' }, 'gracePeriodSeconds: Invalid value'],
  ] as const)('rejects %p %j with a 400', (cls, q, msg) => {
    try {
      validateOptions(cls as new () => object, q as Record<string, string>);
      throw new Error('expected a failure');
    } catch (e) {
      expect(e).toBeInstanceOf(StatusError);
      expect((e as StatusError).code).toBe(400);
      expect((e as StatusError).message).toContain(msg);
    }
  });
});
