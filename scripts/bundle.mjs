/**
 * Bundles the server program into one module, in place: dist/apps/apiserver/src/main.js, which
 * tsc wrote as the root of about 600 modules importing about 1,300 more from node_modules,
 * becomes one file with all of them. Loading that many modules one by one was most of the CPU a
 * start costs (module resolution, reads, compilation); the bundle starts with less than half of
 * it. The rest of dist/ stays as tsc wrote it, for the other programs (cluster launcher,
 * snapshot, benchmarks) and for anything that imports the libraries.
 *
 * Left out of the bundle: classic-level (a native addon that finds its prebuilt binary next to
 * its package) and the optional packages NestJS and Fastify try to load only when installed.
 * Modules find their files (proto/, dist/build-info.json) by walking up from import.meta.url,
 * which works from the bundle's place as from tsc's output.
 *
 * Usage: node scripts/bundle.mjs (after tsc; `npm run build` runs it).
 */
import { build } from 'esbuild';
import { renameSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const entry = join(root, 'dist', 'apps', 'apiserver', 'src', 'main.js');
const out = `${entry}.bundle.tmp`;

await build({
  entryPoints: [entry],
  outfile: out,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  logLevel: 'warning',
  external: [
    'classic-level',
    '@nestjs/microservices',
    '@nestjs/microservices/*',
    '@nestjs/websockets',
    '@nestjs/websockets/*',
    '@nestjs/platform-express',
    'class-transformer/storage',
    '@fastify/*',
  ],
  // Bundled CommonJS packages call require(); an ES module has none of its own.
  banner: { js: "import { createRequire as kapiCreateRequire } from 'node:module'; const require = kapiCreateRequire(import.meta.url);" },
});
renameSync(out, entry);
