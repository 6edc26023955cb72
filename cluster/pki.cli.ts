/**
 * `npm run pki -- --out DIR --hosts a,b,c [--server URL] [--cluster-name NAME]`
 * (compiled: `node dist/cluster/pki.cli.js ...`): creates or completes a shared PKI directory for
 * a cluster (DESIGN.md "Contracts": a cluster shares one `--pki-dir`). Idempotent; prints one line
 * per file written and one per file kept. Exit codes: 0 done, 2 bad usage, 1 PKI error.
 */
import { parseArgs } from 'node:util';
import { PkiError, createPki, pkiPaths } from '@app/pki';
import { ignoreClosedOutput, isEntryPoint } from './entry-point.js';

/** A usage error of the CLI (unknown flag, missing --out). */
export class PkiUsageError extends Error {
  override readonly name = 'PkiUsageError';
}

/** Usage text printed on `--help` and on a usage error. */
export const PKI_USAGE = 'usage: pki --out DIR [--hosts h1,h2,...] [--server https://host:port] [--cluster-name NAME]';

/**
 * Runs the CLI on `argv` (without node and script), writing progress lines through `print`.
 * Returns the process exit code; never throws for bad input (usage errors and PKI errors are
 * printed through `printError`).
 */
export async function runPkiCli(
  argv: readonly string[],
  print: (line: string) => void = (l) => process.stdout.write(`${l}\n`),
  printError: (line: string) => void = (l) => process.stderr.write(`${l}\n`),
): Promise<number> {
  try {
    const { values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        out: { type: 'string' },
        hosts: { type: 'string', multiple: true },
        server: { type: 'string' },
        'cluster-name': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
    if (values.help === true) {
      print(PKI_USAGE);
      return 0;
    }
    if (values.out === undefined || values.out === '') throw new PkiUsageError('--out DIR is required');
    if (values.server !== undefined && !/^https:\/\/[^/]+/.test(values.server)) {
      throw new PkiUsageError(`--server must be an https:// URL, got ${JSON.stringify(values.server)}`);
    }
    const hosts = (values.hosts ?? [])
      .flatMap((h) => h.split(','))
      .map((h) => h.trim())
      .filter((h) => h !== '');
    const started = Date.now();
    const res = await createPki({
      outDir: values.out,
      hosts,
      ...(values.server !== undefined ? { server: values.server } : {}),
      ...(values['cluster-name'] !== undefined ? { clusterName: values['cluster-name'] } : {}),
    });
    const p = pkiPaths(res.dir);
    const all = [p.caCert, p.caKey, p.servingCert, p.servingKey, p.adminCert, p.adminKey, p.peerCert, p.peerKey, p.saKey, p.saPub, p.adminKubeconfig];
    for (const f of all) {
      const base = f.slice(p.dir.length + 1);
      print(`${res.created.includes(base) ? 'wrote' : 'kept '} ${f}`);
    }
    print(`PKI in ${p.dir} (${res.created.length} files written in ${Date.now() - started} ms)`);
    print(`Admin kubeconfig: ${p.adminKubeconfig}`);
    return 0;
  } catch (e) {
    if (e instanceof PkiError) {
      printError(`pki: ${e.message}`);
      return 1;
    }
    // parseArgs throws TypeErrors with code ERR_PARSE_ARGS_*; treat them as usage errors.
    const code = (e as NodeJS.ErrnoException).code ?? '';
    if (e instanceof PkiUsageError || code.startsWith('ERR_PARSE_ARGS')) {
      printError(`pki: ${(e as Error).message}`);
      printError(PKI_USAGE);
      return 2;
    }
    printError(`pki: ${(e as Error).message}`);
    return 1;
  }
}

if (isEntryPoint(import.meta.url)) {
  ignoreClosedOutput();
  process.exitCode = await runPkiCli(process.argv.slice(2));
}
