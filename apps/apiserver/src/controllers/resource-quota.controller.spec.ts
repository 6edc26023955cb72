import { Quantity } from '@app/apimachinery';
import { nextQuotaStatus } from './resource-quota.controller.js';

const quota = (status?: Record<string, unknown>) => ({
  metadata: { name: 'q' },
  spec: { hard: { pods: '2', 'requests.cpu': '1' } },
  ...(status ? { status } : {}),
});
const used = (pods: number) =>
  new Map([
    ['pods', Quantity.fromInt(pods)],
    ['requests.cpu', Quantity.fromMilli(500)],
  ]);

describe('resourcequota controller status', () => {
  it('copies spec.hard and writes the computed usage of a new quota', () => {
    expect(nextQuotaStatus(quota(), used(1))).toEqual({ hard: { pods: '2', 'requests.cpu': '1' }, used: { pods: '1', 'requests.cpu': '500m' } });
    expect(nextQuotaStatus(quota({}), used(0))).toEqual({ hard: { pods: '2', 'requests.cpu': '1' }, used: { pods: '0', 'requests.cpu': '500m' } });
  });

  it('writes nothing when status already says it, and again when usage or hard changed', () => {
    const current = { hard: { pods: '2', 'requests.cpu': '1' }, used: { pods: '1', 'requests.cpu': '500m' } };
    expect(nextQuotaStatus(quota(current), used(1))).toBeUndefined();
    expect(nextQuotaStatus(quota(current), used(0))).toEqual({ hard: current.hard, used: { pods: '0', 'requests.cpu': '500m' } });
    expect(nextQuotaStatus(quota({ ...current, hard: { pods: '3', 'requests.cpu': '1' } }), used(1))).toEqual(current);
  });
});
