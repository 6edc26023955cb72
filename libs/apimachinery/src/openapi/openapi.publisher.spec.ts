import { createHash } from 'node:crypto';
import type { JSONSchemaProps } from '../schema/schema.types.js';
import { OpenAPIPublisher } from './openapi.publisher.js';
import type { OpenAPIKind } from './openapi.kinds.js';
import { defaultDefinitionName, operationGroupVersion, operationTag } from './openapi.kinds.js';
import { buildOpenAPIV3Document } from './openapi.v3.js';

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

// A custom-resource-like kind: unnamed schema, no metadata/GVK declared.
const cronTab: OpenAPIKind = {
  group: 'stable.example.com',
  version: 'v1',
  kind: 'CronTab',
  plural: 'crontabs',
  namespaced: true,
  schema: {
    type: 'object',
    properties: { spec: { type: 'object', description: 'the spec', properties: { cronSpec: { type: 'string', description: 'cron' } } } },
  },
  subresources: { status: true },
};
const widget: OpenAPIKind = {
  group: 'stable.example.com',
  version: 'v1',
  kind: 'Widget',
  plural: 'widgets',
  namespaced: false,
  schema: { type: 'object', properties: { size: { type: 'integer', nullable: true } } } as JSONSchemaProps,
  verbs: ['get', 'list'],
  deleteReturnsObject: true,
};

/** Resolves `#/components/schemas/X` or `#/definitions/X` like kubectl's resolveRef. */
function resolve(doc: Doc, ref: string): Doc {
  const parts = ref.replace(/^#\//, '').split('/');
  let cur: Doc = doc;
  for (const p of parts) cur = cur?.[p];
  if (!cur) throw new Error(`unresolved ${ref}`);
  return cur;
}
function deref(doc: Doc, s: Doc): Doc {
  if (s.$ref) return resolve(doc, s.$ref);
  if (s.allOf?.length === 1) return { ...deref(doc, s.allOf[0]), ...s, allOf: undefined };
  return s;
}
/** What kubectl explain does: find the schema by GVK, then walk field names. */
function explain(doc: Doc, gvk: { group: string; version: string; kind: string }, fields: string[]): Doc {
  const schemas: Record<string, Doc> = doc.components.schemas;
  let cur = Object.values(schemas).find((s) =>
    (s['x-kubernetes-group-version-kind'] ?? []).some((g: Doc) => g.group === gvk.group && g.version === gvk.version && g.kind === gvk.kind),
  );
  if (!cur) throw new Error('kind not found');
  for (const f of fields) cur = deref(doc, deref(doc, cur).properties[f]);
  return deref(doc, cur);
}
/** Every $ref in the document resolves. */
function allRefs(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((n) => allRefs(n, out));
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else allRefs(v, out);
    }
  }
  return out;
}

describe('OpenAPI naming', () => {
  it('names definitions and operations like kube-apiserver', () => {
    expect(defaultDefinitionName('', 'v1', 'Pod')).toBe('io.k8s.api.core.v1.Pod');
    expect(defaultDefinitionName('rbac.authorization.k8s.io', 'v1', 'Role')).toBe('io.k8s.api.rbac.v1.Role');
    expect(defaultDefinitionName('apps', 'v1', 'Deployment')).toBe('io.k8s.api.apps.v1.Deployment');
    expect(defaultDefinitionName('stable.example.com', 'v1', 'CronTab')).toBe('com.example.stable.v1.CronTab');
    expect(operationGroupVersion('rbac.authorization.k8s.io', 'v1')).toBe('RbacAuthorizationV1');
    expect(operationGroupVersion('', 'v1')).toBe('CoreV1');
    expect(operationTag('rbac.authorization.k8s.io', 'v1')).toBe('rbacAuthorization_v1');
  });
});

