import type { KubeObject } from '@app/apimachinery';
import { parseCIDRSloppy, parseIPSloppy, strictSubset } from '../networking.ip.js';
import { defaultNetworkPolicy } from './networkpolicy.strategy.js';
import { validateNetworkPolicy, validateNetworkPolicyUpdate } from './networkpolicy.validation.js';

type Obj = Record<string, unknown>;

/** A NetworkPolicy as it reaches validation (defaults applied). */
function policy(spec: Obj = {}): KubeObject {
  const np: KubeObject = { metadata: { name: 'p', namespace: 'ns' }, spec: { podSelector: { matchLabels: { app: 'db' } }, ...spec } };
  defaultNetworkPolicy(np);
  return np;
}
const messages = (errs: { field: string; detail?: string }[]) => errs.map((e) => `${e.field}: ${e.detail ?? ''}`);
const ingressFrom = (from: Obj[], ports: Obj[] = []) => ({ ingress: [{ from, ports }] });

describe('NetworkPolicy defaults', () => {
  it('defaults policyTypes from the egress rules, and podSelector to {}', () => {
    expect((policy().spec as Obj).policyTypes).toEqual(['Ingress']);
    expect((policy({ egress: [{}] }).spec as Obj).policyTypes).toEqual(['Ingress', 'Egress']);
    expect((policy({ policyTypes: ['Egress'] }).spec as Obj).policyTypes).toEqual(['Egress']);
    const np: KubeObject = { metadata: { name: 'p' } };
    defaultNetworkPolicy(np);
    expect(np.spec).toEqual({ podSelector: {}, policyTypes: ['Ingress'] });
  });
});

describe('NetworkPolicy validation', () => {
  it('accepts peers, ports and port ranges', () => {
    const np = policy(
      ingressFrom([{ podSelector: {} }, { ipBlock: { cidr: '10.0.0.0/8', except: ['10.1.0.0/16'] } }], [{ port: 80, endPort: 90, protocol: 'TCP' }]),
    );
    expect(validateNetworkPolicy(np)).toEqual([]);
  });
  it('checks ports: protocol, number, name and endPort', () => {
    const at = 'spec.ingress[0].ports[0]';
    const port = (p: Obj) => messages(validateNetworkPolicy(policy(ingressFrom([], [p]))));
    expect(port({ protocol: 'ICMP' })).toEqual([`${at}.protocol: supported values: "TCP", "UDP", "SCTP"`]);
    expect(port({ port: 0 })).toEqual([`${at}.port: must be between 1 and 65535, inclusive`]);
    expect(port({ port: 90, endPort: 80 })).toEqual([`${at}.endPort: must be greater than or equal to \`port\``]);
    expect(port({ port: 'http', endPort: 80 })).toEqual([`${at}.endPort: may not be specified when \`port\` is non-numeric`]);
    expect(port({ endPort: 80 })).toEqual([`${at}.endPort: may not be specified when \`port\` is not specified`]);
    expect(port({ port: 'Web_Port' })).toContain(`${at}.port: must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)`);
  });
  it('checks peers: at least one, ipBlock alone, CIDRs and excepted CIDRs inside', () => {
    const at = 'spec.ingress[0].from[0]';
    const peer = (p: Obj) => messages(validateNetworkPolicy(policy(ingressFrom([p]))));
    expect(peer({})).toEqual([`${at}: must specify a peer`]);
    expect(peer({ podSelector: {}, ipBlock: { cidr: '10.0.0.0/8' } })).toEqual([`${at}: may not specify both ipBlock and another peer`]);
    expect(peer({ ipBlock: { cidr: '' } })).toEqual([`${at}.ipBlock.cidr: `]);
    expect(peer({ ipBlock: { cidr: '10.0.0.0' } })).toEqual([`${at}.ipBlock.cidr: must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)`]);
    expect(peer({ ipBlock: { cidr: '10.0.0.0/16', except: ['10.1.0.0/24', '10.0.0.0/16', 'x'] } })).toEqual([
      `${at}.ipBlock.except[0]: must be a strict subset of \`cidr\``,
      `${at}.ipBlock.except[1]: must be a strict subset of \`cidr\``,
      `${at}.ipBlock.except[2]: must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)`,
    ]);
    expect(peer({ ipBlock: { cidr: '2001:db8::/64', except: ['2001:db8::/80'] } })).toEqual([]);
  });
  it('checks selectors and policyTypes', () => {
    expect(messages(validateNetworkPolicy(policy({ podSelector: { matchExpressions: [{ key: 'a', operator: 'In' }] } })))).toEqual([
      "spec.podSelector.matchExpressions[0].values: must be specified when `operator` is 'In' or 'NotIn'",
    ]);
    expect(messages(validateNetworkPolicy(policy({ policyTypes: ['Ingress', 'Sideways'] })))).toEqual([
      'spec.policyTypes[1]: supported values: "Ingress", "Egress"',
    ]);
    expect(messages(validateNetworkPolicy(policy({ policyTypes: ['Ingress', 'Egress', 'Ingress'] })))).toEqual([
      'spec.policyTypes: []networking.PolicyType{"Ingress", "Egress", "Ingress"}: may not specify more than two policyTypes',
    ]);
  });
  it('keeps accepting a podSelector value that was already stored', () => {
    const bad = policy({ podSelector: { matchExpressions: [{ key: 'a', operator: 'In', values: ['not a label value!'] }] } });
    expect(validateNetworkPolicy(bad)).not.toEqual([]);
    expect(validateNetworkPolicyUpdate(bad, bad)).toEqual([]);
  });
});

describe('sloppy IP and CIDR parsing', () => {
  it('parses what Kubernetes parses, leading zeros included', () => {
    expect(parseIPSloppy('010.001.002.003')).toEqual({ bits: 32, value: 0x0a010203n });
    expect(parseIPSloppy('::ffff:1.2.3.4')?.bits).toBe(128);
    expect(parseIPSloppy('1.2.3')).toBeUndefined();
    expect(parseIPSloppy('256.0.0.1')).toBeUndefined();
    expect(parseCIDRSloppy('10.1.2.3/8')).toEqual({ bits: 32, network: 0x0a000000n, prefix: 8 });
    expect(parseCIDRSloppy('10.0.0.0/33')).toBeUndefined();
    expect(parseCIDRSloppy('2001:db8::/129')).toBeUndefined();
  });
  it('tells a strict subset', () => {
    const c = (s: string) => parseCIDRSloppy(s)!;
    expect(strictSubset(c('10.0.0.0/8'), c('10.2.0.0/16'))).toBe(true);
    expect(strictSubset(c('10.0.0.0/8'), c('10.0.0.0/8'))).toBe(false);
    expect(strictSubset(c('10.0.0.0/8'), c('11.0.0.0/16'))).toBe(false);
    expect(strictSubset(c('10.0.0.0/8'), c('::/120'))).toBe(false);
  });
});
