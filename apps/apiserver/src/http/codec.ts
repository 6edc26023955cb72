/**
 * Request body decoding and response encoding for API objects: JSON, YAML and protobuf in,
 * JSON, YAML, protobuf, Table and PartialObjectMetadata out. The protobuf wire codec itself
 * lives in libs/apimachinery; this file only decides which one to use.
 */
import { Errors, StatusError, type KubeObject } from '@app/apimachinery';
import { type KindDeclaration, partialObjectMetadata, toTable, apiVersionOf } from '@app/registry';
import { stringify as yamlStringify } from 'yaml';
import { bodyFormatOf, JSON_TYPE, PROTOBUF, YAML_TYPE, type OutputFormat } from './negotiation.js';

/** Wire-level functions supplied by libs/apimachinery (wired in server setup). */
export interface WireCodecs {
  /** Parses JSON, reporting duplicate keys as field paths. Throws on syntax errors. */
  parseJson(text: string): { value: unknown; duplicates: string[] };
  /** Parses one YAML document to JSON-compatible data, reporting duplicate keys. */
  parseYaml(text: string): { value: unknown; duplicates: string[] };
  /** Decodes a k8s protobuf envelope into the JSON form of the object. */
  decodeProtobuf(body: Uint8Array): { apiVersion: string; kind: string; object: Record<string, unknown> };
  /** Encodes an object (JSON form) as a k8s protobuf envelope of the given message. */
  encodeProtobuf(obj: Record<string, unknown>, messageName: string): Uint8Array;
  /** Whether protobuf is available for a message name. */
  hasProtobuf(messageName: string | undefined): boolean;
}

/** A decoded request body. */
export interface DecodedBody {
  value: unknown;
  duplicates: string[];
}

/** Decodes an object body according to Content-Type (JSON, YAML or protobuf); 415 otherwise. */
export function decodeBody(codecs: WireCodecs, contentType: string | undefined, body: Buffer | undefined, allowProtobuf: boolean): DecodedBody {
  const fmt = bodyFormatOf(contentType);
  const raw = body ?? Buffer.alloc(0);
  if (fmt === 'protobuf') {
    if (!allowProtobuf) throw Errors.unsupportedMediaType(contentType ?? '', [JSON_TYPE, YAML_TYPE]);
    try {
      const d = codecs.decodeProtobuf(raw);
      const obj = { ...d.object, apiVersion: d.apiVersion, kind: d.kind };
      return { value: obj, duplicates: [] };
    } catch (e) {
      if (e instanceof StatusError) throw e;
      throw Errors.badRequest(`the body of the request could not be decoded as protobuf: ${(e as Error).message}`);
    }
  }
  if (fmt !== 'json' && fmt !== 'yaml') {
    throw Errors.unsupportedMediaType(contentType ?? '', allowProtobuf ? [JSON_TYPE, YAML_TYPE, PROTOBUF] : [JSON_TYPE, YAML_TYPE]);
  }
  const text = raw.toString('utf8');
  if (text.trim() === '') throw Errors.badRequest('the body of the request is empty');
  try {
    return fmt === 'json' ? codecs.parseJson(text) : codecs.parseYaml(text);
  } catch (e) {
    if (e instanceof StatusError) throw e;
    throw Errors.badRequest(`the body of the request could not be decoded: ${(e as Error).message}`);
  }
}

/** kube's errNotAcceptable of a transform the negotiated media type cannot take (406). */
function notAcceptable(message: string): StatusError {
  return new StatusError(406, 'NotAcceptable', message);
}

/** Encoded response payload. */
export interface Encoded {
  contentType: string;
  body: string | Buffer;
}

function json(v: unknown, pretty: boolean): string {
  return pretty ? JSON.stringify(v, null, 2) + '\n' : JSON.stringify(v);
}

/** Encodes one object in the negotiated format. */
export function encodeObject(codecs: WireCodecs, decl: KindDeclaration, obj: KubeObject, fmt: OutputFormat, pretty: boolean, includeObject?: string): Encoded {
  switch (fmt.kind) {
    case 'json':
      return { contentType: JSON_TYPE, body: json(obj, pretty) };
    case 'yaml':
      return { contentType: YAML_TYPE, body: yamlStringify(obj) };
    case 'protobuf':
      return { contentType: PROTOBUF, body: Buffer.from(codecs.encodeProtobuf(obj, decl.protobufMessage as string)) };
    case 'table': {
      const t = toTable(decl, [obj], {
        now: new Date(),
        listMeta: { resourceVersion: obj.metadata.resourceVersion },
        includeObject,
        version: fmt.version,
      });
      return { contentType: JSON_TYPE, body: json(t, pretty) };
    }
    case 'partial':
      if (fmt.list) throw notAcceptable(`you requested PartialObjectMetadataList, but the requested object is not a list (*${decl.version}.${decl.kind})`);
      return { contentType: JSON_TYPE, body: json(partialObjectMetadata(obj, fmt.version), pretty) };
  }
}

/** Encodes a list in the negotiated format (`<Kind>List`, Table, or PartialObjectMetadataList). */
export function encodeList(
  codecs: WireCodecs,
  decl: KindDeclaration,
  items: KubeObject[],
  listMeta: Record<string, unknown>,
  fmt: OutputFormat,
  pretty: boolean,
  includeObject?: string,
): Encoded {
  const listKind = decl.listKind ?? `${decl.kind}List`;
  switch (fmt.kind) {
    case 'json':
    case 'yaml':
    case 'protobuf': {
      const list = { kind: listKind, apiVersion: apiVersionOf(decl), metadata: listMeta, items };
      if (fmt.kind === 'json') return { contentType: JSON_TYPE, body: json(list, pretty) };
      if (fmt.kind === 'yaml') return { contentType: YAML_TYPE, body: yamlStringify(list) };
      const msg = (decl.protobufMessage as string) + 'List';
      return { contentType: PROTOBUF, body: Buffer.from(codecs.encodeProtobuf(list, msg)) };
    }
    case 'table': {
      const t = toTable(decl, items, { now: new Date(), listMeta, includeObject, version: fmt.version });
      return { contentType: JSON_TYPE, body: json(t, pretty) };
    }
    case 'partial': {
      if (!fmt.list) throw notAcceptable(`you requested PartialObjectMetadata, but the requested object is a list (*${decl.version}.${listKind})`);
      const l = {
        kind: 'PartialObjectMetadataList',
        apiVersion: `meta.k8s.io/${fmt.version}`,
        metadata: listMeta,
        items: items.map((i) => partialObjectMetadata(i, fmt.version)),
      };
      return { contentType: JSON_TYPE, body: json(l, pretty) };
    }
  }
}
