/**
 * `npm run snapshot -- restore FILE --data-dir DIR [--name NAME] [--initial-cluster n1=host:port,...]
 * [--skip-hash-check]`, `npm run snapshot -- status FILE [-w table|json]`, `npm run snapshot --
 * to-etcd FILE --out FILE [--skip-hash-check]` and `npm run snapshot -- from-etcd FILE --out FILE
 * [--skip-hash-check]` (compiled: `node dist/cluster/snapshot.cli.js ...`): restores a member's
 * data dir from a snapshot saved with `etcdctl snapshot save`, as `etcdctl snapshot restore` does
 * for etcd, and describes such a file (docs/backup.md). A node's snapshot is etcd's backend format,
 * as etcd's own is; `restore` and `status` make such a file into the store's own snapshot format
 * first, which `from-etcd` writes out. `to-etcd` makes a file in the store's own snapshot
 * format into etcd's, and copies one that is etcd's already. Exit
 * codes: 0 done, 2 bad usage, 1 the restore, check or conversion failed.
 */
import { constants } from 'node:fs';
import { copyFile, stat } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { MvccError } from '@app/mvcc';
import { ClusterConfigError } from '../apps/apiserver/src/cluster/cluster.ids.js';
import { RestoreError, inspectSnapshotFile, isEtcdBackendFile, refuseExisting, restoreSnapshot } from '../apps/apiserver/src/cluster/cluster.restore.js';
import { exportForEtcd } from '../apps/apiserver/src/cluster/cluster.etcd-export.js';
import { type EtcdImportResult, importFromEtcd, withImportedEtcdFile } from '../apps/apiserver/src/cluster/cluster.etcd-import.js';
import { ignoreClosedOutput, isEntryPoint } from './entry-point.js';

/** A usage error of the CLI. */
export class SnapshotUsageError extends Error {
  override readonly name = 'SnapshotUsageError';
}

/** Usage text printed on `--help` and on a usage error. */
export const SNAPSHOT_USAGE = [
  'usage: snapshot restore FILE --data-dir DIR [--name NAME] [--initial-cluster n1=host:port,...] [--skip-hash-check]',
  '       snapshot status FILE [-w table|json]',
  '       snapshot to-etcd FILE --out FILE [--skip-hash-check]',
  '       snapshot from-etcd FILE --out FILE [--skip-hash-check]',
].join('\n');

/**
 * Runs the CLI on `argv` (without node and script). Returns the process exit code; never throws
 * for bad input (usage errors and failures are printed through `printError`).
 */
/** What a backup's compacted revision means to its reader. */
const historyFrom = (compacted: number) => (compacted > 0 ? `history from revision ${compacted}` : 'the whole history');

