/**
 * The protobuf form of `/openapi/v2`: the Swagger 2.0 document as a gnostic `openapi.v2.Document`
 * (proto/gnostic/openapiv2/OpenAPIv2.proto), which kube-apiserver serves for the Accept types
 * `application/com.github.proto-openapi.spec.v2@v1.0+protobuf` (deprecated spelling, the one
 * kubectl up to 1.28 sends) and `application/com.github.proto-openapi.spec.v2.v1.0+protobuf`.
 *
 * The mapping follows gnostic's JSON-to-message rules: maps become repeated Named* pairs in
 * document order, `x-` keys become vendor_extension entries, one-of wrappers choose their member
 * from the JSON shape (`$ref` -> json_reference, `in: body` -> body_parameter, `type: file` ->
 * file_schema), and free-form values (default, enum, example, extensions) become `Any.yaml`,
 * the value serialized as YAML, which is what kubectl's schema reader unmarshals.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import YAML from 'yaml';

/** The Accept/Content-Type subtype kube-apiserver answers protobuf with. */
export const OPENAPI_V2_PROTOBUF_MEDIA_TYPE = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';
/** The older spelling of the same type (kubectl 1.27 and 1.28 ask for it). */
export const OPENAPI_V2_PROTOBUF_MEDIA_TYPE_DEPRECATED = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';

type Json = unknown;
type Obj = Record<string, Json>;
type Msg = Record<string, unknown>;

function findProtoDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'proto'))) return join(dir, 'proto');
    const parent = dirname(dir);
    if (parent === dir) throw new Error('openapi protobuf: no proto/ directory beside a package.json above this module');
    dir = parent;
  }
}

let documentType: protobuf.Type | undefined;

/** The gnostic `openapi.v2.Document` message type (loaded once; field names as in the .proto). */
export function openAPIV2DocumentType(): protobuf.Type {
  if (!documentType) {
    const protoDir = findProtoDir();
    const root = new protobuf.Root();
    // google/protobuf/any.proto comes from protobufjs' bundled well-known types.
    root.resolvePath = (_origin: string, target: string) => (target.startsWith('google/protobuf/') ? target : join(protoDir, target));
    root.loadSync('gnostic/openapiv2/OpenAPIv2.proto', { keepCase: true });
    root.resolveAll();
    documentType = root.lookupType('openapi.v2.Document');
  }
  return documentType;
}

const isObj = (v: Json): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: Json): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: Json): number | undefined => (typeof v === 'number' ? v : undefined);
const bool = (v: Json): boolean | undefined => (typeof v === 'boolean' ? v : undefined);
const strs = (v: Json): string[] | undefined => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : undefined);

function any(v: Json): Msg {
  return { yaml: YAML.stringify(v) };
}

function extensions(o: Obj): Msg[] {
  return Object.entries(o)
    .filter(([k]) => k.startsWith('x-'))
    .map(([name, value]) => ({ name, value: any(value) }));
}

function named<T>(o: Json, f: (v: Json) => T): Msg[] {
  return isObj(o) ? Object.entries(o).map(([name, value]) => ({ name, value: f(value) })) : [];
}

/** Copies the listed JSON keys into a message, converting each with its function; skips absent ones. */
function pick(o: Obj, fields: Record<string, [string, (v: Json) => unknown]>): Msg {
  const m: Msg = {};
  for (const [jsonKey, [field, conv]] of Object.entries(fields)) {
    if (o[jsonKey] === undefined) continue;
    const v = conv(o[jsonKey]);
    if (v !== undefined) m[field] = v;
  }
  return m;
}

const externalDocs = (v: Json): Msg | undefined =>
  isObj(v) ? { ...pick(v, { description: ['description', str], url: ['url', str] }), vendor_extension: extensions(v) } : undefined;
const anyList = (v: Json): Msg[] | undefined => (Array.isArray(v) ? v.map(any) : undefined);

/** JSON Schema's validation keywords, under the names every gnostic message that has them uses. */
const VALIDATION_KEYWORDS: Record<string, [string, (v: Json) => unknown]> = {
  multipleOf: ['multiple_of', num],
  maximum: ['maximum', num],
  exclusiveMaximum: ['exclusive_maximum', bool],
  minimum: ['minimum', num],
  exclusiveMinimum: ['exclusive_minimum', bool],
  maxLength: ['max_length', num],
  minLength: ['min_length', num],
  pattern: ['pattern', str],
  maxItems: ['max_items', num],
  minItems: ['min_items', num],
  uniqueItems: ['unique_items', bool],
  enum: ['enum', anyList],
};

/** The validation keywords shared by parameters, headers and primitive items. */
function primitiveFields(o: Obj): Msg {
  return pick(o, {
    type: ['type', str],
    format: ['format', str],
    items: ['items', primitivesItems],
    collectionFormat: ['collection_format', str],
    default: ['default', any],
    ...VALIDATION_KEYWORDS,
  });
}

function primitivesItems(v: Json): Msg | undefined {
  return isObj(v) ? { ...primitiveFields(v), vendor_extension: extensions(v) } : undefined;
}

