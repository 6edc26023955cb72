/**
 * `--runtime-config` (kube-apiserver's flag; conventions.md "Versioning"): which group-versions
 * and resources are served. Comma-separated `<key>[=<bool>]` pairs, a missing value meaning
 * true. Keys: `api/all`, `api/ga`, `api/beta`, `api/alpha` (every version of that level),
 * `<group>/<version>` (`v1` or `api/v1` for the core group) and `<group>/<version>/<resource>`.
 * Defaults: GA and beta versions on, alpha versions off. As in kube-apiserver
 * (MergeAPIResourceConfigs), broader keys apply first whatever their order in the flag: all,
 * then levels, then group-versions, then resources.
 */

/** A parse error of the flag's value. */
export class RuntimeConfigError extends Error {}

/** The parsed flag. */
export interface RuntimeConfig {
  all?: boolean;
  levels: Partial<Record<VersionLevel, boolean>>;
  /** `<group>/<version>` (core: `/v1`) -> enabled. */
  groupVersions: Map<string, boolean>;
  /** `<group>/<version>/<resource>` (core: `/v1/<resource>`) -> enabled. */
  resources: Map<string, boolean>;
}

/** Stability level of a version name: alpha (`v1alpha1`), beta (`v2beta3`) or ga (`v1`). */
export type VersionLevel = 'ga' | 'beta' | 'alpha';

/** Level of a Kubernetes version string. */
export function versionLevel(version: string): VersionLevel {
  if (/^v\d+alpha\d*$/.test(version)) return 'alpha';
  if (/^v\d+beta\d*$/.test(version)) return 'beta';
  return 'ga';
}

/** Group-versions the server's own controllers use: never disabled (core v1, leases, RBAC). */
export const REQUIRED_GROUP_VERSIONS: readonly string[] = ['/v1', 'coordination.k8s.io/v1', 'rbac.authorization.k8s.io/v1'];

function parseBool(key: string, v: string | undefined): boolean {
  if (v === undefined || v === '' || v === 'true') return true;
  if (v === 'false') return false;
  throw new RuntimeConfigError(`invalid value of ${key}: ${v}, err: strconv.ParseBool: parsing ${JSON.stringify(v)}: invalid syntax`);
}

/** Parses the flag's value (empty or absent: the defaults). */
export function parseRuntimeConfig(value: string | undefined): RuntimeConfig {
  const rc: RuntimeConfig = { levels: {}, groupVersions: new Map(), resources: new Map() };
  for (const item of (value ?? '').split(',')) {
    const pair = item.trim();
    if (!pair) continue;
    const eq = pair.indexOf('=');
    const key = eq >= 0 ? pair.slice(0, eq) : pair;
    const enabled = parseBool(key, eq >= 0 ? pair.slice(eq + 1) : undefined);
    if (key === 'api/all') rc.all = enabled;
    else if (key === 'api/ga' || key === 'api/beta' || key === 'api/alpha') rc.levels[key.slice(4) as VersionLevel] = enabled;
    else {
      // The core group is written `v1`, `api/v1` or `/v1`.
      const parts = key.split('/');
      if (parts[0] === 'api' && parts.length >= 2 && /^v\d/.test(parts[1])) parts[0] = '';
      else if (parts.length === 1 || (parts.length === 2 && /^v\d/.test(parts[0]) && !parts[0].includes('.'))) parts.unshift('');
      if (parts.length < 2 || parts.length > 3 || !parts[1] || (parts.length === 3 && !parts[2])) {
        throw new RuntimeConfigError(
          `invalid key ${JSON.stringify(key)}: want api/all, api/ga, api/beta, api/alpha, <group>/<version> or <group>/<version>/<resource>`,
        );
      }
      if (!/^v\d+((alpha|beta)\d*)?$/.test(parts[1]))
        throw new RuntimeConfigError(`invalid key ${JSON.stringify(key)}: ${JSON.stringify(parts[1])} is not an API version`);
      if (parts.length === 2) rc.groupVersions.set(`${parts[0]}/${parts[1]}`, enabled);
      else rc.resources.set(parts.join('/'), enabled);
    }
  }
  return rc;
}

/** Whether group-version `group/version` is served at all (before resource keys). */
export function groupVersionEnabled(rc: RuntimeConfig, group: string, version: string): boolean {
  const gv = `${group}/${version}`;
  if (REQUIRED_GROUP_VERSIONS.includes(gv)) return true;
  const level = versionLevel(version);
  let on = level !== 'alpha';
  if (rc.all !== undefined) on = rc.all;
  const byLevel = rc.levels[level];
  if (byLevel !== undefined) on = byLevel;
  return rc.groupVersions.get(gv) ?? on;
}

/** Whether resource `plural` of `group/version` is served. */
export function resourceEnabled(rc: RuntimeConfig, group: string, version: string, plural: string): boolean {
  const byResource = rc.resources.get(`${group}/${version}/${plural}`);
  if (REQUIRED_GROUP_VERSIONS.includes(`${group}/${version}`)) return byResource ?? true;
  // A resource enabled by name is served even when its group-version is otherwise off.
  return byResource ?? groupVersionEnabled(rc, group, version);
}

/**
 * Keys naming group-versions or resources that `known` (every declared kind) does not have:
 * kube-apiserver refuses to start on them, and so does this server.
 */
export function unknownRuntimeConfigKeys(rc: RuntimeConfig, known: ReadonlyArray<{ group: string; version: string; plural: string }>): string[] {
  const gvs = new Set(known.map((k) => `${k.group}/${k.version}`));
  const rs = new Set(known.map((k) => `${k.group}/${k.version}/${k.plural}`));
  const show = (k: string) => (k.startsWith('/') ? k.slice(1) : k);
  return [...[...rc.groupVersions.keys()].filter((k) => !gvs.has(k)), ...[...rc.resources.keys()].filter((k) => !rs.has(k))].map(show);
}
