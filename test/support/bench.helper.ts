/** Runs a built benchmark (dist/bench/<script>) as the short runs of the test suite do. */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from './server.js';

/** Runs `dist/bench/<script>` with `args`; resolves with its exit code and its stdout and stderr together. */
export function runBench(script: string, args: readonly string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(repoRoot(), 'dist', 'bench', script), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.on('error', reject);
    // 'close', not 'exit': 'exit' may come before the last of its output is read.
    child.on('close', (code) => resolve({ code, out }));
  });
}