function schema(v: Json): Msg {
  if (!isObj(v)) return {};
  const m = pick(v, {
    $ref: ['_ref', str],
    format: ['format', str],
    title: ['title', str],
    description: ['description', str],
    default: ['default', any],
    ...VALIDATION_KEYWORDS,
    maxProperties: ['max_properties', num],
    minProperties: ['min_properties', num],
    required: ['required', strs],
    additionalProperties: ['additional_properties', (a) => (typeof a === 'boolean' ? { boolean: a } : isObj(a) ? { schema: schema(a) } : undefined)],
    type: ['type', (t) => (typeof t === 'string' ? { value: [t] } : Array.isArray(t) ? { value: strs(t) } : undefined)],
    items: ['items', (i) => (Array.isArray(i) ? { schema: i.map(schema) } : isObj(i) ? { schema: [schema(i)] } : undefined)],
    allOf: ['all_of', (a) => (Array.isArray(a) ? a.map(schema) : undefined)],
    properties: ['properties', (p) => (isObj(p) ? { additional_properties: named(p, schema) } : undefined)],
    discriminator: ['discriminator', str],
    readOnly: ['read_only', bool],
    xml: [
      'xml',
      (x) =>
        isObj(x)
          ? {
              ...pick(x, {
                name: ['name', str],
                namespace: ['namespace', str],
                prefix: ['prefix', str],
                attribute: ['attribute', bool],
                wrapped: ['wrapped', bool],
              }),
              vendor_extension: extensions(x),
            }
          : undefined,
    ],
    externalDocs: ['external_docs', externalDocs],
    example: ['example', any],
  });
  m.vendor_extension = extensions(v);
  return m;
}

const SUB_SCHEMA: Record<string, string> = {
  header: 'header_parameter_sub_schema',
  formData: 'form_data_parameter_sub_schema',
  query: 'query_parameter_sub_schema',
  path: 'path_parameter_sub_schema',
};

function parameter(v: Json): Msg | undefined {
  if (!isObj(v)) return undefined;
  const head = pick(v, { required: ['required', bool], in: ['in', str], description: ['description', str], name: ['name', str] });
  if (v.in === 'body') {
    return { body_parameter: { ...head, ...pick(v, { schema: ['schema', schema] }), vendor_extension: extensions(v) } };
  }
  const sub = SUB_SCHEMA[String(v.in)];
  if (!sub) return undefined;
  const allowEmpty =
    sub === 'query_parameter_sub_schema' || sub === 'form_data_parameter_sub_schema' ? pick(v, { allowEmptyValue: ['allow_empty_value', bool] }) : {};
  return { non_body_parameter: { [sub]: { ...head, ...allowEmpty, ...primitiveFields(v), vendor_extension: extensions(v) } } };
}

function parametersItem(v: Json): Msg | undefined {
  if (isObj(v) && typeof v.$ref === 'string') return { json_reference: { _ref: v.$ref, ...pick(v, { description: ['description', str] }) } };
  const p = parameter(v);
  return p && { parameter: p };
}

const parametersList = (v: Json): Msg[] | undefined => (Array.isArray(v) ? v.map(parametersItem).filter((p): p is Msg => p !== undefined) : undefined);

function header(v: Json): Msg {
  return isObj(v) ? { ...primitiveFields(v), ...pick(v, { description: ['description', str] }), vendor_extension: extensions(v) } : {};
}

function response(v: Json): Msg {
  if (!isObj(v)) return {};
  const m = pick(v, {
    description: ['description', str],
    schema: ['schema', (s) => (isObj(s) ? (s.type === 'file' ? { file_schema: fileSchema(s) } : { schema: schema(s) }) : undefined)],
    headers: ['headers', (h) => ({ additional_properties: named(h, header) })],
    examples: ['examples', (e) => ({ additional_properties: named(e, any) })],
  });
  m.vendor_extension = extensions(v);
  return m;
}

function fileSchema(s: Obj): Msg {
  return {
    ...pick(s, {
      format: ['format', str],
      title: ['title', str],
      description: ['description', str],
      default: ['default', any],
      required: ['required', strs],
      type: ['type', str],
      readOnly: ['read_only', bool],
      externalDocs: ['external_docs', externalDocs],
      example: ['example', any],
    }),
    vendor_extension: extensions(s),
  };
}

function responseValue(v: Json): Msg {
  if (isObj(v) && typeof v.$ref === 'string') return { json_reference: { _ref: v.$ref, ...pick(v, { description: ['description', str] }) } };
  return { response: response(v) };
}

