/**
 * Schemas derived from the Kubernetes protobuf messages in proto/: the structure (field names,
 * JSON types, lists, maps, nested messages) comes from the message, the merge markers
 * (+listType, +listMapKey, +patchMergeKey, +patchStrategy, +mapType) from the comments the
 * proto files keep on fields, and what a .proto cannot say (descriptions, required fields,
 * enums, defaults, formats) from an overlay written beside each kind. Kinds with large trees
 * (Pod, PersistentVolume) then stay in step with their wire form by construction, which
 * groups.check.spec.ts verifies for every served kind.
 *
 * Each message becomes one shared schema object named like Kubernetes' definition
 * (`k8s.io.api.core.v1.PodSpec` -> `io.k8s.api.core.v1.PodSpec`), so the OpenAPI documents
 * reference it exactly where kube-apiserver does and kubectl explain follows the references.
 */
import protobuf from 'protobufjs';
import { protobufRoot } from '../protobuf/protobuf.codec.js';
import { isInlineField } from '../protobuf/protobuf.registry.js';
import type { JSONSchemaProps } from './schema.types.js';
import { defineSchema, fieldOf, schemaName } from './schema.names.js';
import {
  FieldsV1Schema,
  IntOrStringSchema,
  LabelSelectorRequirementSchema,
  LabelSelectorSchema,
  ConditionSchema,
  ListMetaSchema,
  ManagedFieldsEntrySchema,
  MicroTimeSchema,
  ObjectMetaSchema,
  OwnerReferenceSchema,
  RawExtensionSchema,
  TimeSchema,
} from './meta.schemas.js';

/** What a .proto cannot say about one message. */
export interface MessageOverlay {
  /** The message is this existing (hand-written, named) schema: nothing is derived. */
  use?: JSONSchemaProps;
  description?: string;
  required?: string[];
  /** Per field: merged over the derived field schema (description, enum, default, format, ...). */
  fields?: Record<string, Omit<JSONSchemaProps, 'properties' | 'items' | 'additionalProperties'>>;
  /** Extensions of the message schema itself (x-kubernetes-map-type, ...). */
  extra?: Omit<JSONSchemaProps, 'properties' | 'required' | 'description'>;
}

/** Overlays by full message name without the leading dot (`k8s.io.api.core.v1.PodSpec`). */
export type SchemaOverlays = Readonly<Record<string, MessageOverlay>>;

/**
 * resource.Quantity: a string, or a number as Kubernetes' decoder accepts. No `type`, so that
 * `kubectl explain` names it (`map[string]Quantity`) as it does against Kubernetes.
 */
export const QuantitySchema: JSONSchemaProps = defineSchema('io.k8s.apimachinery.pkg.api.resource.Quantity', {
  description: 'A fixed-point amount such as 500m, 1Gi or 2.5e3, written as a string (or a number).',
  'x-kubernetes-int-or-string': true,
});

const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';
/** Messages whose JSON form is one of the shared hand-written schemas. */
const KNOWN: Record<string, JSONSchemaProps> = {
  [`${META}.Time`]: TimeSchema,
  [`${META}.MicroTime`]: MicroTimeSchema,
  [`${META}.ObjectMeta`]: ObjectMetaSchema,
  [`${META}.ListMeta`]: ListMetaSchema,
  [`${META}.LabelSelector`]: LabelSelectorSchema,
  [`${META}.Condition`]: ConditionSchema,
  [`${META}.LabelSelectorRequirement`]: LabelSelectorRequirementSchema,
  [`${META}.OwnerReference`]: OwnerReferenceSchema,
  [`${META}.ManagedFieldsEntry`]: ManagedFieldsEntrySchema,
  [`${META}.FieldsV1`]: FieldsV1Schema,
  [`${META}.Duration`]: { type: 'string', description: 'A duration such as 1m30s.' },
  'k8s.io.apimachinery.pkg.api.resource.Quantity': QuantitySchema,
  'k8s.io.apimachinery.pkg.util.intstr.IntOrString': IntOrStringSchema,
  'k8s.io.apimachinery.pkg.runtime.RawExtension': RawExtensionSchema,
};

/** Kubernetes' OpenAPI definition name of a message: `io.k8s.api.core.v1.Pod`. */
export function definitionNameOf(messageName: string): string {
  return messageName.startsWith('k8s.io.') ? `io.k8s.${messageName.slice('k8s.io.'.length)}` : messageName;
}

function scalar(type: string): JSONSchemaProps {
  switch (type) {
    case 'string':
      return { type: 'string' };
    case 'bool':
      return { type: 'boolean' };
    case 'int32':
    case 'uint32':
    case 'sint32':
    case 'fixed32':
    case 'sfixed32':
      return { type: 'integer', format: 'int32' };
    case 'int64':
    case 'uint64':
    case 'sint64':
    case 'fixed64':
    case 'sfixed64':
      return { type: 'integer', format: 'int64' };
    case 'double':
    case 'float':
      return { type: 'number', format: 'double' };
    case 'bytes':
      return { type: 'string', format: 'byte' };
    default:
      throw new Error(`schema.proto: no JSON type for protobuf ${type}`);
  }
}

/** The merge markers of a field's comment (`+listType=map` -> listType: 'map'). */
function markers(comment: string | null): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const m of (comment ?? '').matchAll(/\+(\w+)=([^\s]+)/g)) (out[m[1]!] ??= []).push(m[2]!);
  return out;
}

