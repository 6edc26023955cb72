/**
 * Turns the engine's inlined schemas into OpenAPI definitions with `$ref`s. Every schema object
 * registered with `defineSchema` (or named locally, e.g. a custom resource root) becomes one
 * named definition; where it is used as a field it is referenced the way kube-apiserver
 * publishes it: in v3 `{allOf: [{$ref: '#/components/schemas/<name>'}], description}`, in v2
 * `{$ref: '#/definitions/<name>', description}`. kubectl explain and kubectl's strategic merge
 * follow those references.
 */
import type { JSONSchemaProps } from '../schema/schema.types.js';
import { schemaName } from '../schema/schema.names.js';
import {
  DeleteOptionsSchema,
  ListMetaSchema,
  ObjectMetaSchema,
  PatchSchema,
  StatusSchema,
  WatchEventSchema,
  apiVersionProperty,
  kindProperty,
} from '../schema/meta.schemas.js';
import { defaultDefinitionName, type OpenAPIKind } from './openapi.kinds.js';
import type { KindDefinitionNames } from './openapi.operations.js';

/** Output flavour: OpenAPI 3.0 components or Swagger 2.0 definitions. */
export type OpenAPIFlavor = 'v3' | 'v2';

/** A published (JSON) schema. */
export type PublishedSchema = Record<string, unknown>;

/** Thrown when two different schemas claim one definition name, or an unnamed schema is recursive. */
export class OpenAPIBuildError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OpenAPIBuildError';
  }
}

// Keys with schema children, converted recursively; everything else is copied as is.
const CHILD_KEYS = new Set(['properties', 'items', 'additionalProperties', 'allOf', 'anyOf', 'oneOf']);

/** Collects the definitions one document needs while converting schemas. */
export class SchemaEmitter {
  /** Definition name -> published schema, filled as references are met. */
  readonly definitions: Record<string, PublishedSchema> = {};
  private readonly owners = new Map<string, JSONSchemaProps>();
  private readonly localNames = new Map<JSONSchemaProps, string>();
  private readonly inProgress = new Set<JSONSchemaProps>();

  constructor(readonly flavor: OpenAPIFlavor) {}

  /** `#/components/schemas/<name>` (v3) or `#/definitions/<name>` (v2). */
  refPath(name: string): string {
    return this.flavor === 'v3' ? `#/components/schemas/${name}` : `#/definitions/${name}`;
  }

  /** Gives `schema` a definition name for this document only (custom resources, lists). */
  nameLocally(schema: JSONSchemaProps, name: string): void {
    this.localNames.set(schema, name);
  }

  private nameOf(s: JSONSchemaProps): string | undefined {
    return this.localNames.get(s) ?? schemaName(s);
  }

  /** Ensures the definition for a named schema exists; returns its name. */
  define(s: JSONSchemaProps, name = this.nameOf(s)): string {
    if (name === undefined) throw new OpenAPIBuildError('define() needs a named schema');
    const owner = this.owners.get(name);
    if (owner === s) return name;
    if (owner !== undefined) throw new OpenAPIBuildError(`two different schemas are named ${name}`);
    this.owners.set(name, s);
    this.definitions[name] = {}; // placeholder first, so self-references terminate
    this.definitions[name] = this.body(s);
    return name;
  }

  /**
   * A top-level reference (operation bodies and responses): always a bare `$ref`. The name must
   * be defined already or be one of the meta/v1 types operations use (Status, DeleteOptions,
   * Patch, WatchEvent), which are defined on first use.
   */
  ref(name: string): PublishedSchema {
    if (!(name in this.definitions)) {
      const known = [StatusSchema, DeleteOptionsSchema, PatchSchema, WatchEventSchema].find((s) => schemaName(s) === name);
      if (!known) throw new OpenAPIBuildError(`reference to undefined schema ${name}`);
      this.define(known, name);
    }
    return { $ref: this.refPath(name) };
  }

  /** The published form of a schema in a field position (property, items, map values). */
  field(s: JSONSchemaProps): PublishedSchema {
    const name = this.nameOf(s);
    if (name !== undefined) return this.wrapRef(this.define(s, name), {});
    // fieldOf wrapper: one named schema in allOf, with field-level siblings.
    if (s.allOf?.length === 1 && s.type === undefined && s.properties === undefined && s.items === undefined) {
      const innerName = this.nameOf(s.allOf[0]);
      if (innerName !== undefined) {
        const { allOf: _a, ...siblings } = s;
        return this.wrapRef(this.define(s.allOf[0], innerName), this.copyScalars(siblings));
      }
    }
    if (s.$ref !== undefined) {
      const name2 = s.$ref.slice(s.$ref.lastIndexOf('/') + 1);
      const { $ref: _r, ...siblings } = s;
      return this.wrapRef(name2, this.copyScalars(siblings));
    }
    return this.body(s);
  }

