#!/usr/bin/env node
// Runs a built entry point, building first only when the build is missing or older than the
// sources (so `npm install && npm start` works on a fresh clone and restarts stay fast).
//   node scripts/start.mjs [flags...]        -> the API server (dist/apps/apiserver/src/main.js)
//   node scripts/start.mjs pki [flags...]    -> the PKI tool (dist/cluster/pki.cli.js)
//   node scripts/start.mjs snapshot [...]    -> restore / status of snapshot files (dist/cluster/snapshot.cli.js)
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const entries = {
  server: 'dist/apps/apiserver/src/main.js',
  pki: 'dist/cluster/pki.cli.js',
  cluster: 'dist/cluster/launcher.cli.js',
  snapshot: 'dist/cluster/snapshot.cli.js',
};
let which = 'server';
if (process.argv[2] && Object.hasOwn(entries, process.argv[2]) && process.argv[2] !== 'server') {
  which = process.argv[2];
  process.argv.splice(2, 1);
}

function newestSource(dir) {
  let newest = 0;
  if (!existsSync(dir)) return newest;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) newest = Math.max(newest, newestSource(p));
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.spec.ts')) newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

const stamp = join(root, 'dist', '.buildstamp');
const built = existsSync(stamp) ? statSync(stamp).mtimeMs : 0;
const sources = Math.max(...['apps', 'libs', 'cluster'].map((d) => newestSource(join(root, d))));
if (!built || sources > built) {
  process.stderr.write('building (first start or sources changed)...\n');
  const r = spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
process.env.KAPI_START_ENTRY = join(root, entries[which]);
await import(pathToFileURL(process.env.KAPI_START_ENTRY).href);
