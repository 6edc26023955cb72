import type { KubeObject } from '@app/apimachinery';
import { convertFlowcontrol } from './flowcontrol.conversion.js';
import { FLOWCONTROL_VERSIONS } from './flowcontrol.schema.js';

const G = 'flowcontrol.apiserver.k8s.io';
const plc = (version: string, shares: Record<string, number>): KubeObject => ({
  apiVersion: `${G}/${version}`,
  kind: 'PriorityLevelConfiguration',
  metadata: { name: 'p', labels: { a: 'b' } },
  spec: {
    type: 'Limited',
    limited: {
      ...shares,
      lendablePercent: 10,
      borrowingLimitPercent: 20,
      limitResponse: { type: 'Queue', queuing: { queues: 3, handSize: 2, queueLengthLimit: 9 } },
    },
  },
  status: { conditions: [{ type: 'X', status: 'True' }] },
});

describe('flowcontrol conversion', () => {
  it('renames the shares field between v1beta2 and later versions', () => {
    expect(convertFlowcontrol(plc('v1beta2', { assuredConcurrencyShares: 7 }), 'v1')).toEqual(plc('v1', { nominalConcurrencyShares: 7 }));
    expect(convertFlowcontrol(plc('v1', { nominalConcurrencyShares: 7 }), 'v1beta2')).toEqual(plc('v1beta2', { assuredConcurrencyShares: 7 }));
    expect(convertFlowcontrol(plc('v1beta3', { nominalConcurrencyShares: 7 }), 'v1')).toEqual(plc('v1', { nominalConcurrencyShares: 7 }));
  });
  it('round-trips every served version through every other without loss, and does not mutate its input', () => {
    for (const a of FLOWCONTROL_VERSIONS) {
      for (const b of FLOWCONTROL_VERSIONS) {
        const start = plc(a, a === 'v1beta2' ? { assuredConcurrencyShares: 5 } : { nominalConcurrencyShares: 5 });
        const copy = structuredClone(start);
        expect(convertFlowcontrol(convertFlowcontrol(start, b), a)).toEqual(start);
        expect(start).toEqual(copy);
      }
    }
    const fs: KubeObject = {
      apiVersion: `${G}/v1beta2`,
      kind: 'FlowSchema',
      metadata: { name: 'f' },
      spec: { priorityLevelConfiguration: { name: 'p' }, matchingPrecedence: 5 },
    };
    expect(convertFlowcontrol(convertFlowcontrol(fs, 'v1'), 'v1beta2')).toEqual(fs);
  });
});
