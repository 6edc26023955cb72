/**
 * The Volume source table of the resources document, validated in one place for every object
 * that embeds it: Pod volumes (`validateVolumes`) and PersistentVolume sources
 * (`validatePersistentVolumeSource`, also used for VolumeAttachment's inlineVolumeSpec).
 * Rules and messages are Kubernetes' (pkg/apis/core/validation): exactly one source, the
 * source's required fields, defaultMode/mode ranges, KeyToPath and downward API paths,
 * projected token lifetimes.
 */
import { isDNS1123Label, isDNS1123Subdomain, type FieldError } from '@app/apimachinery';
// An import cycle (claim rules -> volume rules -> this module); only functions cross it, at call time.
import { validateClaimSpec } from '../persistentvolumeclaim/persistentvolumeclaim.strategy.js';

type Obj = Record<string, unknown>;

/** The sources a Pod volume may name (core.VolumeSource), in the order kube counts them. */
export const POD_VOLUME_SOURCES: readonly string[] = [
  'emptyDir',
  'hostPath',
  'gitRepo',
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'secret',
  'nfs',
  'iscsi',
  'glusterfs',
  'flocker',
  'persistentVolumeClaim',
  'rbd',
  'cinder',
  'cephfs',
  'downwardAPI',
  'fc',
  'flexVolume',
  'configMap',
  'azureFile',
  'vsphereVolume',
  'quobyte',
  'azureDisk',
  'photonPersistentDisk',
  'portworxVolume',
  'projected',
  'scaleIO',
  'storageos',
  'csi',
  'ephemeral',
  'image',
];

/**
 * The sources a PersistentVolume may name (core.PersistentVolumeSource), in the order kube counts
 * them: the first one set is checked, every later one is refused.
 */
export const PERSISTENT_VOLUME_SOURCES: readonly string[] = [
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'hostPath',
  'glusterfs',
  'flocker',
  'nfs',
  'rbd',
  'quobyte',
  'cephfs',
  'iscsi',
  'cinder',
  'fc',
  'flexVolume',
  'azureFile',
  'vsphereVolume',
  'photonPersistentDisk',
  'portworxVolume',
  'azureDisk',
  'scaleIO',
  'local',
  'storageos',
  'csi',
];

const HOST_PATH_TYPES = ['', 'DirectoryOrCreate', 'Directory', 'FileOrCreate', 'File', 'Socket', 'CharDevice', 'BlockDevice'];
const AZURE_CACHING_MODES = ['None', 'ReadOnly', 'ReadWrite'];
const AZURE_KINDS = ['Dedicated', 'Managed', 'Shared'];
const SCALEIO_MODES = ['ThickProvisioned', 'ThinProvisioned'];
const MODE_DETAIL = 'must be a number between 0 and 0777 (octal), both inclusive';
/** Bounds of a projected service account token's lifetime (10 minutes, 2^32 seconds). */
const MIN_TOKEN_SECONDS = 600;
const MAX_TOKEN_SECONDS = 2 ** 32;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const empty = (v: unknown): boolean => v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0);
const req = (field: string, detail = ''): FieldError => ({ type: 'FieldValueRequired', field, detail });
const invalid = (field: string, value: unknown, detail: string): FieldError => ({ type: 'FieldValueInvalid', field, value, detail });
const unsupported = (field: string, value: unknown, allowed: readonly string[]): FieldError => ({
  type: 'FieldValueNotSupported',
  field,
  value,
  detail: `supported values: ${allowed
    .filter((a) => a !== '')
    .map((a) => JSON.stringify(a))
    .join(', ')}`,
});

/** Errors for each listed field of `src` that is empty. */
function required(src: Obj, path: string, fields: readonly string[]): FieldError[] {
  return fields.filter((f) => empty(src[f])).map((f) => req(`${path}.${f}`));
}

/** A file mode (defaultMode, KeyToPath.mode): 0..0777. */
function validateMode(v: unknown, path: string): FieldError[] {
  if (v === undefined || v === null) return [];
  return typeof v === 'number' && v >= 0 && v <= 0o777 ? [] : [invalid(path, v, MODE_DETAIL)];
}

/** A path below the volume root: relative, no '..' element (validateLocalDescendingPath). */
export function validateLocalDescendingPath(p: string, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (p.startsWith('/')) errs.push(invalid(path, p, 'must be a relative path'));
  if (p.split('/').includes('..')) errs.push(invalid(path, p, "must not contain '..'"));
  return errs;
}

