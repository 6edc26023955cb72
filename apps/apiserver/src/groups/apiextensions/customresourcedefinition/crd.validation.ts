/**
 * Validation of apiextensions.k8s.io/v1 CustomResourceDefinition, after kube's
 * ValidateCustomResourceDefinition (apiextensions-apiserver pkg/apis/apiextensions/validation):
 * the name is `<plural>.<group>`, names and versions are well formed, exactly one version is
 * stored, every version has a structural schema, scale paths and printer columns are usable, and
 * on update the scope stays and stored versions stay listed, and CEL rules compile (crd.cel.ts).
 * Conversion webhooks are refused:
 * this server converts by apiVersion only.
 */
import { compileSchemaPattern, GoValue, isDNS1035Label, isDNS1123Subdomain, type FieldError, type JSONSchemaProps, type KubeObject } from '@app/apimachinery';
import { validateAdmissionReviewVersions, validateWebhookService, validateWebhookURL } from '../../admissionregistration/admissionregistration.validation.js';
import { CelValidator } from './crd.cel.js';
import { parseJsonPath, simpleFieldPath } from './crd.jsonpath.js';
import { crdNames, crdVersions } from './custom-resource.kinds.js';

type Obj = Record<string, unknown>;
const asMap = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});

/** The annotation a definition in a protected group (`*.k8s.io`, `*.kubernetes.io`) must carry. */
export const API_APPROVED_ANNOTATION = 'api-approved.kubernetes.io';

const SCHEMA_TYPES = new Set(['object', 'array', 'string', 'integer', 'number', 'boolean']);
const COLUMN_TYPES = ['integer', 'number', 'string', 'boolean', 'date'];

function isProtectedGroup(group: string): boolean {
  return group === 'k8s.io' || group.endsWith('.k8s.io') || group === 'kubernetes.io' || group.endsWith('.kubernetes.io');
}

/**
 * The structural-schema rules kube enforces (apiextensions-apiserver structural validation),
 * those a user meets: a type on every node (unless it preserves unknown fields or is
 * int-or-string), no `$ref`, items for arrays, and an object at the root.
 */
export function structuralSchemaErrors(s: unknown, path: string, root: boolean): FieldError[] {
  const out: FieldError[] = [];
  if (!s || typeof s !== 'object' || Array.isArray(s)) {
    out.push({ type: 'FieldValueInvalid', field: path, value: s, detail: 'must be a JSON schema object' });
    return out;
  }
  const n = s as JSONSchemaProps & Obj;
  if (n.$ref !== undefined) out.push({ type: 'FieldValueForbidden', field: `${path}.$ref`, detail: '$ref is not supported' });
  const preserve = n['x-kubernetes-preserve-unknown-fields'] === true;
  const intOrString = n['x-kubernetes-int-or-string'] === true;
  if (n.type === undefined || (n.type as unknown) === '') {
    if (root) out.push({ type: 'FieldValueRequired', field: `${path}.type`, detail: 'must not be empty at the root' });
    else if (!preserve && !intOrString)
      out.push({ type: 'FieldValueRequired', field: `${path}.type`, detail: 'must not be empty for specified object fields' });
  } else if (typeof n.type !== 'string' || !SCHEMA_TYPES.has(n.type)) {
    out.push({
      type: 'FieldValueNotSupported',
      field: `${path}.type`,
      value: n.type,
      detail: 'supported values: "array", "boolean", "integer", "number", "object", "string"',
    });
  } else if (root && n.type !== 'object') {
    out.push({ type: 'FieldValueInvalid', field: `${path}.type`, value: n.type, detail: 'must be object at the root' });
  }
  if (n.pattern !== undefined && (typeof n.pattern !== 'string' || compileSchemaPattern(n.pattern) === null))
    out.push({ type: 'FieldValueInvalid', field: `${path}.pattern`, value: n.pattern, detail: 'must be a valid regular expression' });
  if (n.type === 'array' && (n.items === undefined || n.items === null))
    out.push({ type: 'FieldValueRequired', field: `${path}.items`, detail: 'must be specified' });
  if (n.properties !== undefined) {
    if (!n.properties || typeof n.properties !== 'object' || Array.isArray(n.properties))
      out.push({ type: 'FieldValueInvalid', field: `${path}.properties`, value: n.properties, detail: 'must be a map of schemas' });
    else {
      if (n.additionalProperties !== undefined && n.additionalProperties !== false)
        out.push({ type: 'FieldValueForbidden', field: `${path}.additionalProperties`, detail: 'additionalProperties and properties are mutual exclusive' });
      for (const [k, v] of Object.entries(n.properties)) {
        if (root && k === 'metadata') {
          const t = asMap(v).type;
          if (t !== undefined && t !== 'object')
            out.push({ type: 'FieldValueInvalid', field: `${path}.properties[metadata].type`, value: t, detail: 'must be object' });
          continue;
        }
        out.push(...structuralSchemaErrors(v, `${path}.properties[${k}]`, false));
      }
    }
  }
  if (n.items !== undefined && n.items !== null) {
    if (Array.isArray(n.items)) out.push({ type: 'FieldValueForbidden', field: `${path}.items`, detail: 'items must be a schema object and not an array' });
    else out.push(...structuralSchemaErrors(n.items, `${path}.items`, false));
  }
  if (n.additionalProperties && typeof n.additionalProperties === 'object')
    out.push(...structuralSchemaErrors(n.additionalProperties, `${path}.additionalProperties`, false));
  return out;
}