type FieldOverlay = NonNullable<MessageOverlay['fields']>[string];

/** Builds message schemas once per name; shared by every kind (a message is one object). */
class Deriver {
  private readonly built = new Map<string, JSONSchemaProps>();
  private readonly overlays: Record<string, MessageOverlay> = {};

  /** Adds overlays; one for a message already built (or overlaid) is a programming error. */
  add(overlays: SchemaOverlays): void {
    for (const [name, ov] of Object.entries(overlays)) {
      if (this.overlays[name] === ov) continue;
      if (this.overlays[name] || this.built.has(name)) throw new Error(`schema.proto: a second overlay for ${name}`);
      this.overlays[name] = ov;
    }
  }

  message(type: protobuf.Type): JSONSchemaProps {
    const name = type.fullName.slice(1);
    const known = KNOWN[name];
    if (known) return known;
    const hit = this.built.get(name);
    if (hit) return hit;
    const ov: MessageOverlay = this.overlays[name] ?? {};
    if (ov.use) {
      this.built.set(name, ov.use);
      return ov.use;
    }
    const properties: Record<string, JSONSchemaProps> = {};
    const schema: JSONSchemaProps = defineSchema(definitionNameOf(name), {
      type: 'object',
      ...(ov.description ? { description: ov.description } : {}),
      properties,
      ...(ov.required?.length ? { required: [...ov.required] } : {}),
      ...(ov.extra ?? {}),
    });
    // Registered before the fields are built, so a recursive message refers to itself.
    this.built.set(name, schema);
    for (const f of type.fieldsArray) {
      f.resolve();
      if (isInlineField(name, f.name)) {
        // An embedded Go struct: its fields are this object's fields in JSON.
        const inner = this.message(f.resolvedType as protobuf.Type);
        Object.assign(properties, inner.properties);
        if (inner.required?.length) schema.required = [...(schema.required ?? []), ...inner.required];
      } else properties[f.name] = this.field(f, ov.fields?.[f.name]);
    }
    // Sorted by name, as Kubernetes publishes properties.
    const sorted = Object.keys(properties).sort((a, b) => a.localeCompare(b));
    const copy = { ...properties };
    for (const k of sorted) delete properties[k];
    for (const k of sorted) properties[k] = copy[k]!;
    for (const [k, fo] of Object.entries(ov.fields ?? {})) {
      // Overlays of inlined fields apply here too (descriptions of a PersistentVolumeSpec's sources).
      if (properties[k] && !type.fields[k]) properties[k] = schemaName(properties[k]) ? fieldOf(properties[k], fo) : { ...properties[k], ...fo };
    }
    for (const r of ov.required ?? []) if (!properties[r]) throw new Error(`schema.proto: ${name} has no field ${r} to require`);
    for (const k of Object.keys(ov.fields ?? {})) if (!properties[k]) throw new Error(`schema.proto: ${name} has no field ${k}`);
    return schema;
  }

  private value(f: protobuf.Field): JSONSchemaProps {
    const t = f.resolvedType;
    if (t instanceof protobuf.Type) return this.message(t);
    if (t instanceof protobuf.Enum) return { type: 'string' };
    return scalar(f.type);
  }

  private field(f: protobuf.Field, ov: FieldOverlay | undefined): JSONSchemaProps {
    const mk = markers(f.comment);
    const ext: JSONSchemaProps = {};
    if (mk.listType) ext['x-kubernetes-list-type'] = mk.listType[0] as 'atomic' | 'set' | 'map';
    if (mk.listMapKey) ext['x-kubernetes-list-map-keys'] = mk.listMapKey;
    if (mk.patchMergeKey) ext['x-kubernetes-patch-merge-key'] = mk.patchMergeKey[0];
    if (mk.patchStrategy) ext['x-kubernetes-patch-strategy'] = mk.patchStrategy[0];
    if (mk.mapType) ext['x-kubernetes-map-type'] = mk.mapType[0] as 'atomic' | 'granular';
    const value = this.value(f);
    if (f.map) return { type: 'object', additionalProperties: value, ...ext, ...(ov ?? {}) };
    if (f.repeated) return { type: 'array', items: value, ...ext, ...(ov ?? {}) };
    if (this.isNamed(value)) {
      // A named message used as a field: a reference with the field's own description.
      const extra = { ...ext, ...(ov ?? {}) };
      return Object.keys(extra).length ? fieldOf(value, extra) : value;
    }
    return { ...value, ...ext, ...(ov ?? {}) };
  }

  private isNamed(s: JSONSchemaProps): boolean {
    return schemaName(s) !== undefined;
  }
}

const deriver = new Deriver();

/**
 * The schema of a protobuf message (full name without the leading dot), with `overlays` added to
 * the process-wide table first. Each message is built once, so one used by several kinds
 * (PersistentVolumeSpec in PersistentVolume and VolumeAttachment) is one named object: a group
 * whose kinds embed another group's messages imports that group's overlays and passes them too,
 * before anything builds them.
 */
export function protoSchema(messageName: string, ...overlays: SchemaOverlays[]): JSONSchemaProps {
  for (const o of overlays) deriver.add(o);
  return deriver.message(protobufRoot().lookupType(messageName));
}
