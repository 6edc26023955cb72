/**
 * Whether a module is the program being run: started directly (`node dist/cluster/x.js`), or
 * through scripts/start.mjs, which names the entry it imports in KAPI_START_ENTRY.
 */
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

/** True when the module at `moduleUrl` (its import.meta.url) is the program's entry point. */
export function isEntryPoint(moduleUrl: string): boolean {
  for (const candidate of [process.argv[1], process.env.KAPI_START_ENTRY]) {
    if (!candidate) continue;
    try {
      if (pathToFileURL(realpathSync(candidate)).href === moduleUrl) return true;
    } catch {
      // not a file: not this module
    }
  }
  return false;
}

/**
 * Lets a command's output go nowhere once its reader has gone (`| head -1` closing the pipe):
 * the write errors that follow (EPIPE, then writes to the destroyed stream) are dropped instead
 * of ending the process with a stack trace, so the command finishes its work and exit code.
 */
export function ignoreClosedOutput(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code !== 'EPIPE' && e.code !== 'ERR_STREAM_DESTROYED') throw e;
    });
  }
}