function validateScalePaths(scale: Obj, path: string): FieldError[] {
  const out: FieldError[] = [];
  const under = (field: string, value: unknown, prefixes: string[], required: boolean) => {
    if (value === undefined || value === '') {
      if (required) out.push({ type: 'FieldValueRequired', field: `${path}.${field}`, detail: '' });
      return;
    }
    const v = String(value);
    let ok = true;
    try {
      parseJsonPath(v);
    } catch {
      ok = false;
    }
    if (!ok || !prefixes.some((p) => v.startsWith(p)))
      out.push({
        type: 'FieldValueInvalid',
        field: `${path}.${field}`,
        value: v,
        detail: `should be a json path under ${prefixes.map((p) => p.slice(0, -1)).join(' or ')}`,
      });
  };
  under('specReplicasPath', scale.specReplicasPath, ['.spec.'], true);
  under('statusReplicasPath', scale.statusReplicasPath, ['.status.'], true);
  under('labelSelectorPath', scale.labelSelectorPath, ['.spec.', '.status.'], false);
  return out;
}

/** ValidateCustomResourceDefinition. */
export function validateCrd(crd: KubeObject): FieldError[] {
  const out: FieldError[] = [];
  const spec = asMap(crd.spec);
  const group = typeof spec.group === 'string' ? spec.group : '';
  const names = crdNames(spec.names);
  const rawNames = asMap(spec.names);
  const name = crd.metadata.name ?? '';
  if (name !== `${names.plural}.${group}`)
    out.push({ type: 'FieldValueInvalid', field: 'metadata.name', value: name, detail: 'must be spec.names.plural+"."+spec.group' });
  if (!group) out.push({ type: 'FieldValueRequired', field: 'spec.group', detail: '' });
  else {
    for (const m of isDNS1123Subdomain(group)) out.push({ type: 'FieldValueInvalid', field: 'spec.group', value: group, detail: m });
    if (group.split('.').length < 2)
      out.push({ type: 'FieldValueInvalid', field: 'spec.group', value: group, detail: 'should be a domain with at least one dot' });
    const approval = (crd.metadata.annotations as Record<string, string> | undefined)?.[API_APPROVED_ANNOTATION];
    if (isProtectedGroup(group) && !approval)
      out.push({
        type: 'FieldValueRequired',
        field: `metadata.annotations[${API_APPROVED_ANNOTATION}]`,
        detail: `protected groups must have approval annotation "${API_APPROVED_ANNOTATION}", see https://github.com/kubernetes/enhancements/pull/1111`,
      });
  }
  if (spec.scope === undefined || spec.scope === '') out.push({ type: 'FieldValueRequired', field: 'spec.scope', detail: '' });
  else if (spec.scope !== 'Cluster' && spec.scope !== 'Namespaced')
    out.push({ type: 'FieldValueNotSupported', field: 'spec.scope', value: spec.scope, detail: 'supported values: "Cluster", "Namespaced"' });

  if (!names.plural) out.push({ type: 'FieldValueRequired', field: 'spec.names.plural', detail: '' });
  else for (const m of isDNS1035Label(names.plural)) out.push({ type: 'FieldValueInvalid', field: 'spec.names.plural', value: names.plural, detail: m });
  if (typeof rawNames.singular === 'string' && rawNames.singular)
    for (const m of isDNS1035Label(rawNames.singular))
      out.push({ type: 'FieldValueInvalid', field: 'spec.names.singular', value: rawNames.singular, detail: m });
  if (!names.kind) out.push({ type: 'FieldValueRequired', field: 'spec.names.kind', detail: '' });
  else
    for (const m of isDNS1035Label(names.kind.toLowerCase())) out.push({ type: 'FieldValueInvalid', field: 'spec.names.kind', value: names.kind, detail: m });
  if (names.kind && names.kind === names.listKind)
    out.push({ type: 'FieldValueInvalid', field: 'spec.names.listKind', value: names.listKind, detail: 'kind and listKind cannot be the same' });
  names.shortNames.forEach((s, i) => {
    for (const m of isDNS1035Label(s)) out.push({ type: 'FieldValueInvalid', field: `spec.names.shortNames[${i}]`, value: s, detail: m });
  });
  names.categories.forEach((s, i) => {
    for (const m of isDNS1035Label(s)) out.push({ type: 'FieldValueInvalid', field: `spec.names.categories[${i}]`, value: s, detail: m });
  });

  if (spec.preserveUnknownFields === true)
    out.push({
      type: 'FieldValueInvalid',
      field: 'spec.preserveUnknownFields',
      value: true,
      detail: 'cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead',
    });

  out.push(...validateConversion(spec.conversion));

  const versions = crdVersions(crd);
  const raw = Array.isArray(spec.versions) ? spec.versions : [];
  if (!raw.length)
    out.push({
      type: 'FieldValueInvalid',
      field: 'spec.versions',
      value: new GoValue('null'),
      detail: 'must have exactly one version marked as storage version',
    });
  else {
    const storage = versions.filter((v) => v.storage).length;
    if (storage !== 1)
      out.push({
        type: 'FieldValueInvalid',
        field: 'spec.versions',
        value: versionsValue(raw.length),
        detail: 'must have exactly one version marked as storage version',
      });
    if (!versions.some((v) => v.served))
      out.push({
        type: 'FieldValueInvalid',
        field: 'spec.versions',
        value: versionsValue(raw.length),
        detail: 'must have at least one version marked as served',
      });
  }
  const seen = new Set<string>();
  versions.forEach((v, i) => {
    const p = `spec.versions[${i}]`;
    if (!v.name) out.push({ type: 'FieldValueRequired', field: `${p}.name`, detail: '' });
    else {
      for (const m of isDNS1035Label(v.name)) out.push({ type: 'FieldValueInvalid', field: `${p}.name`, value: v.name, detail: m });
      if (seen.has(v.name)) out.push({ type: 'FieldValueDuplicate', field: `${p}.name`, value: v.name, detail: '' });
      seen.add(v.name);
    }
    if (!v.schema) out.push({ type: 'FieldValueRequired', field: `${p}.schema.openAPIV3Schema`, detail: 'schemas are required' });
    else {
      const structural = structuralSchemaErrors(v.schema, `${p}.schema.openAPIV3Schema`, true);
      out.push(...structural);
      // Rules are compiled against a structural schema only (kube skips them otherwise).
      if (!structural.length) out.push(...CelValidator.compile(v.schema, `${p}.schema.openAPIV3Schema`).errors);
    }
    const sub = asMap(asMap(raw[i]).subresources);
    if (sub.scale !== undefined) out.push(...validateScalePaths(asMap(sub.scale), `${p}.subresources.scale`));
    v.selectable.forEach((f, j) => {
      const fp = `${p}.selectableFields[${j}].jsonPath`;
      const path = simpleFieldPath(f);
      if (!path) out.push({ type: 'FieldValueInvalid', field: fp, value: f, detail: 'must be a simple json path' });
      else if (path[0] === 'metadata') out.push({ type: 'FieldValueInvalid', field: fp, value: f, detail: 'must not select metadata fields' });
    });
    v.columns.forEach((c, j) => {
      const cp = `${p}.additionalPrinterColumns[${j}]`;
      if (!c.name) out.push({ type: 'FieldValueRequired', field: `${cp}.name`, detail: '' });
      if (!COLUMN_TYPES.includes(String(c.type)))
        out.push({
          type: 'FieldValueNotSupported',
          field: `${cp}.type`,
          value: c.type,
          detail: `supported values: ${COLUMN_TYPES.map((t) => `"${t}"`).join(', ')}`,
        });
      if (!c.jsonPath) out.push({ type: 'FieldValueRequired', field: `${cp}.jsonPath`, detail: '' });
      else {
        try {
          parseJsonPath(String(c.jsonPath));
        } catch (e) {
          out.push({ type: 'FieldValueInvalid', field: `${cp}.jsonPath`, value: c.jsonPath, detail: `must be a simple json path: ${(e as Error).message}` });
        }
      }
      if (c.priority !== undefined && (typeof c.priority !== 'number' || c.priority < 0))
        out.push({ type: 'FieldValueInvalid', field: `${cp}.priority`, value: c.priority, detail: 'must be greater than or equal to 0' });
    });
  });
  return out;
}