/** KeyToPath items of configMap, secret and their projections. */
function validateKeyToPaths(items: unknown, path: string): FieldError[] {
  if (!Array.isArray(items)) return [];
  const errs: FieldError[] = [];
  items.forEach((it, i) => {
    const p = `${path}[${i}]`;
    const kp = isObj(it) ? it : {};
    if (empty(kp.key)) errs.push(req(`${p}.key`));
    if (empty(kp.path)) errs.push(req(`${p}.path`));
    else if (typeof kp.path === 'string') {
      errs.push(...validateLocalDescendingPath(kp.path, `${p}.path`));
      if (kp.path.startsWith('..')) errs.push(invalid(`${p}.path`, kp.path, "must not start with '..'"));
    }
    errs.push(...validateMode(kp.mode, `${p}.mode`));
  });
  return errs;
}

/** DownwardAPIVolumeFile items: a path and exactly one of fieldRef, resourceFieldRef. */
function validateDownwardFiles(items: unknown, path: string): FieldError[] {
  if (!Array.isArray(items)) return [];
  const errs: FieldError[] = [];
  items.forEach((it, i) => {
    const p = `${path}[${i}]`;
    const f = isObj(it) ? it : {};
    if (empty(f.path)) errs.push(req(`${p}.path`));
    else if (typeof f.path === 'string') {
      errs.push(...validateLocalDescendingPath(f.path, `${p}.path`));
      if (f.path.startsWith('..')) errs.push(invalid(`${p}.path`, f.path, "must not start with '..'"));
    }
    errs.push(...validateMode(f.mode, `${p}.mode`));
    const refs = [f.fieldRef, f.resourceFieldRef].filter((r) => r !== undefined && r !== null).length;
    if (refs === 0) errs.push(req(p, 'one of fieldRef and resourceFieldRef is required'));
    else if (refs > 1) errs.push(invalid(p, 'resource', 'fieldRef and resourceFieldRef can not be specified simultaneously'));
  });
  return errs;
}

function validateProjected(src: Obj, path: string): FieldError[] {
  const errs = validateMode(src.defaultMode, `${path}.defaultMode`);
  const sources = Array.isArray(src.sources) ? src.sources : [];
  sources.forEach((s, i) => {
    const p = `${path}.sources[${i}]`;
    const proj = isObj(s) ? s : {};
    const set = ['secret', 'configMap', 'downwardAPI', 'serviceAccountToken', 'clusterTrustBundle', 'podCertificate'].filter((k) => isObj(proj[k]));
    if (set.length === 0) errs.push(req(p, 'must specify exactly one projected volume source'));
    for (const k of set.slice(1)) errs.push({ type: 'FieldValueForbidden', field: `${p}.${k}`, detail: 'may not specify more than 1 volume type per source' });
    const inner = (k: string): Obj => (isObj(proj[k]) ? (proj[k] as Obj) : {});
    if (isObj(proj.secret)) errs.push(...validateKeyToPaths(inner('secret').items, `${p}.secret.items`));
    if (isObj(proj.configMap)) errs.push(...validateKeyToPaths(inner('configMap').items, `${p}.configMap.items`));
    if (isObj(proj.downwardAPI)) errs.push(...validateDownwardFiles(inner('downwardAPI').items, `${p}.downwardAPI.items`));
    if (isObj(proj.serviceAccountToken)) {
      const t = inner('serviceAccountToken');
      const tp = `${p}.serviceAccountToken`;
      const secs = t.expirationSeconds;
      if (typeof secs === 'number' && secs < MIN_TOKEN_SECONDS)
        errs.push(invalid(`${tp}.expirationSeconds`, secs, 'may not specify a duration less than 10 minutes'));
      if (typeof secs === 'number' && secs > MAX_TOKEN_SECONDS)
        errs.push(invalid(`${tp}.expirationSeconds`, secs, 'may not specify a duration larger than 2^32 seconds'));
      if (empty(t.path)) errs.push(req(`${tp}.path`));
      else if (typeof t.path === 'string') errs.push(...validateLocalDescendingPath(t.path, `${tp}.path`));
    }
  });
  return errs;
}

/** Lun of iSCSI and FC: 0..255. */
function validateLun(v: unknown, path: string): FieldError[] {
  return typeof v === 'number' && (v < 0 || v > 255) ? [invalid(path, v, 'must be between 0 and 255, inclusive')] : [];
}

/** CSI driver names: a DNS-1123 subdomain of at most 63 characters (ValidateCSIDriverName). */
export function validateCSIDriverName(name: unknown, path: string): FieldError[] {
  if (empty(name)) return [req(path)];
  const s = String(name);
  const errs: FieldError[] = [];
  if (s.length > 63) errs.push({ type: 'FieldValueTooLong', field: path, value: s, detail: 'may not be more than 63 bytes' });
  for (const m of isDNS1123Subdomain(s.toLowerCase())) errs.push(invalid(path, s, m));
  return errs;
}

