/**
 * Runs the real kubectl (/usr/bin/kubectl, Google Cloud SDK's version dispatcher: see
 * KUBECTL-NOTES.md) against a server, isolated from the user's ~/.kube.
 */
import { spawn } from 'node:child_process';
import { waitFor } from './net.helper.js';

/** What {@link kubectl} needs of a server: its kubeconfig and a private discovery cache dir. */
export interface KubectlTarget {
  readonly kubeconfig: string;
  /** Passed as `--cache-dir` so discovery caches never leak between servers or tests. */
  readonly kubectlCacheDir: string;
  /** Used as HOME, so nothing is read from or written to the real home directory. */
  readonly homeDir: string;
}

/** Options of {@link kubectl}. */
export interface KubectlOptions {
  /** Written to stdin (e.g. a manifest for `apply -f -`). */
  readonly input?: string;
  /** true: a zero exit code is an error; false (default): a non-zero exit code is an error;
   * 'any': never check. */
  readonly expectFail?: boolean | 'any';
  /** Kill kubectl after this long. Default 60 s. */
  readonly timeoutMs?: number;
  readonly env?: Readonly<Record<string, string>>;
  /** Binary to run. Default /usr/bin/kubectl (env KUBECTL overrides). */
  readonly bin?: string;
}

/** The outcome of one kubectl run. */
export interface KubectlResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** kubectl exited with an unexpected code, or timed out. Carries the full result. */
export class KubectlError extends Error {
  override readonly name = 'KubectlError';
  constructor(
    message: string,
    readonly result: KubectlResult,
  ) {
    super(message);
  }
}

/**
 * Runs `kubectl --kubeconfig <k> --cache-dir <c> ...args`. With `target` null, runs without a
 * kubeconfig (for client-only commands like `version --client`). Rejects with KubectlError when
 * the exit code contradicts `expectFail` or on timeout; the error message includes stdout/stderr.
 */
export async function runKubectl(target: KubectlTarget | null, args: readonly string[], opts: KubectlOptions = {}): Promise<KubectlResult> {
  const bin = opts.bin ?? process.env.KUBECTL ?? '/usr/bin/kubectl';
  const full = target === null ? [...args] : ['--kubeconfig', target.kubeconfig, '--cache-dir', target.kubectlCacheDir, ...args];
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && k !== 'KUBECONFIG') env[k] = v;
  }
  if (target !== null) env.HOME = target.homeDir;
  Object.assign(env, opts.env ?? {});
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const child = spawn(bin, full, { env, stdio: ['pipe', 'pipe', 'pipe'] });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (c: Buffer) => out.push(c));
  child.stderr.on('data', (c: Buffer) => err.push(c));
  child.stdin.on('error', () => undefined); // kubectl may exit before reading stdin
  child.stdin.end(opts.input ?? '');
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, timeoutMs);
  const code = await new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (c, sig) => resolve(c ?? (sig !== null ? 128 : 1)));
  }).finally(() => clearTimeout(timer));
  const result: KubectlResult = { code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') };
  const cmd = `kubectl ${args.join(' ')}`;
  const detail = `\n--- stdout ---\n${result.stdout}\n--- stderr ---\n${result.stderr}`;
  if (timedOut) throw new KubectlError(`${cmd} timed out after ${timeoutMs} ms${detail}`, result);
  const expect = opts.expectFail ?? false;
  if (expect === true && code === 0) throw new KubectlError(`${cmd} succeeded but was expected to fail${detail}`, result);
  if (expect === false && code !== 0) throw new KubectlError(`${cmd} exited ${code}${detail}`, result);
  return result;
}

/**
 * `kubectl get events -n <namespace> --field-selector <selector> -o jsonpath=<jsonpath>` (the
 * messages by default), once `seen` holds for its output. Event recorders write on their own,
 * after the change an Event tells of: a test that has seen the change waits for the Event
 * instead of reading the Events once.
 */
export function eventsOnceSeen(
  target: KubectlTarget,
  namespace: string,
  selector: string,
  seen: (out: string) => boolean,
  jsonpath = '{.items[*].message}',
): Promise<string> {
  return waitFor(`the Events of ${namespace} (${selector})`, async () => {
    const out = (await runKubectl(target, ['get', 'events', '-n', namespace, '--field-selector', selector, '-o', `jsonpath=${jsonpath}`])).stdout;
    return seen(out) ? out : undefined;
  });
}
