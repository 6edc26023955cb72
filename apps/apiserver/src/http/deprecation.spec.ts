import { deprecatedApiLabels, deprecationWarning } from './deprecation.js';

describe('deprecated APIs', () => {
  it('words the warning as kube-apiserver does, with the removal and the replacement when known', () => {
    expect(
      deprecationWarning({ group: 'policy', version: 'v1beta1', kind: 'PodSecurityPolicy', deprecation: { deprecatedIn: '1.21', removedIn: '1.25' } }),
    ).toBe('policy/v1beta1 PodSecurityPolicy is deprecated in v1.21+, unavailable in v1.25+');
    expect(deprecationWarning({ group: '', version: 'v1', kind: 'ComponentStatus', deprecation: { deprecatedIn: '1.19' } })).toBe(
      'v1 ComponentStatus is deprecated in v1.19+',
    );
    expect(
      deprecationWarning({
        group: 'flowcontrol.apiserver.k8s.io',
        version: 'v1beta2',
        kind: 'FlowSchema',
        deprecation: {
          deprecatedIn: '1.26',
          removedIn: '1.29',
          replacement: { group: 'flowcontrol.apiserver.k8s.io', version: 'v1beta3', kind: 'FlowSchema' },
        },
      }),
    ).toBe(
      'flowcontrol.apiserver.k8s.io/v1beta2 FlowSchema is deprecated in v1.26+, unavailable in v1.29+; use flowcontrol.apiserver.k8s.io/v1beta3 FlowSchema',
    );
    expect(deprecationWarning({ group: 'apps', version: 'v1', kind: 'ControllerRevision' })).toBeUndefined();
  });
  it('labels the metric with the removal release, empty when none is announced', () => {
    expect(
      deprecatedApiLabels({ group: 'policy', version: 'v1beta1', plural: 'podsecuritypolicies', deprecation: { deprecatedIn: '1.21', removedIn: '1.25' } }, ''),
    ).toEqual({
      group: 'policy',
      version: 'v1beta1',
      resource: 'podsecuritypolicies',
      subresource: '',
      removed_release: '1.25',
    });
  });
});
