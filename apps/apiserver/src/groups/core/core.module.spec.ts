import { OpenAPIPublisher, type OpenAPIKind } from '@app/apimachinery';
import { CORE_KINDS } from './core.module.js';

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const kinds: OpenAPIKind[] = [...CORE_KINDS];

function deref(doc: Doc, s: Doc): Doc {
  if (s.$ref) return deref(doc, doc.components.schemas[s.$ref.replace('#/components/schemas/', '')]);
  if (s.allOf?.length === 1) return { ...deref(doc, s.allOf[0]), ...s, allOf: undefined };
  return s;
}

describe('core/v1 group', () => {
  it('publish api/v1 so kubectl explain configmap.data and apply validation work', () => {
    const pub = new OpenAPIPublisher(kinds);
    const disc = JSON.parse(pub.handle({ path: '/openapi/v3' }).body as string);
    const url: string = disc.paths['api/v1'].serverRelativeURL;
    expect(url).toMatch(/^\/openapi\/v3\/api\/v1\?hash=[0-9A-F]{128}$/);
    const [path, query] = url.split('?hash=');
    const res = pub.handle({ path, hash: query });
    expect(res.status).toBe(200);
    const doc: Doc = JSON.parse(res.body as string);

    // explain: find the schema by GVK, then follow refs.
    const cm = Object.values(doc.components.schemas as Record<string, Doc>).find((s) =>
      (s['x-kubernetes-group-version-kind'] ?? []).some((g: Doc) => g.group === '' && g.version === 'v1' && g.kind === 'ConfigMap'),
    )!;
    expect(cm).toBe(doc.components.schemas['io.k8s.api.core.v1.ConfigMap']);
    expect(cm.properties.data).toMatchObject({ type: 'object', additionalProperties: { type: 'string' } });
    expect(cm.properties.data.description).toEqual(expect.any(String));
    const labels = deref(doc, deref(doc, cm.properties.metadata).properties.labels);
    expect(labels.type).toBe('object');
    const owners = deref(doc, cm.properties.metadata).properties.ownerReferences;
    expect(owners['x-kubernetes-patch-merge-key']).toBe('uid');
    expect(deref(doc, owners.items).required).toEqual(['apiVersion', 'kind', 'name', 'uid']);

    // apply: the PATCH operation of the GVK lists fieldValidation.
    const patchOps = Object.values(doc.paths as Record<string, Doc>)
      .map((p) => p.patch)
      .filter((op) => op && op['x-kubernetes-group-version-kind'].kind === 'ConfigMap');
    expect(patchOps).toHaveLength(1);
    expect(patchOps[0].parameters.some((p: Doc) => p.name === 'fieldValidation')).toBe(true);
    expect(patchOps[0].responses['200'].content['application/vnd.kubernetes.protobuf']).toBeDefined();

    // Shared meta types appear once under their Kubernetes names; every $ref resolves.
    expect(doc.components.schemas['io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta'].properties.finalizers['x-kubernetes-list-type']).toBe('set');
    expect(doc.components.schemas['io.k8s.api.core.v1.Event'].properties.eventTime.allOf[0].$ref).toBe(
      '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime',
    );
    const refs: string[] = [];
    JSON.stringify(doc, (k, v) => (k === '$ref' ? (refs.push(v), v) : v));
    for (const r of refs) expect(doc.components.schemas[r.replace('#/components/schemas/', '')]).toBeDefined();
    // Namespace status subresource and ServiceAccount delete returning the object.
    expect(doc.paths['/api/v1/namespaces/{name}/status'].put.operationId).toBe('replaceCoreV1NamespaceStatus');
    expect(doc.paths['/api/v1/namespaces/{namespace}/serviceaccounts/{name}'].delete.responses['200'].content['application/json'].schema.$ref).toBe(
      '#/components/schemas/io.k8s.api.core.v1.ServiceAccount',
    );
  });
});
