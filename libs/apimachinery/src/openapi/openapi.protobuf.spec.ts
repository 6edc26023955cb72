import YAML from 'yaml';
import type { OpenAPIKind } from './openapi.kinds.js';
import { encodeOpenAPIV2Protobuf, openAPIV2DocumentType } from './openapi.protobuf.js';
import { buildOpenAPIV2Document } from './openapi.v2.js';

type Msg = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const cronTab: OpenAPIKind = {
  group: 'stable.example.com',
  version: 'v1',
  kind: 'CronTab',
  plural: 'crontabs',
  namespaced: true,
  schema: {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: {
          cronSpec: { type: 'string', description: 'cron', maxLength: 20 },
          mode: { type: 'string', enum: ['a', 'b'] },
          labels: { type: 'object', additionalProperties: { type: 'string' } },
          ports: { type: 'array', items: { type: 'integer', format: 'int32' }, 'x-kubernetes-list-type': 'set' },
        },
      },
    },
  },
};

const decode = (buf: Buffer): Msg => openAPIV2DocumentType().toObject(openAPIV2DocumentType().decode(buf), { longs: Number, defaults: false }) as Msg;
const find = (pairs: Msg[] | undefined, name: string): Msg => {
  const hit = (pairs ?? []).find((p) => p.name === name);
  if (!hit) throw new Error(`no ${name}`);
  return hit.value as Msg;
};
const ext = (m: Msg, name: string): unknown => YAML.parse(find(m.vendor_extension, name).yaml as string);

describe('OpenAPI v2 as gnostic protobuf', () => {
  const json = buildOpenAPIV2Document([cronTab], { title: 'Kubernetes', version: 'v1.33.0' });
  const doc = decode(encodeOpenAPIV2Protobuf(json));

  it('keeps the document head, security definitions and requirements', () => {
    expect(doc.swagger).toBe('2.0');
    expect(doc.info).toMatchObject({ title: 'Kubernetes', version: 'v1.33.0' });
    expect(find(doc.security_definitions.additional_properties, 'BearerToken')).toEqual({
      api_key_security: { type: 'apiKey', name: 'authorization', in: 'header', description: 'Bearer Token authentication' },
    });
    expect(doc.security).toEqual([{ additional_properties: [{ name: 'BearerToken', value: {} }] }]);
  });

  it('maps definitions to named schemas with refs, types, items, maps and YAML vendor extensions', () => {
    const defs = doc.definitions.additional_properties as Msg[];
    expect(defs.map((d) => d.name)).toEqual(Object.keys(json.definitions as object));
    const crontab = find(defs, 'com.example.stable.v1.CronTab');
    expect(ext(crontab, 'x-kubernetes-group-version-kind')).toEqual([{ group: 'stable.example.com', version: 'v1', kind: 'CronTab' }]);
    expect(find(crontab.properties.additional_properties, 'metadata')._ref).toBe('#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta');
    const spec = find(crontab.properties.additional_properties, 'spec');
    const props = spec.properties.additional_properties as Msg[];
    expect(find(props, 'cronSpec')).toEqual({ type: { value: ['string'] }, description: 'cron', max_length: 20 });
    expect(find(props, 'mode').enum.map((a: Msg) => YAML.parse(a.yaml))).toEqual(['a', 'b']);
    expect(find(props, 'labels').additional_properties).toEqual({ schema: { type: { value: ['string'] } } });
    const ports = find(props, 'ports');
    expect(ports.items).toEqual({ schema: [{ type: { value: ['integer'] }, format: 'int32' }] });
    expect(ext(ports, 'x-kubernetes-list-type')).toBe('set');
  });

  it('keeps an empty properties object present, as kubectl tells objects from maps by it', () => {
    const m = decode(
      encodeOpenAPIV2Protobuf({
        swagger: '2.0',
        definitions: { E: { type: 'object', properties: {} }, M: { type: 'object' }, F: { additionalProperties: false } },
      }),
    );
    const defs = m.definitions.additional_properties as Msg[];
    expect(find(defs, 'E').properties).toEqual({});
    expect(find(defs, 'M').properties).toBeUndefined();
    expect(find(defs, 'F').additional_properties).toEqual({ boolean: false });
  });

  it('maps paths to operations with body and query parameters, responses and the GVK extension', () => {
    const item = find(doc.paths.path, '/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}');
    const patch = item.patch as Msg;
    expect(patch.consumes).toHaveLength(4);
    expect(patch.operation_id).toBe('patchStableExampleComV1NamespacedCronTab');
    expect(patch.parameters[0]).toEqual({
      parameter: { body_parameter: { name: 'body', in: 'body', required: true, schema: { _ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch' } } },
    });
    const fv = (patch.parameters as Msg[]).find((p) => p.parameter?.non_body_parameter?.query_parameter_sub_schema?.name === 'fieldValidation');
    expect(fv!.parameter.non_body_parameter.query_parameter_sub_schema).toMatchObject({ in: 'query', type: 'string', unique_items: true });
    expect(find(patch.responses.response_code, '200').response.schema.schema._ref).toBe('#/definitions/com.example.stable.v1.CronTab');
    expect(ext(patch, 'x-kubernetes-group-version-kind')).toEqual({ group: 'stable.example.com', version: 'v1', kind: 'CronTab' });
    expect(ext(patch, 'x-kubernetes-action')).toBe('patch');
    const pathParam = (item.parameters as Msg[]).find((p) => p.parameter?.non_body_parameter?.path_parameter_sub_schema?.name === 'name');
    expect(pathParam!.parameter.non_body_parameter.path_parameter_sub_schema).toMatchObject({ in: 'path', required: true, type: 'string' });
  });

  it('is deterministic', () => {
    expect(encodeOpenAPIV2Protobuf(json).equals(encodeOpenAPIV2Protobuf(buildOpenAPIV2Document([cronTab], { title: 'Kubernetes', version: 'v1.33.0' })))).toBe(
      true,
    );
  });
});
