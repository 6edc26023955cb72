/**
 * A CustomResourceDefinition as the kinds it serves: one KindDeclaration per served version,
 * built from the definition alone (kube's apiextensions-apiserver crdHandler serving info).
 * The version's openAPIV3Schema becomes the kind's schema under apiVersion, kind and
 * ObjectMeta, so validation, pruning of unknown fields, defaulting, the published OpenAPI and
 * server-side apply all work from it as for the built-in kinds. Objects are stored at the
 * storage version and converted between versions by apiVersion alone (conversion strategy
 * None) or by the definition's conversion webhook (strategy Webhook, crd.conversion.ts); like
 * kube, an object read from storage is defaulted with the schema of the version it is stored
 * at, so a default added to a definition shows on the objects that existed before.
 * `/status` and `/scale` are served when the version declares them; printer columns become
 * Table columns. The version's CEL rules (x-kubernetes-validations) run on every create and
 * update, after the schema's own validation found nothing that would block them.
 */
import {
  Errors,
  applyDefaults,
  formatMetaTime,
  hasDefaults,
  objectRootSchema,
  validateSchema,
  type FieldError,
  type JSONSchemaProps,
  type KubeObject,
} from '@app/apimachinery';
import {
  humanDuration,
  statusSubresource,
  type Conversion,
  type KindDeclaration,
  type RequestContext,
  type SubresourceDeclaration,
  type TableColumn,
} from '@app/registry';
import { ScaleSchema } from '../../apps/deployment/deployment.scale.js';
import { compareKubeVersions } from '../../apiregistration/aggregation/aggregation.logic.js';
import { evalJsonPath, parseJsonPath, simpleFieldPath } from './crd.jsonpath.js';
import { CelValidator } from './crd.cel.js';
import { conversionWebhookOf, convertThroughWebhook, type ConversionWebhookCall } from './crd.conversion.js';

type Obj = Record<string, unknown>;
const asMap = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const asList = (v: unknown): Obj[] => (Array.isArray(v) ? v.map(asMap) : []);
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : []);

/** The finalizer that keeps a deleted definition until its objects are gone. */
export const CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';

/** The names of a definition (spec.names or status.acceptedNames) with kube's defaults. */
export interface CrdNames {
  plural: string;
  singular: string;
  kind: string;
  listKind: string;
  shortNames: string[];
  categories: string[];
}

/** spec.names with singular and listKind defaulted. */
export function crdNames(v: unknown): CrdNames {
  const n = asMap(v);
  const kind = typeof n.kind === 'string' ? n.kind : '';
  return {
    plural: typeof n.plural === 'string' ? n.plural : '',
    singular: typeof n.singular === 'string' && n.singular ? n.singular : kind.toLowerCase(),
    kind,
    listKind: typeof n.listKind === 'string' && n.listKind ? n.listKind : `${kind}List`,
    shortNames: strings(n.shortNames),
    categories: strings(n.categories),
  };
}

/** One version of a definition as given. */
export interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  deprecated: boolean;
  deprecationWarning?: string;
  schema?: JSONSchemaProps;
  status: boolean;
  scale?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string };
  columns: Obj[];
  /** selectableFields' JSON paths. */
  selectable: string[];
}

/** spec.versions of a definition. */
export function crdVersions(crd: KubeObject): CrdVersion[] {
  return asList(asMap(crd.spec).versions).map((v) => {
    const sub = asMap(v.subresources);
    const scale = v.subresources && asMap(v.subresources).scale ? asMap(sub.scale) : undefined;
    const schema = asMap(v.schema).openAPIV3Schema;
    return {
      name: typeof v.name === 'string' ? v.name : '',
      served: v.served === true,
      storage: v.storage === true,
      deprecated: v.deprecated === true,
      ...(typeof v.deprecationWarning === 'string' ? { deprecationWarning: v.deprecationWarning } : {}),
      ...(schema && typeof schema === 'object' ? { schema: schema as JSONSchemaProps } : {}),
      status: sub.status !== undefined && sub.status !== null,
      ...(scale
        ? {
            scale: {
              specReplicasPath: String(scale.specReplicasPath ?? ''),
              statusReplicasPath: String(scale.statusReplicasPath ?? ''),
              ...(typeof scale.labelSelectorPath === 'string' ? { labelSelectorPath: scale.labelSelectorPath } : {}),
            },
          }
        : {}),
      columns: asList(v.additionalPrinterColumns),
      selectable: asList(v.selectableFields)
        .map((f) => f.jsonPath)
        .filter((p): p is string => typeof p === 'string' && p !== ''),
    };
  });
}

