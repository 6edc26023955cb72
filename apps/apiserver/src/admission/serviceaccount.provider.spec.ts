import type { KubeObject } from '@app/apimachinery';
import { admitPodServiceAccount, SERVICE_ACCOUNT_MOUNT_PATH } from './serviceaccount.provider.js';

const pod = (spec: Record<string, unknown>): KubeObject => ({ metadata: { name: 'p' }, spec: { containers: [{ name: 'a', image: 'x' }], ...spec } });
const sa: KubeObject = { metadata: { name: 'default' } };

describe('ServiceAccount admission on pods', () => {
  it('defaults serviceAccountName (and the deprecated serviceAccount) to default', () => {
    const p = pod({});
    admitPodServiceAccount(p, undefined, 'abcde');
    expect(p.spec).toMatchObject({ serviceAccountName: 'default', serviceAccount: 'default' });
    expect((p.spec as { volumes?: unknown }).volumes).toBeUndefined();
  });

  it('mounts the projected token volume into every container when the account exists', () => {
    const p = pod({ initContainers: [{ name: 'i', image: 'x' }] });
    admitPodServiceAccount(p, sa, 'abcde');
    const spec = p.spec as {
      volumes: Array<{ name: string; projected: { sources: unknown[] } }>;
      containers: Array<{ volumeMounts: unknown[] }>;
      initContainers: Array<{ volumeMounts: unknown[] }>;
    };
    expect(spec.volumes.map((v) => v.name)).toEqual(['kube-api-access-abcde']);
    expect(spec.volumes[0]!.projected.sources).toHaveLength(3);
    for (const c of [...spec.containers, ...spec.initContainers]) {
      expect(c.volumeMounts).toEqual([{ name: 'kube-api-access-abcde', readOnly: true, mountPath: SERVICE_ACCOUNT_MOUNT_PATH }]);
    }
  });

  it('mounts nothing when the pod or the account turns automounting off', () => {
    const off = pod({ automountServiceAccountToken: false });
    admitPodServiceAccount(off, sa, 'abcde');
    expect((off.spec as { volumes?: unknown }).volumes).toBeUndefined();
    const saOff = pod({});
    admitPodServiceAccount(saOff, { ...sa, automountServiceAccountToken: false }, 'abcde');
    expect((saOff.spec as { volumes?: unknown }).volumes).toBeUndefined();
  });

  it("gives a pod naming no image pull secrets its account's, and keeps a pod's own", () => {
    const withPull: KubeObject = { ...sa, imagePullSecrets: [{ name: 'regcred' }, { name: 'other' }] };
    const p = pod({ automountServiceAccountToken: false });
    admitPodServiceAccount(p, withPull, 'abcde');
    expect((p.spec as { imagePullSecrets?: unknown }).imagePullSecrets).toEqual([{ name: 'regcred' }, { name: 'other' }]);
    const own = pod({ imagePullSecrets: [{ name: 'mine' }] });
    admitPodServiceAccount(own, withPull, 'abcde');
    expect((own.spec as { imagePullSecrets?: unknown }).imagePullSecrets).toEqual([{ name: 'mine' }]);
    const none = pod({});
    admitPodServiceAccount(none, sa, 'abcde');
    expect((none.spec as { imagePullSecrets?: unknown }).imagePullSecrets).toBeUndefined();
  });
});
