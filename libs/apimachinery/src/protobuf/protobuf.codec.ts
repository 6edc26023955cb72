/**
 * Kubernetes protobuf wire format <-> the Kubernetes JSON form the server stores.
 *
 * Envelope (conventions.md "Representations"; apimachinery runtime/serializer/protobuf): the
 * 4 magic bytes "k8s\0", then a runtime.Unknown whose typeMeta names apiVersion/kind and whose
 * raw holds the object's own message. The object messages are described by the .proto files
 * under proto/ (same packages, names and field numbers as Kubernetes' generated.proto), loaded
 * once with protobufjs; this module walks those descriptors to map JSON <-> message, applying
 * Kubernetes' JSON rules where they differ from a plain protobuf mapping (times, durations,
 * quantities, int-or-string, fieldsV1, embedded objects, ExtraValue, omitempty).
 *
 * Watch streams (content type `application/vnd.kubernetes.protobuf;stream=watch`): each frame
 * is a 4-byte big-endian length then a meta/v1 WatchEvent message WITHOUT the envelope (the
 * "raw" serializer with the length-delimited framer), whose object.raw is the full
 * envelope-encoded object.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { StatusError } from '../errors.js';
import { isInlineField, KEEP_ZERO, messageNameFor, metaMessageFor, type ProtobufKinds } from './protobuf.registry.js';
import { WireValueError, formatGoDuration, formatMicroTime, formatTime, parseGoDuration, parseRfc3339 } from './protobuf.wellknown.js';

export { messageNameFor, metaMessageFor, type ProtobufKinds } from './protobuf.registry.js';

/**
 * Sets an own, enumerable property: a map key such as `__proto__` (a valid label key) must
 * become an entry, not the object's prototype, or it is lost (and the prototype polluted).
 */
function setOwn(obj: object, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}
/** No served kinds: only meta/v1 kinds resolve (the default for bare messages). */
const META_ONLY: ProtobufKinds = { messageFor: () => undefined, servesGroupVersion: () => false };

/** The media type of protobuf request and response bodies. */
export const PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';
/** The media type of a protobuf watch stream (length-prefixed WatchEvent frames). */
export const PROTOBUF_WATCH_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf;stream=watch';
/** The 4 bytes that start every enveloped protobuf object: "k8s" then NUL. */
export const PROTOBUF_MAGIC: Readonly<Uint8Array> = Uint8Array.of(0x6b, 0x38, 0x73, 0x00);

/** A JSON object in Kubernetes' representation. */
export type JsonObject = { [key: string]: JsonValue };
/** Any JSON value. */
export type JsonValue = string | number | boolean | null | JsonValue[] | JsonObject;

/**
 * A protobuf body that cannot be handled. `code` is what the HTTP layer answers: 415 for a
 * request body of a kind with no protobuf form, 406 when a response cannot be encoded, 400 for
 * malformed bytes or values. It is a StatusError, so the edge can answer it as a Status as is.
 */
export class ProtobufCodecError extends StatusError {
  constructor(code: 400 | 406 | 415 | 500, message: string) {
    super(code, code === 415 ? 'UnsupportedMediaType' : code === 406 ? 'NotAcceptable' : code === 400 ? 'BadRequest' : 'InternalError', message);
    this.name = 'ProtobufCodecError';
  }
}

/** Result of decoding an enveloped body. `object` carries apiVersion and kind first. */
export interface DecodedObject {
  apiVersion: string;
  kind: string;
  object: JsonObject;
}

/** One event of a protobuf watch stream. */
export interface DecodedWatchEvent {
  type: string;
  object: JsonObject;
}

/**
 * The API packages' .proto files under proto/: every k8s.io/api/<group>/<version>/generated.proto,
 * so a new group's file is picked up without a list to extend (it imports what it needs).
 */