/** ValidateCustomResourceDefinitionUpdate: everything above, the scope kept, stored versions still listed. */
export function validateCrdUpdate(crd: KubeObject, old: KubeObject): FieldError[] {
  const out = validateCrd(crd);
  const scope = asMap(crd.spec).scope;
  const oldScope = asMap(old.spec).scope;
  if (scope !== oldScope) out.push({ type: 'FieldValueInvalid', field: 'spec.scope', value: scope, detail: 'field is immutable' });
  out.push(...validateStoredVersions(crd));
  return out;
}

/** Every stored version must still be a version of the definition. */
export function validateStoredVersions(crd: KubeObject): FieldError[] {
  const out: FieldError[] = [];
  const names = new Set(crdVersions(crd).map((v) => v.name));
  const stored = asMap(crd.status).storedVersions;
  if (Array.isArray(stored))
    stored.forEach((s, i) => {
      if (!names.has(String(s)))
        out.push({ type: 'FieldValueInvalid', field: `status.storedVersions[${i}]`, value: s, detail: 'must appear in spec.versions' });
    });
  return out;
}

/** The versions as kube prints a slice in a field error, shortened. */
function versionsValue(n: number): GoValue {
  return new GoValue(`[]apiextensions.CustomResourceDefinitionVersion{...${n} versions}`);
}

