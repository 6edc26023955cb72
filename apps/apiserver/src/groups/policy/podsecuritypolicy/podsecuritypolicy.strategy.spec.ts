import type { KubeObject } from '@app/apimachinery';
import type { RequestContext } from '@app/registry';
import { podSecurityPolicyStrategy } from './podsecuritypolicy.strategy.js';

const ctx: RequestContext = { user: { username: 'u', groups: [] }, dryRun: false, warnings: [], now: () => new Date() };
const base = { runAsUser: { rule: 'RunAsAny' }, seLinux: { rule: 'RunAsAny' }, fsGroup: { rule: 'RunAsAny' }, supplementalGroups: { rule: 'RunAsAny' } };
const psp = (extra: Record<string, unknown>): KubeObject => ({ metadata: { name: 'restricted' }, spec: { ...base, ...extra } });
const msgs = (o: KubeObject) => podSecurityPolicyStrategy.validate!(o, ctx).map((e) => `${e.field}: ${e.detail}`);

describe('PodSecurityPolicy strategy', () => {
  it('accepts a permissive policy', () => {
    expect(msgs(psp({ volumes: ['*'], allowedCapabilities: ['NET_ADMIN'], hostPorts: [{ min: 0, max: 65535 }] }))).toEqual([]);
  });
  it('checks the strategy rules and their ranges', () => {
    expect(
      msgs(psp({ runAsUser: { rule: 'MustRunAs' }, fsGroup: { rule: 'Whatever' }, supplementalGroups: { rule: 'MustRunAs', ranges: [{ min: 5, max: 2 }] } })),
    ).toEqual([
      'spec.runAsUser.ranges: ranges are required for MustRunAs',
      'spec.fsGroup.rule: supported values: "MayRunAs", "MustRunAs", "RunAsAny"',
      'spec.supplementalGroups.ranges[0].min: min cannot be greater than max',
    ]);
    expect(msgs(psp({ seLinux: { rule: 'MustRunAs' } }))).toEqual(['spec.seLinux.seLinuxOptions: seLinuxOptions are required for MustRunAs']);
  });
  it('refuses a capability both added and dropped, and privilege escalation defaults it forbids', () => {
    expect(
      msgs(
        psp({
          requiredDropCapabilities: ['ALL', 'NET_RAW'],
          defaultAddCapabilities: ['NET_RAW'],
          allowPrivilegeEscalation: false,
          defaultAllowPrivilegeEscalation: true,
        }),
      ),
    ).toEqual([
      'spec.defaultAddCapabilities: capability is listed in spec.defaultAddCapabilities and requiredDropCapabilities',
      'spec.defaultAllowPrivilegeEscalation: Cannot set DefaultAllowPrivilegeEscalation to true without also setting AllowPrivilegeEscalation to true',
    ]);
  });
  it('checks volumes, host paths, sysctls, proc mounts and runtime classes', () => {
    expect(
      msgs(
        psp({
          volumes: ['hostPath', 'bogus'],
          allowedFlexVolumes: [{ driver: 'x' }],
          allowedHostPaths: [{ pathPrefix: '/var/*' }],
          forbiddenSysctls: ['Kernel.SHM'],
          allowedProcMountTypes: ['Weird'],
          runtimeClass: { allowedRuntimeClassNames: ['*', 'gvisor'], defaultRuntimeClassName: 'gvisor' },
        }),
      ),
    ).toEqual([
      expect.stringMatching(/^spec\.volumes: supported values: "\*", "awsElasticBlockStore"/),
      'spec.allowedFlexVolumes: volume plugin flexVolume is not allowed to be used',
      "spec.allowedHostPaths[0].pathPrefix: must not contain '*'",
      expect.stringMatching(/^spec\.forbiddenSysctls\[0\]: must have at most 253 characters and match regex/),
      'spec.allowedProcMountTypes[0]: supported values: "Default", "Unmasked"',
      "spec.runtimeClass.allowedRuntimeClassNames[0]: if '*' is present, must not specify other RuntimeClass names",
    ]);
    expect(msgs(psp({ runtimeClass: { allowedRuntimeClassNames: ['runc'], defaultRuntimeClassName: 'gvisor' } }))).toEqual([
      'spec.runtimeClass.defaultRuntimeClassName: default must be allowed',
    ]);
  });
  it('trims the trailing slash of host path prefixes', () => {
    const o = psp({ allowedHostPaths: [{ pathPrefix: '/var/log/' }, { pathPrefix: '/' }] });
    podSecurityPolicyStrategy.prepareForCreate!(o, ctx);
    expect((o.spec as { allowedHostPaths: unknown }).allowedHostPaths).toEqual([{ pathPrefix: '/var/log' }, { pathPrefix: '/' }]);
  });
});