function apiProtoFiles(protoDir: string): string[] {
  const base = join(protoDir, 'k8s.io', 'api');
  const out: string[] = [];
  for (const group of readdirSync(base).sort()) {
    if (!statSync(join(base, group)).isDirectory()) continue;
    for (const version of readdirSync(join(base, group)).sort()) {
      if (existsSync(join(base, group, version, 'generated.proto'))) out.push(`k8s.io/api/${group}/${version}/generated.proto`);
    }
  }
  return out;
}

const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';

/** Walks up from this file to the directory with package.json (works from src/ and dist/). */
function findProtoDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'proto'))) return join(dir, 'proto');
    const parent = dirname(dir);
    if (parent === dir) throw new Error('protobuf codec: no proto/ directory beside a package.json above this module');
    dir = parent;
  }
}

let root: protobuf.Root | undefined;

/**
 * The parsed API schema as the build stores it (`dist/proto/k8s-api.json`, written by
 * scripts/proto-schema.mjs): protobufjs' JSON form of the loaded .proto files, with a digest of
 * those files. Reading it costs about a third of parsing the files' text at every start.
 */
export interface ApiSchemaFile {
  /** SHA-256 of the .proto files' names and contents, in load order. */
  digest: string;
  /** protobufjs' JSON descriptor of the loaded root, comments kept (they carry merge markers). */
  root: protobuf.INamespace;
}

/** Where the build stores the parsed schema, relative to the proto/ directory. */
export const API_SCHEMA_FILE = join('..', 'dist', 'proto', 'k8s-api.json');

/** The digest an ApiSchemaFile must carry to stand for the .proto files under `protoDir`. */
export function apiProtoDigest(protoDir: string): string {
  const h = createHash('sha256');
  for (const f of apiProtoFiles(protoDir)) {
    h.update(f).update('\0');
    h.update(readFileSync(join(protoDir, f))).update('\0');
  }
  return h.digest('hex');
}

/**
 * Parses the .proto files. keepCase keeps field names as written, which are the JSON names (all
 * but FieldsV1.Raw, handled as a special type); alternateCommentMode keeps the merge markers
 * (+listType, +patchMergeKey, ...) the files carry on fields, which schemas derived from messages
 * read (schema.proto.ts).
 */
export function parseApiProtos(protoDir: string): protobuf.Root {
  const r = new protobuf.Root();
  r.resolvePath = (_origin: string, target: string) => join(protoDir, target);
  r.loadSync(apiProtoFiles(protoDir), { keepCase: true, alternateCommentMode: true });
  r.resolveAll();
  return r;
}

/** The parsed schema in the form the build stores. */
export function apiSchemaFile(protoDir: string): ApiSchemaFile {
  return { digest: apiProtoDigest(protoDir), root: parseApiProtos(protoDir).toJSON({ keepComments: true }) };
}

/**
 * The schema of the .proto files under `protoDir`: from the stored `schemaPath` when it exists
 * and its digest matches the files (a build older than the files is ignored), else parsed.
 */
export function loadApiProtos(protoDir: string, schemaPath: string): { root: protobuf.Root; from: 'schema' | 'proto' } {
  let stored: ApiSchemaFile | undefined;
  try {
    stored = JSON.parse(readFileSync(schemaPath, 'utf8')) as ApiSchemaFile;
  } catch {
    // missing or unreadable: parse the files
  }
  if (stored && typeof stored.digest === 'string' && stored.digest === apiProtoDigest(protoDir) && stored.root) {
    const r = protobuf.Root.fromJSON(stored.root);
    r.resolveAll();
    return { root: r, from: 'schema' };
  }
  return { root: parseApiProtos(protoDir), from: 'proto' };
}

/** The loaded schema (once, on first use): see loadApiProtos. */
export function protobufRoot(): protobuf.Root {
  if (!root) {
    const protoDir = findProtoDir();
    root = loadApiProtos(protoDir, join(protoDir, API_SCHEMA_FILE)).root;
  }
  return root;
}