/** spec.conversion (kube's validateCustomResourceConversion): strategy None, or Webhook with where to reach it. */
function validateConversion(raw: unknown): FieldError[] {
  if (raw === undefined || raw === null) return [];
  const conv = asMap(raw);
  const path = 'spec.conversion';
  const out: FieldError[] = [];
  const webhook = conv.webhook === undefined || conv.webhook === null ? undefined : asMap(conv.webhook);
  if (conv.strategy === 'Webhook') {
    if (!webhook) return [{ type: 'FieldValueRequired', field: `${path}.webhook`, detail: 'required when strategy is set to Webhook' }];
    const cc = webhook.clientConfig === undefined || webhook.clientConfig === null ? undefined : asMap(webhook.clientConfig);
    if (!cc) out.push({ type: 'FieldValueRequired', field: `${path}.webhook.clientConfig`, detail: 'required when strategy is set to Webhook' });
    else {
      const hasUrl = typeof cc.url === 'string';
      const hasService = cc.service !== undefined && cc.service !== null;
      if (hasUrl === hasService)
        out.push({ type: 'FieldValueRequired', field: `${path}.webhook.clientConfig`, detail: 'exactly one of url or service is required' });
      else if (hasUrl) out.push(...validateWebhookURL(String(cc.url), `${path}.webhook.clientConfig.url`));
      else {
        const svc = asMap(cc.service);
        out.push(...validateWebhookService({ ...svc, port: svc.port ?? 443 }, `${path}.webhook.clientConfig.service`));
      }
    }
    out.push(...validateAdmissionReviewVersions(webhook.conversionReviewVersions, true, `${path}.webhook.conversionReviewVersions`));
  } else if (conv.strategy === 'None' || conv.strategy === undefined) {
    if (webhook) out.push({ type: 'FieldValueForbidden', field: `${path}.webhook`, detail: 'should not be set when strategy is not set to Webhook' });
  } else out.push({ type: 'FieldValueNotSupported', field: `${path}.strategy`, value: conv.strategy, detail: 'supported values: "None", "Webhook"' });
  return out;
}
