/**
 * Runs a command to its end for e2e tests: its exit code and output, `input` on its stdin, killed
 * after `timeoutMs` (then the code is null).
 */
import { spawn } from 'node:child_process';

/** What a finished command left. */
export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `cmd` with `args`, `env` added to this process's environment. */
export function run(cmd: string, args: string[], env: NodeJS.ProcessEnv = {}, input?: string, timeoutMs = 60_000): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    if (input !== undefined) {
      // The command may exit before reading it all (an error): not the caller's failure.
      child.stdin!.on('error', () => undefined);
      child.stdin!.end(input);
    }
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