function lookup(name: string): protobuf.Type {
  try {
    return protobufRoot().lookupType(name);
  } catch {
    throw new ProtobufCodecError(500, `no protobuf message ${name}`);
  }
}

type Special = 'time' | 'microtime' | 'duration' | 'quantity' | 'intorstring' | 'fieldsv1' | 'raw' | 'items';

/**
 * Whether a message's JSON form is not an object of its fields (Time, Duration, Quantity,
 * IntOrString, FieldsV1, RawExtension, ExtraValue/Verbs): such values are compared as a whole.
 */
export function isValueMessage(type: protobuf.Type): boolean {
  return specialOf(type) !== undefined;
}

/** Messages whose JSON form is not an object of their fields. */
function specialOf(type: protobuf.Type): Special | undefined {
  const name = type.fullName.slice(1);
  switch (name) {
    case `${META}.Time`:
      return 'time';
    case `${META}.MicroTime`:
      return 'microtime';
    case `${META}.Duration`:
      return 'duration';
    case `${META}.FieldsV1`:
      return 'fieldsv1';
    case `${META}.Verbs`:
      return 'items';
    case 'k8s.io.apimachinery.pkg.api.resource.Quantity':
    case 'k8s.io.apimachinery.pkg.api.resource.QuantityValue':
      return 'quantity';
    case 'k8s.io.apimachinery.pkg.util.intstr.IntOrString':
      return 'intorstring';
    case 'k8s.io.apimachinery.pkg.runtime.RawExtension':
      return 'raw';
  }
  // ExtraValue ([]string in Go) exists in several API packages with one repeated field.
  if (type.name === 'ExtraValue') return 'items';
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// protobuf message -> JSON

type Decoded = { [key: string]: unknown };

function toNumber(v: unknown): number {
  if (typeof v === 'number') return v;
  // protobufjs decodes 64-bit integers as Long objects when the long package is installed.
  if (typeof v === 'object' && v !== null && typeof (v as { toNumber?: unknown }).toNumber === 'function') {
    return (v as { toNumber(): number }).toNumber();
  }
  return Number(v);
}

function bytesToBase64(v: unknown): string {
  return Buffer.from(v as Uint8Array).toString('base64');
}

/** Parses embedded bytes: an enveloped protobuf object or JSON text. */
function decodeEmbedded(raw: Uint8Array, kinds: ProtobufKinds): JsonValue {
  if (raw.length === 0) return null;
  if (hasMagic(raw)) return decodeProtobuf(raw, kinds).object;
  try {
    return JSON.parse(Buffer.from(raw).toString('utf8')) as JsonValue;
  } catch {
    throw new ProtobufCodecError(400, 'embedded object is neither protobuf nor JSON');
  }
}

function scalarToJson(field: protobuf.Field, v: unknown): JsonValue {
  switch (field.type) {
    case 'int64':
    case 'uint64':
    case 'sint64':
    case 'fixed64':
    case 'sfixed64':
      return toNumber(v);
    case 'bytes':
      return bytesToBase64(v);
    default:
      return v as JsonValue;
  }
}

function isZero(v: JsonValue): boolean {
  return v === '' || v === 0 || v === false;
}

function specialToJson(kind: Special, m: Decoded, kinds: ProtobufKinds): JsonValue | undefined {
  switch (kind) {
    case 'time':
    case 'microtime': {
      const seconds = m.seconds == null ? 0 : toNumber(m.seconds);
      const nanos = m.nanos == null ? 0 : Number(m.nanos);
      // Go's metav1.Time decodes {0,0} (or an empty message) as the zero time, which is null.
      if (seconds === 0 && nanos === 0) return undefined;
      return kind === 'time' ? formatTime({ seconds, nanos }) : formatMicroTime({ seconds, nanos });
    }
    case 'duration':
      return formatGoDuration(m.duration == null ? 0 : toNumber(m.duration));
    case 'quantity':
      return typeof m.string === 'string' ? m.string : '0';
    case 'intorstring':
      return toNumber(m.type ?? 0) === 1 ? String(m.strVal ?? '') : Number(m.intVal ?? 0);
    case 'fieldsv1':
      return m.Raw == null ? {} : decodeEmbedded(m.Raw as Uint8Array, kinds);
    case 'raw':
      return m.raw == null ? null : decodeEmbedded(m.raw as Uint8Array, kinds);
    case 'items':
      return Array.isArray(m.items) ? (m.items as string[]).slice() : [];
  }
}

function valueToJson(field: protobuf.Field, v: unknown, kinds: ProtobufKinds): JsonValue | undefined {
  if (field.resolvedType instanceof protobuf.Type) return messageToJson(field.resolvedType, v as Decoded, kinds);
  if (field.resolvedType instanceof protobuf.Enum) return v as number;
  return scalarToJson(field, v);
}

/** Converts a decoded message to JSON; undefined means "absent" (e.g. a zero Time). */
function messageToJson(type: protobuf.Type, m: Decoded, kinds: ProtobufKinds): JsonValue | undefined {
  const special = specialOf(type);
  if (special) return specialToJson(special, m, kinds);
  const out: JsonObject = {};
  const typeName = type.fullName.slice(1);
  for (const field of type.fieldsArray) {
    if (!Object.prototype.hasOwnProperty.call(m, field.name)) continue;
    const v = m[field.name];
    if (v == null) continue;
    if (field.map) {
      const entries = Object.entries(v as Record<string, unknown>);
      if (entries.length === 0) continue;
      const obj: JsonObject = {};
      for (const [k, item] of entries) {
        const j = valueToJson(field, item, kinds);
        setOwn(obj, k, j === undefined ? null : j);
      }
      out[field.name] = obj;
    } else if (field.repeated) {
      const arr = v as unknown[];
      // A list kind's items are always printed (the apiserver answers `"items": []`).
      if (arr.length === 0 && !(field.name === 'items' && type.name.endsWith('List'))) continue;
      out[field.name] = arr.map((item) => valueToJson(field, item, kinds) ?? null);
    } else {
      const j = valueToJson(field, v, kinds);
      if (j === undefined) continue;
      if (!(field.resolvedType instanceof protobuf.Type) && isZero(j) && !KEEP_ZERO.has(`${typeName}.${field.name}`)) continue;
      if (isInlineField(typeName, field.name) && j !== null && typeof j === 'object' && !Array.isArray(j)) Object.assign(out, j);
      else out[field.name] = j;
    }
  }
  return out;
}

/**
 * Decodes a message (no envelope) of the named type to its Kubernetes JSON value: an object for
 * ordinary messages, a string/number/array for the special value types (Time, Quantity,
 * IntOrString, ...), undefined for a zero Time. Throws ProtobufCodecError(400) on malformed bytes.
 * `kinds` resolves embedded enveloped objects (RawExtension); without it only meta/v1 kinds do.
 */
export function decodeValue(messageName: string, bytes: Uint8Array, kinds: ProtobufKinds = META_ONLY): JsonValue | undefined {
  const type = lookup(messageName);
  let msg: Decoded;
  try {
    msg = type.decode(bytes) as unknown as Decoded;
  } catch (e) {
    throw new ProtobufCodecError(400, `malformed ${type.name} protobuf: ${(e as Error).message}`);
  }
  try {
    return messageToJson(type, msg, kinds);
  } catch (e) {
    if (e instanceof WireValueError) throw new ProtobufCodecError(400, e.message);
    throw e;
  }
}

/** decodeValue for ordinary messages: always a JSON object ({} if the value was not one). */
export function decodeMessage(messageName: string, bytes: Uint8Array, kinds: ProtobufKinds = META_ONLY): JsonObject {
  const j = decodeValue(messageName, bytes, kinds);
  return j !== null && j !== undefined && typeof j === 'object' && !Array.isArray(j) ? j : {};
}

// ---------------------------------------------------------------------------------------------
// JSON -> protobuf message

function bad(path: string, what: string): never {
  throw new ProtobufCodecError(400, `${path}: ${what}`);
}

function jsonToSpecial(kind: Special, v: JsonValue, path: string): Decoded | undefined {
  switch (kind) {
    case 'time':
    case 'microtime': {
      if (typeof v !== 'string') bad(path, 'expected an RFC 3339 time string');
      try {
        return { ...parseRfc3339(v) };
      } catch (e) {
        return bad(path, (e as Error).message);
      }
    }
    case 'duration': {
      if (typeof v !== 'string') bad(path, 'expected a duration string');
      try {
        return { duration: parseGoDuration(v) };
      } catch (e) {
        return bad(path, (e as Error).message);
      }
    }
    case 'quantity':
      if (typeof v === 'number') return { string: String(v) };
      if (typeof v !== 'string') bad(path, 'expected a quantity string');
      return { string: v };
    case 'intorstring':
      if (typeof v === 'number') {
        if (!Number.isInteger(v)) bad(path, 'expected an integer or a string');
        return { type: 0, intVal: v };
      }
      if (typeof v !== 'string') bad(path, 'expected an integer or a string');
      return { type: 1, strVal: v };
    case 'fieldsv1':
    case 'raw': {
      const raw = Buffer.from(JSON.stringify(v), 'utf8');
      return kind === 'raw' ? { raw } : { Raw: raw };
    }
    case 'items':
      if (!Array.isArray(v) || v.some((s) => typeof s !== 'string')) bad(path, 'expected an array of strings');
      return { items: v };
  }
}

function jsonToScalar(field: protobuf.Field, v: JsonValue, path: string): unknown {
  switch (field.type) {
    case 'string':
      if (typeof v !== 'string') bad(path, 'expected a string');
      return v;
    case 'bool':
      if (typeof v !== 'boolean') bad(path, 'expected a boolean');
      return v;
    case 'bytes':
      if (typeof v !== 'string') bad(path, 'expected a base64 string');
      return Buffer.from(v, 'base64');
    case 'double':
    case 'float':
      if (typeof v !== 'number') bad(path, 'expected a number');
      return v;
    default:
      if (typeof v !== 'number' || !Number.isInteger(v)) bad(path, 'expected an integer');
      return v;
  }
}

function jsonToValue(field: protobuf.Field, v: JsonValue, path: string): unknown {
  if (field.resolvedType instanceof protobuf.Type) return jsonToMessage(field.resolvedType, v, path);
  if (field.resolvedType instanceof protobuf.Enum) return v;
  return jsonToScalar(field, v, path);
}

/**
 * Converts Kubernetes JSON to a plain object protobufjs can encode. Fields the schema does not
 * know (and apiVersion/kind, which travel in the envelope) are left out, as Go's protobuf
 * marshaller has no place for them either.
 */
function jsonToMessage(type: protobuf.Type, v: JsonValue, path: string): Decoded | undefined {
  const special = specialOf(type);
  if (special) return jsonToSpecial(special, v, path);
  if (v === null || typeof v !== 'object' || Array.isArray(v)) bad(path, `expected an object for ${type.name}`);
  const out: Decoded = {};
  const typeName = type.fullName.slice(1);
  for (const field of type.fieldsArray) {
    if (isInlineField(typeName, field.name)) {
      // An embedded struct: its fields come from this same JSON object.
      field.resolve();
      out[field.name] = jsonToMessage(field.resolvedType as protobuf.Type, v, path);
      continue;
    }
    const fv = v[field.name];
    if (fv === undefined || fv === null) continue;
    const fpath = `${path}.${field.name}`;
    if (field.map) {
      if (typeof fv !== 'object' || Array.isArray(fv)) bad(fpath, 'expected an object');
      const obj: Decoded = {};
      for (const [k, item] of Object.entries(fv)) {
        if (item === null) continue;
        setOwn(obj, k, jsonToValue(field, item, `${fpath}[${JSON.stringify(k)}]`));
      }
      out[field.name] = obj;
    } else if (field.repeated) {
      if (!Array.isArray(fv)) bad(fpath, 'expected an array');
      out[field.name] = fv.map((item, i) => jsonToValue(field, item, `${fpath}[${i}]`) ?? {});
    } else {
      out[field.name] = jsonToValue(field, fv, fpath);
    }
  }
  return out;
}

/**
 * Encodes a Kubernetes JSON value as a message of the named type, without envelope (the inverse
 * of decodeValue). Throws ProtobufCodecError(400) when a value has the wrong JSON type.
 */
export function encodeValue(messageName: string, value: JsonValue): Uint8Array {
  const type = lookup(messageName);
  const plain = jsonToMessage(type, value, messageName.slice(messageName.lastIndexOf('.') + 1)) ?? {};
  return type.encode(plain).finish();
}

/** encodeValue for ordinary messages given as JSON objects. */
export function encodeMessage(messageName: string, obj: JsonObject): Uint8Array {
  return encodeValue(messageName, obj);
}

// ---------------------------------------------------------------------------------------------
// Envelope

function hasMagic(body: Uint8Array): boolean {
  return body.length >= 4 && PROTOBUF_MAGIC.every((b, i) => body[i] === b);
}

/**
 * Decodes an enveloped request body ("k8s\0" + runtime.Unknown) to `{apiVersion, kind, object}`;
 * `object` is Kubernetes JSON with apiVersion and kind set. The message is the one `kinds` (the
 * server's served kinds) names for the envelope's apiVersion/kind. Errors: 400 for missing magic
 * or malformed bytes, 415 for an apiVersion/kind with no protobuf form or a non-protobuf
 * contentType / any contentEncoding inside the envelope.
 */
export function decodeProtobuf(body: Uint8Array, kinds: ProtobufKinds): DecodedObject {
  if (!hasMagic(body)) {
    throw new ProtobufCodecError(400, 'provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]');
  }
  const unknown = decodeRaw('k8s.io.apimachinery.pkg.runtime.Unknown', body.subarray(4));
  const typeMeta = (unknown.typeMeta ?? {}) as Decoded;
  const apiVersion = typeof typeMeta.apiVersion === 'string' ? typeMeta.apiVersion : '';
  const kind = typeof typeMeta.kind === 'string' ? typeMeta.kind : '';
  if (unknown.contentEncoding) {
    throw new ProtobufCodecError(415, `unsupported protobuf contentEncoding ${JSON.stringify(unknown.contentEncoding)}`);
  }
  if (unknown.contentType && unknown.contentType !== PROTOBUF_MEDIA_TYPE) {
    throw new ProtobufCodecError(415, `unsupported embedded contentType ${JSON.stringify(unknown.contentType)}`);
  }
  const name = messageNameFor(kinds, apiVersion, kind);
  if (!name) throw new ProtobufCodecError(415, `no protobuf form for ${apiVersion || '<none>'}, Kind=${kind || '<none>'}`);
  const raw = (unknown.raw as Uint8Array | undefined) ?? new Uint8Array(0);
  const object = { apiVersion, kind, ...decodeMessage(name, raw, kinds) };
  return { apiVersion, kind, object };
}

function decodeRaw(messageName: string, bytes: Uint8Array): Decoded {
  try {
    return lookup(messageName).decode(bytes) as unknown as Decoded;
  } catch (e) {
    if (e instanceof ProtobufCodecError) throw e;
    throw new ProtobufCodecError(400, `malformed protobuf envelope: ${(e as Error).message}`);
  }
}

/**
 * Encodes a JSON object with the envelope. `messageName` is the served kind's message (its
 * declaration's protobufMessage); meta/v1 kinds (Status, ...) always use their own. With neither,
 * throws ProtobufCodecError(406) so the caller can answer Not Acceptable (or fall back to JSON
 * when the client also accepts it). The envelope carries empty contentEncoding and contentType,
 * as Kubernetes writes them.
 */
export function encodeProtobuf(obj: JsonObject, messageName?: string): Uint8Array {
  const apiVersion = typeof obj.apiVersion === 'string' ? obj.apiVersion : '';
  const kind = typeof obj.kind === 'string' ? obj.kind : '';
  const name = metaMessageFor(kind) ?? messageName;
  if (!name) throw new ProtobufCodecError(406, `no protobuf form for ${apiVersion || '<none>'}, Kind=${kind || '<none>'}`);
  let raw: Uint8Array;
  try {
    raw = encodeMessage(name, obj);
  } catch (e) {
    if (e instanceof ProtobufCodecError && e.code === 400) throw new ProtobufCodecError(500, e.message);
    throw e;
  }
  const env = lookup('k8s.io.apimachinery.pkg.runtime.Unknown').encode({ typeMeta: { apiVersion, kind }, raw, contentEncoding: '', contentType: '' }).finish();
  const out = new Uint8Array(4 + env.length);
  out.set(PROTOBUF_MAGIC, 0);
  out.set(env, 4);
  return out;
}

/** True when a Content-Type/Accept media type is the protobuf one (parameters ignored). */
export function isProtobufMediaType(mediaType: string | undefined): boolean {
  return (mediaType ?? '').split(';')[0]?.trim().toLowerCase() === PROTOBUF_MEDIA_TYPE;
}

// ---------------------------------------------------------------------------------------------
// Watch stream frames

/**
 * One frame of a protobuf watch stream: 4-byte big-endian length, then a meta/v1 WatchEvent
 * (no envelope) whose object.raw is encodeProtobuf(object, messageName): `messageName` is the
 * watched kind's message (ERROR events carry a meta/v1 Status, which needs none). Errors as
 * encodeProtobuf.
 */
export function encodeWatchEventFrame(type: string, object: JsonObject, messageName?: string): Uint8Array {
  const raw = encodeProtobuf(object, messageName);
  const event = lookup(`${META}.WatchEvent`).encode({ type, object: { raw } }).finish();
  const out = new Uint8Array(4 + event.length);
  new DataView(out.buffer).setUint32(0, event.length, false);
  out.set(event, 4);
  return out;
}

/**
 * Splits a buffer of watch frames into events; bytes after the last whole frame are returned
 * in `rest` so a streaming reader can prepend them to the next chunk. `kinds` resolves the
 * objects' messages as in decodeProtobuf.
 */
export function decodeWatchEventFrames(buf: Uint8Array, kinds: ProtobufKinds): { events: DecodedWatchEvent[]; rest: Uint8Array } {
  const events: DecodedWatchEvent[] = [];
  let off = 0;
  while (buf.length - off >= 4) {
    const len = new DataView(buf.buffer, buf.byteOffset + off, 4).getUint32(0, false);
    if (buf.length - off - 4 < len) break;
    const ev = decodeRaw(`${META}.WatchEvent`, buf.subarray(off + 4, off + 4 + len));
    const rawObj = (ev.object as Decoded | undefined)?.raw as Uint8Array | undefined;
    const object = rawObj && rawObj.length > 0 ? decodeEmbedded(rawObj, kinds) : null;
    if (object === null || typeof object !== 'object' || Array.isArray(object)) {
      throw new ProtobufCodecError(400, 'watch event without an object');
    }
    events.push({ type: typeof ev.type === 'string' ? ev.type : '', object });
    off += 4 + len;
  }
  return { events, rest: buf.subarray(off) };
}
