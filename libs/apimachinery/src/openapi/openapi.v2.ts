/**
 * The Swagger 2.0 document served at `GET /openapi/v2`: one document for every served kind,
 * with `definitions` named like Kubernetes', the GVK extensions on kind definitions and
 * operations, and the same paths and parameters as the v3 documents. Clients that have no v3
 * support (and kubectl's fallback for validation) read it.
 */
import { groupVersionPath, type OpenAPIKind } from './openapi.kinds.js';
import { kindPaths, PATCH_CONTENT_TYPES, type OperationModel, type ParamModel } from './openapi.operations.js';
import { defineKind, SchemaEmitter, type PublishedSchema } from './openapi.schemas.js';
import type { OpenAPIInfo } from './openapi.v3.js';

function v2Param(p: ParamModel): PublishedSchema {
  const out: PublishedSchema = { type: p.type, description: p.description, name: p.name, in: p.in };
  if (p.required) out.required = true;
  if (p.in === 'query') out.uniqueItems = true;
  return out;
}

function v2Operation(op: OperationModel, em: SchemaEmitter): PublishedSchema {
  const out: PublishedSchema = { description: op.description };
  if (op.body) out.consumes = op.body.kind === 'patch' ? [...PATCH_CONTENT_TYPES] : ['*/*'];
  out.produces = op.produces;
  out.schemes = ['https'];
  out.tags = [op.tag];
  out.operationId = op.operationId;
  const params: PublishedSchema[] = [];
  if (op.body) params.push({ name: 'body', in: 'body', ...(op.body.required ? { required: true } : {}), schema: em.ref(op.body.schema) });
  params.push(...op.params.map(v2Param));
  if (params.length) out.parameters = params;
  const responses: Record<string, PublishedSchema> = {};
  for (const r of op.responses) responses[r.code] = r.schema ? { description: r.description, schema: em.ref(r.schema) } : { description: r.description };
  out.responses = responses;
  out['x-kubernetes-action'] = op.action;
  out['x-kubernetes-group-version-kind'] = { ...op.gvk };
  return out;
}

/** Builds the Swagger 2.0 document of all `kinds`. Deterministic. */
export function buildOpenAPIV2Document(kinds: readonly OpenAPIKind[], info: OpenAPIInfo = {}): Record<string, unknown> {
  const em = new SchemaEmitter('v2');
  const paths: Record<string, PublishedSchema> = {};
  const sorted = [...kinds].sort((a, b) => {
    const ga = groupVersionPath(a.group, a.version);
    const gb = groupVersionPath(b.group, b.version);
    return ga === gb ? a.kind.localeCompare(b.kind) : ga < gb ? -1 : 1;
  });
  for (const k of sorted) {
    const defs = defineKind(em, k);
    for (const m of kindPaths(k, defs)) {
      const item: PublishedSchema = {};
      for (const op of m.operations) item[op.method] = v2Operation(op, em);
      item.parameters = m.params.map(v2Param);
      paths[m.path] = item;
    }
  }
  const sortKeys = <T>(o: Record<string, T>) => Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return {
    swagger: '2.0',
    info: { title: info.title ?? 'Kubernetes', version: info.version ?? 'unversioned' },
    paths: sortKeys(paths),
    definitions: sortKeys(em.definitions),
    securityDefinitions: { BearerToken: { description: 'Bearer Token authentication', type: 'apiKey', name: 'authorization', in: 'header' } },
    security: [{ BearerToken: [] }],
  };
}
