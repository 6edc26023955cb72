import { fieldErrorMessage } from '@app/apimachinery';
import { validateLimitRange } from './limitrange.strategy.js';

const errs = (limits: unknown[]) => validateLimitRange({ limits }).map(fieldErrorMessage);

describe('LimitRange validation', () => {
  it('accepts consistent limits', () => {
    expect(
      errs([
        {
          type: 'Container',
          min: { cpu: '100m' },
          max: { cpu: '2' },
          default: { cpu: '1' },
          defaultRequest: { cpu: '500m' },
          maxLimitRequestRatio: { cpu: '4' },
        },
      ]),
    ).toEqual([]);
  });

  it('orders min <= defaultRequest <= default <= max', () => {
    expect(errs([{ type: 'Container', min: { cpu: '2' }, max: { cpu: '1' } }])).toEqual([
      'spec.limits[0].min[cpu]: Invalid value: "2": min value 2 is greater than max value 1',
    ]);
    expect(errs([{ type: 'Container', max: { memory: '1Gi' }, default: { memory: '2Gi' } }])).toEqual([
      'spec.limits[0].default[memory]: Invalid value: "1Gi": default value 2Gi is greater than max value 1Gi',
    ]);
    expect(errs([{ type: 'Container', default: { cpu: '1' }, defaultRequest: { cpu: '2' } }])).toEqual([
      'spec.limits[0].defaultRequest[cpu]: Invalid value: "2": default request value 2 is greater than default limit value 1',
    ]);
    expect(errs([{ type: 'Container', min: { cpu: '1' }, defaultRequest: { cpu: '500m' } }])).toEqual([
      'spec.limits[0].defaultRequest[cpu]: Invalid value: "500m": min value 1 is greater than default request value 500m',
    ]);
  });

  it('bounds maxLimitRequestRatio by 1 and by max/min', () => {
    expect(errs([{ type: 'Container', maxLimitRequestRatio: { cpu: '500m' } }])).toEqual([
      'spec.limits[0].maxLimitRequestRatio[cpu]: Invalid value: "500m": ratio 500m is less than 1',
    ]);
    expect(errs([{ type: 'Container', min: { cpu: '1' }, max: { cpu: '2' }, maxLimitRequestRatio: { cpu: '3' } }])).toEqual([
      'spec.limits[0].maxLimitRequestRatio[cpu]: Invalid value: "3": ratio 3 is greater than max/min = 2.000000',
    ]);
  });

  it('refuses defaults on type Pod, a claim item without storage bounds and a repeated type', () => {
    expect(errs([{ type: 'Pod', default: { cpu: '1' } }])).toEqual(["spec.limits[0].default: Forbidden: may not be specified when `type` is 'Pod'"]);
    expect(errs([{ type: 'PersistentVolumeClaim', max: { cpu: '1' } }])).toEqual([
      'spec.limits[0].limits: Required value: either minimum or maximum storage value is required, but neither was provided',
    ]);
    expect(errs([{ type: 'Container' }, { type: 'Container' }])).toEqual(['spec.limits[1].type: Duplicate value: "Container"']);
  });
});
