import type { KubeObject } from '@app/apimachinery';
import { nodeRolesCell, nodeStatusCell, nodeStrategy, validateNode, validateNodeUpdate } from './node.strategy.js';

const node = (spec: Record<string, unknown> = {}, extra: Partial<KubeObject> = {}): KubeObject => ({ metadata: { name: 'n1' }, spec, ...extra });
const msgs = (errs: Array<{ field: string; detail: string }>): string[] => errs.map((e) => `${e.field}: ${e.detail}`);

describe('Node strategy', () => {
  it('validates taints: qualified key, known effect, unique key and effect', () => {
    expect(validateNode(node({ taints: [{ key: 'a', effect: 'NoSchedule' }] }))).toEqual([]);
    expect(
      msgs(validateNode(node({ taints: [{ key: 'a' }, { key: 'a', effect: 'Later' }, { key: 'b', effect: 'NoExecute' }, { key: 'b', effect: 'NoExecute' }] }))),
    ).toEqual([
      'spec.taints[0].effect: ',
      'spec.taints[1].effect: supported values: "NoExecute", "NoSchedule", "PreferNoSchedule"',
      'spec.taints[3]: taints must be unique by key and effect pair',
    ]);
  });

  it('validates podCIDRs and keeps them and providerID once set', () => {
    expect(msgs(validateNode(node({ podCIDRs: ['10.0.0.0/33'] })))).toEqual(['spec.podCIDRs[0]: must be a valid CIDR']);
    expect(msgs(validateNode(node({ podCIDRs: ['10.0.0.0/24', '10.1.0.0/24'] })))).toEqual([
      'spec.podCIDRs: may specify no more than one CIDR for each IP family',
    ]);
    expect(validateNode(node({ podCIDRs: ['10.0.0.0/24', 'fd00::/64'] }))).toEqual([]);
    const old = node({ podCIDRs: ['10.0.0.0/24'], providerID: 'kind://a' });
    expect(msgs(validateNodeUpdate(node({ podCIDRs: ['10.9.0.0/24'], providerID: 'kind://b' }), old))).toEqual([
      'spec.podCIDRs: node updates may not change podCIDR except from "" to valid',
      'spec.providerID: node updates may only set providerID except from "" to valid',
    ]);
    expect(validateNodeUpdate(node({ podCIDRs: ['10.0.0.0/24'] }), node())).toEqual([]);
  });

  it('keeps status on create, not on update; podCIDR mirrors podCIDRs', () => {
    const n = node({ podCIDR: '10.0.0.0/24' }, { status: { phase: 'x' } });
    nodeStrategy.prepareForCreate!(n, undefined as never);
    expect(n.status).toEqual({ phase: 'x' });
    expect(n.spec).toEqual({ podCIDR: '10.0.0.0/24', podCIDRs: ['10.0.0.0/24'] });
    const u = node({}, { status: { phase: 'changed' } });
    nodeStrategy.prepareForUpdate!(u, node({}, { status: { phase: 'x' } }), undefined as never);
    expect(u.status).toEqual({ phase: 'x' });
  });

  it('STATUS and ROLES columns', () => {
    expect(nodeStatusCell(node())).toBe('Unknown');
    expect(nodeStatusCell(node({}, { status: { conditions: [{ type: 'Ready', status: 'Unknown' }] } }))).toBe('NotReady');
    expect(nodeStatusCell(node({ unschedulable: true }, { status: { conditions: [{ type: 'Ready', status: 'False' }] } }))).toBe('NotReady,SchedulingDisabled');
    expect(nodeRolesCell({ metadata: { labels: { 'node-role.kubernetes.io/control-plane': '', 'kubernetes.io/role': 'edge' } } })).toBe('control-plane,edge');
    expect(nodeRolesCell(node())).toBe('<none>');
  });
});
