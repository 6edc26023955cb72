import type { KubeObject } from '@app/apimachinery';
import { forbiddenNodeLabels, isMirrorPod } from './node-restriction.provider.js';
import { mirrorPodDenial } from './serviceaccount.provider.js';

describe('NodeRestriction rules', () => {
  it("forbids a kubelet's changes to node-restriction labels and to Kubernetes labels that are not its own", () => {
    expect(
      forbiddenNodeLabels({ 'kubernetes.io/hostname': 'n1', 'topology.kubernetes.io/zone': 'a', 'kubelet.kubernetes.io/x': '1', team: 'a' }, undefined),
    ).toEqual([]);
    expect(forbiddenNodeLabels({ 'node.kubernetes.io/exclude-from-external-load-balancers': '' }, undefined)).toEqual([]);
    expect(
      forbiddenNodeLabels({ 'node-role.kubernetes.io/control-plane': '', 'node-restriction.kubernetes.io/pool': 'x', 'example.k8s.io/a': 'b' }, undefined),
    ).toEqual(['example.k8s.io/a', 'node-restriction.kubernetes.io/pool', 'node-role.kubernetes.io/control-plane']);
    // Only what changes counts: an admin's label kept as it was is fine, removing it is not.
    const admin = { 'node-role.kubernetes.io/worker': '' };
    expect(forbiddenNodeLabels({ ...admin, team: 'b' }, { ...admin, team: 'a' })).toEqual([]);
    expect(forbiddenNodeLabels({}, admin)).toEqual(['node-role.kubernetes.io/worker']);
  });

  it('knows a mirror pod and refuses one that refers to an account, a Secret or an account token', () => {
    const pod = (spec: Record<string, unknown>, annotations: Record<string, string> = { 'kubernetes.io/config.mirror': 'h' }): KubeObject => ({
      metadata: { name: 'p', annotations },
      spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'i' }], ...spec },
    });
    expect(isMirrorPod(pod({}))).toBe(true);
    expect(isMirrorPod(pod({}, {}))).toBe(false);
    expect(mirrorPodDenial(pod({}))).toBeUndefined();
    expect(mirrorPodDenial(pod({ serviceAccountName: 'default' }))).toBe('a mirror pod may not reference service accounts');
    expect(mirrorPodDenial(pod({ imagePullSecrets: [{ name: 'pull' }] }))).toBe('a mirror pod may not reference secrets');
    expect(mirrorPodDenial(pod({ volumes: [{ name: 't', projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } }] }))).toBe(
      'a mirror pod may not use ServiceAccountToken volume projections',
    );
  });
});
