/**
 * The program: flags -> configuration -> one node. Prints one line with the admin kubeconfig
 * path once ready (the contract tests and users rely on). SIGINT/SIGTERM close it cleanly.
 */
import { setFlagsFromString } from 'node:v8';
import { EnvError, validateEnv } from './config/env.js';
import { FlagError, parseFlags } from './config/flags.js';
import { heapGrowthFlag } from './config/heap.js';
import { installTestDiskFaults } from './config/test-faults.js';
import { startApiServer } from './server.js';

async function main(): Promise<void> {
  let cfg;
  let envWarnings: string[];
  try {
    cfg = parseFlags(process.argv.slice(2));
    envWarnings = validateEnv();
    // Before the stores and caches fill the heap (./config/heap.ts).
    const heapFlag = heapGrowthFlag(process.env, process.execArgv);
    if (heapFlag) setFlagsFromString(heapFlag);
    const faults = installTestDiskFaults(cfg.raw);
    if (faults) envWarnings.push(faults);
  } catch (e) {
    if (e instanceof FlagError || e instanceof EnvError) {
      process.stderr.write(`error: ${e.message}\n`);
      process.exit(2);
    }
    throw e;
  }
  for (const f of cfg.unsupported) process.stderr.write(`warning: flag --${f} is accepted but not supported by this build yet\n`);
  for (const w of envWarnings) process.stderr.write(`warning: ${w}\n`);
  const server = await startApiServer(cfg);
  process.stdout.write(`Admin kubeconfig: ${server.kubeconfigPath}\n`);
  let stopping = false;
  const stop = (why: string, code = 0): void => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`${why}, shutting down\n`);
    const t = setTimeout(() => process.exit(1), 10_000);
    t.unref();
    server.close().then(
      () => process.exit(code),
      (err) => {
        process.stderr.write(`shutdown failed: ${(err as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('received SIGINT'));
  process.on('SIGTERM', () => stop('received SIGTERM'));
  // A failed storage write stops the node for good; exiting lets a supervisor (docker compose's
  // restart policy, systemd) start it again from what is on disk (docs/storage.md).
  server.onFatal((e) => stop(`fatal: storage failure: ${e.message}`, 1));
}

main().catch((err) => {
  // A flag whose meaning is only known once the kinds are collected (--runtime-config naming
  // nothing served) stops the start like any other flag error.
  if (err instanceof FlagError) {
    process.stderr.write(`error: ${err.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`fatal: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
});