export async function runSnapshotCli(
  argv: readonly string[],
  print: (line: string) => void = (l) => process.stdout.write(`${l}\n`),
  printError: (line: string) => void = (l) => process.stderr.write(`${l}\n`),
): Promise<number> {
  try {
    const { values, positionals } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: true,
      options: {
        'data-dir': { type: 'string' },
        name: { type: 'string' },
        'initial-cluster': { type: 'string' },
        'skip-hash-check': { type: 'boolean' },
        'write-out': { type: 'string', short: 'w' },
        out: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
    if (values.help === true) {
      print(SNAPSHOT_USAGE);
      return 0;
    }
    const [command, file, ...rest] = positionals;
    if (command !== 'restore' && command !== 'status' && command !== 'to-etcd' && command !== 'from-etcd')
      throw new SnapshotUsageError(
        command === undefined ? 'name a command: restore, status, to-etcd or from-etcd' : `unknown command ${JSON.stringify(command)}`,
      );
    if (file === undefined || file === '') throw new SnapshotUsageError(`${command}: name the snapshot file`);
    if (rest.length > 0) throw new SnapshotUsageError(`unexpected argument ${JSON.stringify(rest[0])}`);
    if (command !== 'to-etcd' && command !== 'from-etcd' && values.out !== undefined) throw new SnapshotUsageError('--out is a flag of to-etcd and from-etcd');
    if (command === 'to-etcd' || command === 'from-etcd') {
      for (const flag of ['data-dir', 'name', 'initial-cluster', 'write-out'] as const)
        if (values[flag] !== undefined) throw new SnapshotUsageError(`--${flag} is not a flag of ${command}`);
      if (values.out === undefined || values.out === '') throw new SnapshotUsageError(`${command}: --out FILE is required`);
    }
    if (command === 'from-etcd') {
      const res = await importFromEtcd({ file, out: values.out!, skipHashCheck: values['skip-hash-check'] === true });
      print(
        `wrote ${values.out}: ${res.keys} keys and ${res.leases} leases at revision ${res.revision}, ${historyFrom(res.compacted)} (${res.changes} changes), ${res.snapshot.fileBytes} bytes (a backup of the built-in store)`,
      );
      if (res.orphanedLeaseKeys > 0) print(`${res.orphanedLeaseKeys} keys named a lease the file does not hold: they were carried without a lease`);
      print(`restore members from it with: npm run snapshot -- restore ${values.out} --data-dir DIR --name NAME --initial-cluster ...`);
      return 0;
    }
    if (command === 'to-etcd' && (await isEtcdBackendFile(file))) {
      // What a node's `etcdctl snapshot save` gives is etcd's format already: checked (the same
      // conversion restore would make of it), then copied as it is.
      const imported = await withImportedEtcdFile(file, values['skip-hash-check'] === true, async (_backup, res) => res);
      await refuseExisting(values.out!);
      await copyFile(file, values.out!, constants.COPYFILE_EXCL);
      print(
        `${file} is etcd's backend file already: copied to ${values.out!} (${imported.keys} keys and ${imported.leases} leases at revision ${imported.revision}, ${historyFrom(imported.compacted)})`,
      );
      print(`restore etcd members from it with: etcdctl snapshot restore ${values.out} --name NAME --data-dir DIR --initial-cluster ...`);
      return 0;
    }
    if (command === 'to-etcd') {
      const res = await exportForEtcd({ file, out: values.out!, skipHashCheck: values['skip-hash-check'] === true });
      print(
        `wrote ${values.out!}: ${res.keys} keys and ${res.leases} leases at revision ${res.revision}, ${historyFrom(res.compacted)} (${res.changes} changes), ${res.bytes} bytes (etcd's backend format)`,
      );
      print(`restore etcd members from it with: etcdctl snapshot restore ${values.out} --name NAME --data-dir DIR --initial-cluster ...`);
      return 0;
    }
    /**
     * Runs `use` on `file`, or, when it is etcd's backend file, on the backup from-etcd makes of
     * it (`converted` hears of the conversion).
     */
    const viaEtcd = async <T>(use: (f: string, skipHashCheck: boolean) => Promise<T>, converted?: (imported: EtcdImportResult) => void): Promise<T> => {
      const skipHashCheck = values['skip-hash-check'] === true;
      if (!(await isEtcdBackendFile(file))) return use(file, skipHashCheck);
      return withImportedEtcdFile(file, skipHashCheck, (backup, imported) => {
        converted?.(imported);
        return use(backup, false);
      });
    };
    if (command === 'status') {
      for (const flag of ['data-dir', 'name', 'initial-cluster'] as const)
        if (values[flag] !== undefined) throw new SnapshotUsageError(`--${flag} is a flag of restore`);
      const format = values['write-out'] ?? 'table';
      if (format !== 'table' && format !== 'json') throw new SnapshotUsageError(`-w: table or json, got ${JSON.stringify(format)}`);
      // An etcd file is described as the backup from-etcd makes of it (its own size on disk).
      const s = await viaEtcd(async (f, skipHashCheck) => ({
        ...(await inspectSnapshotFile(f, { skipHashCheck })),
        ...(f === file ? {} : { fileBytes: (await stat(file)).size, sha256: undefined }),
      }));
      const row = {
        revision: s.revision,
        compactRevision: s.compacted,
        raftIndex: s.applied,
        totalKey: s.keys,
        totalSize: s.fileBytes,
        ...(s.sha256 ? { sha256: s.sha256 } : {}),
      };
      if (format === 'json') print(JSON.stringify(row));
      else {
        print('REVISION\tCOMPACT REVISION\tRAFT INDEX\tTOTAL KEYS\tTOTAL SIZE');
        print(`${s.revision}\t${s.compacted}\t${s.applied}\t${s.keys}\t${s.fileBytes}`);
      }
      return 0;
    }
    if (values['write-out'] !== undefined) throw new SnapshotUsageError('-w is a flag of status');
    const dataDir = values['data-dir'];
    if (dataDir === undefined || dataDir === '') throw new SnapshotUsageError('restore: --data-dir DIR is required');
    const name = values.name ?? 'default';
    const res = await viaEtcd(
      (f, skipHashCheck) =>
        restoreSnapshot({
          file: f,
          dataDir,
          name,
          ...(values['initial-cluster'] !== undefined ? { initialCluster: values['initial-cluster'] } : {}),
          skipHashCheck,
        }),
      (imported) =>
        print(
          `${file} is etcd's backend file: made into a backup of the built-in store first (${imported.keys} keys and ${imported.leases} leases at revision ${imported.revision}, ${historyFrom(imported.compacted)})`,
        ),
    );
    print(`restored ${file}: revision ${res.snapshot.revision}, ${res.snapshot.keys} keys, ${historyFrom(res.snapshot.compacted)}`);
    if (res.droppedMemberKeys > 0)
      print(`dropped ${res.droppedMemberKeys} member records of the cluster the snapshot came from (revision ${res.revision} now)`);
    print(`data dir ${dataDir}: member ${name} of ${res.members.map((m) => `${m.name}=${m.peerAddress}`).join(',')}, Raft log from index ${res.index}`);
    print(
      `start it with --data-dir ${dataDir} --name ${name}${values['initial-cluster'] !== undefined ? ` --initial-cluster ${values['initial-cluster']}` : ''} and the cluster's --pki-dir`,
    );
    return 0;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? '';
    if (e instanceof SnapshotUsageError || code.startsWith('ERR_PARSE_ARGS')) {
      printError(`snapshot: ${(e as Error).message}`);
      printError(SNAPSHOT_USAGE);
      return 2;
    }
    if (e instanceof RestoreError || e instanceof ClusterConfigError || e instanceof MvccError) {
      printError(`snapshot: ${e.message}`);
      return 1;
    }
    printError(`snapshot: ${(e as Error).message}`);
    return 1;
  }
}

if (isEntryPoint(import.meta.url)) {
  ignoreClosedOutput();
  process.exitCode = await runSnapshotCli(process.argv.slice(2));
}
