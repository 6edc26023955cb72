/**
 * Validation of apiextensions.k8s.io/v1 CustomResourceDefinition, after kube's
 * ValidateCustomResourceDefinition (apiextensions-apiserver pkg/apis/apiextensions/validation):
 * the name is `<plural>.<group>`, names and versions are well formed, exactly one version is
 * stored, every version has a schema kube would accept (crd.schema-checks.ts: structural, with
 * usable list types and defaults), scale paths and printer columns are usable, and
 * on update the scope stays and stored versions stay listed, and CEL rules compile (crd.cel.ts).
 * Conversion webhooks are refused:
 * this server converts by apiVersion only.
 */
import { GoValue, isDNS1035Label, isDNS1123Subdomain, type FieldError, type JSONSchemaProps, type KubeObject } from '@app/apimachinery';
import { isDeepStrictEqual } from 'node:util';
import { validateAdmissionReviewVersions, validateWebhookService, validateWebhookURL } from '../../admissionregistration/admissionregistration.validation.js';
import { CelValidator } from './crd.cel.js';
import { crdSchemaErrors } from './crd.schema-checks.js';
import { parseJsonPath, simpleFieldPath } from './crd.jsonpath.js';
import { crdNames, crdVersions } from './custom-resource.kinds.js';

type Obj = Record<string, unknown>;
const asMap = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const asList = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** The annotation a definition in a protected group (`*.k8s.io`, `*.kubernetes.io`) must carry. */
export const API_APPROVED_ANNOTATION = 'api-approved.kubernetes.io';

const COLUMN_TYPES = ['integer', 'number', 'string', 'boolean', 'date'];

function isProtectedGroup(group: string): boolean {
  return group === 'k8s.io' || group.endsWith('.k8s.io') || group === 'kubernetes.io' || group.endsWith('.kubernetes.io');
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
export function validateCrd(crd: KubeObject, ratchet?: ReadonlySet<string>): FieldError[] {
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
  // kube validates its internal form, which lifts a schema, subresources, printer columns or
  // selectable fields that every version has alike to the spec: errors then name them there.
  const lifted = liftedFields(raw);
  for (const { path, schema } of versionSchemas(crd)) {
    const schemaErrors = crdSchemaErrors(schema, path);
    // On update, what the stored definition already had is let through (kube does not tighten
    // validation on persisted schemas).
    out.push(...(ratchet ? schemaErrors.filter((e) => !ratchet.has(errorKey(e))) : schemaErrors));
    // Rules are compiled against a valid schema only (kube skips them otherwise).
    if (!schemaErrors.length) out.push(...CelValidator.compile(schema, path).errors);
  }
  versions.forEach((v, i) => {
    const p = `spec.versions[${i}]`;
    if (!v.name) out.push({ type: 'FieldValueRequired', field: `${p}.name`, detail: '' });
    else {
      for (const m of isDNS1035Label(v.name)) out.push({ type: 'FieldValueInvalid', field: `${p}.name`, value: v.name, detail: m });
      if (seen.has(v.name)) out.push({ type: 'FieldValueDuplicate', field: `${p}.name`, value: v.name, detail: '' });
      seen.add(v.name);
    }
    if (!v.schema) out.push({ type: 'FieldValueRequired', field: `${p}.schema.openAPIV3Schema`, detail: 'schemas are required' });
    if (i > 0 && lifted.subresources && lifted.columns && lifted.selectable) return;
    const sub = asMap(asMap(raw[i]).subresources);
    if (sub.scale !== undefined && !(i > 0 && lifted.subresources))
      out.push(...validateScalePaths(asMap(sub.scale), `${lifted.subresources ? 'spec' : p}.subresources.scale`));
    if (!(i > 0 && lifted.selectable)) out.push(...validateSelectableFields(v.selectable, lifted.selectable ? 'spec' : p));
    if (!(i > 0 && lifted.columns)) out.push(...validateColumns(v.columns, lifted.columns ? 'spec' : p));
  });
  return out;
}

/** Which per-version fields kube's internal form lifts to the spec (every version has them alike). */
function liftedFields(raw: unknown[]): { schema: boolean; subresources: boolean; columns: boolean; selectable: boolean } {
  const alike = (field: string): boolean => raw.length > 0 && raw.every((v) => isDeepStrictEqual(asMap(v)[field], asMap(raw[0])[field]));
  const schema = alike('schema');
  return { schema, subresources: alike('subresources'), columns: alike('additionalPrinterColumns'), selectable: schema && alike('selectableFields') };
}

/** The schemas to check, each at the path kube names it: once under `spec.validation` when every version has the same. */
function versionSchemas(crd: KubeObject): { path: string; schema: JSONSchemaProps }[] {
  const raw = asList(asMap(crd.spec).versions);
  const versions = crdVersions(crd);
  if (liftedFields(raw).schema) return versions[0]?.schema ? [{ path: 'spec.validation.openAPIV3Schema', schema: versions[0].schema }] : [];
  return versions.flatMap((v, i) => (v.schema ? [{ path: `spec.versions[${i}].schema.openAPIV3Schema`, schema: v.schema }] : []));
}

function validateSelectableFields(selectable: readonly string[], p: string): FieldError[] {
  const out: FieldError[] = [];
  selectable.forEach((f, j) => {
    const fp = `${p}.selectableFields[${j}].jsonPath`;
    const path = simpleFieldPath(f);
    if (!path) out.push({ type: 'FieldValueInvalid', field: fp, value: f, detail: 'must be a simple json path' });
    else if (path[0] === 'metadata') out.push({ type: 'FieldValueInvalid', field: fp, value: f, detail: 'must not select metadata fields' });
  });
  return out;
}

function validateColumns(columns: readonly Obj[], p: string): FieldError[] {
  const out: FieldError[] = [];
  columns.forEach((c, j) => {
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
  return out;
}

const errorKey = (e: FieldError): string => `${e.type}\0${e.field}\0${e.detail}`;

/** ValidateCustomResourceDefinitionUpdate: everything above, the scope kept, stored versions still listed. */
export function validateCrdUpdate(crd: KubeObject, old: KubeObject): FieldError[] {
  const stored = new Set<string>();
  for (const { path, schema } of versionSchemas(old)) for (const e of crdSchemaErrors(schema, path)) stored.add(errorKey(e));
  const out = validateCrd(crd, stored);
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
