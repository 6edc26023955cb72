import { groupVersionEnabled, parseRuntimeConfig, resourceEnabled, RuntimeConfigError, unknownRuntimeConfigKeys, versionLevel } from './runtime-config.js';

describe('--runtime-config', () => {
  it('tells version levels apart', () => {
    expect(['v1', 'v2', 'v1beta1', 'v2beta3', 'v1alpha1', 'v1alpha'].map(versionLevel)).toEqual(['ga', 'ga', 'beta', 'beta', 'alpha', 'alpha']);
  });
  it('serves GA and beta versions by default, alpha versions not', () => {
    const rc = parseRuntimeConfig(undefined);
    expect(groupVersionEnabled(rc, 'apps', 'v1')).toBe(true);
    expect(groupVersionEnabled(rc, 'policy', 'v1beta1')).toBe(true);
    expect(groupVersionEnabled(rc, 'example.io', 'v1alpha1')).toBe(false);
  });
  it('reads <group>/<version>[=bool], a missing value meaning true, and the core group as v1 or api/v1', () => {
    const rc = parseRuntimeConfig('policy/v1beta1=false,example.io/v1alpha1,node.k8s.io/v1=true');
    expect(groupVersionEnabled(rc, 'policy', 'v1beta1')).toBe(false);
    expect(groupVersionEnabled(rc, 'example.io', 'v1alpha1')).toBe(true);
    expect(groupVersionEnabled(rc, 'node.k8s.io', 'v1')).toBe(true);
    expect(parseRuntimeConfig('api/v1/componentstatuses=false').resources.get('/v1/componentstatuses')).toBe(false);
    expect(parseRuntimeConfig('v1/componentstatuses=false').resources.get('/v1/componentstatuses')).toBe(false);
  });
  it('applies broad keys first: api/all, then levels, then group-versions, then resources, whatever their order', () => {
    const rc = parseRuntimeConfig('apps/v1=true,api/all=false,api/alpha=true');
    expect(groupVersionEnabled(rc, 'apps', 'v1')).toBe(true);
    expect(groupVersionEnabled(rc, 'autoscaling', 'v1')).toBe(false);
    expect(groupVersionEnabled(rc, 'example.io', 'v1alpha1')).toBe(true);
    const beta = parseRuntimeConfig('api/beta=false');
    expect(groupVersionEnabled(beta, 'policy', 'v1beta1')).toBe(false);
    expect(groupVersionEnabled(beta, 'apps', 'v1')).toBe(true);
    const res = parseRuntimeConfig('flowcontrol.apiserver.k8s.io/v1/flowschemas=false,api/all=false,autoscaling/v1/horizontalpodautoscalers=true');
    expect(resourceEnabled(res, 'flowcontrol.apiserver.k8s.io', 'v1', 'flowschemas')).toBe(false);
    expect(resourceEnabled(res, 'autoscaling', 'v1', 'horizontalpodautoscalers')).toBe(true);
    expect(resourceEnabled(res, 'apps', 'v1', 'controllerrevisions')).toBe(false);
  });
  it("keeps the group-versions the server's own controllers use, but lets their single resources go", () => {
    const rc = parseRuntimeConfig('api/all=false,v1=false,coordination.k8s.io/v1=false,v1/componentstatuses=false');
    expect(groupVersionEnabled(rc, '', 'v1')).toBe(true);
    expect(resourceEnabled(rc, 'coordination.k8s.io', 'v1', 'leases')).toBe(true);
    expect(resourceEnabled(rc, '', 'v1', 'componentstatuses')).toBe(false);
  });
  it('refuses malformed values and keys', () => {
    expect(() => parseRuntimeConfig('apps/v1=yes')).toThrow(RuntimeConfigError);
    expect(() => parseRuntimeConfig('apps/v1=yes')).toThrow('invalid value of apps/v1: yes');
    expect(() => parseRuntimeConfig('apps')).toThrow(/is not an API version/);
    expect(() => parseRuntimeConfig('a/b/c/d')).toThrow(/invalid key/);
  });
  it('names keys that match no declared group-version or resource', () => {
    const rc = parseRuntimeConfig('batch/v1=false,apps/v1/deployments=true,apps/v1=true');
    expect(unknownRuntimeConfigKeys(rc, [{ group: 'apps', version: 'v1', plural: 'controllerrevisions' }])).toEqual(['batch/v1', 'apps/v1/deployments']);
  });
});
