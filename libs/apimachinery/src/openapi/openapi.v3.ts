/**
 * OpenAPI v3 documents as kube-apiserver serves them (kube-openapi handler3):
 * - `GET /openapi/v3`: `{"paths": {"api/v1": {"serverRelativeURL": "/openapi/v3/api/v1?hash=<H>"}, ...}}`
 *   where H is the uppercase hex SHA-512 of the group-version document's JSON bytes (also its ETag).
 * - `GET /openapi/v3/<gv>`: an OpenAPI 3.0 document with the paths of every kind of that
 *   group-version and `components.schemas` named like Kubernetes' definitions, each kind schema
 *   carrying `x-kubernetes-group-version-kind`, each operation `x-kubernetes-action` and
 *   `x-kubernetes-group-version-kind`. kubectl explain finds the kind by that extension and
 *   follows `#/components/schemas/...` references; kubectl apply checks the PATCH operation for
 *   a `fieldValidation` parameter.
 */
import { createHash } from 'node:crypto';
import { groupVersionPath, type OpenAPIKind } from './openapi.kinds.js';
import { kindPaths, PATCH_CONTENT_TYPES, type OperationModel, type ParamModel, type PathModel } from './openapi.operations.js';
import { defineKind, SchemaEmitter, type PublishedSchema } from './openapi.schemas.js';

/** Title and version written into `info` (the server's git version, e.g. v1.33.0). */
export interface OpenAPIInfo {
  title?: string;
  version?: string;
}

/** A serialized document: its JSON text and hash (= ETag value, unquoted). */
export interface PublishedDocument {
  body: string;
  hash: string;
}

/** The `/openapi/v3` discovery document. */
export interface OpenAPIV3Discovery {
  paths: Record<string, { serverRelativeURL: string }>;
}

/** Uppercase hex SHA-512, as kube-openapi computes document ETags and `hash` query values. */
export function openapiHash(body: string): string {
  return createHash('sha512').update(body).digest('hex').toUpperCase();
}

/** Serializes a document and hashes the exact bytes served. */
export function publish(doc: unknown): PublishedDocument {
  const body = JSON.stringify(doc);
  return { body, hash: openapiHash(body) };
}

function sortKeys<T>(o: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function v3Param(p: ParamModel): PublishedSchema {
  const out: PublishedSchema = { name: p.name, in: p.in, description: p.description };
  if (p.required) out.required = true;
  out.schema = p.in === 'query' ? { type: p.type, uniqueItems: true } : { type: p.type };
  return out;
}

function v3Operation(op: OperationModel, em: SchemaEmitter): PublishedSchema {
  const out: PublishedSchema = { tags: [op.tag], description: op.description, operationId: op.operationId };
  if (op.params.length) out.parameters = op.params.map(v3Param);
  if (op.body) {
    const schema = em.ref(op.body.schema);
    const types = op.body.kind === 'patch' ? [...PATCH_CONTENT_TYPES] : ['*/*'];
    out.requestBody = { content: Object.fromEntries(types.map((t) => [t, { schema }])), ...(op.body.required ? { required: true } : {}) };
  }
  const responses: Record<string, PublishedSchema> = {};
  for (const r of op.responses) {
    responses[r.code] = r.schema
      ? { description: r.description, content: Object.fromEntries(op.produces.map((t) => [t, { schema: em.ref(r.schema!) }])) }
      : { description: r.description };
  }
  out.responses = responses;
  out['x-kubernetes-action'] = op.action;
  out['x-kubernetes-group-version-kind'] = { ...op.gvk };
  return out;
}

/** Adds the paths of `models` to `paths` (v3 path items). */
function addPaths(paths: Record<string, PublishedSchema>, models: PathModel[], em: SchemaEmitter): void {
  for (const m of models) {
    const item: PublishedSchema = {};
    for (const op of m.operations) item[op.method] = v3Operation(op, em);
    item.parameters = m.params.map(v3Param);
    paths[m.path] = item;
  }
}

/**
 * Builds the OpenAPI 3.0 document of one group-version from its kinds (all of the same group
 * and version). Deterministic: same kinds, same bytes, same hash.
 */
export function buildOpenAPIV3Document(kinds: readonly OpenAPIKind[], info: OpenAPIInfo = {}): Record<string, unknown> {
  const em = new SchemaEmitter('v3');
  const paths: Record<string, PublishedSchema> = {};
  for (const k of [...kinds].sort((a, b) => a.kind.localeCompare(b.kind))) {
    const defs = defineKind(em, k);
    addPaths(paths, kindPaths(k, defs), em);
  }
  return {
    openapi: '3.0.0',
    info: { title: info.title ?? 'Kubernetes', version: info.version ?? 'unversioned' },
    paths: sortKeys(paths),
    components: {
      schemas: sortKeys(em.definitions),
      securitySchemes: {
        BearerToken: { type: 'apiKey', description: 'Bearer token authentication', name: 'authorization', in: 'header' },
      },
    },
  };
}

/** Groups kinds by their `/openapi/v3` key (`api/v1`, `apis/<g>/<v>`). */
export function kindsByGroupVersion(kinds: readonly OpenAPIKind[]): Map<string, OpenAPIKind[]> {
  const by = new Map<string, OpenAPIKind[]>();
  for (const k of kinds) {
    const key = groupVersionPath(k.group, k.version);
    const list = by.get(key) ?? [];
    list.push(k);
    by.set(key, list);
  }
  return by;
}

/** The discovery document for already published group-version documents. */
export function buildOpenAPIV3Discovery(docs: ReadonlyMap<string, PublishedDocument>): OpenAPIV3Discovery {
  const paths: Record<string, { serverRelativeURL: string }> = {};
  for (const key of [...docs.keys()].sort()) {
    paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${docs.get(key)!.hash}` };
  }
  return { paths };
}
