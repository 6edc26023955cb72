import { parseRequestInfo } from './request-info.js';

describe('parseRequestInfo (Kubernetes RequestInfoFactory rules)', () => {
  it('parses a namespaced named resource', () => {
    const i = parseRequestInfo('GET', '/api/v1/namespaces/ns1/configmaps/c1', {});
    expect(i).toMatchObject({ isResourceRequest: true, verb: 'get', apiGroup: '', apiVersion: 'v1', namespace: 'ns1', resource: 'configmaps', name: 'c1' });
  });
  it('lists, watches and deletes collections', () => {
    expect(parseRequestInfo('GET', '/api/v1/namespaces/ns1/configmaps', {}).verb).toBe('list');
    expect(parseRequestInfo('GET', '/api/v1/configmaps', { watch: 'true' }).verb).toBe('watch');
    expect(parseRequestInfo('GET', '/api/v1/configmaps', { watch: 'false' }).verb).toBe('list');
    expect(parseRequestInfo('GET', '/api/v1/watch/namespaces/a/configmaps', {})).toMatchObject({ verb: 'watch', namespace: 'a', resource: 'configmaps' });
    expect(parseRequestInfo('DELETE', '/api/v1/namespaces/a/configmaps', {}).verb).toBe('deletecollection');
    // Another method has no verb on a resource path (kube's RequestInfoFactory), its own elsewhere.
    expect(parseRequestInfo('OPTIONS', '/api/v1/namespaces/a/configmaps', {})).toMatchObject({ isResourceRequest: true, verb: '' });
    expect(parseRequestInfo('OPTIONS', '/apis/metrics.k8s.io/v1beta1/pods', {})).toMatchObject({ isResourceRequest: true, verb: '' });
    expect(parseRequestInfo('OPTIONS', '/version', {}).verb).toBe('options');
  });
  it('treats /namespaces/{name} as the namespace resource and keeps status/finalize as subresources', () => {
    expect(parseRequestInfo('GET', '/api/v1/namespaces/foo', {})).toMatchObject({ resource: 'namespaces', name: 'foo', namespace: 'foo' });
    expect(parseRequestInfo('PUT', '/api/v1/namespaces/foo/finalize', {})).toMatchObject({
      resource: 'namespaces',
      name: 'foo',
      subresource: 'finalize',
      verb: 'update',
    });
    expect(parseRequestInfo('GET', '/api/v1/namespaces', {})).toMatchObject({ resource: 'namespaces', verb: 'list', namespace: '' });
  });
  it('parses named groups and subresources', () => {
    const i = parseRequestInfo('PUT', '/apis/apps/v1/namespaces/x/deployments/d/status', {});
    expect(i).toMatchObject({ apiGroup: 'apps', apiVersion: 'v1', resource: 'deployments', name: 'd', subresource: 'status', verb: 'update' });
  });
  it('marks discovery and other paths as non-resource', () => {
    expect(parseRequestInfo('GET', '/apis/apps/v1', {}).isResourceRequest).toBe(false);
    expect(parseRequestInfo('GET', '/apis', {}).isResourceRequest).toBe(false);
    expect(parseRequestInfo('GET', '/version', {})).toMatchObject({ isResourceRequest: false, verb: 'get' });
  });
  it('keeps the path below a proxy subresource as sent, its trailing slash too; deeper paths of other subresources name nothing', () => {
    expect(parseRequestInfo('POST', '/api/v1/namespaces/a/pods/web:8080/proxy/x%2Fy/z/', {})).toMatchObject({
      resource: 'pods',
      name: 'web:8080',
      subresource: 'proxy',
      verb: 'create',
      proxyPath: '/x%2Fy/z/',
    });
    expect(parseRequestInfo('GET', '/api/v1/nodes/n1/proxy', {})).toMatchObject({ resource: 'nodes', name: 'n1', subresource: 'proxy', proxyPath: '' });
    expect(parseRequestInfo('GET', '/api/v1/nodes/n1/proxy/', {}).proxyPath).toBe('/');
    expect(parseRequestInfo('GET', '/api/v1/namespaces/a/pods/p/log/more', {})).toMatchObject({ subresource: 'log/more' });
    expect(parseRequestInfo('GET', '/api/v1/namespaces/a/pods/p/log/more', {}).proxyPath).toBeUndefined();
  });
  it('decodes percent-encoded segments', () => {
    expect(parseRequestInfo('GET', '/api/v1/namespaces/a/configmaps/x%2Ey', {}).name).toBe('x.y');
  });
  it('reports the name a list or watch selects with metadata.name, as Kubernetes does for authorization', () => {
    const sel = (fieldSelector: string, extra: Record<string, string> = {}) =>
      parseRequestInfo('GET', '/api/v1/namespaces/a/secrets', { fieldSelector, ...extra }).selectedName;
    expect(sel('metadata.name=s1')).toBe('s1');
    expect(sel('metadata.name==s1', { watch: 'true' })).toBe('s1');
    expect(sel('type=Opaque,metadata.name=s1')).toBe('s1');
    expect(sel('metadata.name!=s1')).toBeUndefined();
    expect(sel('metadata.namespace=a')).toBeUndefined();
    expect(sel('metadata.name=a/b')).toBeUndefined();
    expect(sel('metadata.name=..')).toBeUndefined();
    // A get names its object in the path; the selector is not read.
    expect(parseRequestInfo('GET', '/api/v1/namespaces/a/secrets/x', { fieldSelector: 'metadata.name=y' }).selectedName).toBeUndefined();
  });
});
