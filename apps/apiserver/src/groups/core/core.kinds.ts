/**
 * The core group's kinds (resources doc: Namespace, ConfigMap, Secret, ServiceAccount; plus
 * Event): each a declaration and a small strategy. Rules cite Kubernetes' validation
 * (pkg/apis/core/validation) where they come from.
 */
import type { FieldError } from '@app/apimachinery';
import { Errors } from '@app/apimachinery';
import type { KubeObject } from '@app/storage';
import { ageOf, finalizeSubresource, humanDuration, statusSubresource, type KindDeclaration, type Strategy } from '@app/registry';
import { ConfigMapSchema, EventSchema, NamespaceSchema, SecretSchema, ServiceAccountSchema } from './core.schemas.js';

/** Total size limit of ConfigMap and Secret data (Kubernetes MaxSecretSize / TotalSizeLimitBytes: 1 MiB). */
export const MAX_DATA_BYTES = 1024 * 1024;

const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;

/** IsConfigMapKey (apimachinery/pkg/util/validation): the detail message, or undefined when valid. */
export function configMapKeyError(key: string): string | undefined {
  if (key.length > 253) return 'must be no more than 253 characters';
  if (!CONFIG_KEY.test(key)) return "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";
  if (key === '.') return "must not be '.'";
  if (key === '..') return "must not be '..'";
  if (key.startsWith('..')) return "must not start with '..'";
  return undefined;
}

function asMap(v: unknown): Record<string, unknown> {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/** Key rules, overlap of data/binaryData and the total size limit, for ConfigMap and Secret. */
function validateDataMaps(obj: KubeObject, maps: Array<{ field: string; decode: (v: unknown) => number }>): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Map<string, string>();
  let total = 0;
  for (const m of maps) {
    for (const [k, v] of Object.entries(asMap(obj[m.field]))) {
      const e = configMapKeyError(k);
      if (e) errs.push({ type: 'FieldValueInvalid', field: `${m.field}[${k}]`, value: k, detail: e });
      const other = seen.get(k);
      if (other) errs.push({ type: 'FieldValueInvalid', field: `${m.field}[${k}]`, value: k, detail: `duplicate of key present in ${other}` });
      seen.set(k, m.field);
      total += m.decode(v);
    }
  }
  if (total > MAX_DATA_BYTES) {
    errs.push({ type: 'FieldValueTooLong', field: maps.length > 1 ? '' : maps[0].field, detail: `must have at most ${MAX_DATA_BYTES} bytes` });
  }
  return errs;
}

/** Immutable ConfigMap/Secret: data cannot change and `immutable` cannot be unset. */
function validateImmutable(obj: KubeObject, old: KubeObject, fields: string[]): FieldError[] {
  if (old.immutable !== true) return [];
  const errs: FieldError[] = [];
  if (obj.immutable !== true) errs.push({ type: 'FieldValueForbidden', field: 'immutable', detail: 'field is immutable when `immutable` is set' });
  for (const f of fields) {
    if (JSON.stringify(obj[f] ?? {}) !== JSON.stringify(old[f] ?? {})) {
      errs.push({ type: 'FieldValueForbidden', field: f, detail: 'field is immutable when `immutable` is set' });
    }
  }
  return errs;
}

const utf8Len = (v: unknown): number => (typeof v === 'string' ? Buffer.byteLength(v, 'utf8') : 0);
const b64Len = (v: unknown): number => (typeof v === 'string' ? Buffer.from(v, 'base64').length : 0);

const namespaceStrategy: Strategy = {
  prepareForCreate(obj) {
    // Kubernetes always sets the "kubernetes" finalizer so the namespace controller can empty it.
    const spec = asMap(obj.spec);
    const fins = Array.isArray(spec.finalizers) ? (spec.finalizers as string[]) : [];
    if (!fins.includes('kubernetes')) fins.push('kubernetes');
    obj.spec = { ...spec, finalizers: fins };
    obj.status = { phase: 'Active' };
  },
  prepareForUpdate(obj, old) {
    // spec.finalizers change only through the finalize subresource.
    obj.spec = { ...asMap(obj.spec), finalizers: asMap(old.spec).finalizers };
    if (asMap(obj.spec).finalizers === undefined) delete asMap(obj.spec).finalizers;
  },
  validate(obj) {
    const name = obj.metadata.name ?? '';
    if (name && !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name)) {
      return [
        {
          type: 'FieldValueInvalid',
          field: 'metadata.name',
          value: name,
          detail:
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        },
      ];
    }
    if (name.length > 63) return [{ type: 'FieldValueTooLong', field: 'metadata.name', detail: 'must be no more than 63 characters' }];
    return [];
  },
  pendingFinalizers(obj) {
    const f = asMap(obj.spec).finalizers;
    return Array.isArray(f) ? (f as string[]) : [];
  },
  prepareForDelete(obj) {
    obj.status = { ...asMap(obj.status), phase: 'Terminating' };
  },
  validateDelete(obj) {
    const name = obj.metadata.name ?? '';
    if (name === 'default' || name === 'kube-system' || name === 'kube-public') {
      throw Errors.forbidden({ group: '', resource: 'namespaces' }, name, 'this namespace may not be deleted');
    }
  },
};