/** Checks one source's own fields; `persistent` selects the PersistentVolume forms. */
function validateSource(kind: string, src: Obj, path: string, persistent: boolean): FieldError[] {
  const errs: FieldError[] = [];
  switch (kind) {
    case 'hostPath':
      errs.push(...required(src, path, ['path']));
      if (src.type !== undefined && !HOST_PATH_TYPES.includes(String(src.type))) errs.push(unsupported(`${path}.type`, src.type, HOST_PATH_TYPES));
      if (typeof src.path === 'string' && src.path.split('/').includes('..')) errs.push(invalid(`${path}.path`, src.path, "must not contain '..'"));
      break;
    case 'local':
      errs.push(...required(src, path, ['path']));
      if (typeof src.path === 'string' && src.path.split('/').includes('..')) errs.push(invalid(`${path}.path`, src.path, "must not contain '..'"));
      break;
    case 'gitRepo': {
      errs.push(...required(src, path, ['repository']));
      const dir = typeof src.directory === 'string' ? src.directory : '';
      if (dir) errs.push(...validateLocalDescendingPath(dir, `${path}.directory`));
      break;
    }
    case 'persistentVolumeClaim':
      errs.push(...required(src, path, ['claimName']));
      break;
    case 'configMap':
    case 'secret':
      errs.push(...validateMode(src.defaultMode, `${path}.defaultMode`), ...validateKeyToPaths(src.items, `${path}.items`));
      break;
    case 'downwardAPI':
      errs.push(...validateMode(src.defaultMode, `${path}.defaultMode`), ...validateDownwardFiles(src.items, `${path}.items`));
      break;
    case 'projected':
      errs.push(...validateProjected(src, path));
      break;
    case 'nfs':
      errs.push(...required(src, path, ['server', 'path']));
      if (typeof src.path === 'string' && src.path !== '' && !src.path.startsWith('/'))
        errs.push(invalid(`${path}.path`, src.path, 'must be an absolute path'));
      break;
    case 'iscsi':
      errs.push(...required(src, path, ['targetPortal', 'iqn']), ...validateLun(src.lun, `${path}.lun`));
      if ((src.chapAuthDiscovery === true || src.chapAuthSession === true) && !isObj(src.secretRef)) {
        errs.push(req(`${path}.secretRef`, 'iscsi secretRef is required when either CHAP authentication is enabled'));
      }
      break;
    case 'glusterfs':
      errs.push(...required(src, path, ['endpoints', 'path']));
      break;
    case 'rbd':
      errs.push(...required(src, path, ['monitors', 'image']));
      break;
    case 'cephfs':
      errs.push(...required(src, path, ['monitors']));
      break;
    case 'cinder':
    case 'portworxVolume':
    case 'awsElasticBlockStore':
      errs.push(...required(src, path, ['volumeID']));
      break;
    case 'gcePersistentDisk':
      errs.push(...required(src, path, ['pdName']));
      break;
    case 'photonPersistentDisk':
      errs.push(...required(src, path, ['pdID']));
      break;
    case 'vsphereVolume':
      errs.push(...required(src, path, ['volumePath']));
      break;
    case 'quobyte':
      errs.push(...required(src, path, ['registry', 'volume']));
      break;
    case 'flexVolume':
      errs.push(...required(src, path, ['driver']));
      break;
    case 'azureFile':
      errs.push(...required(src, path, ['secretName', 'shareName']));
      break;
    case 'azureDisk':
      errs.push(...required(src, path, ['diskName', 'diskURI']));
      if (src.cachingMode !== undefined && !AZURE_CACHING_MODES.includes(String(src.cachingMode)))
        errs.push(unsupported(`${path}.cachingMode`, src.cachingMode, AZURE_CACHING_MODES));
      if (src.kind !== undefined && !AZURE_KINDS.includes(String(src.kind))) errs.push(unsupported(`${path}.kind`, src.kind, AZURE_KINDS));
      break;
    case 'scaleIO':
      errs.push(...required(src, path, ['gateway', 'system']));
      if (!isObj(src.secretRef)) errs.push(req(`${path}.secretRef`));
      if (src.storageMode !== undefined && !SCALEIO_MODES.includes(String(src.storageMode)))
        errs.push(unsupported(`${path}.storageMode`, src.storageMode, SCALEIO_MODES));
      break;
    case 'flocker': {
      const n = empty(src.datasetName) ? 0 : 1;
      const u = empty(src.datasetUUID) ? 0 : 1;
      if (n + u === 0) errs.push(req(path, 'one of datasetName and datasetUUID is required'));
      if (n + u === 2) errs.push(invalid(path, 'resource', 'resource cannot have datasetName and datasetUUID at the same time'));
      break;
    }
    case 'fc': {
      const wwns = Array.isArray(src.targetWWNs) && src.targetWWNs.length > 0;
      const wwids = Array.isArray(src.wwids) && src.wwids.length > 0;
      if (wwns === wwids) errs.push(req(`${path}.targetWWNs`, 'must specify either targetWWNs or wwids, but not both'));
      if (wwns && (src.lun === undefined || src.lun === null)) errs.push(req(`${path}.lun`, 'lun is required if targetWWNs is specified'));
      errs.push(...validateLun(src.lun, `${path}.lun`));
      break;
    }
    case 'csi':
      errs.push(...validateCSIDriverName(src.driver, `${path}.driver`));
      if (persistent && empty(src.volumeHandle)) errs.push(req(`${path}.volumeHandle`));
      break;
    case 'ephemeral': {
      const tpl = src.volumeClaimTemplate;
      if (!isObj(tpl)) {
        errs.push(req(`${path}.volumeClaimTemplate`));
        break;
      }
      // ValidateTemplateObjectMeta: only labels and annotations may be set.
      for (const k of Object.keys(isObj(tpl.metadata) ? tpl.metadata : {})) {
        if (k !== 'labels' && k !== 'annotations') {
          errs.push({ type: 'FieldValueForbidden', field: `${path}.volumeClaimTemplate.metadata.${k}`, detail: 'cannot be set for an ephemeral volume' });
        }
      }
      if (!isObj(tpl.spec)) errs.push(req(`${path}.volumeClaimTemplate.spec`));
      else errs.push(...validateClaimSpec(tpl.spec, `${path}.volumeClaimTemplate.spec`));
      break;
    }
    case 'image':
      errs.push(...required(src, path, ['reference']));
      break;
    default:
      break;
  }
  return errs;
}