function operation(v: Json): Msg | undefined {
  if (!isObj(v)) return undefined;
  const m = pick(v, {
    tags: ['tags', strs],
    summary: ['summary', str],
    description: ['description', str],
    externalDocs: ['external_docs', externalDocs],
    operationId: ['operation_id', str],
    produces: ['produces', strs],
    consumes: ['consumes', strs],
    parameters: ['parameters', parametersList],
    responses: [
      'responses',
      (r) =>
        isObj(r)
          ? {
              response_code: Object.entries(r)
                .filter(([k]) => !k.startsWith('x-'))
                .map(([name, value]) => ({ name, value: responseValue(value) })),
              vendor_extension: extensions(r),
            }
          : undefined,
    ],
    schemes: ['schemes', strs],
    deprecated: ['deprecated', bool],
    security: ['security', securityList],
  });
  m.vendor_extension = extensions(v);
  return m;
}

function pathItem(v: Json): Msg {
  if (!isObj(v)) return {};
  const m = pick(v, {
    $ref: ['_ref', str],
    get: ['get', operation],
    put: ['put', operation],
    post: ['post', operation],
    delete: ['delete', operation],
    options: ['options', operation],
    head: ['head', operation],
    patch: ['patch', operation],
    parameters: ['parameters', parametersList],
  });
  m.vendor_extension = extensions(v);
  return m;
}

function securityList(v: Json): Msg[] | undefined {
  if (!Array.isArray(v)) return undefined;
  return v.map((req) => ({ additional_properties: named(req, (scopes) => ({ value: strs(scopes) ?? [] })) }));
}

const SECURITY_MEMBER: Record<string, string> = {
  implicit: 'oauth2_implicit_security',
  password: 'oauth2_password_security',
  application: 'oauth2_application_security',
  accessCode: 'oauth2_access_code_security',
};

function securityDefinitionsItem(v: Json): Msg {
  if (!isObj(v)) return {};
  const base = { ...pick(v, { type: ['type', str], description: ['description', str] }), vendor_extension: extensions(v) };
  if (v.type === 'basic') return { basic_authentication_security: base };
  if (v.type === 'apiKey') return { api_key_security: { ...base, ...pick(v, { name: ['name', str], in: ['in', str] }) } };
  const member = SECURITY_MEMBER[String(v.flow)];
  if (v.type === 'oauth2' && member) {
    return {
      [member]: {
        ...base,
        ...pick(v, {
          flow: ['flow', str],
          scopes: ['scopes', (s) => ({ additional_properties: named(s, (x) => String(x)) })],
          authorizationUrl: ['authorization_url', str],
          tokenUrl: ['token_url', str],
        }),
      },
    };
  }
  return {};
}

/**
 * The gnostic message (as a plain object with the .proto's field names) of a Swagger 2.0
 * document. Unknown keys are left out, as gnostic's parser rejects them rather than keeps them.
 */
export function openAPIV2ToMessage(doc: Record<string, unknown>): Record<string, unknown> {
  const m = pick(doc, {
    swagger: ['swagger', str],
    info: [
      'info',
      (i) =>
        isObj(i)
          ? {
              ...pick(i, {
                title: ['title', str],
                version: ['version', str],
                description: ['description', str],
                termsOfService: ['terms_of_service', str],
                contact: [
                  'contact',
                  (c) =>
                    isObj(c) ? { ...pick(c, { name: ['name', str], url: ['url', str], email: ['email', str] }), vendor_extension: extensions(c) } : undefined,
                ],
                license: [
                  'license',
                  (l) => (isObj(l) ? { ...pick(l, { name: ['name', str], url: ['url', str] }), vendor_extension: extensions(l) } : undefined),
                ],
              }),
              vendor_extension: extensions(i),
            }
          : undefined,
    ],
    host: ['host', str],
    basePath: ['base_path', str],
    schemes: ['schemes', strs],
    consumes: ['consumes', strs],
    produces: ['produces', strs],
    paths: [
      'paths',
      (p) =>
        isObj(p)
          ? {
              vendor_extension: extensions(p),
              path: Object.entries(p)
                .filter(([k]) => !k.startsWith('x-'))
                .map(([name, value]) => ({ name, value: pathItem(value) })),
            }
          : undefined,
    ],
    definitions: ['definitions', (d) => ({ additional_properties: named(d, schema) })],
    parameters: ['parameters', (d) => ({ additional_properties: named(d, (p) => parameter(p) ?? {}) })],
    responses: ['responses', (d) => ({ additional_properties: named(d, response) })],
    security: ['security', securityList],
    securityDefinitions: ['security_definitions', (d) => ({ additional_properties: named(d, securityDefinitionsItem) })],
    tags: [
      'tags',
      (t) =>
        Array.isArray(t)
          ? t.filter(isObj).map((x) => ({
              ...pick(x, { name: ['name', str], description: ['description', str], externalDocs: ['external_docs', externalDocs] }),
              vendor_extension: extensions(x),
            }))
          : undefined,
    ],
    externalDocs: ['external_docs', externalDocs],
  });
  m.vendor_extension = extensions(doc);
  return m;
}

/** Encodes a Swagger 2.0 document as the protobuf bytes kube-apiserver serves at /openapi/v2. */
export function encodeOpenAPIV2Protobuf(doc: Record<string, unknown>): Buffer {
  const bytes = openAPIV2DocumentType().encode(openAPIV2ToMessage(doc)).finish();
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