const configMapStrategy: Strategy = {
  validate(obj) {
    return validateDataMaps(obj, [
      { field: 'data', decode: utf8Len },
      { field: 'binaryData', decode: b64Len },
    ]);
  },
  validateUpdate(obj, old) {
    return [
      ...validateDataMaps(obj, [
        { field: 'data', decode: utf8Len },
        { field: 'binaryData', decode: b64Len },
      ]),
      ...validateImmutable(obj, old, ['data', 'binaryData']),
    ];
  },
};

/** Keys each well-known Secret type requires (pkg/apis/core/validation ValidateSecret). */
const SECRET_TYPE_KEYS: Record<string, string[]> = {
  'kubernetes.io/dockercfg': ['.dockercfg'],
  'kubernetes.io/dockerconfigjson': ['.dockerconfigjson'],
  'kubernetes.io/ssh-auth': ['ssh-privatekey'],
  'kubernetes.io/tls': ['tls.crt', 'tls.key'],
};

/** Merges write-only stringData into data (base64), overriding existing keys. */
function mergeStringData(obj: KubeObject): void {
  const sd = obj.stringData;
  if (sd && typeof sd === 'object' && !Array.isArray(sd)) {
    const data = { ...asMap(obj.data) };
    for (const [k, v] of Object.entries(sd as Record<string, unknown>)) {
      if (typeof v === 'string') data[k] = Buffer.from(v, 'utf8').toString('base64');
    }
    obj.data = data;
  }
  delete obj.stringData;
}

function validateSecret(obj: KubeObject): FieldError[] {
  const errs = validateDataMaps(obj, [{ field: 'data', decode: b64Len }]);
  const type = (obj.type as string | undefined) ?? 'Opaque';
  const data = asMap(obj.data);
  for (const k of SECRET_TYPE_KEYS[type] ?? []) {
    if (!(k in data)) errs.push({ type: 'FieldValueRequired', field: `data[${k}]`, detail: '' });
  }
  if (type === 'kubernetes.io/service-account-token') {
    const ann = asMap(obj.metadata.annotations);
    if (!ann['kubernetes.io/service-account.name']) {
      errs.push({ type: 'FieldValueRequired', field: 'metadata.annotations[kubernetes.io/service-account.name]', detail: '' });
    }
  }
  if (type === 'kubernetes.io/basic-auth' && !('username' in data) && !('password' in data)) {
    errs.push({ type: 'FieldValueRequired', field: 'data[username]', detail: '' });
  }
  return errs;
}

const secretStrategy: Strategy = {
  prepareForCreate(obj) {
    mergeStringData(obj);
    if (!obj.type) obj.type = 'Opaque';
  },
  prepareForUpdate(obj) {
    mergeStringData(obj);
    if (!obj.type) obj.type = 'Opaque';
  },
  validate: validateSecret,
  validateUpdate(obj, old) {
    const errs = validateSecret(obj);
    if ((obj.type ?? 'Opaque') !== (old.type ?? 'Opaque')) {
      errs.push({ type: 'FieldValueInvalid', field: 'type', value: obj.type, detail: 'field is immutable' });
    }
    return [...errs, ...validateImmutable(obj, old, ['data'])];
  },
  decorate(obj) {
    delete obj.stringData;
  },
};

function count(v: unknown): number {
  return v && typeof v === 'object' ? Object.keys(v).length : 0;
}

function eventTime(o: KubeObject): string | undefined {
  const series = asMap(o.series);
  return (series.lastObservedTime as string) ?? (o.lastTimestamp as string) ?? (o.eventTime as string) ?? (o.metadata.creationTimestamp as string | undefined);
}

const str = (get: (o: KubeObject) => unknown) => (o: KubeObject) => {
  const v = get(o);
  return v === undefined || v === null ? '' : String(v);
};