/** The names of `sources` set in `src` (present and not null). */
function setSources(src: Obj, sources: readonly string[]): string[] {
  return sources.filter((k) => src[k] !== undefined && src[k] !== null);
}

/**
 * Pod `volumes`: each a unique DNS-label name and exactly one source, checked as above.
 * `path` is the list's field path (`spec.volumes`).
 */
export function validateVolumes(volumes: unknown, path: string): FieldError[] {
  if (!Array.isArray(volumes)) return [];
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  volumes.forEach((v, i) => {
    const p = `${path}[${i}]`;
    const vol = isObj(v) ? v : {};
    const name = vol.name;
    if (empty(name)) errs.push(req(`${p}.name`));
    else {
      for (const m of isDNS1123Label(String(name))) errs.push(invalid(`${p}.name`, name, m));
      if (seen.has(String(name))) errs.push({ type: 'FieldValueDuplicate', field: `${p}.name`, value: name, detail: '' });
      seen.add(String(name));
    }
    const set = setSources(vol, POD_VOLUME_SOURCES);
    if (set.length === 0) errs.push(req(p, 'must specify a volume type'));
    for (const k of set.slice(1)) errs.push({ type: 'FieldValueForbidden', field: `${p}.${k}`, detail: 'may not specify more than 1 volume type' });
    if (set.length === 1) errs.push(...validateSource(set[0]!, isObj(vol[set[0]!]) ? (vol[set[0]!] as Obj) : {}, `${p}.${set[0]}`, false));
  });
  return errs;
}

/**
 * A PersistentVolumeSpec's source: exactly one of PERSISTENT_VOLUME_SOURCES, checked as above.
 * `path` is the spec's field path (`spec`, or `spec.source.inlineVolumeSpec`).
 */
export function validatePersistentVolumeSource(spec: Obj, path: string): FieldError[] {
  const set = setSources(spec, PERSISTENT_VOLUME_SOURCES);
  if (set.length === 0) return [req(path, 'must specify a volume type')];
  const errs: FieldError[] = [];
  for (const k of set.slice(1)) errs.push({ type: 'FieldValueForbidden', field: `${path}.${k}`, detail: 'may not specify more than 1 volume type' });
  errs.push(...validateSource(set[0]!, isObj(spec[set[0]!]) ? (spec[set[0]!] as Obj) : {}, `${path}.${set[0]}`, true));
  return errs;
}