/** The version objects are stored at ('' when none is marked). */
export function storageVersionOf(crd: KubeObject): string {
  return crdVersions(crd).find((v) => v.storage)?.name ?? '';
}

/** Whether a condition of the definition's status is True. */
export function crdConditionTrue(crd: KubeObject, type: string): boolean {
  return asList(asMap(crd.status).conditions).some((c) => c.type === type && c.status === 'True');
}

/** Sets (or replaces) a condition of the definition's status, keeping lastTransitionTime when the status does not change. */
export function setCrdCondition(crd: KubeObject, cond: { type: string; status: string; reason: string; message: string }, now: Date): void {
  const status = asMap(crd.status);
  const conds = asList(status.conditions);
  const old = conds.find((c) => c.type === cond.type);
  const next = { ...cond, lastTransitionTime: old && old.status === cond.status && old.lastTransitionTime ? old.lastTransitionTime : formatMetaTime(now) };
  crd.status = { ...status, conditions: old ? conds.map((c) => (c === old ? next : c)) : [...conds, next] };
}

/** The schema of a version as the kind's: the user's tree under apiVersion, kind and ObjectMeta. */
export function customResourceSchema(group: string, version: string, kind: string, user: JSONSchemaProps | undefined): JSONSchemaProps {
  const given = user ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  const { properties = {}, description, required, ...rest } = given;
  const own: Record<string, JSONSchemaProps> = {};
  for (const [k, v] of Object.entries(properties)) if (k !== 'apiVersion' && k !== 'kind' && k !== 'metadata') own[k] = v;
  const extra: Omit<JSONSchemaProps, 'properties'> = { ...rest, type: 'object' };
  const req = (required ?? []).filter((r) => r !== 'apiVersion' && r !== 'kind' && r !== 'metadata');
  if (req.length) extra.required = req;
  return objectRootSchema({ group, version, kind }, description ?? `${kind} is a custom resource of ${group}.`, own, extra);
}

const COLUMN_TYPES = new Set(['integer', 'number', 'string', 'boolean', 'date']);

/** A printer column as a Table column; the cell is the first value its path reaches, of the column's type. */
export function printerColumn(c: Obj): TableColumn {
  const type = (COLUMN_TYPES.has(String(c.type)) ? c.type : 'string') as TableColumn['type'];
  let steps: ReturnType<typeof parseJsonPath> | undefined;
  try {
    steps = parseJsonPath(String(c.jsonPath ?? ''));
  } catch {
    steps = undefined;
  }
  return {
    name: String(c.name ?? ''),
    type,
    ...(typeof c.format === 'string' ? { format: c.format } : {}),
    ...(typeof c.description === 'string' ? { description: c.description } : {}),
    priority: typeof c.priority === 'number' ? c.priority : 0,
    cell: (obj, now) => {
      if (!steps) return null;
      const v = evalJsonPath(obj, steps)[0];
      if (v === undefined || v === null) return null;
      switch (type) {
        case 'integer':
          return typeof v === 'number' && Number.isInteger(v) ? v : null;
        case 'number':
          return typeof v === 'number' ? v : null;
        case 'boolean':
          return typeof v === 'boolean' ? v : null;
        case 'date': {
          // Shown as an age, as kube's table convertor does (ConvertToHumanReadableDateType).
          const t = typeof v === 'string' ? Date.parse(v) : NaN;
          return Number.isNaN(t) ? '<unknown>' : humanDuration(now.getTime() - t);
        }
        default:
          return typeof v === 'object' ? JSON.stringify(v) : String(v);
      }
    },
  };
}

/** The store of one custom resource version, for the scale subresource (set by the registrar). */
export interface CustomResourceStore {
  get(ns: string, name: string): Promise<KubeObject>;
  update(ns: string, name: string, obj: KubeObject, ctx: RequestContext): Promise<KubeObject>;
}

function getPath(obj: unknown, path: readonly string[]): unknown {
  let cur = obj;
  for (const p of path) cur = asMap(cur)[p];
  return cur;
}

function setPath(obj: Obj, path: readonly string[], value: unknown): void {
  let cur = obj;
  for (const p of path.slice(0, -1)) {
    const next = asMap(cur[p]);
    cur[p] = cur[p] === next ? next : { ...next };
    cur = cur[p] as Obj;
  }
  cur[path[path.length - 1]!] = value;
}