/** The core/v1 kinds. */
export const CORE_KINDS: KindDeclaration[] = [
  {
    group: '',
    version: 'v1',
    kind: 'Namespace',
    plural: 'namespaces',
    singular: 'namespace',
    shortNames: ['ns'],
    namespaced: false,
    schema: NamespaceSchema,
    protobufMessage: 'k8s.io.api.core.v1.Namespace',
    strategy: namespaceStrategy,
    subresources: { status: statusSubresource(), finalize: finalizeSubresource() },
    verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
    tableColumns: [{ name: 'Status', type: 'string', priority: 0, description: 'The status of the namespace', cell: (o) => asMap(o.status).phase ?? '' }],
    fieldSelectors: { 'status.phase': str((o) => asMap(o.status).phase) },
  },
  {
    group: '',
    version: 'v1',
    kind: 'ConfigMap',
    plural: 'configmaps',
    singular: 'configmap',
    shortNames: ['cm'],
    namespaced: true,
    schema: ConfigMapSchema,
    protobufMessage: 'k8s.io.api.core.v1.ConfigMap',
    strategy: configMapStrategy,
    tableColumns: [{ name: 'Data', type: 'integer', priority: 0, description: 'Number of keys in data and binaryData', cell: (o) => count(o.data) + count(o.binaryData) }],
  },
  {
    group: '',
    version: 'v1',
    kind: 'Secret',
    plural: 'secrets',
    singular: 'secret',
    namespaced: true,
    schema: SecretSchema,
    protobufMessage: 'k8s.io.api.core.v1.Secret',
    strategy: secretStrategy,
    tableColumns: [
      { name: 'Type', type: 'string', priority: 0, description: 'The type of the secret', cell: (o) => o.type ?? '' },
      { name: 'Data', type: 'integer', priority: 0, description: 'Number of keys in data', cell: (o) => count(o.data) },
    ],
    fieldSelectors: { type: str((o) => o.type) },
  },
  {
    group: '',
    version: 'v1',
    kind: 'ServiceAccount',
    plural: 'serviceaccounts',
    singular: 'serviceaccount',
    shortNames: ['sa'],
    namespaced: true,
    schema: ServiceAccountSchema,
    protobufMessage: 'k8s.io.api.core.v1.ServiceAccount',
    deleteReturnsObject: true,
    tableColumns: [{ name: 'Secrets', type: 'integer', priority: 0, description: 'Number of secrets', cell: (o) => (Array.isArray(o.secrets) ? o.secrets.length : 0) }],
  },
  {
    group: '',
    version: 'v1',
    kind: 'Event',
    plural: 'events',
    singular: 'event',
    shortNames: ['ev'],
    namespaced: true,
    schema: EventSchema,
    protobufMessage: 'k8s.io.api.core.v1.Event',
    tableColumns: [
      {
        name: 'Last Seen',
        type: 'string',
        priority: 0,
        description: 'Time since the event was last seen',
        cell: (o, now) => {
          const t = eventTime(o);
          return t ? humanDuration(now.getTime() - Date.parse(t)) : '<unknown>';
        },
      },
      { name: 'Type', type: 'string', priority: 0, description: 'Event type', cell: (o) => o.type ?? '' },
      { name: 'Reason', type: 'string', priority: 0, description: 'Why the event happened', cell: (o) => o.reason ?? '' },
      {
        name: 'Object',
        type: 'string',
        priority: 0,
        description: 'The object the event is about',
        cell: (o) => {
          const io = asMap(o.involvedObject);
          return `${String(io.kind ?? '').toLowerCase()}/${String(io.name ?? '')}`;
        },
      },
      { name: 'Message', type: 'string', priority: 0, description: 'Human-readable description', cell: (o) => o.message ?? '' },
      { name: 'Age', type: 'string', priority: 1, description: 'Time since creation', cell: (o, now) => ageOf(o, now) },
    ],
    fieldSelectors: {
      'involvedObject.kind': str((o) => asMap(o.involvedObject).kind),
      'involvedObject.namespace': str((o) => asMap(o.involvedObject).namespace),
      'involvedObject.name': str((o) => asMap(o.involvedObject).name),
      'involvedObject.uid': str((o) => asMap(o.involvedObject).uid),
      'involvedObject.apiVersion': str((o) => asMap(o.involvedObject).apiVersion),
      'involvedObject.resourceVersion': str((o) => asMap(o.involvedObject).resourceVersion),
      'involvedObject.fieldPath': str((o) => asMap(o.involvedObject).fieldPath),
      reason: str((o) => o.reason),
      reportingComponent: str((o) => o.reportingComponent),
      source: str((o) => asMap(o.source).component),
      type: str((o) => o.type),
    },
  },
];
