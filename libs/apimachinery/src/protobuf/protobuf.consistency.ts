/**
 * Checks that a kind's protobuf message and its OpenAPI schema describe the same object: the
 * .proto files under proto/ carry the wire facts (names, numbers, types) and the schema the JSON
 * facts; nothing else ties them, so a field added to one and not the other would silently be
 * dropped on one wire. Used by specs over every served kind, and for the KEEP_ZERO facts.
 */
import protobuf from 'protobufjs';
import { resolveSchema } from '../schema/schema.resolve.js';
import type { JSONSchemaProps } from '../schema/schema.types.js';
import { isValueMessage, protobufRoot } from './protobuf.codec.js';
import { isInlineField, KEEP_ZERO } from './protobuf.registry.js';

/** JSON schema types a protobuf scalar may have in Kubernetes JSON. */
const SCALAR_JSON: Record<string, ReadonlyArray<JSONSchemaProps['type']>> = {
  string: ['string'],
  bytes: ['string'],
  bool: ['boolean'],
  double: ['number'],
  float: ['number'],
};

function scalarMatches(protoType: string, schema: JSONSchemaProps): boolean {
  const allowed = SCALAR_JSON[protoType] ?? ['integer'];
  return schema.type !== undefined && allowed.includes(schema.type);
}

function lookupType(name: string): protobuf.Type | undefined {
  try {
    return protobufRoot().lookupType(name);
  } catch {
    return undefined;
  }
}

/**
 * Differences between the message `messageName` and the root schema of a kind: fields only in
 * one of them, and fields whose JSON type the other contradicts, recursively through nested
 * messages (not into value messages such as Time or Quantity, whose JSON form is a scalar).
 * apiVersion and kind are not message fields (they travel in the envelope, and an object nested
 * whole, such as an Eviction's DeleteOptions, has them in JSON only). Empty = consistent.
 */
export function protobufSchemaMismatches(messageName: string, schema: JSONSchemaProps): string[] {
  const type = lookupType(messageName);
  if (!type) return [`no protobuf message ${messageName} in proto/`];
  const out: string[] = [];
  const seen = new Set<string>();
  compare(type, resolveSchema(schema), messageName, out, seen);
  return out;
}

function compare(type: protobuf.Type, schema: JSONSchemaProps, path: string, out: string[], seen: Set<string>): void {
  // Each message is walked once per kind: shared types (ObjectMeta, ...) and recursive ones end.
  if (seen.has(type.fullName)) return;
  seen.add(type.fullName);
  if (schema['x-kubernetes-preserve-unknown-fields'] && !schema.properties) return;
  const props = schema.properties ?? {};
  const fields = jsonFields(type);
  for (const name of Object.keys(props)) {
    // TypeMeta: never a message field, at the root or in an object nested whole (DeleteOptions).
    if ((name === 'apiVersion' || name === 'kind') && !fields.has(name)) continue;
    if (!fields.has(name)) out.push(`${path}.${name}: in the schema, not in message ${type.fullName.slice(1)}`);
  }
  for (const [name, field] of fields) {
    const prop = props[name];
    if (!prop) {
      out.push(`${path}.${name}: in message ${type.fullName.slice(1)}, not in the schema`);
      continue;
    }
    field.resolve();
    compareField(field, resolveSchema(prop), `${path}.${name}`, out, seen);
  }
}

function compareValue(field: protobuf.Field, schema: JSONSchemaProps, path: string, out: string[], seen: Set<string>): void {
  const t = field.resolvedType;
  if (t instanceof protobuf.Type) {
    if (isValueMessage(t)) return;
    if (schema.type !== 'object') {
      out.push(`${path}: message ${t.fullName.slice(1)} but schema type ${schema.type ?? '(none)'}`);
      return;
    }
    compare(t, schema, path, out, seen);
  } else if (t instanceof protobuf.Enum) {
    if (schema.type !== 'string' && schema.type !== 'integer') out.push(`${path}: enum but schema type ${schema.type ?? '(none)'}`);
  } else if (!scalarMatches(field.type, schema)) {
    out.push(`${path}: ${field.type} but schema type ${schema.type ?? '(none)'}`);
  }
}

function compareField(field: protobuf.Field, schema: JSONSchemaProps, path: string, out: string[], seen: Set<string>): void {
  if (field.map) {
    const values = schema.additionalProperties;
    if (schema.type !== 'object' || values === undefined || values === false) {
      out.push(`${path}: map in the message but not a map in the schema`);
      return;
    }
    if (values !== true) compareValue(field, resolveSchema(values), `${path}[*]`, out, seen);
    return;
  }
  if (field.repeated) {
    if (schema.type !== 'array' || !schema.items) {
      out.push(`${path}: repeated in the message but schema type ${schema.type ?? '(none)'}`);
      return;
    }
    compareValue(field, resolveSchema(schema.items), `${path}[*]`, out, seen);
    return;
  }
  compareValue(field, schema, path, out, seen);
}

/** The fields of a message as they appear in JSON: an embedded struct's fields in its place. */
function jsonFields(type: protobuf.Type): Map<string, protobuf.Field> {
  const out = new Map<string, protobuf.Field>();
  for (const f of type.fieldsArray) {
    if (isInlineField(type.fullName.slice(1), f.name)) {
      f.resolve();
      for (const [k, v] of jsonFields(f.resolvedType as protobuf.Type)) out.set(k, v);
    } else out.set(f.name, f);
  }
  return out;
}

/** KEEP_ZERO entries that name no scalar field of a loaded message (a typo or a removed field). */
export function keepZeroMismatches(): string[] {
  const out: string[] = [];
  for (const entry of KEEP_ZERO) {
    const dot = entry.lastIndexOf('.');
    const type = lookupType(entry.slice(0, dot));
    const field = type?.fields[entry.slice(dot + 1)];
    if (!field) out.push(`${entry}: no such field`);
    else if (field.repeated || field.map || field.resolve().resolvedType instanceof protobuf.Type) out.push(`${entry}: not a scalar field`);
  }
  return out;
}
