/**
 * What GET /version reports about this build: the Kubernetes level it implements (given by the
 * caller) and the git commit, tree state and date recorded by `npm run build`
 * (scripts/build-info.mjs -> dist/build-info.json), read once at start.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The build's provenance. Values the build could not know are the string `unknown`. */
export interface BuildInfo {
  /** 40 hex digits, or `unknown`. */
  readonly gitCommit: string;
  /** `clean`, `dirty` or `unknown`. */
  readonly gitTreeState: string;
  /** RFC 3339 UTC, as kube's (`2026-01-02T03:04:05Z`), or `unknown`. */
  readonly buildDate: string;
}

/** The answer when nothing was recorded (a run from sources, a copy without the file). */
export const UNKNOWN_BUILD: BuildInfo = { gitCommit: 'unknown', gitTreeState: 'unknown', buildDate: 'unknown' };

/**
 * Where the build writes the record: `dist/build-info.json`, found by walking up from this
 * module (tsc's output puts it in dist/apps/apiserver/src/version/, the server's bundle in
 * dist/apps/apiserver/src/). Stops at the directory with package.json: from sources there is no
 * record.
 */
export function defaultBuildInfoPath(): string {
  const start = dirname(fileURLToPath(import.meta.url));
  for (let dir = start; ;) {
    const file = join(dir, 'build-info.json');
    if (existsSync(file)) return file;
    const parent = dirname(dir);
    if (parent === dir || existsSync(join(dir, 'package.json'))) return join(start, 'build-info.json');
    dir = parent;
  }
}

/**
 * Reads the build record at `file`. A missing or unreadable file gives UNKNOWN_BUILD; a field
 * that is missing or malformed reads as `unknown` (never a made-up value).
 */
export function readBuildInfo(file = defaultBuildInfoPath()): BuildInfo {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return UNKNOWN_BUILD;
  }
  const r = (raw ?? {}) as Record<string, unknown>;
  const pick = (v: unknown, ok: RegExp): string => (typeof v === 'string' && ok.test(v) ? v : 'unknown');
  return {
    gitCommit: pick(r.gitCommit, /^[0-9a-f]{40}$/),
    gitTreeState: pick(r.gitTreeState, /^(clean|dirty)$/),
    buildDate: pick(r.buildDate, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/),
  };
}

/** The /version body (apimachinery's version.Info), from the API level and the build record. */
export function versionBody(kube: { major: string; minor: string; gitVersion: string }, build: BuildInfo): Record<string, string> {
  return {
    major: kube.major,
    minor: kube.minor,
    gitVersion: kube.gitVersion,
    gitCommit: build.gitCommit,
    gitTreeState: build.gitTreeState,
    buildDate: build.buildDate,
    goVersion: `node${process.versions.node}`,
    compiler: 'tsc',
    platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
  };
}
