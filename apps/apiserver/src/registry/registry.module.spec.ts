import type { DiscoveryService } from '@nestjs/core';
import { objectRootSchema } from '@app/apimachinery';
import type { KindDeclaration } from '@app/registry';
import { ApiKinds } from '../groups/api-group.js';
import { parseFlags } from '../config/flags.js';
import { collectKinds } from './registry.module.js';

const kind = (group: string, version: string, plural: string): KindDeclaration => ({
  group,
  version,
  kind: plural,
  plural,
  singular: plural,
  namespaced: false,
  schema: objectRootSchema({ group, version, kind: plural }, 'test', {}),
});

const discovery = (kinds: KindDeclaration[]): DiscoveryService =>
  ({ getProviders: () => [{ instance: new ApiKinds('', kinds) }] }) as unknown as DiscoveryService;

const KINDS = [
  kind('', 'v1', 'configmaps'),
  kind('policy', 'v1beta1', 'podsecuritypolicies'),
  kind('node.k8s.io', 'v1', 'runtimeclasses'),
  kind('node.k8s.io', 'v1alpha1', 'runtimeclasses'),
];
const served = (flag?: string) =>
  collectKinds(discovery(KINDS), parseFlags(flag === undefined ? [] : [`--runtime-config=${flag}`]))
    .all()
    .map((d) => `${d.group}/${d.version}/${d.plural}`);

describe('collectKinds and --runtime-config', () => {
  it('registers GA and beta kinds by default, not alpha ones', () => {
    expect(served()).toEqual(['/v1/configmaps', 'policy/v1beta1/podsecuritypolicies', 'node.k8s.io/v1/runtimeclasses']);
  });
  it('drops disabled group-versions and adds enabled alpha ones', () => {
    expect(served('policy/v1beta1=false,api/alpha=true')).toEqual(['/v1/configmaps', 'node.k8s.io/v1/runtimeclasses', 'node.k8s.io/v1alpha1/runtimeclasses']);
    expect(served('api/all=false')).toEqual(['/v1/configmaps']);
  });
  it('refuses keys naming nothing declared', () => {
    expect(() => served('batch/v1=true')).toThrow('--runtime-config: unknown api groups or resources batch/v1');
  });
});