/** The `scale` subresource of a version with `subresources.scale` (kube's customresource ScaleREST). */
export function customScaleSubresource(paths: NonNullable<CrdVersion['scale']>, store: () => CustomResourceStore): SubresourceDeclaration {
  const spec = simpleFieldPath(paths.specReplicasPath) ?? ['spec', 'replicas'];
  const status = simpleFieldPath(paths.statusReplicasPath) ?? ['status', 'replicas'];
  const selector = paths.labelSelectorPath ? simpleFieldPath(paths.labelSelectorPath) : undefined;
  const scaleOf = (o: KubeObject): KubeObject => {
    const m = o.metadata;
    const metadata: KubeObject['metadata'] = {};
    for (const k of ['name', 'namespace', 'uid', 'resourceVersion', 'creationTimestamp']) if (m[k] !== undefined) metadata[k] = m[k];
    const want = getPath(o, spec);
    const have = getPath(o, status);
    const sel = selector ? getPath(o, selector) : undefined;
    return {
      apiVersion: 'autoscaling/v1',
      kind: 'Scale',
      metadata,
      spec: { replicas: typeof want === 'number' ? want : 0 },
      status: { replicas: typeof have === 'number' ? have : 0, ...(typeof sel === 'string' && sel ? { selector: sel } : {}) },
    };
  };
  return {
    verbs: ['get', 'patch', 'update'],
    kind: { group: 'autoscaling', version: 'v1', kind: 'Scale', protobufMessage: 'k8s.io.api.autoscaling.v1.Scale', schema: ScaleSchema },
    rest: {
      get: async (ns, name) => scaleOf(await store().get(ns, name)),
      async update(ns, name, scale, ctx) {
        if (!scale || typeof scale !== 'object' || Array.isArray(scale)) throw Errors.badRequest('the body of the request must be an object');
        if (scale.kind !== undefined && scale.kind !== 'Scale') throw Errors.badRequest(`expected a Scale, got ${String(scale.kind)}`);
        const meta = asMap(scale.metadata);
        if (meta.name !== undefined && meta.name !== name) throw Errors.badRequest('the name of the object does not match the name on the URL');
        const replicas = asMap(scale.spec).replicas;
        const errs: FieldError[] = [];
        if (replicas !== undefined && (typeof replicas !== 'number' || !Number.isInteger(replicas)))
          errs.push({ type: 'FieldValueInvalid', field: 'spec.replicas', value: replicas, detail: 'must be an integer' });
        else if (typeof replicas === 'number' && replicas < 0)
          errs.push({ type: 'FieldValueInvalid', field: 'spec.replicas', value: replicas, detail: 'must be greater than or equal to 0' });
        if (errs.length) throw Errors.invalid('autoscaling', 'Scale', name, errs);
        const current = await store().get(ns, name);
        const next = structuredClone(current);
        setPath(next as Obj, spec, typeof replicas === 'number' ? replicas : 0);
        next.metadata.resourceVersion =
          typeof meta.resourceVersion === 'string' && meta.resourceVersion !== '' ? meta.resourceVersion : current.metadata.resourceVersion;
        return scaleOf(await store().update(ns, name, next, ctx));
      },
    },
  };
}

/** Schema errors that keep CEL rules from running (kube's hasBlockingErr). */
const BLOCKING = new Set<FieldError['type']>([
  'FieldValueNotSupported',
  'FieldValueRequired',
  'FieldValueTooLong',
  'FieldValueTooMany',
  'FieldValueTypeInvalid',
]);

/** Marks the declarations built from a definition (the registrar replaces and removes only those). */
export const CUSTOM_RESOURCE = Symbol('kapi.customResource');

/** A declaration built from a definition: the definition's name rides along. */
export type CustomResourceDeclaration = KindDeclaration & { [CUSTOM_RESOURCE]: string };

/** Whether a declaration was built from a definition. */
export function isCustomResource(d: KindDeclaration): d is CustomResourceDeclaration {
  return typeof (d as Partial<CustomResourceDeclaration>)[CUSTOM_RESOURCE] === 'string';
}

/**
 * The kinds a definition serves: every served version, the preferred (kube's version order)
 * first. `storeOf` gives the store of a version, for the scale subresource.
 */
