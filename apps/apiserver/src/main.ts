/**
 * The program: flags -> configuration -> one node. Prints one line with the admin kubeconfig
 * path once ready (the contract tests and users rely on). SIGINT/SIGTERM close it cleanly.
 */
import { FlagError, parseFlags } from './config/flags.js';
import { startApiServer } from './server.js';

async function main(): Promise<void> {
  let cfg;
  try {
    cfg = parseFlags(process.argv.slice(2));
  } catch (e) {
    if (e instanceof FlagError) {
      process.stderr.write(`error: ${e.message}\n`);
      process.exit(2);
    }
    throw e;
  }
  for (const f of cfg.unsupported) process.stderr.write(`warning: flag --${f} is accepted but not supported by this build yet\n`);
  const server = await startApiServer(cfg);
  process.stdout.write(`Admin kubeconfig: ${server.kubeconfigPath}\n`);
  let stopping = false;
  const stop = (sig: string): void => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`received ${sig}, shutting down\n`);
    const t = setTimeout(() => process.exit(1), 10_000);
    t.unref();
    server.close().then(
      () => process.exit(0),
      (err) => {
        process.stderr.write(`shutdown failed: ${(err as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((err) => {
  process.stderr.write(`fatal: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
});
