import { securityContextDenial } from './security-context-deny.provider.js';

describe('SecurityContextDeny', () => {
  it('refuses the pod-level fields with kube-apiserver messages', () => {
    expect(securityContextDenial({ securityContext: { supplementalGroups: [1] } })).toBe('pod.Spec.SecurityContext.SupplementalGroups is forbidden');
    expect(securityContextDenial({ securityContext: { seLinuxOptions: { level: 's0' } } })).toBe('pod.Spec.SecurityContext.SELinuxOptions is forbidden');
    expect(securityContextDenial({ securityContext: { runAsUser: 0 } })).toBe('pod.Spec.SecurityContext.RunAsUser is forbidden');
    expect(securityContextDenial({ securityContext: { fsGroup: 2000 } })).toBe('pod.Spec.SecurityContext.FSGroup is forbidden');
  });

  it('refuses container SELinux options and users, accepts the rest', () => {
    expect(securityContextDenial({ containers: [{ name: 'a', securityContext: { runAsUser: 1000 } }] })).toBe('SecurityContext.RunAsUser is forbidden');
    expect(securityContextDenial({ initContainers: [{ name: 'a', securityContext: { seLinuxOptions: {} } }] })).toBe(
      'SecurityContext.SELinuxOptions is forbidden',
    );
    expect(
      securityContextDenial({ securityContext: { runAsNonRoot: true }, containers: [{ name: 'a', securityContext: { privileged: false } }] }),
    ).toBeUndefined();
  });
});