describe('OpenAPIPublisher', () => {
  const pub = new OpenAPIPublisher([cronTab, widget], { version: 'v1.33.0' });

  it('serves /openapi/v3 with hash = uppercase hex sha512 of the group-version document', () => {
    const res = pub.handle({ path: '/openapi/v3' });
    expect(res.status).toBe(200);
    const disc = JSON.parse(res.body as string);
    const gvDoc = pub.v3Document('stable.example.com', 'v1')!;
    const hash = createHash('sha512').update(gvDoc.body).digest('hex').toUpperCase();
    expect(disc).toEqual({ paths: { 'apis/stable.example.com/v1': { serverRelativeURL: `/openapi/v3/apis/stable.example.com/v1?hash=${hash}` } } });
    expect(res.headers.ETag).toBe(`"${pub.v3DiscoveryDocument().hash}"`);
  });

  it('serves group-version documents with immutable caching, redirects stale hashes, honours If-None-Match', () => {
    const doc = pub.v3Document('apis/stable.example.com/v1')!;
    const now = new Date('2025-01-02T03:04:05Z');
    const ok = pub.handle({ path: '/openapi/v3/apis/stable.example.com/v1', hash: doc.hash, now });
    expect(ok.status).toBe(200);
    expect(ok.body).toBe(doc.body);
    expect(ok.headers['Cache-Control']).toBe('public, immutable');
    expect(ok.headers.Expires).toBe('Fri, 02 Jan 2026 03:04:05 GMT');
    const stale = pub.handle({ path: '/openapi/v3/apis/stable.example.com/v1', hash: 'ABC' });
    expect(stale).toMatchObject({ status: 301, headers: { Location: `/openapi/v3/apis/stable.example.com/v1?hash=${doc.hash}` } });
    expect(pub.handle({ path: '/openapi/v3/apis/stable.example.com/v1', ifNoneMatch: `"${doc.hash}"` }).status).toBe(304);
    expect(pub.handle({ path: '/openapi/v3/apis/nope/v1' }).status).toBe(404);
    expect(pub.handle({ path: '/openapi/v3/apis/stable.example.com/v1', accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' }).status).toBe(
      406,
    );
  });

  it('serves /openapi/v2 as gnostic protobuf when Accept prefers it, with the JSON ETag, Vary and 304', () => {
    const json = pub.handle({ path: '/openapi/v2' });
    const etag = json.headers.ETag;
    expect(etag).toBe(`"${createHash('sha512').update(json.body).digest('hex').toUpperCase()}"`);
    for (const accept of [
      'application/com.github.proto-openapi.spec.v2@v1.0+protobuf',
      'application/com.github.proto-openapi.spec.v2.v1.0+protobuf',
      'application/json;q=0.5, application/com.github.proto-openapi.spec.v2.v1.0+protobuf',
    ]) {
      const pb = pub.handle({ path: '/openapi/v2', accept });
      expect(pb.status).toBe(200);
      expect(pb.headers).toEqual({ 'Content-Type': 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf', ETag: etag, Vary: 'Accept' });
      expect(Buffer.isBuffer(pb.body)).toBe(true);
      expect(pb.body).toBe(pub.v2ProtobufDocument()); // built once
      expect(pub.handle({ path: '/openapi/v2', accept, ifNoneMatch: etag })).toEqual({ status: 304, headers: pb.headers, body: '' });
    }
    expect(pub.handle({ path: '/openapi/v2', accept: '*/*' }).headers['Content-Type']).toBe('application/json');
    expect(
      pub.handle({ path: '/openapi/v2', accept: 'application/json, application/com.github.proto-openapi.spec.v2.v1.0+protobuf' }).headers['Content-Type'],
    ).toBe('application/json');
    expect(pub.handle({ path: '/openapi/v2', accept: 'application/yaml' }).status).toBe(406);
    expect(pub.handle({ path: '/openapi/v2', accept: 'application/json;q=0' }).status).toBe(406);
  });

  it('caches documents until the kinds change', () => {
    const p = new OpenAPIPublisher([cronTab]);
    const a = p.v3Document('apis/stable.example.com/v1');
    expect(p.v3Document('apis/stable.example.com/v1')).toBe(a);
    p.setKinds([cronTab, widget]);
    const b = p.v3Document('apis/stable.example.com/v1')!;
    expect(b).not.toBe(a);
    expect(b.hash).not.toBe(a!.hash);
    // Deterministic: the same kinds give the same bytes regardless of order.
    expect(new OpenAPIPublisher([widget, cronTab]).v3Document('apis/stable.example.com/v1')!.hash).toBe(b.hash);
  });

  it('publishes custom-resource roots with GVK and ObjectMeta, reachable the way kubectl explain walks', () => {
    const doc = JSON.parse(pub.v3Document('apis/stable.example.com/v1')!.body);
    const gvk = { group: 'stable.example.com', version: 'v1', kind: 'CronTab' };
    expect(doc.openapi).toBe('3.0.0');
    expect(doc.components.schemas['com.example.stable.v1.CronTab']['x-kubernetes-group-version-kind']).toEqual([gvk]);
    expect(explain(doc, gvk, ['spec', 'cronSpec'])).toEqual({ type: 'string', description: 'cron' });
    expect(explain(doc, gvk, ['metadata', 'labels']).type).toBe('object');
    expect(doc.components.schemas['com.example.stable.v1.CronTab'].properties.metadata).toEqual({
      description: "Standard object's metadata.",
      allOf: [{ $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' }],
    });
    const list = doc.components.schemas['com.example.stable.v1.CronTabList'];
    expect(list['x-kubernetes-group-version-kind']).toEqual([{ ...gvk, kind: 'CronTabList' }]);
    expect(list.properties.items.items).toEqual({ allOf: [{ $ref: '#/components/schemas/com.example.stable.v1.CronTab' }] });
    for (const ref of allRefs(doc)) expect(() => resolve(doc, ref)).not.toThrow();
  });

  it('lists the operations with Kubernetes ids, actions and GVKs; PATCH declares fieldValidation and the 4 patch types', () => {
    const doc = JSON.parse(pub.v3Document('apis/stable.example.com/v1')!.body);
    const base = '/apis/stable.example.com/v1';
    const item = doc.paths[`${base}/namespaces/{namespace}/crontabs/{name}`];
    expect(item.get.operationId).toBe('readStableExampleComV1NamespacedCronTab');
    expect(item.put['x-kubernetes-action']).toBe('put');
    expect(item.patch['x-kubernetes-group-version-kind']).toEqual({ group: 'stable.example.com', version: 'v1', kind: 'CronTab' });
    expect(item.patch.parameters.map((p: Doc) => p.name)).toEqual(['dryRun', 'fieldManager', 'fieldValidation', 'force']);
    expect(Object.keys(item.patch.requestBody.content)).toEqual([
      'application/apply-patch+yaml',
      'application/json-patch+json',
      'application/merge-patch+json',
      'application/strategic-merge-patch+json',
    ]);
    expect(item.patch.requestBody.content['application/merge-patch+json'].schema).toEqual({
      $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Patch',
    });
    expect(item.delete.responses['200'].content['application/json'].schema.$ref).toBe('#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Status');
    expect(item.parameters.map((p: Doc) => p.name)).toEqual(['name', 'namespace', 'pretty']);
    const coll = doc.paths[`${base}/namespaces/{namespace}/crontabs`];
    expect(coll.get.operationId).toBe('listStableExampleComV1NamespacedCronTab');
    expect(coll.get.responses['200'].content['application/json'].schema.$ref).toBe('#/components/schemas/com.example.stable.v1.CronTabList');
    expect(coll.post.parameters.map((p: Doc) => p.name)).toContain('fieldValidation');
    expect(coll.delete.operationId).toBe('deleteStableExampleComV1CollectionNamespacedCronTab');
    expect(doc.paths[`${base}/crontabs`].get.operationId).toBe('listStableExampleComV1CronTabForAllNamespaces');
    expect(doc.paths[`${base}/watch/namespaces/{namespace}/crontabs/{name}`].get['x-kubernetes-action']).toBe('watch');
    expect(doc.paths[`${base}/watch/crontabs`].get['x-kubernetes-action']).toBe('watchlist');
    expect(doc.paths[`${base}/namespaces/{namespace}/crontabs/{name}/status`].patch.operationId).toBe('patchStableExampleComV1NamespacedCronTabStatus');
  });

  it('respects verbs and cluster scope', () => {
    const doc = JSON.parse(pub.v3Document('apis/stable.example.com/v1')!.body);
    const item = doc.paths['/apis/stable.example.com/v1/widgets/{name}'];
    expect(Object.keys(item).sort()).toEqual(['get', 'parameters']);
    expect(item.get.operationId).toBe('readStableExampleComV1Widget');
    expect(doc.paths['/apis/stable.example.com/v1/widgets'].get.operationId).toBe('listStableExampleComV1Widget');
    expect(doc.paths['/apis/stable.example.com/v1/watch/widgets']).toBeUndefined();
  });

  it('serves a Swagger 2.0 document with definitions, GVKs and the same operations', () => {
    const res = pub.handle({ path: '/openapi/v2' });
    const doc = JSON.parse(res.body as string);
    expect(doc.swagger).toBe('2.0');
    expect(doc.info.version).toBe('v1.33.0');
    expect(doc.definitions['com.example.stable.v1.CronTab']['x-kubernetes-group-version-kind']).toEqual([
      { group: 'stable.example.com', version: 'v1', kind: 'CronTab' },
    ]);
    expect(doc.definitions['com.example.stable.v1.CronTab'].properties.metadata).toEqual({
      $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta',
      description: "Standard object's metadata.",
    });
    expect(doc.definitions['com.example.stable.v1.Widget'].properties.size).toEqual({ type: 'integer' }); // no nullable in 2.0
    const patch = doc.paths['/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}'].patch;
    expect(patch.consumes).toHaveLength(4);
    expect(patch.parameters[0]).toEqual({
      name: 'body',
      in: 'body',
      required: true,
      schema: { $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch' },
    });
    expect(patch.parameters.map((p: Doc) => p.name)).toContain('fieldValidation');
    for (const ref of allRefs(doc)) expect(() => resolve(doc, ref)).not.toThrow();
  });

  it('rejects two different schemas claiming one definition name', () => {
    const clash: OpenAPIKind = { ...cronTab, schema: { type: 'object' } };
    expect(() => buildOpenAPIV3Document([cronTab, clash])).toThrow(/two different schemas are named com.example.stable.v1.CronTab/);
  });
});

describe('schema extensions of this server', () => {
  it('publishes metav1.Condition with every required field and without x-kapi-* keys', async () => {
    const { SchemaEmitter } = await import('./openapi.schemas.js');
    const { ConditionSchema } = await import('../schema/meta.schemas.js');
    for (const flavor of ['v3', 'v2'] as const) {
      const em = new SchemaEmitter(flavor);
      const name = em.define(ConditionSchema);
      const def = em.definitions[name]!;
      expect(def.required).toEqual(['type', 'status', 'lastTransitionTime', 'reason', 'message']);
      expect(Object.keys(def).filter((k) => k.startsWith('x-kapi-'))).toEqual([]);
    }
  });
});

describe('OpenAPIPublisher.setExternalV3', () => {
  it("serves another server's group-version documents as given, beside this server's, which win a shared key", () => {
    const p = new OpenAPIPublisher([cronTab]);
    const remote = '{"openapi":"3.0.0","paths":{}}';
    p.setExternalV3(
      new Map([
        ['apis/metrics.k8s.io/v1beta1', remote],
        ['apis/stable.example.com/v1', '{"not":"ours"}'],
      ]),
    );
    const disc = JSON.parse(p.handle({ path: '/openapi/v3' }).body as string) as { paths: Record<string, { serverRelativeURL: string }> };
    const hash = createHash('sha512').update(remote).digest('hex').toUpperCase();
    expect(disc.paths['apis/metrics.k8s.io/v1beta1']).toEqual({ serverRelativeURL: `/openapi/v3/apis/metrics.k8s.io/v1beta1?hash=${hash}` });
    expect(p.handle({ path: '/openapi/v3/apis/metrics.k8s.io/v1beta1', hash }).body).toBe(remote);
    expect(p.v3Document('apis/stable.example.com/v1')!.body).not.toBe('{"not":"ours"}');
    p.setExternalV3(new Map());
    expect(p.handle({ path: '/openapi/v3/apis/metrics.k8s.io/v1beta1' }).status).toBe(404);
  });
});
