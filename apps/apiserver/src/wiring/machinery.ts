/**
 * Wires the pure API-machinery functions of libs/apimachinery into the ports the registry
 * and the HTTP edge use (Machinery, WireCodecs). One place, so each side can evolve alone.
 */
import {
  applyDefaults,
  applyJsonPatch,
  applyMergePatch,
  applyStrategicMergePatch,
  decodeProtobuf,
  decodeYaml,
  encodeProtobuf,
  findUnknownFields,
  generateName,
  nameIsPathSegment,
  parseFieldSelector,
  parseJsonStrict,
  parseLabelSelector,
  protobufRoot,
  prune,
  validateObjectMetaCreate,
  validateObjectMetaUpdate,
  validateSchema,
  decodeProblem,
  type ProtobufKinds,
} from '@app/apimachinery';
import { Errors } from '@app/apimachinery';
import type { KindRegistry, Machinery } from '@app/registry';

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
import type { WireCodecs } from '../http/codec.js';

/** The Machinery port on libs/apimachinery. */
export function createMachinery(): Machinery {
  return {
    validateSchema: (obj, schema) => validateSchema(obj, schema),
    decodeProblem: (obj, schema, kind) => decodeProblem(obj, schema, kind),
    findUnknownFields: (obj, schema) => findUnknownFields(obj, schema),
    prune: (obj, schema) => {
      prune(obj, schema);
    },
    applyDefaults: (obj, schema) => {
      applyDefaults(obj, schema);
    },
    // Every served kind is built in, so core's ValidateObjectMeta applies: an unqualified
    // finalizer must be a standard one (validateKubeFinalizerName).
    validateObjectMetaCreate: (meta, namespaced, pathSegmentNames, generic) =>
      validateObjectMetaCreate(meta, { namespaced, kubeFinalizers: !generic, nameValidator: pathSegmentNames ? nameIsPathSegment : undefined }),
    validateObjectMetaUpdate: (meta, old, generic) => validateObjectMetaUpdate(meta, old, { kubeFinalizers: !generic }),
    generateName: (base) => generateName(base),
    parseLabelSelector: (s) => {
      const sel = parseLabelSelector(s);
      return { empty: () => sel.isEmpty(), matches: (labels) => sel.matches(labels) };
    },
    parseFieldSelector: (s) => {
      const sel = parseFieldSelector(s);
      return {
        empty: () => sel.isEmpty(),
        fields: () => sel.requirements().map((r) => r.field),
        matches: (get) => sel.matches(get),
        requiresExactMatch: (field) => sel.requiresExactMatch(field),
      };
    },
    mergePatch: (target, patch) => applyMergePatch(target, patch),
    jsonPatch: (target, ops) => applyJsonPatch(target, ops),
    strategicMergePatch: (target, patch, schema) => {
      if (!isObject(target) || !isObject(patch)) throw Errors.badRequest('a strategic merge patch must be a JSON object');
      return applyStrategicMergePatch(target, patch, schema);
    },
  };
}

const protobufKnown = new Map<string, boolean>();

/** Whether the loaded protobuf schemas define `messageName` (and its List), cached. */
function hasProtobufMessage(messageName: string): boolean {
  let known = protobufKnown.get(messageName);
  if (known === undefined) {
    try {
      protobufRoot().lookupType(messageName);
      known = true;
    } catch {
      known = false;
    }
    protobufKnown.set(messageName, known);
  }
  return known;
}

/**
 * The registry as the protobuf codec's kind table: a served kind's message is its declaration's
 * protobufMessage (its List: that name + "List"), so a kind is served in protobuf exactly when
 * its declaration says so.
 */
export function registryProtobufKinds(registry: KindRegistry): ProtobufKinds {
  const split = (apiVersion: string): [string, string] => {
    const i = apiVersion.indexOf('/');
    return i < 0 ? ['', apiVersion] : [apiVersion.slice(0, i), apiVersion.slice(i + 1)];
  };
  return {
    messageFor(apiVersion, kind) {
      const [group, version] = split(apiVersion);
      const decl = registry.lookupKind(group, version, kind);
      if (decl) return decl.protobufMessage;
      for (const d of registry.kindsOf(group, version)) {
        if (d.protobufMessage && (d.listKind ?? `${d.kind}List`) === kind) return `${d.protobufMessage}List`;
      }
      // The body of a REST subresource (TokenRequest of serviceaccounts/token).
      for (const d of registry.all()) {
        for (const sub of Object.values(d.subresources ?? {})) {
          if (sub.rest && sub.kind.protobufMessage && sub.kind.group === group && sub.kind.version === version && sub.kind.kind === kind)
            return sub.kind.protobufMessage;
        }
      }
      return undefined;
    },
    servesGroupVersion(apiVersion) {
      const [group, version] = split(apiVersion);
      return registry.hasGroupVersion(group, version);
    },
  };
}

/** The WireCodecs port on libs/apimachinery; protobuf bodies are resolved through `registry`. */
export function createWireCodecs(registry: KindRegistry): WireCodecs {
  const kinds = registryProtobufKinds(registry);
  return {
    parseJson: (text) => parseJsonStrict(text),
    parseYaml: (text) => {
      const d = decodeYaml(text);
      return { value: d.value, duplicates: d.duplicates.map((x) => x.path) };
    },
    decodeProtobuf: (body) => decodeProtobuf(body, kinds),
    encodeProtobuf: (obj, messageName) => encodeProtobuf(obj as never, messageName),
    hasProtobuf: (messageName) => messageName !== undefined && hasProtobufMessage(messageName),
  };
}
