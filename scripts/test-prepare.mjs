// What `npm test` does before Jest: the type check of everything (sources, specs, tests) and the
// build the e2e tests run, side by side. The build's compiler skips its own type check
// (`--noCheck`, which emits the same files): the type check beside it covers every file the build
// compiles, and either failing fails the run. `npm run build` on its own still checks.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');

/** Runs the steps one after another; resolves to the first failure's exit code, or 0. */
async function steps(name, ...commands) {
  for (const [cmd, ...args] of commands) {
    const code = await new Promise((resolve) => {
      const child = spawn(cmd, args, { cwd: root, stdio: 'inherit' });
      child.on('error', (e) => {
        console.error(`${name}: ${e.message}`);
        resolve(1);
      });
      child.on('exit', (c, signal) => resolve(c ?? (signal ? 1 : 0)));
    });
    if (code !== 0) {
      console.error(`${name} failed (${[cmd, ...args].join(' ')}: exit ${code})`);
      return code;
    }
  }
  return 0;
}

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const codes = await Promise.all([
  steps('type check', [process.execPath, tsc, '-p', 'tsconfig.json', '--noEmit']),
  steps('build', [process.execPath, tsc, '-p', 'tsconfig.build.json', '--noCheck'], [npm, 'run', '-s', 'build:finish']),
]);
process.exit(codes.find((c) => c !== 0) ?? 0);