  private wrapRef(name: string, siblings: PublishedSchema): PublishedSchema {
    if (this.flavor === 'v2') return { $ref: this.refPath(name), ...siblings };
    return Object.keys(siblings).length === 0 ? { allOf: [{ $ref: this.refPath(name) }] } : { ...siblings, allOf: [{ $ref: this.refPath(name) }] };
  }

  private copyScalars(s: JSONSchemaProps): PublishedSchema {
    const out: PublishedSchema = {};
    for (const [k, v] of Object.entries(s)) {
      if (CHILD_KEYS.has(k) || v === undefined || k.startsWith('x-kapi-')) continue;
      if (this.flavor === 'v2' && k === 'nullable') continue; // Swagger 2.0 has no nullable
      out[k] = structuredClone(v);
    }
    return out;
  }

  /** The schema's own body (not a reference to it), children converted. */
  body(s: JSONSchemaProps): PublishedSchema {
    if (this.inProgress.has(s)) throw new OpenAPIBuildError('recursive schema without a definition name');
    this.inProgress.add(s);
    try {
      const out = this.copyScalars(s);
      if (s.properties) {
        const props: Record<string, PublishedSchema> = {};
        for (const [k, v] of Object.entries(s.properties)) props[k] = this.field(v);
        out.properties = props;
      }
      if (s.items) out.items = this.field(s.items);
      if (s.additionalProperties !== undefined) {
        out.additionalProperties = typeof s.additionalProperties === 'boolean' ? s.additionalProperties : this.field(s.additionalProperties);
      }
      // Swagger 2.0 has no anyOf/oneOf; kube-apiserver drops them from v2 too.
      for (const key of ['allOf', 'anyOf', 'oneOf'] as const) {
        const list = s[key];
        if (!list || (this.flavor === 'v2' && key !== 'allOf')) continue;
        out[key] = list.map((x) => this.field(x));
      }
      return out;
    } finally {
      this.inProgress.delete(s);
    }
  }
}

/**
 * The root schema of a kind as published: its own schema with the GVK extension ensured and,
 * for schemas that declare `metadata` loosely (custom resources), metadata as ObjectMeta, as
 * kube-apiserver publishes CRDs.
 */
function publishedRoot(k: OpenAPIKind): JSONSchemaProps {
  const s = k.schema;
  const meta = s.properties?.metadata;
  const metaIsTyped = meta !== undefined && (schemaName(meta) !== undefined || (meta.allOf?.length === 1 && schemaName(meta.allOf[0]) !== undefined));
  const hasGvk = Array.isArray(s['x-kubernetes-group-version-kind']);
  if (metaIsTyped && hasGvk) return s;
  return {
    ...s,
    properties: {
      apiVersion: apiVersionProperty,
      kind: kindProperty,
      ...s.properties,
      metadata: metaIsTyped ? meta : { allOf: [ObjectMetaSchema], description: "Standard object's metadata." },
    },
    'x-kubernetes-group-version-kind': hasGvk ? s['x-kubernetes-group-version-kind'] : [{ group: k.group, version: k.version, kind: k.kind }],
  };
}

/** Defines a kind's root and list schemas in `em`; returns their definition names. */
export function defineKind(em: SchemaEmitter, k: OpenAPIKind): KindDefinitionNames {
  const root = publishedRoot(k);
  const kindName = schemaName(k.schema) ?? defaultDefinitionName(k.group, k.version, k.kind);
  const listKind = k.listKind ?? `${k.kind}List`;
  const listName = kindName.slice(0, kindName.length - k.kind.length) + listKind;
  em.nameLocally(root, kindName);
  em.define(root, kindName);
  const list: JSONSchemaProps = {
    type: 'object',
    description: `${listKind} is a list of ${k.kind} objects.`,
    required: ['items'],
    properties: {
      apiVersion: apiVersionProperty,
      items: { type: 'array', description: `The ${k.kind} objects.`, items: root },
      kind: kindProperty,
      metadata: { allOf: [ListMetaSchema], description: 'Standard list metadata.' },
    },
    'x-kubernetes-group-version-kind': [{ group: k.group, version: k.version, kind: listKind }],
  };
  em.define(list, listName);
  return { kind: kindName, list: listName };
}