export function customResourceKinds(
  crd: KubeObject,
  storeOf: (version: string) => CustomResourceStore,
  callConversionWebhook?: ConversionWebhookCall,
): CustomResourceDeclaration[] {
  const spec = asMap(crd.spec);
  const group = String(spec.group ?? '');
  // Served under the accepted names (status), as kube does; a definition not yet accepted is served under spec.names.
  const accepted = asMap(crd.status).acceptedNames;
  const names = crdNames(accepted && asMap(accepted).plural ? accepted : spec.names);
  const namespaced = spec.scope !== 'Cluster';
  const storage = storageVersionOf(crd);
  const allVersions = crdVersions(crd);
  const versions = allVersions.filter((v) => v.served && v.name).sort((a, b) => compareKubeVersions(a.name, b.name));
  const crdName = crd.metadata.name ?? '';
  // The schemas of the versions that declare defaults, by apiVersion: applied to objects read
  // from storage (kube defaults an object as it decodes it, at the version it is stored at).
  const readDefaults = new Map<string, JSONSchemaProps>();
  for (const v of allVersions)
    if (v.name && v.schema && hasDefaults(v.schema)) readDefaults.set(`${group}/${v.name}`, customResourceSchema(group, v.name, names.kind, v.schema));
  // An object read from storage is defaulted at the version it is stored at.
  const defaulted = (obj: KubeObject): KubeObject => {
    const schema = readDefaults.get(String(obj.apiVersion));
    return schema ? applyDefaults(structuredClone(obj), schema) : obj;
  };
  const webhook = conversionWebhookOf(crd, group, names.kind);
  const convert = (obj: KubeObject, to: string): KubeObject => {
    const read = defaulted(obj);
    if (read.apiVersion === `${group}/${to}`) return read;
    if (webhook) throw Errors.internal(`conversion of ${String(read.apiVersion)}, Kind=${names.kind} to ${to} needs its conversion webhook`);
    return { ...read, apiVersion: `${group}/${to}` };
  };
  const call: ConversionWebhookCall = callConversionWebhook ?? (() => Promise.reject(new Error('no conversion webhook client')));
  const conversionOf = (storageVersion: string): Conversion =>
    webhook
      ? { storageVersion, convert, mixedStoredVersions: true, convertMany: (objs, to) => convertThroughWebhook(webhook, call, objs.map(defaulted), to) }
      : { storageVersion, convert, mixedStoredVersions: true };
  return versions.map((v) => {
    const subresources: Record<string, SubresourceDeclaration> = {};
    if (v.status) subresources.status = statusSubresource();
    if (v.scale) subresources.scale = customScaleSubresource(v.scale, () => storeOf(v.name));
    const columns = v.columns.map(printerColumn);
    const fieldSelectors: Record<string, (o: KubeObject) => string | undefined> = {};
    for (const p of v.selectable) {
      const path = simpleFieldPath(p);
      if (!path) continue;
      fieldSelectors[path.join('.')] = (o) => {
        const value = getPath(o, path);
        return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value) : '';
      };
    }
    const schema = customResourceSchema(group, v.name, names.kind, v.schema);
    const cel = CelValidator.compile(v.schema, '').validator;
    const celErrors = (obj: KubeObject, old: KubeObject | undefined, ctx: RequestContext): FieldError[] => {
      if (!cel) return [];
      // kube's hasBlockingErr: an object the schema rejects for its shape is not shown to the rules.
      if (validateSchema(obj, schema).some((e) => BLOCKING.has(e.type)))
        return [
          {
            type: 'FieldValueInvalid',
            field: '<nil>',
            value: 'null',
            detail: 'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
          },
        ];
      return cel.validate(obj, old, ctx.warnings);
    };
    const decl: CustomResourceDeclaration = {
      group,
      version: v.name,
      kind: names.kind,
      listKind: names.listKind,
      plural: names.plural,
      singular: names.singular,
      ...(names.shortNames.length ? { shortNames: names.shortNames } : {}),
      ...(names.categories.length ? { categories: names.categories } : {}),
      namespaced,
      genericObjectMeta: true,
      untyped: true,
      generation: 'content',
      schema,
      strategy: {
        prepareForCreate(obj) {
          if (v.status) delete obj.status;
        },
        ...(cel ? { validate: (obj, ctx) => celErrors(obj, undefined, ctx), validateUpdate: (obj, old, ctx) => celErrors(obj, old, ctx) } : {}),
      },
      // kube serves an Age column when a version declares none, and only the declared ones otherwise.
      tableColumns: columns.length
        ? columns
        : [printerColumn({ name: 'Age', type: 'date', description: 'Time since the object was created.', jsonPath: '.metadata.creationTimestamp' })],
      ageColumn: false,
      ...(Object.keys(subresources).length ? { subresources } : {}),
      ...(Object.keys(fieldSelectors).length ? { fieldSelectors } : {}),
      ...(storage && (allVersions.length > 1 || readDefaults.size > 0) ? { conversion: conversionOf(storage) } : {}),
      ...(v.deprecated ? { deprecation: { deprecatedIn: '', warning: v.deprecationWarning ?? `${group}/${v.name} ${names.kind} is deprecated` } } : {}),
      [CUSTOM_RESOURCE]: crdName,
    };
    return decl;
  });
}
