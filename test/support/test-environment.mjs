/**
 * Jest's node environment, with one change to how a test worker process ends.
 *
 * A worker runs many test files, each in a VM context of its own, and ends with a heap of 1.5 GB
 * or more. When Jest tells it to stop, its event loop empties at once (nothing is left running),
 * but tearing down that environment (the contexts, the heap) takes longer than the half second
 * Jest waits before it kills the worker and reports "A worker process has failed to exit
 * gracefully". Nothing is gained by that teardown in a process that is ending: once the worker's
 * `exit` event fires, its exit code is final, so once the other `exit` listeners ran it leaves
 * through `process.exit`, which ends the process without tearing the environment down first.
 * Test files run as before; only the worker's last step changes.
 *
 * One more difference: where V8 has no `Symbol.dispose` or `Symbol.asyncDispose` (Node 20 and
 * 22), Node defines them on its own realm's `Symbol` alone, so a test file's VM context lacks
 * them and code that reads a native disposer by them (undici's fetch, through Node's
 * `events.addAbortListener`, as @kubernetes/client-node 2.x uses it) finds nothing there. A
 * context gets the process's two symbols where it has none.
 */
import { TestEnvironment } from 'jest-environment-node';

/** Set on the worker's process once its exit handler is installed (one per process). */
const INSTALLED = Symbol.for('kapi.test-environment.fast-exit');

/**
 * The worker's `exit` listener: runs the listeners registered on the worker's process after it
 * first (a test file's `process` is Jest's copy, so these are not the files' own), then ends the
 * process.
 */
function exitNow(code) {
  const listeners = process.listeners('exit');
  for (const listener of listeners.slice(listeners.indexOf(exitNow) + 1)) {
    try {
      listener.call(process, code);
    } catch (e) {
      console.error(e);
    }
  }
  process.exit(code);
}

export default class KapiTestEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    for (const name of ['dispose', 'asyncDispose']) {
      if (this.global.Symbol[name] === undefined && Symbol[name] !== undefined) {
        Object.defineProperty(this.global.Symbol, name, { value: Symbol[name] });
      }
    }
    if (!process[INSTALLED]) {
      process[INSTALLED] = true;
      process.on('exit', exitNow);
    }
  }
}
